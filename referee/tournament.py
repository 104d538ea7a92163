"""Tournaments: a field of bots, many partie, in parallel, resumable (protocol/TOURNAMENT.md).

A tournament is a list of *units*.  A unit is one partie (12 deals) at one table
in one seat arrangement: ``(table, partie index, arrangement)``.  Its cards are
fixed before anything is played (a seed, or a line of a deal book) and every
arrangement of a table's three bots plays the same starting deck — the
duplicate idea: over the arrangements each bot holds each seat's cards once, so
the luck of the cards cancels.

Each unit is one call of :func:`referee.match.run_match` writing its own log,
``<output>/logs/<unit id>.jsonl``.  A unit counts as played only when that log is
complete and validates (:func:`referee.validate.validate_file`); anything else is
removed and played again.  So a tournament stopped at any moment — Ctrl-C, a
crash, ``kill -9`` — is finished by running the same command again, and no
partie is lost or counted twice.  The configuration is stored in the output
folder (``tournament.json``); a different configuration is refused, key by key.

Standings and every other table are computed from the logs alone
(:mod:`referee.standings`).
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import os
import secrets
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TextIO

from .bounds import (MAX_BANK_MS, MAX_CONCURRENCY, MAX_FAULTS, MAX_INCREMENT_MS, MAX_MOVE_MS, MAX_PARTIE,
                     MAX_SEED_CHARS, MAX_STARTUP_MS)
from .cards import Card
from .identity import NAME_RE, IdentityError, missing_paths
from .match import BUILTIN_BOTS, BotSpec, FaultPolicy, Limits, MatchConfig, load_decks, run_match
from .sandbox import MODES as SANDBOX_MODES, SandboxLimits
from .pool import Outcome, Pool, Task
from . import results

FORMATS = ("round-robin", "gauntlet", "head-to-head")
HEAD_TO_HEAD = "head-to-head"  # two bots, each deck in the six 2+1 seatings, an SPRT decides (referee/duel.py)
#: Seat arrangements of a table's three bots (bot indices at seats 0, 1, 2).
ARRANGEMENTS: dict[str, list[tuple[int, int, int]]] = {
    "all": list(itertools.permutations(range(3))),  # type: ignore[dict-item]
    "rotations": [(0, 1, 2), (1, 2, 0), (2, 0, 1)],
    "fixed": [(0, 1, 2)],
}
DECK_SCOPES = ("table", "tournament")
STATE_FILE = "tournament.json"
STATE_FORMAT = "marias-tournament"
MANIFEST_FILE = "manifest.json"  # the planned units and their logs: all that `marias table` counts here
MANIFEST_FORMAT = "marias-tournament-manifest"
JOURNAL_FILE = "units.journal"  # JSON lines, one per unit finished or failed, appended as it happens (not *.jsonl: no log)
LOGS_DIR = "logs"
INVALID_DIR = "invalid"  # logs that finished but did not validate (a referee bug): kept for study
LOCK_FILE = ".lock"

TOP_KEYS = ("name", "seed", "format", "gauntlet", "partie", "arrangements", "decks", "time", "faults",
            "concurrency", "output", "bots", "sprt", "sandbox", "bot_limits", "cluster")
BOT_LIMIT_KEYS = ("memory_mb", "processes", "cpu_s", "file_mb")  # referee/sandbox.py SandboxLimits
BOT_KEYS = ("name", "command", "cwd", "env", "move_ms", "startup_ms", *BOT_LIMIT_KEYS, "workdir")
TIME_KEYS = ("move_ms", "startup_ms", "bank_ms", "increment_ms")
FAULT_KEYS = ("max_faults",)
DECK_KEYS = ("book", "scope")
SPRT_KEYS = ("h0", "h1", "alpha", "beta", "max_groups")
SPRT_DEFAULTS = {"h0": 0.0, "h1": 10.0, "alpha": 0.05, "beta": 0.05, "max_groups": 1000}

#: Decisions a deal can ask of the three players, at most (bids, talon, fleks, 30 plays), for the wall-clock limit.
MAX_DECISIONS_PER_DEAL = 100
CLUSTER_RE = __import__("re").compile(r"^(tcp|tls|inproc|ucx|ws|wss)://\S+$")
UNIT_MARGIN_S = 60.0  # added to a unit's wall-clock limit (worker start, validation, a loaded machine)


class ConfigError(ValueError):
    """A tournament configuration that cannot be used; one message per problem (``file:line: key: ...``)."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class TournamentError(RuntimeError):
    """The tournament cannot start or continue (a changed configuration, a busy folder, ...)."""


# ------------------------------------------------------------------ configuration

@dataclass
class BotEntry:
    """One bot of the field: a unique name and how to start it."""

    name: str
    command: str | list[str]  # a built-in (random, random:SEED, robot) or a command line / argv list
    cwd: str | None = None  # relative to the configuration file's folder
    env: dict[str, str] = field(default_factory=dict)
    move_ms: int | None = None  # this bot's time per decision (default: time.move_ms)
    startup_ms: int | None = None  # this bot's time to start and answer hello (default: time.startup_ms)
    limits: dict[str, int] = field(default_factory=dict)  # this bot's sandbox limits (default: bot_limits)
    workdir: str | None = None  # its writable folder, relative to the configuration's folder (default: a fresh one)

    @property
    def builtin(self) -> str | None:
        if isinstance(self.command, str) and " " not in self.command:
            name = self.command.partition(":")[0]
            if name in BUILTIN_BOTS:
                return name
        return None

    def spec(self, base_dir: Path, seed: str, fingerprint: str | None = None) -> BotSpec:
        """The :class:`BotSpec` for one unit (``seed`` seeds a built-in random bot without its own)."""
        if isinstance(self.command, list):
            spec = BotSpec(label=self.name, argv=list(self.command))
        else:
            spec = BotSpec.parse(self.command, seed=seed)
        spec.label = self.name
        if spec.builtin is None or self.cwd:
            spec.cwd = str((base_dir / (self.cwd or ".")).resolve())
        spec.env = dict(self.env) or None
        spec.move_ms = self.move_ms
        spec.startup_ms = self.startup_ms
        for key, value in self.limits.items():
            setattr(spec, key, value)
        if self.workdir:
            spec.workdir = str((base_dir / self.workdir).resolve())
        spec.fingerprint = fingerprint
        return spec

    def to_dict(self) -> dict:
        return {"name": self.name, "command": self.command, "cwd": self.cwd, "env": dict(sorted(self.env.items())),
                "move_ms": self.move_ms, "startup_ms": self.startup_ms}


