"""Tools for bot authors and for us: ``check`` (a bot's conformance), ``replay_bot`` (one logged
deal sent again to a bot), ``strength`` (strength reports), ``bench`` and ``bench_ladder``
(benchmarks: speed is measured here, never asserted in tests).
May import: :mod:`referee.tournaments` and everything below it; not :mod:`referee.people`.
"""
