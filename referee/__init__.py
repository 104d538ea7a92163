"""marias: a match referee for volený mariáš.

One sub-package per concept, each importing only the layers below it (checked by
``lint-imports`` in the test suite, contracts in pyproject.toml)::

    cli.py                  the ``marias`` command, a thin shell over the library
    tools/   people/        bot authors' tools and benches | a person's seat
    tournaments/            tournaments, duels, results database, tables
    matches/                the referee loop, what each seat is told, pre-flight
    logs/    seats/         logs as evidence | bot processes, sandbox, limits
    rules/                  the rules engine (no I/O)

``protocol/`` (messages and the SDK) sits below all of them; ``bots/`` play on
``rules`` and ``protocol`` only.
"""

__version__ = "0.1.0"
