"""``marias bench …``: benchmarks, each a figure measured in one run (speed is measured here,
never asserted in tests); a thin shell over :mod:`referee.tools.bench` and friends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from tabulate import tabulate

from bots import SEARCH_MS

from .options import sandbox_mode

bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: speed measured in one run, printed as figures.")


@bench_app.command("engine")
def bench_engine(
    deals: int = typer.Option(3000, help="Deals per repeat."),
    repeats: int = typer.Option(5, help="Repeats; the median is reported."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Random legal self-play in-process: deals per second, microseconds per decision."""
    from ..tools import bench

    r = bench.engine(deals=deals, repeats=repeats)
    _print_bench(r, as_json)


@bench_app.command("referee")
def bench_referee(
    partie: int = typer.Option(10, min=1, help="Partie per run (12 deals each)."),
    runs: int = typer.Option(5, min=1, help="Runs with trivial bots; the minimum CPU per decision is reported."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    sandbox: str = typer.Option("auto", "--sandbox", help="The sandbox of the main figures (auto, bwrap, none); the sandbox's cost (start-up and per decision, with and without it) is measured in the same run either way."),
):
    """The referee's own CPU per decision with trivial bots, the engine's CPU per decision (legal actions + view + apply) on the same deals, and their ratio (goal: at most 3), each the minimum of --runs runs. Split in the same runs: the referee with instant in-process seats (rules, messages, bookkeeping; no pipes) and what the bot processes add; a raw echo round trip (wall and CPU) and the ratio the referee would reach if its bot processes cost no more than that, the floor this machine sets. Plus deals per second with three external random bots, and the sandbox's cost (bot start-up and per decision with and without it)."""
    from ..tools import bench

    _print_bench(bench.referee(partie=partie, runs=runs, sandbox=sandbox_mode(sandbox)), as_json)


@bench_app.command("hog")
def bench_hog(
    threads: int = typer.Option(16, "--threads", min=1, max=100, help="Busy processes the hog starts (it stays under --bot-processes 128)."),
    cpu_ms: int = typer.Option(150, "--cpu-ms", min=1, help="CPU ms the victim burns per decision."),
    partie: int = typer.Option(1, min=1, help="Partie per run (12 deals each)."),
    runs: int = typer.Option(2, min=1, help="Runs of each case, alternately."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    sandbox: str = typer.Option("auto", "--sandbox", help="The bots' sandbox (auto, bwrap, none)."),
):
    """A CPU hog in the next seat: the victim's time per decision (it burns --cpu-ms of CPU each) alone, with a --threads hog that is frozen while it waits for its turn (the referee's way), and with the same hog running on (as before issue 32); medians and ratios to alone. One match at a time."""
    from ..tools import bench

    _print_bench(bench.hog(threads=threads, cpu_ms=cpu_ms, partie=partie, runs=runs, sandbox=sandbox_mode(sandbox)), as_json)


@bench_app.command("validate")
def bench_validate(
    deals: int = typer.Option(3000, help="Deals in the generated log (random legal play)."),
    log: Optional[Path] = typer.Option(None, "--log", dir_okay=False, exists=True, help="Validate this log instead of a generated one."),
    repeats: int = typer.Option(5, help="Repeats; the median is reported."),
    jobs: int = typer.Option(0, "--jobs", "-j", min=0, help="Processes for the parallel figure (0: one per CPU)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Validated deals per second on one large log (one process and --jobs processes), and the engine's self-play speed (bench engine) measured in the same run."""
    from ..tools import bench

    _print_bench(bench.validate(deals=deals, log=log, repeats=repeats, jobs=jobs), as_json)


@bench_app.command("search")
def bench_search(
    positions: int = typer.Option(12, help="Positions solved per number of tricks left (and for betl, durch)."),
    partie: int = typer.Option(1, help="Partie the search bot plays against two robots for the per-decision figures."),
    ms: float = typer.Option(SEARCH_MS, "--ms", min=1, help="The bot's limit per decision in that partie (CPU ms, as search --ms)."),
    seed: int = typer.Option(1, help="Seed of the positions and partie."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", dir_okay=False, exists=True,
                                            help="An old solver module (e.g. tests/reference_solver.py) solving the same positions in the same run: its CPU per solve and the speed-up are reported, and the values must agree."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """The search bot's solver: CPU time and nodes per exact solve by tricks left (trump games; betl and durch from the first trick), nodes per CPU second; and the bot at its budget: CPU time per decision, worlds per decision."""
    from ..tools import bench

    _print_bench(bench.search(positions=positions, seed=seed, partie=partie, ms=ms,
                              baseline=str(baseline) if baseline else None), as_json)


@bench_app.command("analyze")
def bench_analyze(
    ms: float = typer.Option(SEARCH_MS, "--ms", min=1, help="The search bot's limit per decision (CPU ms, as search --ms)."),
    seed: str = typer.Option("bench-analyze", "--seed", help="Seed of the partie (its decks) and of the search bot."),
    worlds: int = typer.Option(0, "--worlds", min=0, max=1000, help="Also time the value from the seats' view with this many worlds a decision (0: not)."),
    profile: bool = typer.Option(True, "--profile/--no-profile", help="Profile the double-dummy analysis: own time by module, the top functions."),
    keep: Optional[Path] = typer.Option(None, "--keep", file_okay=False, exists=True, help="Write the partie's log into this folder (to run marias analyze on it)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """marias analyze against the search bot's own thinking, in one run: a partie of search (seat 0) against two robots, the CPU time of search's decisions; then that log analysed double-dummy (every card decision and the bidding), its CPU time, and the ratio (goal: at most 1). With the card decisions' share, solver nodes per CPU second, a profile, and (--worlds) the value from the seats' view."""
    from ..analysis.bench import analyze

    _print_bench(analyze(ms=ms, seed=seed, worlds=worlds, profile=profile, keep=keep), as_json)


@bench_app.command("env")
def bench_env(
    partie: int = typer.Option(20, help="Partie per repeat (each played by the engine and by the environment)."),
    repeats: int = typer.Option(3, min=1, help="Repeats (with --peers: rounds); the median is reported."),
    peers: bool = typer.Option(False, "--peers", help="Instead: MariasEnv against the other card-game environments installed (rlcard: bridge, uno, gin-rummy; OpenSpiel C++: spades, bridge played out; and python_marias through pyspiel), interleaved in one run, with MariasEnv's ratio to each; a peer not installed is skipped with a note."),
    seconds: float = typer.Option(1.0, "--seconds", min=0.05, help="--peers: CPU seconds each environment runs in each round."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The PettingZoo environment's steps per CPU second against the engine's own decisions, same deals, same run (needs the rl extra). With --peers, against other environments: each runs the same loop -- reset; at every step observe the player to move (its observation and its legal actions: the open indices of the action mask, rlcard's legal_actions, OpenSpiel's legal list), pick one uniformly at random, step; reset when the episode ends -- and its players' actions per CPU second of the process (resets included) are compared."""
    try:
        from ..rl.bench import env_speed, peers_speed
    except ImportError as exc:
        raise typer.BadParameter(f"marias bench env needs the rl extra (pip install -e '.[rl]'): {exc}") from None
    if not peers:
        _print_bench(env_speed(partie=partie, repeats=repeats), as_json)
        return
    result = peers_speed(seconds=seconds, repeats=repeats)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    typer.echo(tabulate([(r["environment"], r["steps_per_cpu_second"], r["marias_env_to_it"]) for r in result["environments"]],
                        headers=["environment", "steps per CPU s", "MariasEnv / it"]))
    for key in ("marias_env_to_rlcard_bridge", "marias_env_to_openspiel_spades"):
        if key in result:
            typer.echo(f"{key.replace('_', ' ')}: {result[key]}")
    for note in result["notes"]:
        typer.echo(f"note: {note}")
    typer.echo(f"loop: {result['loop']}; {result['repeats']} rounds of {result['cpu_seconds_each']} CPU s each, medians")


@bench_app.command("table")
def bench_table(
    partie: int = typer.Option(100_000, min=6, help="Rows of the generated results database (partie)."),
    bots: int = typer.Option(24, min=3, help="Bots of the generated season."),
    keep: Optional[Path] = typer.Option(None, "--keep", file_okay=False, help="Write the generated tournament folder here (and keep it) instead of a temporary one."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """`marias table FOLDER --format json --series 10` on a generated results database of --partie synthetic, valid rows: its CPU seconds and peak memory (goal: 100,000 partie in <= 30 s and <= 300 MB)."""
    from ..tools import bench_ladder

    _print_bench(bench_ladder.table(partie=partie, bots=bots, keep=keep), as_json)


@bench_app.command("ladder")
def bench_ladder_cmd(
    versions: int = typer.Option(50, min=3, help="Versions in the generated ladder."),
    partie: int = typer.Option(100_000, min=6, help="Partie in the generated ladder's database (whole groups of six)."),
    groups: int = typer.Option(4, min=0, help="Groups a real ladder of built-in bots then plays, for the coordinator's CPU per partie against the game's own (0: skip)."),
    workers: int = typer.Option(1, "--concurrency", "-j", min=1, help="Partie played at once in that real ladder."),
    keep: Optional[Path] = typer.Option(None, "--keep", file_okay=False, help="Make the generated ladder here (and keep it) instead of in a temporary folder."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """A ladder at scale and at work: a database of --versions versions and --partie partie written by the runner's own code, then the time to draw one table (goal <= 10 ms) and of the leaderboard (goal <= 1 s), the whole ladder table, a version's games and history; then a real ladder of built-in bots playing --groups groups: the coordinator's CPU per partie against the game's own, and the disk a partie takes, plain and gzipped."""
    from ..ladder.bench import bench

    _print_bench(bench(versions=versions, partie=partie, groups=groups, workers=workers, keep=keep), as_json)


@bench_app.command("web")
def bench_web(
    partie: int = typer.Option(100_000, min=6, help="Partie in the generated results database behind the tournament page."),
    deals: int = typer.Option(1200, min=12, help="Deals of the generated log whose replays are timed (1200: a match of 100 partie)."),
    big_mb: float = typer.Option(60.0, "--big-log-mb", min=0.0, help="Size of the large generated log served by `marias serve` in a process of its own (0: skip that part)."),
    at_once: int = typer.Option(4, "--at-once", min=1, max=32, help="Requests for the large log's page sent at once."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """marias serve's pages: the tournament page over a generated results database of --partie rows (goal <= 1 s), a deal's replay (goal <= 200 ms), and what a page weighs (goal <= 500 KB). Then a large log (--big-log-mb, 60 MB: under the 64 MB served) served by `marias serve` in a process of its own: the server's peak memory (RSS) and CPU while it answers the log page's data once and --at-once times at once (goal: <= 150 MB over the server's memory before), a small page's time meanwhile, and the CPU of a replay of one deal."""
    import tempfile

    from ..tools.bench import write_random_log
    from ..tools.bench_ladder import synthetic_season
    from ..web.bench import big_log, measure

    with tempfile.TemporaryDirectory(prefix="marias-bench-web-") as tmp:
        root = Path(tmp)
        synthetic_season(root / "season", partie)
        (root / "logs").mkdir()
        write_random_log(root / "logs" / "random.jsonl", deals=deals)
        result = measure(root, "season", "logs/random.jsonl")
        result["partie"] = partie
        if big_mb > 0:
            (root / "big" / "logs").mkdir(parents=True)
            write_random_log(root / "big" / "logs" / "big.jsonl", deals=max(12, round(big_mb * 2**20 / BYTES_PER_DEAL)))
            result.update(big_log(root / "big", "logs/big.jsonl", at_once=at_once))
    _print_bench(result, as_json)


#: About what one deal of a random log weighs (to size --big-log-mb).
BYTES_PER_DEAL = 1870


@bench_app.command("validate-memory")
def bench_validate_memory(
    deals: List[int] = typer.Option([1200, 12000], "--deals", help="Sizes of the generated logs in deals (repeatable; the last against the first)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Peak memory of `marias validate LOG` on generated logs of each --deals size: flat memory whatever the file size."""
    from ..tools import bench_ladder

    if len(deals) < 2:
        raise typer.BadParameter("give at least two sizes", param_hint="--deals")
    _print_bench(bench_ladder.validate_memory(tuple(deals)), as_json)


@bench_app.command("cluster")
def bench_cluster(
    bots: int = typer.Option(4, min=3, help="Bots in the round robin (4: 4 tables x 6 arrangements)."),
    bot: str = typer.Option("random", "--bot", help="The built-in bot that fills the field: random or robot."),
    partie: int = typer.Option(1, min=1, help="Partie per table and arrangement."),
    workers: int = typer.Option(2, min=1, help="Local pool concurrency, and Dask worker processes (one thread each)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """The same tournament on the local pool and on a Dask cluster on this machine (`dask scheduler` and `dask worker` processes on 127.0.0.1): units per second, and the coordinator's CPU per accepted unit."""
    from ..tools import bench_ladder

    if bot not in ("random", "robot"):
        raise typer.BadParameter("random or robot", param_hint="--bot")
    _print_bench(bench_ladder.cluster(bots=bots, partie=partie, workers=workers, builtin=bot), as_json)


def _print_bench(result: dict, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        typer.echo(tabulate([(k, v) for k, v in result.items()], tablefmt="plain"))


@bench_app.command("tournament")
def bench_tournament(
    bots: int = typer.Option(4, min=3, help="--scaling: bots in the round robin (4: 4 tables x 6 arrangements)."),
    bot: str = typer.Option("random", "--bot", help="--scaling: the built-in bot that fills the field: random or robot."),
    partie: Optional[int] = typer.Option(None, min=1, help="Partie per table and arrangement (default 12; with --scaling 1)."),
    concurrency: List[int] = typer.Option([1, 2], "--concurrency", "-j", help="--scaling: concurrencies to compare (the last against the first); else the first is used (default 1)."),
    repeats: int = typer.Option(2, min=1, help="--scaling: runs per concurrency, alternated 1,2,2,1,...; the median is reported."),
    match_partie: int = typer.Option(12, "--match-partie", min=1, help="Partie of the long match the tournament is compared with."),
    scaling: bool = typer.Option(False, "--scaling", help="The earlier benchmark: a round robin of --bot at each --concurrency, the speed-up of the last against the first (goal 1.7x)."),
    duel: bool = typer.Option(False, "--duel", help="Also a duel of robot against random (at most --groups groups) cold and warm: partie played and counted per second, CPU per partie by part."),
    groups: int = typer.Option(8, "--groups", min=2, help="--duel: the duel's max_groups."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """One table of robot, robot, random played cold, warm, and as one long match, in one run: partie per second and CPU per partie split into its parts (goals: warm CPU per partie <= 1.2x the match's, warm partie/s >= 3x cold). --scaling: concurrency 2 against 1."""
    from ..tournaments.tournament import bench, bench_warm

    if not scaling:
        result = bench_warm(partie=partie or 12, concurrency=concurrency[0], match_partie=match_partie)
        if duel:
            from ..tournaments.duel import bench as bench_duel

            result.update({f"duel_{k}": v for k, v in bench_duel(groups=groups, concurrency=concurrency[0]).items()})
        _print_bench(result, as_json)
        return
    if bot not in ("random", "robot"):
        raise typer.BadParameter("random or robot", param_hint="--bot")
    _print_bench(bench(bots=bots, partie=partie or 1, concurrency=tuple(concurrency), repeats=repeats, builtin=bot), as_json)
