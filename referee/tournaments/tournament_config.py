"""The tournament's configuration: the YAML file or the command line's flags, checked key by key.

:func:`load_config` reads a YAML file (errors name the file, the line and the key),
:func:`config_from_options` builds the same :class:`TournamentConfig` from flags;
:func:`canonical` and :func:`diff_config` are what a resume compares.  The keys are
documented in protocol/TOURNAMENT.md; :mod:`referee.tournaments.tournament` plans and plays.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..matches.bounds import (MAX_BANK_MS, MAX_CONCURRENCY, MAX_FAULTS, MAX_INCREMENT_MS, MAX_MOVE_MS, MAX_PARTIE,
                     MAX_SEED_CHARS, MAX_STARTUP_MS)
from ..rules.cards import Card
from ..seats.identity import NAME_RE, IdentityError, missing_paths
from ..matches.match import BUILTIN_BOTS, BotSpec, Limits, load_decks
from ..seats.sandbox import MODES as SANDBOX_MODES, SandboxLimits
from ..matches.secrecy import PUBLIC, SECRET, SeedFileError, read_seed_file


FORMATS = ("round-robin", "gauntlet", "head-to-head")
HEAD_TO_HEAD = "head-to-head"  # two bots, each deck in the six 2+1 seatings, an SPRT decides (referee/tournaments/duel.py)
#: Seat arrangements of a table's three bots (bot indices at seats 0, 1, 2).
ARRANGEMENTS: dict[str, list[tuple[int, int, int]]] = {
    "all": list(itertools.permutations(range(3))),  # type: ignore[dict-item]
    "rotations": [(0, 1, 2), (1, 2, 0), (2, 0, 1)],
    "fixed": [(0, 1, 2)],
}
DECK_SCOPES = ("table", "tournament")

TOP_KEYS = ("name", "seed", "seed_file", "commit", "format", "gauntlet", "partie", "arrangements", "decks", "time", "faults",
            "concurrency", "output", "bots", "sprt", "sandbox", "bot_limits", "cluster", "warm")
BOT_LIMIT_KEYS = ("memory_mb", "processes", "cpu_s", "file_mb", "disk_mb", "cpus")  # referee/seats/resources.py LIMIT_KEYS
BOT_KEYS = ("name", "command", "cwd", "env", "move_ms", "startup_ms", *BOT_LIMIT_KEYS, "workdir", "fingerprint")
TIME_KEYS = ("move_ms", "startup_ms", "bank_ms", "increment_ms")
FAULT_KEYS = ("max_faults",)
DECK_KEYS = ("book", "scope")
SPRT_KEYS = ("h0", "h1", "alpha", "beta", "max_groups")
SPRT_DEFAULTS = {"h0": 0.0, "h1": 10.0, "alpha": 0.05, "beta": 0.05, "max_groups": 1000}

#: Decisions a deal can ask of the three players, at most (bids, talon, fleks, 30 plays), for the wall-clock limit.
CLUSTER_RE = __import__("re").compile(r"^(tcp|tls|inproc|ucx|ws|wss)://\S+$")


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
    fingerprint_paths: list[str] | None = None  # what it loads beyond its command line, relative to its cwd (identity.py)

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
        spec.fingerprint_paths = list(self.fingerprint_paths) if self.fingerprint_paths else None
        spec.fingerprint = fingerprint
        return spec

    def to_dict(self) -> dict:
        d = {"name": self.name, "command": self.command, "cwd": self.cwd, "env": dict(sorted(self.env.items())),
             "move_ms": self.move_ms, "startup_ms": self.startup_ms}
        if self.fingerprint_paths:  # only when given: tournaments stored without it resume unchanged
            d["fingerprint"] = list(self.fingerprint_paths)
        return d


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
    sandbox: str = "auto"  # auto | bwrap | required | none (referee/seats/sandbox.py)
    bot_limits: SandboxLimits = field(default_factory=SandboxLimits)  # every bot's, unless its own keys say
    allow_changed_bots: bool = False  # a resume accepts bots whose fingerprint changed
    cluster: str | None = None  # a Dask scheduler's address (tcp://HOST:8786): play there (referee/tournaments/cluster.py)
    warm: bool = True  # a worker keeps its bots running from one partie to the next (a chain); how it is run, not stored
    warm_partie: int = 50  # a warm bot process is retired after this many partie
    seed_drawn: bool = False  # the seed was drawn at random by this run
    seed_kind: str = SECRET  # PUBLIC: given in the configuration (reproducible); SECRET: drawn, or read from seed_file
    seed_file: Path | None = None  # where a secret seed was read from (hidden from every bot)
    commit: bool = False  # print the seed's SHA-256 before play and the seed only after it
    config_file: Path | None = None  # the YAML file (hidden from every bot: it may name or hold secrets)
    private_paths: tuple[str, ...] = ()  # more files no bot may see: the signing key (not part of the configuration)
    id_width: int | None = None  # digits of the partie (tournament) or group (duel) index in unit ids, kept when
    # the plan grows (a resume with more partie or groups), so that the units already played keep their ids and seeds
    extended: list[str] = field(default_factory=list)  # what prepare_output found changed in the stopping rule only
    _fingerprints: dict[str, str] | None = field(default=None, repr=False)

    def bot(self, name: str) -> BotEntry:
        return next(b for b in self.bots if b.name == name)

    def fingerprints(self) -> dict[str, str]:
        """Each bot's fingerprint (:mod:`referee.seats.identity`), computed once; IdentityError names the bot."""
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
    cfg = config_from_data(data, source=source, lines=lines, base_dir=path.resolve().parent, default_name=path.stem)
    cfg.config_file = path.resolve()
    return cfg


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
    for key in ("name", "seed", "seed_file", "commit", "format", "gauntlet", "partie", "arrangements", "concurrency", "output"):
        if options.get(key) is not None:
            data[key] = str(options[key]) if key == "seed_file" else options[key]
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
    seed_file = c.text(data, ("seed_file",))
    if seed_file is not None and seed is not None:
        c.err(("seed_file",), "give either seed (public: reproducible by anyone who knows it) or seed_file (kept secret), not both")
    elif seed_file is not None:
        seed_file = os.path.expanduser(seed_file)
        sf = Path(seed_file) if os.path.isabs(seed_file) else base_dir / seed_file
        try:
            cfg.seed = read_seed_file(sf)
            cfg.seed_file = sf
        except SeedFileError as e:
            c.err(("seed_file",), str(e))
    commit = data.get("commit")
    if commit is not None and not isinstance(commit, bool):
        c.err(("commit",), f"true or false, got {_kind(commit)}")
    cfg.commit = bool(commit)
    if seed is None:
        pass  # drawn when the tournament is created, or read from seed_file
    elif isinstance(seed, bool) or not isinstance(seed, (int, str)) or (isinstance(seed, str) and not seed.strip()):
        c.err(("seed",), f"a seed is a whole number or a non-empty string, got {_kind(seed)}")
    elif len(str(seed).strip()) > MAX_SEED_CHARS:
        c.err(("seed",), f"a seed is at most {MAX_SEED_CHARS} characters, got {len(str(seed).strip())}")
    else:
        cfg.seed = str(seed).strip()
        cfg.seed_kind = PUBLIC
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
    wm = data.get("warm")
    if wm is not None:
        if isinstance(wm, bool):
            cfg.warm = wm
        elif isinstance(wm, int) and 1 <= wm <= MAX_PARTIE:
            cfg.warm, cfg.warm_partie = True, wm
        else:
            c.err(("warm",), f"true (keep the bots running from one partie to the next), false, or the partie "
                             f"after which a bot process is retired (1 to {MAX_PARTIE}), got {wm!r}")
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
            fp_paths = b.get("fingerprint")
            if fp_paths is not None:
                if isinstance(fp_paths, str):
                    fp_paths = [fp_paths]
                if (not isinstance(fp_paths, list) or not fp_paths
                        or not all(isinstance(x, str) and x.strip() for x in fp_paths)):
                    c.err(p + ("fingerprint",), "a list of the files and folders the bot loads (relative to its cwd), "
                                                f"got {_kind(fp_paths)}")
                    fp_paths = None
                else:
                    fp_paths = [x.strip() for x in fp_paths]
            if name is not None and command is not None and not isinstance(command, (dict, int, float)):
                cfg.bots.append(BotEntry(name, command, cwd, clean_env, move, startup,
                                         {k: v for k, v in own.items() if v is not None}, workdir, fp_paths))
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
        if b.workdir:
            problems += _workdir_problems(cfg, i, b)
        if b.builtin:
            continue
        spec = b.spec(cfg.base_dir, seed="0")
        if spec.cwd and not os.path.isdir(spec.cwd):
            problems.append(f"{cfg.where('bots', i, 'cwd') if b.cwd else cfg.where('bots', i)}: the folder {spec.cwd!r} does not exist")
            continue
        for problem in missing_paths(spec.argv, spec.cwd):
            problems.append(f"{cfg.where('bots', i, 'command')}: {problem}")
        for given in spec.fingerprint_paths or ():
            if not (Path(spec.cwd or ".") / os.path.expanduser(given)).exists():
                problems.append(f"{cfg.where('bots', i, 'fingerprint')}: {given!r} not found (from {spec.cwd})")
    return problems


