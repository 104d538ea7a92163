"""A person at the table: ``marias play``'s seat in the terminal (``human``), what it shows
(``screen``) and the match around it (``play``).
May import: :mod:`referee.tournaments` and everything below it; not :mod:`referee.tools`.
"""