@dataclass
class TournamentConfig:
    bots: list[BotEntry]
    name: str = "tournament"
    seed: str | None = None  # None: drawn at random when the tournament is created (see prepare_output)
    format: str = "round-robin"
    gauntlet: str | None = None
    partie: int = 1  # partie per table and arrangement
    arrangements: str = "all"
    deck_scope: str = "table"
    deck_book: Path | None = None
    decks: list[list[Card]] | None = None
    limits: Limits = field(default_factory=Limits)
    max_faults: int = 3
    concurrency: int | None = None  # default: os.cpu_count()
    output: Path = Path("tournament")
    sprt: dict | None = None  # head-to-head: h0, h1, alpha, beta, max_groups (SPRT_KEYS)
    base_dir: Path = Path(".")  # where relative cwd and deal book paths start
    source: str = "command line"
    lines: dict[tuple, int] = field(default_factory=dict, repr=False)  # key path -> line in the source
    sandbox: str = "auto"  # auto | bwrap | required | none (referee/sandbox.py)
    bot_limits: SandboxLimits = field(default_factory=SandboxLimits)  # every bot's, unless its own keys say
    allow_changed_bots: bool = False  # a resume accepts bots whose fingerprint changed
    cluster: str | None = None  # a Dask scheduler's address (tcp://HOST:8786): play there (referee/cluster.py)
    seed_drawn: bool = False  # the seed was drawn at random by this run
    _fingerprints: dict[str, str] | None = field(default=None, repr=False)

    def bot(self, name: str) -> BotEntry:
        return next(b for b in self.bots if b.name == name)

    def fingerprints(self) -> dict[str, str]:
        """Each bot's fingerprint (:mod:`referee.identity`), computed once; IdentityError names the bot."""
        if self._fingerprints is None:
            out = {}
            for b in self.bots:
                try:
                    out[b.name] = b.spec(self.base_dir, seed="0").identity()["fingerprint"]
                except IdentityError as e:
                    raise ConfigError([f"{self.source}: bot {b.name!r}: {e}"]) from None
            self._fingerprints = out
        return self._fingerprints

    def where(self, *path) -> str:
        """``file:line: key`` for messages about a key of the configuration."""
        line = self.lines.get(tuple(path))
        return f"{self.source}:{line}: {_dotted(path)}" if line else f"{self.source}: {_dotted(path)}"


