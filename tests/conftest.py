"""The ``slow`` marker (registered in pyproject.toml): end-to-end tests that start bot processes
in the sandbox, play whole matches, tournaments or duels, or drive a terminal; and hypothesis
without its per-example deadline.

``python -m pytest -q -m "not slow"`` runs the rest in a fraction of the time; the whole suite
is the reference before a commit.  Files are marked here as a whole (every test in them plays
real bots); single slow tests elsewhere carry ``@pytest.mark.slow`` or are named below.
Measured with ``--durations=30`` on the files themselves (see README, "Run the tests").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

# Hypothesis fails an example that takes over 200 ms by default, a timed assertion that a loaded
# machine trips (an example of a solver or a whole deal can take that long there). Speed is checked
# by the benchmarks (marias bench), never by the tests: no deadline, for every property test.
settings.register_profile("marias", deadline=None)
settings.load_profile("marias")

#: Files whose tests each run bots as processes (seconds to minutes per test).
SLOW_FILES = {
    "test_check.py",            # marias check: three partie per bot, several bots (minutes)
    "test_cluster.py",          # a Dask cluster
    "test_duel.py",             # head-to-head tests: groups of six partie
    "test_ladder_run.py",       # marias ladder run: duplicate groups, a kill -9, a faulting version
    "test_examples.py",         # node, gcc and cargo bots
    "test_match_interrupt.py",  # Ctrl-C in a running match
    "test_play.py",             # marias play in a pseudo-terminal (pexpect)
    "test_replay_bot.py",       # logged deals sent to bot processes
    "test_sandbox.py",          # bubblewrap namespaces and limits
    "test_strength_progress.py",
    "test_tournament.py",       # tournaments, resumes, kill -9
    "test_table_trust.py",
    "test_protocol_gaps.py",
}

#: Single slow tests in files that are otherwise quick (over ~5 s each when measured).
SLOW_TESTS = {
    "test_bench.py::test_the_tournament_benchmark_splits_each_way_of_playing_and_starts_bots_in_an_empty_folder",
    "test_identity.py::test_a_changed_imported_module_refuses_a_resume_naming_the_bot_and_the_file",
    "test_identity.py::test_changed_bot_is_refused_on_resume_and_allowed_on_request",
    "test_identity.py::test_one_bot_is_one_row_over_match_and_tournament_logs",
    "test_identity.py::test_match_refuses_missing_bots_before_playing",
    "test_explain.py::test_each_fault_kind_names_bot_place_evidence_stderr_file_and_hint",
    "test_explain.py::test_an_illegal_answer_names_the_rule_the_legal_actions_and_the_near_miss",
    "test_explain.py::test_an_illegal_card_cites_the_rule_of_the_engine",
    "test_explain.py::test_a_crash_shows_the_last_lines_of_stderr",
    "test_explain.py::test_a_bot_that_never_flushes_is_told_to_flush_at_the_start_up_limit",
    "test_explain.py::test_a_program_that_cannot_start",
    "test_secrets.py::test_default_duels_deal_from_their_own_secret_seed_and_a_seat_cannot_find_it",
    "test_secrets.py::test_hands_written_to_a_workdir_are_never_read_on_the_same_deck",
    "test_secrets.py::test_a_bot_finds_no_key_no_seed_file_and_no_tournament_file",
    "test_secrets.py::test_a_seed_file_keeps_the_seed_secret_and_bad_ones_are_named",
    "test_match.py::test_R12_3_no_forfeit_when_the_last_fault_is_in_the_last_deal",
    "test_match.py::test_without_a_log_the_stderr_files_are_in_a_named_private_folder",
    "test_seeds.py::test_two_matches_with_the_same_seed_at_once_keep_both_logs",
    "test_hints.py::test_an_unflushed_bot_is_not_said_not_to_start",
    "test_hints.py::test_check_of_an_unquoted_path_with_spaces_says_to_quote_it",
    "test_web_browser.py::test_two_people_play_a_partie_at_one_table_through_an_invite_link",  # two browsers, ~60 s
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        name = Path(str(item.fspath)).name
        if name in SLOW_FILES or f"{name}::{item.originalname}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def web_site(tmp_path_factory):
    """The served folder of the web pages' tests (tests/web_site.py), built once for the session."""
    from tests.web_site import build

    return build(tmp_path_factory.mktemp("web_site"))
