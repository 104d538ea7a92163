"""The seat seam: the time Clock, and InProcessSeat (a Bot object played through the same
protocol lines as a bot program, so the referee loop cannot tell them apart)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, strategies as st

import bots
from protocol.sdk import Bot
from referee.seats.faults import BotFault, FaultKind
from referee.rules.partie import derive_seed
from referee.matches.match import BotSpec, FaultPolicy, Limits, MatchConfig, run_match
from referee.seats.process import BotCommand, BotProcess, encode_line
from referee.seats.seat import Clock, InProcessSeat, Seat

# ------------------------------------------------------------------ Clock


def test_clock_without_a_bank_allows_move_ms_every_time():
    clock = Clock(2000)
    for _ in range(5):
        assert clock.limit_ms() == 2000
        assert clock.spend(1999.5)
    assert not clock.spend(2000.5)
    assert clock.limit_ms() == 2000


def test_clock_with_a_bank_worked_by_hand():
    # PROTOCOL.md section 9: increment first, then min(move, bank), then the time is taken off
    clock = Clock(1000, bank_ms=1500, increment_ms=100)
    assert clock.limit_ms() == 1000  # min(1000, 1500 + 100)
    assert clock.spend(900)  # bank 1500 + 100 - 900 = 700
    assert clock.limit_ms() == 800  # min(1000, 700 + 100)
    assert not clock.spend(850)  # over the 800 allowed; bank 700 + 100 - 850 = -50
    assert clock.limit_ms() == 50  # -50 + 100
    assert clock.spend(50)  # bank 0
    assert Clock(0, bank_ms=300).limit_ms() == 300  # move 0: the bank alone
    spent = Clock(1000, bank_ms=100)
    spent.spend(150)
    assert spent.limit_ms() == 0  # the flag has fallen


@given(st.integers(0, 5000), st.integers(1, 5000), st.integers(0, 300), st.lists(st.floats(0, 1), max_size=40))
def test_clock_never_grants_more_than_the_bank_and_its_increments(move, bank, inc, fractions):
    clock = Clock(move, bank_ms=bank, increment_ms=inc)
    used = 0.0
    for i, frac in enumerate(fractions, 1):
        limit = clock.limit_ms()
        assert limit >= 0 and (move == 0 or limit <= move)
        ms = limit * frac
        assert clock.spend(ms)
        used += ms
        assert used <= bank + i * inc + 1e-6


# ------------------------------------------------------------------ InProcessSeat


def test_both_seats_fit_the_seat_protocol():
    assert isinstance(InProcessSeat(bots.make("random")), Seat)
    assert isinstance(BotProcess(BotCommand(["true"])), Seat)


def test_in_process_bots_play_the_same_match_as_the_same_bots_in_processes(tmp_path):
    def config(specs):
        return MatchConfig(bots=specs, partie=2, seed="seam", work_dir=tmp_path, keep_partie=True)

    procs = run_match(config([BotSpec.parse("random", seed=f"s{i}") for i in range(3)]))
    # a built-in random bot process gets a one-way derivation of its seed (never the seed itself)
    inproc = run_match(config([BotSpec(label=f"r{i}", argv=[], bot=bots.make("random", seed=derive_seed(f"s{i}", "bot")))
                               for i in range(3)]))
    assert inproc.partie_totals == procs.partie_totals
    assert [[d.history for d in p.deals] for p in inproc.parties] == [[d.history for d in p.deals] for p in procs.parties]
    assert inproc.names == procs.names == ["random"] * 3  # the name comes from the hello answer
    assert not inproc.faults


class Raiser(Bot):
    name = "raiser"

    def choose(self, view, legal):
        raise RuntimeError("boom")


class Liar(Bot):
    name = "liar"

    def choose(self, view, legal):
        return "play:Zz"


class Sleeper(Bot):
    name = "sleeper"

    def choose(self, view, legal):
        time.sleep(0.3)
        return legal[0]


class BadEvents(Bot):
    name = "bad-events"

    def on_deal_start(self, message):
        raise ValueError("cannot follow")

    def choose(self, view, legal):
        return legal[0]


@pytest.mark.parametrize("bot, kind", [(Raiser(), "exit"), (Liar(), "illegal"), (Sleeper(), "timeout"),
                                       (BadEvents(), "exit")], ids=["raises", "illegal", "slow", "event-hook-raises"])
def test_in_process_faults_are_the_referees_faults(bot, kind, tmp_path):
    config = MatchConfig(bots=[BotSpec(label="x", argv=[], bot=bot), BotSpec.parse("random"), BotSpec.parse("random")],
                         partie=1, seed="f", limits=Limits(move_ms=100), policy=FaultPolicy(max_faults=3),
                         work_dir=tmp_path, keep_partie=True)
    result = run_match(config)
    assert [f["kind"] for f in result.faults] == [kind] * 3
    assert result.parties[0].forfeited.seat == 0


def test_in_process_seat_speaks_lines():
    seat = InProcessSeat(bots.make("random", seed=1), name="seat 0")
    seat.start()
    answer, elapsed = seat.request_lines([encode_line({"type": "hello", "protocol": 1})], 5.0)
    assert answer == {"type": "hello", "protocol": 1, "name": "random", "version": answer["version"]}
    assert elapsed >= 0 and seat.alive and seat.pid is None and seat.stderr_tail == ""
    with pytest.raises(BotFault) as info:
        seat.request_lines([encode_line({"type": "bye"})], 5.0)
    assert info.value.kind == FaultKind.UNEXPECTED
    seat.close()
    assert seat.closed and not seat.alive
    with pytest.raises(BotFault):
        seat.send_lines([encode_line({"type": "bye"})])
