"""Many matches: tournaments and duels, in parallel and resumable, and the tables of their results.

``tournament_config`` (the YAML file or the flags), ``tournament`` (planning, units, resume),
``cluster`` (the same on Dask), ``duel`` and ``sprt`` (head-to-head tests), ``results`` (the
results database), ``standings`` (tables from logs) and ``stats`` (intervals, Student's t, LOS).
May import: :mod:`referee.matches` and everything below it.
"""
