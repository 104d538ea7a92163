"""The rules engine (RULES.md R1–R12): cards, actions, one deal, a partie of 12, settlement.

No I/O and no processes: small immutable values (``Card``, ``Action``), one state object that
knows its legal actions (:class:`referee.rules.deal.Deal`), pure scoring functions
(:mod:`referee.rules.settle`), and in-process play of SDK bots (:mod:`referee.rules.selfplay`).
May import: :mod:`protocol` (the SDK's ``Bot`` type) and nothing else of marias.
"""