def _dotted(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def _yaml_lines(node, path=(), lines=None, problems=None, source="") -> dict[tuple, int]:
    """Map each key path of a composed YAML document to its 1-based line; flag duplicate keys."""
    import yaml

    if lines is None:
        lines = {(): node.start_mark.line + 1}
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for knode, vnode in node.value:
            key = knode.value if isinstance(knode, yaml.ScalarNode) else repr(knode)
            line = knode.start_mark.line + 1
            if key in seen and problems is not None:
                problems.append(f"{source}:{line}: {_dotted(path + (key,))}: duplicate key (first given on line {seen[key]})")
            seen[key] = line
            lines[path + (key,)] = line
            _yaml_lines(vnode, path + (key,), lines, problems, source)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[path + (i,)] = item.start_mark.line + 1
            _yaml_lines(item, path + (i,), lines, problems, source)
    return lines


def load_config(path: str | os.PathLike) -> TournamentConfig:
    """Read and check a tournament YAML file; :class:`ConfigError` names the file, line and key."""
    import yaml

    path = Path(path)
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError([f"{source}: cannot read the configuration: {e.strerror or e}"]) from None
    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = getattr(e, "problem", None) or str(e)
        raise ConfigError([f"{where}: not valid YAML: {problem}"]) from None
    if node is None:
        raise ConfigError([f"{source}:1: (top level): the file is empty; a tournament needs at least 'bots'"])
    problems: list[str] = []
    lines = _yaml_lines(node, problems=problems, source=source)
    if problems:
        raise ConfigError(problems)
    return config_from_data(data, source=source, lines=lines, base_dir=path.resolve().parent,
                            default_name=path.stem)


def config_from_options(bots: list[str], **options) -> TournamentConfig:
    """A configuration from command-line flags: ``bots`` as ``NAME=COMMAND`` (or a built-in name alone).

    ``options`` are the file's keys (``format``, ``gauntlet``, ``partie``, ``arrangements``, ``seed``,
    ``deck_book``, ``deck_scope``, ``move_ms``, ``startup_ms``, ``bank_ms``, ``increment_ms``,
    ``max_faults``, ``concurrency``, ``output``, ``name``); None means the default.
    """
    problems = []
    entries = []
    for i, value in enumerate(bots):
        name, eq, command = value.partition("=")
        if not eq:
            if NAME_RE.match(value.replace(":", "-")) and value.partition(":")[0] in BUILTIN_BOTS:
                name, command = value.replace(":", "-"), value
            else:
                problems.append(f"command line: --bot {value!r}: give NAME=COMMAND, e.g. js=\"node examples/js/bot.js\"")
                continue
        entries.append({"name": name.strip(), "command": command.strip()})
    if problems:
        raise ConfigError(problems)
    data: dict[str, Any] = {"bots": entries}
    for key in ("name", "seed", "format", "gauntlet", "partie", "arrangements", "concurrency", "output"):
        if options.get(key) is not None:
            data[key] = options[key]
    decks = {k: options[o] for k, o in (("book", "deck_book"), ("scope", "deck_scope")) if options.get(o) is not None}
    if decks:
        data["decks"] = {k: str(v) if k == "book" else v for k, v in decks.items()}
    tm = {k: options[k] for k in TIME_KEYS if options.get(k) is not None}
    if tm:
        data["time"] = tm
    if options.get("max_faults") is not None:
        data["faults"] = {"max_faults": options["max_faults"]}
    sprt = {k: options[k] for k in SPRT_KEYS if options.get(k) is not None}
    if sprt:
        data["sprt"] = sprt
    if options.get("sandbox") is not None:
        data["sandbox"] = options["sandbox"]
    bl = {k: options[k] for k in BOT_LIMIT_KEYS if options.get(k) is not None}
    if bl:
        data["bot_limits"] = bl
    return config_from_data(data, source="command line", lines={}, base_dir=Path.cwd(), default_name="tournament")


def config_from_data(data: Any, *, source: str, lines: dict[tuple, int], base_dir: Path,
                     default_name: str = "tournament") -> TournamentConfig:
    """Check a parsed configuration (a YAML document or the flags) and build the config."""
    c = _Checker(source, lines)
    if not isinstance(data, dict):
        raise ConfigError([c.msg((), f"the configuration is a mapping of keys (name, bots, format, ...), got {_kind(data)}")])
    c.keys(data, (), TOP_KEYS)

    cfg = TournamentConfig(bots=[], base_dir=base_dir, source=source, lines=dict(lines))
    cfg.name = c.text(data, ("name",), default=default_name) or default_name
    seed = data.get("seed")
    if seed is None:
        cfg.seed = None
    elif isinstance(seed, bool) or not isinstance(seed, (int, str)) or (isinstance(seed, str) and not seed.strip()):
        c.err(("seed",), f"a seed is a whole number or a non-empty string, got {_kind(seed)}")
    elif len(str(seed).strip()) > MAX_SEED_CHARS:
        c.err(("seed",), f"a seed is at most {MAX_SEED_CHARS} characters, got {len(str(seed).strip())}")
    else:
        cfg.seed = str(seed).strip()
    cfg.format = c.choice(data, ("format",), FORMATS, "round-robin")
    cfg.partie = c.integer(data, ("partie",), 1, minimum=1, maximum=MAX_PARTIE)
    cfg.arrangements = c.choice(data, ("arrangements",), tuple(ARRANGEMENTS), "all")
    conc = data.get("concurrency")
    cfg.concurrency = None if conc in (None, "auto") else c.integer(data, ("concurrency",), 1, minimum=1,
                                                                    maximum=MAX_CONCURRENCY)
    cfg.output = Path(c.text(data, ("output",), default=f"tournament-{cfg.name}") or f"tournament-{cfg.name}")

    tm = c.section(data, "time", TIME_KEYS)
    cfg.limits = Limits(
        move_ms=c.integer(tm, ("time", "move_ms"), 2000, minimum=1, maximum=MAX_MOVE_MS),
        startup_ms=c.integer(tm, ("time", "startup_ms"), 10_000, minimum=1, maximum=MAX_STARTUP_MS),
        bank_ms=c.integer(tm, ("time", "bank_ms"), None, minimum=1, maximum=MAX_BANK_MS),
        increment_ms=c.integer(tm, ("time", "increment_ms"), 0, minimum=0, maximum=MAX_INCREMENT_MS),
    )
    fl = c.section(data, "faults", FAULT_KEYS)
    cfg.max_faults = c.integer(fl, ("faults", "max_faults"), 3, minimum=1, maximum=MAX_FAULTS)
    cfg.sandbox = c.choice(data, ("sandbox",), SANDBOX_MODES, "auto")
    cl = data.get("cluster")
    if cl is not None:
        if not isinstance(cl, str) or not CLUSTER_RE.match(cl.strip()):
            c.err(("cluster",), f"a Dask scheduler's address such as tcp://HOST:8786 (tcp://, tls:// or inproc://), "
                                f"got {cl!r}")
        else:
            cfg.cluster = cl.strip()
    bl = c.section(data, "bot_limits", BOT_LIMIT_KEYS)
    default_limits = SandboxLimits()
    cfg.bot_limits = SandboxLimits(**{k: c.integer(bl, ("bot_limits", k), getattr(default_limits, k), minimum=1)
                                      for k in BOT_LIMIT_KEYS})

    # bots
    bots = data.get("bots")
    names: dict[str, int] = {}
    if bots is None:
        c.err((), "'bots' is missing: list at least three bots, each with a name and a command")
    elif not isinstance(bots, list):
        c.err(("bots",), f"a list of bots is needed (each with name and command), got {_kind(bots)}")
    else:
        for i, b in enumerate(bots):
            p = ("bots", i)
            if not isinstance(b, dict):
                c.err(p, f"a bot is a mapping with name and command, got {_kind(b)}")
                continue
            c.keys(b, p, BOT_KEYS)
            name = c.text(b, p + ("name",), required=True)
            if name is not None:
                if not NAME_RE.match(name):
                    c.err(p + ("name",), f"{name!r}: a bot name is 1-40 letters, digits or _.+- (starting with a letter or digit)")
                elif name in names:
                    c.err(p + ("name",), f"{name!r} is already the name of bots[{names[name]}]; names must be unique")
                else:
                    names[name] = i
            command = b.get("command")
            if command is None:
                c.err(p, "'command' is missing: a built-in (random, random:SEED, robot) or a command line")
            elif isinstance(command, str):
                if not command.strip():
                    c.err(p + ("command",), "the command is empty")
                else:
                    try:
                        BotSpec.parse(command.strip())
                    except ValueError as e:
                        c.err(p + ("command",), str(e))
                    command = command.strip()
            elif isinstance(command, list):
                if not command or not all(isinstance(a, (str, int, float)) and not isinstance(a, bool) for a in command):
                    c.err(p + ("command",), "a command given as a list needs one or more strings (the argv)")
                else:
                    command = [str(a) for a in command]
            else:
                c.err(p + ("command",), f"a command is a string or a list of strings, got {_kind(command)}")
            cwd = c.text(b, p + ("cwd",))
            env = b.get("env") or {}
            if not isinstance(env, dict):
                c.err(p + ("env",), f"env is a mapping of variable: value, got {_kind(env)}")
                env = {}
            clean_env = {}
            for k, v in env.items():
                if not isinstance(k, str) or not k or "=" in k:
                    c.err(p + ("env", k), "an environment variable name is a non-empty string without '='")
                elif isinstance(v, (dict, list)) or v is None:
                    c.err(p + ("env", k), f"an environment value is a string or a number, got {_kind(v)}")
                else:
                    clean_env[k] = str(v).lower() if isinstance(v, bool) else str(v)
            move = c.integer(b, p + ("move_ms",), None, minimum=1, maximum=MAX_MOVE_MS)
            startup = c.integer(b, p + ("startup_ms",), None, minimum=1, maximum=MAX_STARTUP_MS)
            own = {k: c.integer(b, p + (k,), None, minimum=1) for k in BOT_LIMIT_KEYS}
            workdir = c.text(b, p + ("workdir",))
            if name is not None and command is not None and not isinstance(command, (dict, int, float)):
                cfg.bots.append(BotEntry(name, command, cwd, clean_env, move, startup,
                                         {k: v for k, v in own.items() if v is not None}, workdir))
        if cfg.format == HEAD_TO_HEAD and len(bots) != 2:
            c.err(("bots",), f"format head-to-head compares two bots: list exactly two, got {len(bots)}")
        elif cfg.format != HEAD_TO_HEAD and len(bots) < 3:
            c.err(("bots",), f"a table seats three bots: list at least three, got {len(bots)}")

    # gauntlet
    gauntlet = data.get("gauntlet")
    if cfg.format == "gauntlet":
        if gauntlet is None:
            c.err(("format",), "format gauntlet needs 'gauntlet: NAME', the bot that meets every pair of the others")
        elif gauntlet not in names:
            if isinstance(gauntlet, str) and names:
                near = difflib.get_close_matches(gauntlet, list(names), 1)
                hint = f" (did you mean {near[0]!r}?)" if near else f" (bots: {', '.join(names)})"
            else:
                hint = ""
            c.err(("gauntlet",), f"{gauntlet!r} is not the name of a bot{hint}")
        else:
            cfg.gauntlet = gauntlet
    elif gauntlet is not None:
        c.err(("gauntlet",), "'gauntlet' only goes with format: gauntlet")

    # head-to-head: the SPRT's design; the seatings are the format's own
    sp = c.section(data, "sprt", SPRT_KEYS)
    if cfg.format == HEAD_TO_HEAD:
        for key in ("partie", "arrangements"):
            if key in data:
                c.err((key,), "format head-to-head plays each deck once in each of its six seatings; "
                              f"'{key}' does not apply (set sprt.max_groups to bound the test)")
        cfg.sprt = {k: c.number(sp, ("sprt", k), SPRT_DEFAULTS[k]) for k in ("h0", "h1", "alpha", "beta")}
        cfg.sprt["max_groups"] = c.integer(sp, ("sprt", "max_groups"), SPRT_DEFAULTS["max_groups"],
                                           minimum=1, maximum=1_000_000)
        if not c.problems:
            from .sprt import SPRT
            try:
                SPRT(**cfg.sprt)
            except ValueError as e:
                c.err(("sprt",), str(e))
    elif "sprt" in data:
        c.err(("sprt",), "'sprt' only goes with format: head-to-head")

    # decks
    dk = c.section(data, "decks", DECK_KEYS)
    cfg.deck_scope = c.choice(dk, ("decks", "scope"), DECK_SCOPES, "table")
    book = c.text(dk, ("decks", "book"))
    if book is not None:
        book_path = (base_dir / book) if not os.path.isabs(book) else Path(book)
        try:
            cfg.decks = load_decks(book_path)
            cfg.deck_book = book_path
        except OSError as e:
            c.err(("decks", "book"), f"cannot read the deal book {str(book_path)!r}: {e.strerror or e}")
        except ValueError as e:
            c.err(("decks", "book"), f"bad deal book: {e}")

    if not c.problems and cfg.decks is not None and cfg.format == HEAD_TO_HEAD:
        if len(cfg.decks) < cfg.sprt["max_groups"]:
            c.err(("decks", "book"), f"the deal book holds {len(cfg.decks)} deck(s) but the head-to-head test may play "
                                      f"{cfg.sprt['max_groups']} groups (one deck each); lower sprt.max_groups")
    elif not c.problems and cfg.decks is not None:
        need = deck_slots(cfg)
        if len(cfg.decks) < need:
            c.err(("decks", "book"), f"the deal book holds {len(cfg.decks)} deck(s) but this tournament needs {need} "
                                      f"({'one per partie index' if cfg.deck_scope == 'tournament' else 'one per table and partie index'})")
    if c.problems:
        raise ConfigError(c.problems)
    return cfg


def _kind(v) -> str:
    if v is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: f"the string {v!r}", bool: f"the boolean {v}"}.get(
        type(v), f"{type(v).__name__} {v!r}")


