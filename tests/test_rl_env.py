"""The learning encoding (protocol/observation.py) and the PettingZoo environment (referee/rl).

The environment must be the referee's game seen through the referee's redaction: checked by
playing it in lockstep with a real match (the referee's own request lines, tell.request_line,
decoded by an in-process seat) and by comparing payments with that match."""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

np = pytest.importorskip("numpy", reason="the rl extra is not installed (pip install -e '.[rl]')")
pytest.importorskip("pettingzoo", reason="the rl extra is not installed (pip install -e '.[rl]')")

from protocol import observation as O  # noqa: E402
from protocol.sdk import Bot  # noqa: E402
from referee.matches.match import BotSpec, MatchConfig, run_match  # noqa: E402
from referee.matches.tell import request_line  # noqa: E402
from referee.rl.pettingzoo_env import MariasEnv  # noqa: E402
from referee.rl.stepper import IllegalIndex, Stepper  # noqa: E402
from referee.rules.actions import parse_action  # noqa: E402
from referee.rules.cards import CARDS  # noqa: E402
from referee.rules.partie import Partie, partie_seed  # noqa: E402
from tests.test_properties import STYLES, choose  # noqa: E402


# ------------------------------------------------------------------ the action table

def test_the_card_order_is_the_engines():
    assert O.CARD_CODES == tuple(str(c) for c in CARDS)


def test_the_table_has_the_documented_blocks():
    assert O.ACTIONS[0] == "trump:7h" and O.ACTIONS[31] == "trump:Aa" and O.ACTIONS[32] == "trump:zlidu"
    assert O.ACTIONS[33:36] == ("talon:barva", "talon:betl", "talon:durch")
    assert O.ACTIONS[36] == "discard:7h" and O.ACTIONS[67] == "discard:Aa"
    assert O.ACTIONS[68:71] == ("dobra", "spatna", "durch")
    assert O.ACTIONS[-1] == "lay" and O.ACTIONS[-33] == "play:7h"
    assert len(set(O.ACTIONS)) == O.N_ACTIONS == 133


def test_every_single_index_action_is_a_canonical_engine_action():
    for i, text in enumerate(O.ACTIONS):
        if text.startswith(("talon:", "discard:")):
            with pytest.raises(ValueError):
                O.action_text([i])
            continue
        assert str(parse_action(text)) == text  # canonical: the engine writes it the same way
        assert O.action_indices(text) == (i,) and O.action_text([i]) == text


def test_a_talon_action_is_three_indices_and_back():
    idx = O.action_indices("betl:Kh,9l")
    assert idx == (34, 42, 46)  # as protocol/RL.md says
    assert [O.ACTIONS[i] for i in idx] == ["talon:betl", "discard:Kh", "discard:9l"]
    assert O.action_text(idx) == "betl:Kh,9l"
    assert O.action_indices("betl:9l,Kh") != idx  # the order of the discards is part of the action (R2.3)
    with pytest.raises(ValueError):
        O.action_text([O.ACTION_INDEX["talon:barva"], O.DISCARD + 3, O.DISCARD + 3])  # one card twice


def _steered(rng: random.Random):
    """Random legal play pushed towards trump games with raises and games against, so that
    every kind of flek the engine offers shows up."""
    def choose(deal):
        legal = deal.legal_actions()
        if deal.phase == "talon" and rng.random() < 0.8:
            legal = [a for a in legal if a.kind == "barva"] or legal
        elif deal.phase == "answer" and rng.random() < 0.8:
            legal = [a for a in legal if a.kind == "dobra"] or legal
        elif deal.phase == "flek" and rng.random() < 0.7:
            legal = [a for a in legal if a.kind != "dobra"] or legal
        return legal[rng.randrange(len(legal))]
    return choose


def test_every_action_the_engine_offers_has_indices():
    rng = random.Random(5)
    fleks = set()
    for p in range(40):
        partie = Partie(seed=f"table:{p}")
        choose = _steered(rng)
        for deal in partie.iter_deals():
            while not deal.done:
                for a in deal.legal_actions():
                    text = str(a)
                    assert O.action_text(O.action_indices(text)) == text
                    if a.kind == "flek":
                        fleks.add(text)
                deal.apply(choose(deal))
    assert len(fleks) >= 15  # the sweep did reach the raises, games against and their mixtures


def test_the_masks_of_a_talon_decision_spell_exactly_its_legal_actions():
    legal = [str(a) for a in _talon_deal().legal_actions()]
    spelled = set()
    for g in O.legal_indices(legal):
        for a in O.legal_indices(legal, (g,)):
            for b in O.legal_indices(legal, (g, a)):
                spelled.add(O.action_text((g, a, b)))
    assert spelled == set(legal) and len(legal) > 100