def _workdir_problems(cfg: TournamentConfig, i: int, b: BotEntry) -> list[str]:
    """A persistent workdir must be a folder of its own: the bot's lanes are sub-folders of it,
    hidden from each other, which cannot be done where the bot must see the folder itself (its
    start folder, its program or a file it names lies inside)."""
    from ..matches.secrecy import inside

    root = (cfg.base_dir / b.workdir).resolve()
    spec = b.spec(cfg.base_dir, seed="0")
    start = spec.cwd or os.getcwd()  # a built-in starts where marias runs
    seen = [start]
    for a in spec.argv:
        p = Path(start) / a
        if "/" in a and p.exists():
            seen.append(str(p))
    secrets = [("the configuration file", cfg.config_file), ("the deal book", cfg.deck_book),
               ("the seed file", cfg.seed_file), *(("the signing key", k) for k in cfg.private_paths)]
    for what, path in secrets:
        if path is not None and inside(path, root):
            return [f"{cfg.where('bots', i, 'workdir')}: {what} {str(path)!r} lies inside {str(root)!r}, the bot's "
                    f"own working folder, where it may read it; keep it elsewhere"]
    for p in seen:
        if inside(p, root):
            return [f"{cfg.where('bots', i, 'workdir')}: {str(root)!r} holds {p!r}, which the bot must see; "
                    f"give it a folder of its own (e.g. state/{b.name}): its lanes, one per seat arrangement, "
                    f"are kept apart inside it"]
    return []


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