class _Checker:
    def __init__(self, source: str, lines: dict[tuple, int]):
        self.source = source
        self.lines = lines
        self.problems: list[str] = []

    def msg(self, path: tuple, text: str) -> str:
        p = tuple(path)
        while p not in self.lines and p:
            p = p[:-1]
        line = self.lines.get(p)
        where = f"{self.source}:{line}" if line else self.source
        return f"{where}: {_dotted(path)}: {text}"

    def err(self, path: tuple, text: str) -> None:
        self.problems.append(self.msg(path, text))

    def keys(self, d: dict, path: tuple, allowed: tuple) -> None:
        for k in d:
            if k not in allowed:
                near = difflib.get_close_matches(str(k), allowed, 1)
                hint = f"; did you mean {near[0]!r}?" if near else f"; known keys: {', '.join(allowed)}"
                self.err(path + (k,), f"unknown key{hint}")

    def section(self, d: dict, key: str, allowed: tuple) -> dict:
        v = d.get(key)
        if v is None:
            return {}
        if not isinstance(v, dict):
            self.err((key,), f"a mapping with keys {', '.join(allowed)} is needed, got {_kind(v)}")
            return {}
        self.keys(v, (key,), allowed)
        return v

    def integer(self, d: dict, path: tuple, default, *, minimum: int | None = None, maximum: int | None = None):
        v = d.get(path[-1])
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int):
            self.err(path, f"a whole number is needed, got {_kind(v)}")
            return default
        if minimum is not None and v < minimum:
            self.err(path, f"must be at least {minimum}, got {v}")
            return default
        if maximum is not None and v > maximum:
            self.err(path, f"must be at most {maximum}, got {v}")
            return default
        return v

    def number(self, d: dict, path: tuple, default: float) -> float:
        v = d.get(path[-1])
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
            self.err(path, f"a number is needed, got {_kind(v)}")
            return default
        return float(v)

    def text(self, d: dict, path: tuple, *, default=None, required=False):
        v = d.get(path[-1])
        if v is None:
            if required:
                self.err(path[:-1], f"'{path[-1]}' is missing")
            return default
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            v = str(v)
        if not isinstance(v, str) or not v.strip():
            self.err(path, f"a non-empty string is needed, got {_kind(v)}")
            return default
        return v.strip()

    def choice(self, d: dict, path: tuple, options: tuple, default: str) -> str:
        v = d.get(path[-1])
        if v is None:
            return default
        if v not in options:
            near = difflib.get_close_matches(str(v), options, 1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            self.err(path, f"{v!r} is not one of {', '.join(options)}{hint}")
            return default
        return v


def check_commands(cfg: TournamentConfig) -> list[str]:
    """Problems found without starting anything: a missing working folder, program, or file the
    command names (``python3 ./nope.py``), each with the configuration line of the bot."""
    problems = []
    for i, b in enumerate(cfg.bots):
        if b.builtin:
            continue
        spec = b.spec(cfg.base_dir, seed="0")
        if spec.cwd and not os.path.isdir(spec.cwd):
            problems.append(f"{cfg.where('bots', i, 'cwd') if b.cwd else cfg.where('bots', i)}: the folder {spec.cwd!r} does not exist")
            continue
        for problem in missing_paths(spec.argv, spec.cwd):
            problems.append(f"{cfg.where('bots', i, 'command')}: {problem}")
    return problems


def canonical(cfg: TournamentConfig) -> dict:
    """What defines the tournament's games (not how it is run: concurrency and output are left out)."""
    book = None
    if cfg.decks is not None:
        text = "\n".join(" ".join(str(c) for c in d) for d in cfg.decks)
        book = {"decks": len(cfg.decks), "sha256": hashlib.sha256(text.encode()).hexdigest()}
    lim = cfg.limits
    return {
        "name": cfg.name,
        "seed": cfg.seed,
        "format": cfg.format,
        "gauntlet": cfg.gauntlet,
        "partie": cfg.partie,
        "arrangements": cfg.arrangements,
        "decks": {"scope": cfg.deck_scope, "book": book},
        "time": {"move_ms": lim.move_ms, "startup_ms": lim.startup_ms, "bank_ms": lim.bank_ms,
                 "increment_ms": lim.increment_ms},
        "faults": {"max_faults": cfg.max_faults},
        "bots": [b.to_dict() for b in cfg.bots],
        **({"sprt": dict(cfg.sprt)} if cfg.format == HEAD_TO_HEAD and cfg.sprt else {}),
        "fingerprints": dict(cfg.fingerprints()),
    }


def _flatten(value, path="") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{path}.{k}" if path else str(k)))
        return out
    if isinstance(value, list) and value and any(isinstance(v, dict) for v in value):
        out = {}
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{path}[{i}]"))
        return out
    return {path: value}


def diff_config(old: dict, new: dict) -> list[str]:
    """Key-by-key differences between two canonical configurations: ``key: old -> new``."""
    a, b = _flatten(old), _flatten(new)
    out = []
    for k in sorted(set(a) | set(b), key=lambda k: (k.split(".")[0], k)):
        if k not in a:
            out.append(f"{k}: added ({json.dumps(b[k], ensure_ascii=False)})")
        elif k not in b:
            out.append(f"{k}: removed (was {json.dumps(a[k], ensure_ascii=False)})")
        elif a[k] != b[k]:
            out.append(f"{k}: {json.dumps(a[k], ensure_ascii=False)} -> {json.dumps(b[k], ensure_ascii=False)}")
    return out


# ------------------------------------------------------------------ planning

@dataclass(frozen=True)
class Unit:
    """One partie at one table in one seat arrangement."""

    id: str
    table: int  # 1-based, in plan order
    table_bots: tuple[str, str, str]  # the table's bots in configuration order
    arrangement: tuple[int, int, int]  # index into table_bots for seats 0, 1, 2
    partie: int  # 1-based index of the partie at the table
    match_seed: str  # MatchConfig.seed; the log holds one partie, seeded f"{match_seed}:1"
    deck_slot: int  # the deal-book line (0-based) or the seed slot

    @property
    def seats(self) -> tuple[str, str, str]:
        return tuple(self.table_bots[i] for i in self.arrangement)  # type: ignore[return-value]

    @property
    def partie_seed(self) -> str:
        return f"{self.match_seed}:1"


def tables(cfg: TournamentConfig) -> list[tuple[str, str, str]]:
    """Round robin: every group of three bots; gauntlet: the gauntlet bot with every pair of the others."""
    names = [b.name for b in cfg.bots]
    if cfg.format == "gauntlet":
        others = [n for n in names if n != cfg.gauntlet]
        return [(cfg.gauntlet, a, b) for a, b in itertools.combinations(others, 2)]  # type: ignore[misc]
    return list(itertools.combinations(names, 3))  # type: ignore[arg-type]


def deck_slots(cfg: TournamentConfig) -> int:
    """How many distinct starting decks the tournament plays."""
    return cfg.partie if cfg.deck_scope == "tournament" else len(tables(cfg)) * cfg.partie


def plan_units(cfg: TournamentConfig) -> list[Unit]:
    """Every unit, ordered partie index first (so standings fill evenly), then table, then arrangement.

    The seed must be set (``prepare_output`` draws one when the configuration has none)."""
    if cfg.seed is None:
        raise ValueError("the tournament has no seed yet: prepare_output draws one, or give seed")
    tbs = tables(cfg)
    arrs = ARRANGEMENTS[cfg.arrangements]
    tw = max(2, len(str(len(tbs))))
    pw = max(2, len(str(cfg.partie)))
    units = []
    for k in range(1, cfg.partie + 1):
        for t, tb in enumerate(tbs, 1):
            if cfg.deck_scope == "tournament":
                match_seed, slot = f"{cfg.seed}:{k}", k - 1
            else:
                match_seed, slot = f"{cfg.seed}:t{t}:{k}", (t - 1) * cfg.partie + (k - 1)
            for arr in arrs:
                uid = f"t{t:0{tw}d}-p{k:0{pw}d}-s{''.join(map(str, arr))}"
                units.append(Unit(uid, t, tb, arr, k, match_seed, slot))
    return units


# ------------------------------------------------------------------ playing one unit (in a worker process)

def unit_seed(cfg: TournamentConfig, unit: Unit, bot: str) -> str:
    """The seed of a built-in random bot without its own: derived from the tournament seed by a
    hash, so that a bot's command line (visible to other processes without a sandbox) never shows it."""
    return hashlib.sha256(f"{cfg.seed}:{unit.id}:{bot}".encode()).hexdigest()[:16]


def unit_job(cfg: TournamentConfig, unit: Unit, logs: Path, sign_key: bytes | None = None) -> dict:
    """Everything a worker needs to play ``unit`` (plain data)."""
    fps = cfg.fingerprints()
    specs = [cfg.bot(n).spec(cfg.base_dir, seed=unit_seed(cfg, unit, n), fingerprint=fps[n]) for n in unit.seats]
    deck = cfg.decks[unit.deck_slot] if cfg.decks is not None else None
    return {"id": unit.id, "specs": specs, "seed": unit.match_seed, "partie": unit.partie,
            "deck": [int(c) for c in deck] if deck is not None else None, "limits": cfg.limits,
            "max_faults": cfg.max_faults, "log": str(logs / f"{unit.id}.jsonl"), "seats": list(unit.seats),
            "sign_key": sign_key,
            "sandbox": cfg.sandbox, "sandbox_limits": cfg.bot_limits, "sandbox_hide": sandbox_hide(cfg)}


def sandbox_hide(cfg: TournamentConfig) -> tuple[str, ...]:
    """What no bot of the tournament may see: its output folder and its deal book (every hand is in it)."""
    return tuple(str(Path(p).resolve()) for p in (cfg.output, cfg.deck_book) if p is not None)


def unit_wall_seconds(cfg: TournamentConfig, unit: Unit) -> float:
    """The wall-clock limit of one unit: every start-up a partie can need (each seat started once
    and restarted after each of its faults), every decision at its time limit, and a margin."""
    bots = [cfg.bot(n) for n in unit.seats]
    move = max(b.move_ms or cfg.limits.move_ms for b in bots)
    startup = max(b.startup_ms or cfg.limits.startup_ms for b in bots)
    starts = 3 * (1 + cfg.max_faults)
    return (starts * startup + 12 * MAX_DECISIONS_PER_DEAL * move) / 1000 + UNIT_MARGIN_S


def play_unit(job: dict) -> dict:
    """Play one unit (one partie) with :func:`run_match`, then validate its log (here, in the worker,
    so that the parent stays light).  ``valid`` is None for a valid log, else the first problem."""
    deck = [Card(c) for c in job["deck"]] if job["deck"] is not None else None
    log = Path(job["log"])
    config = MatchConfig(bots=job["specs"], partie=1, seed=job["seed"], decks=[deck] if deck else None,
                         limits=job["limits"], policy=FaultPolicy(max_faults=job["max_faults"]), log_path=log,
                         sign_key=job.get("sign_key"), sandbox=job["sandbox"], sandbox_limits=job["sandbox_limits"],
                         sandbox_hide=job["sandbox_hide"])
    t0 = time.perf_counter()
    result = run_match(config)
    seconds = time.perf_counter() - t0
    why = check_unit_log(log, seats=job.get("seats"))
    return {"id": job["id"], "names": [s.label for s in job["specs"]], "totals": result.totals,
            "faults": len(result.faults), "fault_texts": [f"{job['id']}: {f['text']}" for f in result.faults[:3]],
            "seconds": seconds, "valid": why,
            "sha256": file_sha256(log) if log.exists() else None}


# ------------------------------------------------------------------ unit logs

def unit_log(out: Path, unit: Unit) -> Path:
    return out / LOGS_DIR / f"{unit.id}.jsonl"


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_unit_log(path: Path, unit: Unit | None = None, *, seats: list[str] | None = None) -> str | None:
    """None when ``path`` is a complete, valid log (of ``unit``'s seats); otherwise why not.
    The full check: every deal replayed (:func:`referee.validate.validate_file`)."""
    from .validate import validate_file

    if not path.exists():
        return "no log"
    report = validate_file(path)
    if not report.complete:
        return "incomplete (no footer)"
    if not report.ok:
        return report.lines()[0]
    want = list(unit.seats) if unit is not None else seats
    if want is not None:
        labels = _log_ends(path)[0]
        if labels != list(want):
            return f"the log seats {labels}, the plan {list(want)}"
    return None


def check_chain(path: Path) -> str | None:
    """The parent's check of a log's seal (issue 10's hash chain), the hook for it: None when the
    log carries no chain or the chain holds, else the first problem (``line N: ...``).

    It uses ``referee.seal.chain_problems(lines, ends_with_newline) -> [(line, problem)]`` where
    that module exists (one SHA-256 per line: cheap enough for the parent); a log whose last line
    carries no ``"chain"`` field is not sealed and passes."""
    try:
        from .seal import chain_problems  # type: ignore[import-not-found]
    except ImportError:
        return None
    data = path.read_bytes()
    ends = data.endswith(b"\n")
    lines = data.split(b"\n")
    if ends:
        lines.pop()
    if not lines or b'"chain":"' not in lines[-1]:
        return None
    problems = chain_problems(lines, ends)
    return f"line {problems[0][0]}: {problems[0][1]}" if problems else None


def quick_check_unit_log(path: Path, unit: Unit, result: dict | None = None) -> str | None:
    """The parent's cheap check of a log its worker validated: it exists, is complete, seats the
    plan's bots, has the content the worker hashed and the totals it reported, and its chain holds."""
    if not path.exists():
        return "no log"
    labels, footer = _log_ends(path)
    if footer is None:
        return "incomplete (no footer)"
    if labels != list(unit.seats):
        return f"the log seats {labels}, the plan {list(unit.seats)}"
    if result is not None:
        if result.get("sha256") and file_sha256(path) != result["sha256"]:
            return "the log changed after its worker validated it"
        if list(footer.get("totals") or []) != list(result.get("totals") or []):
            return f"the log's totals {footer.get('totals')} are not the worker's {result.get('totals')}"
    return check_chain(path)


def _log_ends(path: Path) -> tuple[list, dict | None]:
    """The header's bot labels and the footer (None when the last line is not one), reading only the ends."""
    with open(path, "rb") as f:
        first = f.readline()
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - 65536))
        tail = f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    try:
        header = json.loads(first)
    except ValueError:
        header = {}
    try:
        footer = json.loads(tail)
    except ValueError:
        footer = None
    if not isinstance(footer, dict) or footer.get("type") != "footer":
        footer = None
    bots = header.get("bots", []) if isinstance(header, dict) else []
    return [b.get("label") for b in bots if isinstance(b, dict)], footer