def _talon_deal():
    deal = Partie(seed="talon").next_deal()
    deal.apply(deal.legal_actions()[0])
    assert deal.phase == "talon"
    return deal


# ------------------------------------------------------------------ the environment

def test_pettingzoo_api_test_passes_for_one_deal_and_for_a_partie():
    from pettingzoo.test import api_test
    api_test(MariasEnv(), num_cycles=200)
    api_test(MariasEnv(deals=12), num_cycles=600)


def _random_episode(env, seed, rng):
    env.reset(seed=seed)
    totals = {a: 0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, term, trunc, _info = env.last()
        totals[agent] += reward
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return totals


def test_seeding_gives_the_same_episode_and_another_seed_another():
    a = MariasEnv(deals=12)
    a.reset(seed=11)
    first = [str(c) for c in a.table.deal.deck]
    a.reset(seed=11)
    assert [str(c) for c in a.table.deal.deck] == first
    a.reset(seed=12)
    assert [str(c) for c in a.table.deal.deck] != first
    t1 = _random_episode(MariasEnv(deals=12), 11, np.random.default_rng(0))
    t2 = _random_episode(MariasEnv(deals=12), 11, np.random.default_rng(0))
    assert t1 == t2


def test_an_illegal_index_is_refused_and_changes_nothing():
    env = MariasEnv()
    env.reset(seed=1)
    closed = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    before = env.view(env.agent_selection)
    env._cumulative_rewards[env.agent_selection] = 5  # as if a reward were waiting for this agent
    with pytest.raises(IllegalIndex):
        env.step(closed)
    assert env.view(env.agent_selection) == before
    assert env.last()[1] == 5  # nor is the waiting reward lost


def test_a_seat_not_to_move_sees_no_open_index_and_never_a_hidden_card():
    env = MariasEnv()
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    while env.agents and not env.terminations[env.agent_selection]:
        mover = env.agent_selection
        for agent in env.agents:
            obs = env.observe(agent)
            seat = env.possible_agents.index(agent)
            if agent != mover:
                assert not obs["action_mask"].any()
            hand = obs["observation"][O.OFFSET["hand"]:O.OFFSET["hand"] + 32]
            # the hand block is this seat's own cards, as its view lists them (7 at the trump decision)
            assert {O.CARD_CODES[i] for i in np.flatnonzero(hand)} == set(env.view(agent)["hand"])
            others = set().union(*(env.table.deal.hands[s] for s in range(3) if s != seat))
            unseen = obs["observation"][O.OFFSET["unseen"]:O.OFFSET["unseen"] + 32]
            named = set(re.findall(r"\b[789XUOKA][hlba]\b", json.dumps(env.view(agent))))
            # another seat's card counts as seen only if this seat's view names it (a talon it discarded)
            assert all(unseen[c] or O.CARD_CODES[c] in named for c in others)
        env.step(int(rng.choice(np.flatnonzero(env.observe(mover)["action_mask"]))))


class _Lockstep(Bot):
    """Plays one seat of a real match by stepping the environment: at each request the
    referee sends, the environment's observation and mask must be the ones the protocol
    encoding gives for that request."""

    name = "lockstep"

    def __init__(self, env, seat, rng, record):
        self.env, self.seat, self.rng, self.record = env, seat, rng, record

    def decide(self, decision, view, legal):
        env, agent = self.env, f"seat_{self.seat}"
        rec = self.record
        if env.agent_selection != agent:
            rec["problems"].append(f"the referee asks {agent}, the environment {env.agent_selection}")
        pending = ()
        while True:
            obs = env.observe(agent)
            if not np.array_equal(obs["observation"], O.observation(view, pending)):
                rec["problems"].append(f"observation differs at {decision} {pending}")
            opened = {O.ACTIONS[i] for i in np.flatnonzero(obs["action_mask"])}
            if not _mask_spells(opened, legal, pending):
                rec["problems"].append(f"mask differs at {decision} {pending}: {sorted(opened)[:5]} / {legal[:5]}")
            i = int(self.rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(i)
            rec["steps"] += 1
            for a, r in env.rewards.items():
                rec["rewards"][a] += r
            if decision != "talon":
                return O.ACTIONS[i]
            pending += (i,)
            if len(pending) == 3:
                return O.action_text(pending)


def _mask_spells(opened: set[str], legal: list[str], pending: tuple[int, ...]) -> bool:
    """The open tokens against the request's legal list, by string handling alone."""
    if not legal[0].startswith(("barva:", "betl:", "durch:")):
        return opened == set(legal)
    if not pending:
        return opened == {"talon:" + t.split(":")[0] for t in legal}
    game = O.ACTIONS[pending[0]].split(":")[1]
    pairs = [t.split(":")[1].split(",") for t in legal if t.split(":")[0] == game]
    if len(pending) == 1:
        return opened == {"discard:" + a for a, _b in pairs}
    first = O.ACTIONS[pending[1]].split(":")[1]
    return opened == {"discard:" + b for a, b in pairs if a == first}


@pytest.mark.parametrize("seed", [7, 2024])
def test_the_environment_is_the_referees_match_request_by_request(tmp_path, seed):
    """A whole partie: the environment is stepped by three in-process bots that a real
    match (run_match) asks; their requests are the referee's request lines, decoded."""
    env = MariasEnv(deals=12)
    env.reset(seed=seed)
    record = {"problems": [], "steps": 0, "rewards": {a: 0 for a in env.possible_agents}}
    rng = np.random.default_rng(seed)
    specs = [BotSpec(label=f"lock{s}", argv=[], bot=_Lockstep(env, s, rng, record)) for s in range(3)]
    result = run_match(MatchConfig(bots=specs, partie=1, seed=seed, work_dir=tmp_path, keep_partie=True))
    assert not result.faults
    assert record["problems"] == []
    assert record["steps"] > 12 * 10
    assert all(env.terminations.values())  # the match ended exactly where the episode did
    assert [record["rewards"][a] for a in env.possible_agents] == result.partie_totals[0]


def test_a_seeded_episode_replays_through_the_engine_to_the_same_payments():
    env = MariasEnv(deals=12)
    env.reset(seed="replay")
    rng = np.random.default_rng(1)
    deals, payments = [], []
    while not all(env.terminations.values()):
        deal = env.table.deal
        obs = env.observe(env.agent_selection)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if deal.done:
            deals.append([text for _seat, text in [(s, str(a)) for s, a in deal.history]])
            payments.append(list(deal.result.payments))
    assert len(deals) == 12
    partie = Partie(seed=partie_seed("replay", 1))  # what `marias match --seed replay` deals first
    for texts, paid in zip(deals, payments):
        deal = partie.next_deal()
        for text in texts:
            deal.apply(text)
        assert deal.done and list(deal.result.payments) == paid


def test_the_observation_is_built_from_the_request_the_referee_sends():
    """Every decision of a random partie: the request line as tell.request_line encodes it,
    decoded; the environment's observation and mask against it."""
    env = MariasEnv(deals=12)
    env.reset(seed=99)
    rng = np.random.default_rng(99)
    rid = 0
    decisions = 0
    while not all(env.terminations.values()):
        deal = env.table.deal
        seat = deal.to_move
        texts = [str(a) for a in deal.legal_actions()]
        rid += 1
        req = json.loads(request_line(rid, 1, len(env.partie.deals), deal.decision, deal.view(seat), texts, 2000,
                                      env.partie.totals()))
        pending = ()
        while True:
            obs = env.observe(f"seat_{seat}")
            assert np.array_equal(obs["observation"], O.observation(req["view"], pending))
            opened = {O.ACTIONS[i] for i in np.flatnonzero(obs["action_mask"])}
            assert _mask_spells(opened, req["legal"], pending)
            i = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(i)
            if req["decision"] != "talon" or len(pending) == 2:
                break
            pending += (i,)
        decisions += 1
    assert decisions > 100


def test_decide_answers_a_request_with_a_legal_string_in_one_or_three_steps():
    deal = _talon_deal()
    view, legal = deal.view(deal.to_move), [str(a) for a in deal.legal_actions()]
    seen = []

    def last_open(obs, mask):
        seen.append(obs)
        return int(np.flatnonzero(mask)[-1])

    answer = O.decide(view, legal, last_open)
    assert answer in legal and len(seen) == 3
    assert answer.startswith("durch:")  # the last game, then the last cards open
    phase = O.OFFSET["pending_game"]
    assert seen[0][phase:phase + 3].sum() == 0 and seen[1][phase + 2] == 1


def test_the_layout_adds_up_and_every_value_is_in_range():
    assert sum(size for _n, size in O.LAYOUT) == O.OBS_SIZE
    env = MariasEnv()
    env.reset(seed=4)
    obs = env.observe(env.agent_selection)["observation"]
    assert obs.dtype == np.float32 and obs.shape == (O.OBS_SIZE,)
    assert obs[O.OFFSET["bias"]] == 1 and obs.min() >= 0 and obs.max() <= 1


def test_bench_env_plays_the_same_games_in_the_environment_and_the_engine():
    from referee.rl.bench import env_speed
    r = env_speed(partie=1, repeats=1, seed="bench-test")  # raises if the two played different games
    assert r["decisions"] > 12 and r["env_steps"] >= r["decisions"]
    assert {"engine_decisions_per_cpu_second", "env_steps_per_cpu_second", "steps_per_engine_decision"} <= set(r)


def test_the_sdk_offers_the_encoding_under_the_same_names():
    import protocol.sdk as sdk
    from protocol.sdk import decide, observation  # noqa: F401 - the import itself is the check
    assert sdk.observation is O.observation and sdk.decide is O.decide and sdk.N_ACTIONS == O.N_ACTIONS
    with pytest.raises(AttributeError):
        sdk.no_such_name  # noqa: B018


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), style=STYLES, fault_rate=st.sampled_from([0.0, 0.02]))
def test_the_observation_is_the_encoding_of_a_view_built_from_scratch(seed, style, fault_rate):
    """The environments encode from the engine's state (referee/rl/encoder.py), not from the
    view: at every decision of a partie, for every seat (and after each talon step), the
    observation against protocol.observation of Deal.view_from_scratch, and the mover's mask
    against protocol.observation.action_mask of the legal list.  Raises, games against,
    takeovers, laid cards and faults come from the test chooser of test_properties."""
    rng = random.Random(seed)
    partie = Partie(seed=seed)
    checked = 0

    def check(table, deal, legal):
        nonlocal checked
        for seat in range(3):
            mine = table.pending if seat == deal.to_move else ()
            want = O.observation(deal.view_from_scratch(seat), mine)
            assert np.array_equal(table.observation(seat), want), (deal.phase, seat, mine)
            checked += 1
        if not deal.done:
            assert bytes(table.mask_bytes()) == O.action_mask(legal, table.pending).tobytes(), (deal.phase, table.pending)

    for deal in partie.iter_deals():
        table = Stepper(deal)
        while True:
            legal = [a.code for a in deal.legal_actions()]
            check(table, deal, legal)
            if deal.done:
                break
            if rng.random() < fault_rate:
                deal.fault(deal.to_move, "test", "injected by the property test")
                continue
            indices = O.action_indices(choose(rng, deal, style).code)
            for i in indices[:-1]:  # a talon decision: observed after each of its first two steps
                table.step(i)
                check(table, deal, legal)
            table.step(indices[-1])
    assert checked > 100


