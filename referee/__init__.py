"""marias: a match referee for volený mariáš.

The library: :mod:`referee.cards`, :mod:`referee.actions`, :mod:`referee.deal`
(the rules engine), :mod:`referee.settle`, :mod:`referee.partie`,
:mod:`referee.process` and :mod:`referee.match` (bots and the referee loop),
:mod:`referee.log` and :mod:`referee.validate` (records), :mod:`referee.cli`.
"""

__version__ = "0.1.0"