def default_id_width(cfg_or_canon) -> int:
    """The width of the index in unit ids when nothing else was stored: of the partie count (tournament,
    ``tTT-pPP-sABC``, at least 2) or of sprt.max_groups (duel, ``gGGGG-sAAB``, at least 4)."""
    get = cfg_or_canon.get if isinstance(cfg_or_canon, dict) else lambda k: getattr(cfg_or_canon, k)
    if get("format") == HEAD_TO_HEAD:
        return max(4, len(str((get("sprt") or {}).get("max_groups") or 0)))
    return max(2, len(str(get("partie"))))


def stopping_rule_changes(old: dict, new: dict) -> tuple[list[str], list[str]]:
    """The differences between two canonical configurations, split into (those that only change how much
    is played or when a test stops, those that change the games).  A duel's ``sprt.*`` (its bounds and
    max_groups) and a tournament's ``partie`` growing are the first kind: the units already planned keep
    their ids, seeds and decks.  Not so with a deal book of scope ``table``, whose line for table T's
    partie K depends on the partie count: there ``partie`` changes the games."""
    changes = diff_config(old, new)
    h2h = new.get("format") == HEAD_TO_HEAD and old.get("format") == HEAD_TO_HEAD
    book_by_table = (new.get("decks") or {}).get("book") is not None and (new.get("decks") or {}).get("scope") != "tournament"
    stop, game = [], []
    for c in changes:
        key = c.split(":", 1)[0]
        if h2h and key.startswith("sprt."):
            stop.append(c)
        elif (key == "partie" and not h2h and isinstance(old.get("partie"), int)
              and new["partie"] > old["partie"] and not book_by_table):
            stop.append(c)
        else:
            game.append(c)
    return stop, game


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