def test_cards_laid_before_any_trick_are_observed_as_the_view_shows_them():
    """R8.4 at the first lead: points and hlášky come without a finished trick (a case random
    play does not reach); the observation of every seat is still the view's encoding."""
    from referee.rules.deal import Deal
    from referee.rules.partie import deck_from_hands
    hands = {0: "Ah Kh Oh Uh Xh 9h 8h 7h Al Ab Aa Kl", 1: "7l 8l 9l Xl Ul Ol 7b 8b 9b Xb",
             2: "Ub Ob Kb 7a 8a 9a Xa Ua Oa Ka"}
    deal = Deal(deck_from_hands(hands, 0), 0)
    table = Stepper(deal)
    for text in ["trump:Ah", "barva:Kl,7h", "dobra", "dobra", "contract:hra", "flek:hra", "dobra", "dobra"]:
        for i in O.action_indices(text):
            table.step(i)
    assert deal.phase == "play" and table.mask_bytes()[O.ACTION_INDEX["lay"]] == 1
    table.step(O.ACTION_INDEX["lay"])
    assert deal.done and not deal.tricks and len(deal.hlasky) == 3 and any(deal.points)
    for seat in range(3):
        assert np.array_equal(table.observation(seat), O.observation(deal.view_from_scratch(seat)))


