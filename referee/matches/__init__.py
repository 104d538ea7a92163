"""The referee loop: three seats, partie after partie, under the rules, the clock and the log.

``match`` (requests, faults, restarts, forfeits, the log), ``tell`` (what each seat is told:
redacted events and request lines), ``preflight`` (every bot starts and says hello before the
first deal), ``secrecy`` (public or secret decks; the files no bot may read) and ``bounds``
(the largest values a match or tournament accepts).
May import: :mod:`referee.seats`, :mod:`referee.logs`, :mod:`referee.rules`, :mod:`protocol`.
"""
