"""The referee benchmark's bots (referee/tools/bench.py): the in-process instant seat must play
exactly what the trivial bot program plays, or the benchmark's split of the referee's CPU
into "instant seats" and "bot processes" compares two different matches."""

import sys
from collections import Counter

from referee.tools import bench
from referee.matches.match import BotSpec


def _histories(result):
    return [[list(d.history) for d in p.deals] for p in result.parties]


def test_instant_seat_plays_what_the_trivial_bot_program_plays():
    programs = [BotSpec(label="trivial", argv=[sys.executable, "-c", bench.TRIVIAL_BOT]) for _ in range(3)]
    instant = [BotSpec(label="instant", argv=[], seat=bench._InstantSeat) for _ in range(3)]
    _, by_program, n_program, _ = bench._referee_run(programs, 2, 1, sandbox="none")
    _, by_instant, n_instant, _ = bench._referee_run(instant, 2, 1, sandbox="none")
    assert n_program == n_instant > 0
    assert _histories(by_program) == _histories(by_instant)


def test_trivial_rule_plays_games_of_every_kind_to_the_end():
    """The benchmark's mix (bench.TRIVIAL_BOT's comment): mostly deals played out, Barva games
    to the last trick among them, some durch, not one kind only (choosing by the id's parity
    alone made every deal a durch)."""
    instant = [BotSpec(label="instant", argv=[], seat=bench._InstantSeat) for _ in range(3)]
    _, result, _, _ = bench._referee_run(instant, 10, 1, sandbox="none")
    deals = [d for p in result.parties for d in p.deals]
    kinds = Counter(d.game for d in deals)
    assert kinds["barva"] > len(deals) // 2
    assert kinds["durch"] > 0
    assert sum(d.result.kind == "played" for d in deals) > len(deals) // 2
    assert sum(d.game == "barva" and len(d.tricks) == 10 for d in deals) > len(deals) // 4