def test_bench_peers_runs_each_installed_environment_and_notes_the_missing(monkeypatch):
    from referee.rl import bench
    monkeypatch.setattr(bench, "PEERS", bench.PEERS[:1] + (("no such peer", "rlcard", "no-such-game"),
                                                           ("no such library", "no_such_library", "x")))
    r = bench.peers_speed(seconds=0.05, repeats=1)
    rows = {row["environment"]: row for row in r["environments"]}
    assert set(rows) == {"MariasEnv (one deal an episode)"}
    assert rows["MariasEnv (one deal an episode)"]["marias_env_to_it"] == 1.0
    assert rows["MariasEnv (one deal an episode)"]["steps_per_cpu_second"] > 0
    assert len(r["notes"]) == 2 and all("skipped" in n for n in r["notes"])
    assert "uniformly at random" in r["loop"]


def test_marias_bench_env_peers_prints_the_ratios_and_the_loop(monkeypatch):
    from typer.testing import CliRunner

    from referee.cli import app
    from referee.rl import bench
    monkeypatch.setattr(bench, "PEERS", bench.PEERS[:2] + (("no such library", "no_such_library", "x"),))
    r = CliRunner().invoke(app, ["bench", "env", "--peers", "--seconds", "0.05", "--repeats", "1"])
    assert r.exit_code == 0, r.output
    assert "MariasEnv (one deal an episode)" in r.output and "MariasEnv / it" in r.output
    assert "note: no such library: skipped" in r.output and "uniformly at random" in r.output