def remove_unit_files(out: Path, unit: Unit) -> None:
    """The unit's log and its bots' stderr/transcript files."""
    for p in (out / LOGS_DIR).glob(f"{unit.id}.*"):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def _log_totals(path: Path) -> tuple[list[str], list[int]] | None:
    labels, footer = _log_ends(path)
    if footer is None:
        return None
    return labels, list(footer.get("totals", []))


# ------------------------------------------------------------------ the output folder

class _FolderLock:
    def __init__(self, out: Path):
        self.path = out / LOCK_FILE
        self.f = None

    def __enter__(self):
        import fcntl
        self.f = open(self.path, "a+")
        try:
            fcntl.flock(self.f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.f.close()
            raise TournamentError(f"{self.path.parent}: another marias tournament is running on this folder") from None
        return self

    def __exit__(self, *exc):
        import fcntl
        fcntl.flock(self.f.fileno(), fcntl.LOCK_UN)
        self.f.close()


def _write_json(path: Path, body: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def manifest(cfg: TournamentConfig) -> dict:
    """The planned units: id, log file (relative to the output folder), table, partie, seats."""
    return {"format": MANIFEST_FORMAT, "version": 1, "name": cfg.name,
            "units": [{"id": u.id, "log": f"{LOGS_DIR}/{u.id}.jsonl", "table": u.table, "partie": u.partie,
                       "seats": list(u.seats)} for u in plan_units(cfg)]}


def read_manifest(folder: Path) -> dict | None:
    """The manifest of a tournament folder (None when there is none); ValueError when it is unreadable."""
    path = Path(folder) / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a tournament manifest ({e})") from None
    if not isinstance(body, dict) or body.get("format") != MANIFEST_FORMAT or not isinstance(body.get("units"), list):
        raise ValueError(f"{path}: not a tournament manifest")
    return body


def journal(out: Path) -> dict[str, dict]:
    """The last journal entry of each unit (``status`` done or failed)."""
    entries: dict[str, dict] = {}
    path = out / JOURNAL_FILE
    if not path.exists():
        return entries
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash
        if isinstance(e, dict) and isinstance(e.get("id"), str):
            entries[e["id"]] = e
    return entries


def _journal_add(out: Path, entry: dict) -> None:
    entry = {**entry, "t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with open(out / JOURNAL_FILE, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")


def prepare_output(cfg: TournamentConfig, *, resume: bool = False) -> str:
    """Create or check ``cfg.output``: 'new' or 'resume'.  A changed configuration is refused, and so
    is a bot whose fingerprint changed (unless ``cfg.allow_changed_bots``).  Without a seed, a new
    tournament draws one (``secrets.token_hex(16)``) and a resumed one takes the stored one."""
    out = cfg.output
    state = out / STATE_FILE
    if state.exists():
        try:
            old = json.loads(state.read_text(encoding="utf-8"))
            old_cfg = old["config"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise TournamentError(f"{state}: not a tournament state file ({e}); use another output folder") from None
        if cfg.seed is None:
            cfg.seed = str(old_cfg.get("seed"))
        canon = canonical(cfg)
        changes = diff_config(old_cfg, canon)
        bot_changes = [c for c in changes if c.startswith("fingerprints.")]
        if bot_changes and cfg.allow_changed_bots:
            changes = [c for c in changes if not c.startswith("fingerprints.")]
        if changes:
            hint = ("\nA bot's files changed since the tournament started; pass --allow-changed-bots to go on "
                    "with the new version (its partie of both versions are then counted together)."
                    if changes == bot_changes else "")
            raise TournamentError(
                f"{out} holds a tournament with another configuration ({state}); changed:\n  " + "\n  ".join(changes)
                + "\nRestore the configuration to finish that tournament, or choose another output folder." + hint)
        if bot_changes:  # allowed: the stored fingerprints follow, and the change is on record
            old["config"]["fingerprints"] = canon["fingerprints"]
            old.setdefault("bot_changes", []).append(
                {"t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "changed": bot_changes})
            _write_json(state, old)
        if not (out / MANIFEST_FILE).exists():
            _write_json(out / MANIFEST_FILE, manifest(cfg))
        return "resume"
    if resume:
        raise TournamentError(f"nothing to resume: {out} holds no tournament ({STATE_FILE} is missing)")
    logs = out / LOGS_DIR
    if logs.is_dir() and any(logs.rglob("*.jsonl")):
        raise TournamentError(f"{out} holds logs but no {STATE_FILE}; choose an empty or new output folder")
    if cfg.seed is None:
        cfg.seed = secrets.token_hex(16)
        cfg.seed_drawn = True
    out.mkdir(parents=True, exist_ok=True)
    canon = canonical(cfg)
    units = plan_units(cfg)
    body = {"format": STATE_FORMAT, "version": 1, "config": canon,
            "config_sha256": hashlib.sha256(json.dumps(canon, sort_keys=True).encode()).hexdigest(),
            "seed_drawn": cfg.seed_drawn,
            "source": cfg.source, "units": len(units), "deals": 12 * len(units),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    _write_json(out / MANIFEST_FILE, manifest(cfg))
    _write_json(state, body)
    return "new"


# ------------------------------------------------------------------ progress

class Progress:
    """partie done / total, ETA and the current leader on stderr: one updating line on a tty,
    a line every ``interval`` seconds otherwise."""

    def __init__(self, total: int, done: int, stream: TextIO | None = None, interval: float = 10.0):
        self.total = total
        self.done = done
        self.start_done = done
        self.stream = stream
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self.interval = interval
        self.t0 = time.monotonic()
        self.last = 0.0
        self.groše: dict[str, int] = {}
        self.played: dict[str, int] = {}

    def add(self, names, totals) -> None:
        for n, g in zip(names, totals):
            self.groše[n] = self.groše.get(n, 0) + g
            self.played[n] = self.played.get(n, 0) + 1

    def leader(self) -> str:
        if not self.played:
            return "-"
        best = max(self.played, key=lambda n: (self.groše[n] / self.played[n], n))
        return f"{best} {self.groše[best] / self.played[best]:+.1f}/partie"

    def line(self) -> str:
        el = time.monotonic() - self.t0
        new = self.done - self.start_done
        eta = "-"
        if new > 0 and self.done < self.total:
            s = el / new * (self.total - self.done)
            eta = f"{int(s // 3600)}:{int(s % 3600 // 60):02d}:{int(s % 60):02d}"
        width = 24
        fill = int(width * self.done / self.total) if self.total else width
        bar = "#" * fill + "." * (width - fill)
        return f"[{bar}] {self.done}/{self.total} partie  ETA {eta}  leader {self.leader()}"

    def show(self, force: bool = False) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if self.tty:
            if force or now - self.last >= 0.2:
                self.stream.write("\r" + self.line().ljust(100)[:120])
                self.stream.flush()
                self.last = now
        elif force or now - self.last >= self.interval:
            self.stream.write(self.line() + "\n")
            self.stream.flush()
            self.last = now

    def message(self, text: str) -> None:
        if self.stream is None:
            return
        if self.tty:
            self.stream.write("\r" + " " * 120 + "\r")
        self.stream.write(text + "\n")
        self.stream.flush()
        self.last = 0.0

    def finish(self) -> None:
        if self.stream is not None:
            self.show(force=True)
            if self.tty:
                self.stream.write("\n")
                self.stream.flush()


# ------------------------------------------------------------------ the tournament

@dataclass
class TournamentRun:
    config: TournamentConfig
    state: str  # new | resume
    units: int
    done_before: int  # units already complete when this run started
    played: int  # units completed by this run
    failed: list[tuple[str, str]]  # (unit id, why: what happened and the bot most likely responsible)
    interrupted: bool
    seconds: float

    @property
    def done(self) -> int:
        return self.done_before + self.played

    @property
    def complete(self) -> bool:
        return self.done == self.units

    @property
    def logs(self) -> Path:
        return self.config.output / LOGS_DIR


def preflight(cfg: TournamentConfig) -> None:
    """Every bot of the field exists, starts and answers hello (:mod:`referee.preflight`), or
    :class:`ConfigError` names each one that does not (its command and stderr tail)."""
    from .preflight import check_bots_apart

    problems = check_commands(cfg)
    if problems:
        raise ConfigError(problems)
    from .sandbox import SandboxConfig

    specs = [b.spec(cfg.base_dir, seed="preflight") for b in cfg.bots]
    problems = check_bots_apart(specs, cfg.limits, SandboxConfig(cfg.sandbox, cfg.bot_limits, hide=sandbox_hide(cfg)))
    if problems:
        raise ConfigError(problems)


def run_tournament(cfg: TournamentConfig, *, resume: bool = False, stream: TextIO | None = None,
                   interval: float = 10.0, check: bool = True, sign_key=None) -> TournamentRun:
    """Play every unit not yet complete; progress on ``stream``.  Stops cleanly on Ctrl-C / SIGTERM.

    ``check``: first the pre-flight check of every bot (:func:`preflight`).  ``sign_key`` (an
    Ed25519 key: PEM path, raw bytes or key object) signs every unit's log."""
    if cfg.format == HEAD_TO_HEAD:
        raise TournamentError("format head-to-head is a sequential test: run it with referee.duel.run_duel (marias duel)")
    if sign_key is not None:
        from .seal import signing_key_bytes
        sign_key = signing_key_bytes(sign_key)  # plain bytes travel to the workers
    if check:
        preflight(cfg)
    out = cfg.output
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with _FolderLock(out) as lock:
        state = prepare_output(cfg, resume=resume)
        logs = out / LOGS_DIR
        logs.mkdir(exist_ok=True)
        units = plan_units(cfg)
        progress = Progress(len(units), 0, stream, interval)
        if stream is not None:
            how = "drawn at random" if cfg.seed_drawn else ("stored" if state == "resume" else "given")
            progress.message(f"seed {cfg.seed} ({how}; kept in {out / STATE_FILE})")
        done_log = journal(out)
        pending: list[Unit] = []
        accepted: dict[str, str] = {}  # log (relative to out) -> its SHA-256: what the results database may hold
        try:
            for u in units:
                path = unit_log(out, u)
                entry = done_log.get(u.id)
                if not path.exists():
                    why = "no log"
                elif entry and entry.get("status") == "done" and entry.get("sha256"):
                    why = quick_check_unit_log(path, u, entry)  # validated by its worker when played
                else:
                    why = check_unit_log(path, u)  # not on record: the full check
                if why is None:
                    on_record = entry and entry.get("status") == "done" and entry.get("sha256")
                    accepted[f"{LOGS_DIR}/{path.name}"] = entry["sha256"] if on_record else file_sha256(path)
                    progress.done += 1
                    t = _log_totals(path)
                    if t:
                        progress.add(*t)
                else:
                    if path.exists() or any(logs.glob(f"{u.id}.*")):
                        if path.exists():
                            progress.message(f"{u.id}: {why}; playing it again")
                        remove_unit_files(out, u)
                    elif entry and entry.get("status") == "failed":
                        progress.message(f"{u.id}: failed last time ({entry.get('why')}); playing it again")
                    pending.append(u)
        except KeyboardInterrupt:  # stopped while checking the logs: nothing was started
            return TournamentRun(cfg, state, len(units), progress.done, 0, [], True, time.perf_counter() - t0)
        progress.start_done = progress.done
        done_before = progress.done
        db = results.connect(results.db_path(out), create=True)
        kept, stored = results.resync(db, out, accepted)  # rows only for logs that exist with the same hash
        if stored and state == "resume" and stream is not None:
            progress.message(f"{results.DB_FILE}: {stored} accepted log(s) summarized into it now, {kept} kept")
        if state == "resume" and stream is not None:
            progress.message(f"resuming {out}: {done_before} of {len(units)} partie already played")
        completed: set[str] = set()
        try:
            played, failed, interrupted = _play_units(cfg, pending, logs, progress, completed.add,
                                                      close_fds=(lock.f.fileno(),), sign_key=sign_key, db=db)
        finally:
            db.close()
        progress.finish()
        for u in pending:  # whatever was cut short leaves nothing behind (its log, its bots' stderr)
            if u.id not in completed:
                remove_unit_files(out, u)
    return TournamentRun(cfg, state, len(units), done_before, played, failed, interrupted, time.perf_counter() - t0)


def _play_units(cfg: TournamentConfig, pending: list[Unit], logs: Path, progress: Progress,
                on_unit: Callable[[str], None] | None, close_fds: tuple[int, ...] = (), sign_key: bytes | None = None,
                db=None) -> tuple[int, list[tuple[str, str]], bool]:
    """Play ``pending`` in a :class:`referee.pool.Pool`: each unit in its own worker under a watchdog,
    a failed unit tried once more, the others going on whatever one unit's bots do."""
    if not pending:
        return 0, [], False
    out = cfg.output
    by_id = {u.id: u for u in pending}
    played = 0
    failed: list[tuple[str, str]] = []
    interrupted = False
    old_term = signal.getsignal(signal.SIGTERM)

    def on_term(signum, frame):
        raise KeyboardInterrupt

    def fail(unit: Unit, why: str, culprit: str | None, attempts: int) -> None:
        remove_unit_files(out, unit)
        failed.append((unit.id, why))
        _journal_add(out, {"id": unit.id, "status": "failed", "why": why, "culprit": culprit, "attempts": attempts})
        progress.message(f"{unit.id}: failed: {why}")

    def on_outcome(o: Outcome) -> None:
        nonlocal played
        unit = by_id[o.key]
        if not o.ok:
            fail(unit, o.describe(), o.culprit, o.attempts)
            return
        res = o.result
        path = unit_log(out, unit)
        if res.get("valid") is not None:  # the worker's full validation failed: a referee bug, kept for study
            kept = out / INVALID_DIR / f"{path.name}.invalid"
            if path.exists():
                kept.parent.mkdir(exist_ok=True)
                os.replace(path, kept)
            fail(unit, f"its log does not validate ({res['valid']}); kept as {kept}", None, o.attempts)
            return
        why = quick_check_unit_log(path, unit, res)
        if why is not None:
            fail(unit, f"its log does not check ({why})", None, o.attempts)
            return
        _journal_add(out, {"id": unit.id, "status": "done", "sha256": res["sha256"], "totals": res["totals"],
                           "names": res["names"], "attempts": o.attempts})
        if db is not None:  # after the journal: a crash between the two is mended by the next run's resync
            results.record_log(db, out, path, res["sha256"])
        played += 1
        progress.done += 1
        progress.add(res["names"], res["totals"])
        for text in res.get("fault_texts", ()):  # the first few, explained (referee.explain)
            progress.message(text)
        if on_unit is not None:
            on_unit(unit.id)

    def on_retry(o: Outcome) -> None:
        remove_unit_files(out, by_id[o.key])
        progress.message(f"{o.key}: {o.describe()}; trying it once more")

    def task_of(u: Unit) -> Task:
        job = unit_job(cfg, u, logs, sign_key)
        return Task(u.id, job, unit_wall_seconds(cfg, u), u.seats, tuple(tuple(s.argv) for s in job["specs"]))

    def from_cluster(unit: Unit, entry: dict) -> None:
        """A unit played and validated on a worker: its log written here, then checked and accepted as a local one."""
        path = unit_log(out, unit)
        for name, data in entry["files"].items():  # its bots' stderr
            if "/" not in name and name.startswith(f"{unit.id}."):
                (logs / name).write_bytes(data)
        part = path.with_name(path.name + ".part")
        with open(part, "wb") as f:
            f.write(entry["log"])
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, path)
        on_outcome(Outcome(unit.id, "ok", entry["result"], attempts=entry["attempts"], seconds=entry["seconds"]))

    signal.signal(signal.SIGTERM, on_term)
    try:
        progress.show(force=True)
        if cfg.cluster:
            from .cluster import run_groups

            def jobs_of(group: list[Unit]):
                ts = [task_of(u) for u in group]
                return [t.job for t in ts], [t.wall_s for t in ts], [t.seats for t in ts], [t.argvs for t in ts]

            run_groups(cfg.cluster, jobs_of, pending, from_cluster, fail, on_tick=progress.show)
        else:
            tasks = [task_of(u) for u in pending]
            workers = min(cfg.concurrency or os.cpu_count() or 1, len(pending))
            pool = Pool(play_unit, workers, retries=1, close_fds=close_fds)
            pool.run(tasks, on_outcome, on_retry, on_tick=progress.show)
    except KeyboardInterrupt:
        interrupted = True
        progress.message("stopping: the partie in progress are abandoned (run the same command again to finish)")
    finally:
        signal.signal(signal.SIGTERM, old_term)
    return played, failed, interrupted


# ------------------------------------------------------------------ benchmark

def bench(bots: int = 4, partie: int = 1, concurrency: tuple[int, ...] = (1, 2), seed: str = "bench",
          goal: float = 1.7, repeats: int = 1, builtin: str = "random") -> dict:
    """``marias bench tournament``: deals per second of the same small tournament (a field of one
    built-in bot, ``random`` or ``robot``) at each concurrency; the speed-up is the last against the first.

    With ``repeats`` > 1 the runs alternate in ABBA order (1, 2, 2, 1, ...) so that a change in the
    machine's other load weighs on both sides alike; the median rate is reported.
    """
    import resource
    import statistics
    import tempfile

    def cpu() -> float:
        r = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        return sum(x.ru_utime + x.ru_stime for x in r)

    order: list[int] = []
    for r in range(repeats):
        order += list(concurrency) if r % 2 == 0 else list(reversed(concurrency))
    rates: dict[int, list[float]] = {c: [] for c in concurrency}
    seconds: dict[int, list[float]] = {c: [] for c in concurrency}
    cores: dict[int, list[float]] = {c: [] for c in concurrency}
    units = 0
    for c in order:
        with tempfile.TemporaryDirectory(prefix="marias-bench-") as tmp:
            cfg = config_from_options([f"b{i + 1}={builtin}" for i in range(bots)], partie=partie, seed=seed,
                                      concurrency=c, output=str(Path(tmp) / "t"), name="bench")
            c0 = cpu()
            run = run_tournament(cfg)
            cores[c].append((cpu() - c0) / run.seconds)
            if not run.complete:
                raise RuntimeError(f"the benchmark tournament did not finish: {run.failed}")
            units = run.units
            seconds[c].append(run.seconds)
            rates[c].append(12 * run.units / run.seconds)
    med = {c: statistics.median(v) for c, v in rates.items()}
    first, last = concurrency[0], concurrency[-1]
    speedup = med[last] / med[first]
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    return {
        "benchmark": "tournament",
        "bots": f"{bots} x {builtin}",
        "units": units,
        "deals": 12 * units,
        "repeats": repeats,
        "cpus": os.cpu_count(),
        "load_average_1min_at_end": round(load, 2) if load is not None else None,
        **{f"seconds_c{c}": round(statistics.median(seconds[c]), 2) for c in concurrency},
        **{f"deals_per_second_c{c}": round(med[c], 1) for c in concurrency},
        # CPU seconds (referee, workers and bots) per second of wall time: how many cores the run kept busy
        **{f"cores_used_c{c}": round(statistics.median(cores[c]), 2) for c in concurrency},
        f"speedup_c{last}_vs_c{first}": round(speedup, 2),
        "goal": goal,
        "goal_met": speedup >= goal,
    }
