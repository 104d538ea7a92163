"""Uploads to a ladder (issue 37.5): safe unpacking (each rule refused and named, paths as a property),
tokens (only hashes kept, revocable, every hash compared), the build inside the bots' sandbox (its own
folder writable and nothing else, no network, a time limit), and a whole upload from token to entry."""

from __future__ import annotations

import dataclasses
import io
import os
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.ladder import submissions as S
from referee.ladder.folder import LadderError, LadderFolder
from referee.ladder.unpack import RULES, ArchiveRefused, UnpackLimits, safe_name, unpack
from referee.seats.sandbox import bwrap_status

# ------------------------------------------------------------------ archives made here


def tar_gz(path: Path, entries: list[tuple], fmt=tarfile.PAX_FORMAT) -> Path:
    """A .tar.gz of ``entries``: ``(name, bytes)`` a file, ``(name, bytes, mode)``, ``(name, "dir")``,
    ``(name, "sym", target)``, ``(name, "hard", target)``, ``(name, "fifo")``, ``(name, "chr")``."""
    with tarfile.open(path, "w:gz", format=fmt) as t:
        for e in entries:
            info = tarfile.TarInfo(e[0])
            data = None
            if isinstance(e[1], bytes):
                data = e[1]
                info.size, info.mode = len(data), (e[2] if len(e) > 2 else 0o644)
            elif e[1] == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
            elif e[1] == "sym":
                info.type, info.linkname = tarfile.SYMTYPE, e[2]
            elif e[1] == "hard":
                info.type, info.linkname = tarfile.LNKTYPE, e[2]
            elif e[1] == "fifo":
                info.type = tarfile.FIFOTYPE
            elif e[1] == "chr":
                info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def zip_file(path: Path, entries: list[tuple]) -> Path:
    """A .zip of ``(name, bytes)`` files, ``(name, "dir")``, ``(name, "sym", target)``, ``(name, "fifo")``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for e in entries:
            info = zipfile.ZipInfo(e[0])
            info.create_system = 3
            if isinstance(e[1], bytes):
                info.external_attr = (stat.S_IFREG | (e[2] if len(e) > 2 else 0o644)) << 16
                z.writestr(info, e[1])
            elif e[1] == "dir":
                info.external_attr = (stat.S_IFDIR | 0o755) << 16
                z.writestr(info, b"")
            elif e[1] == "sym":
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                z.writestr(info, e[2].encode())
            elif e[1] == "fifo":
                info.external_attr = (stat.S_IFIFO | 0o644) << 16
                z.writestr(info, b"")
    return path


def refused(archive: Path, dest: Path, limits: UnpackLimits = UnpackLimits()) -> ArchiveRefused:
    with pytest.raises(ArchiveRefused) as e:
        unpack(archive, dest, limits)
    assert not dest.exists(), "a refused archive leaves nothing behind"
    assert e.value.rule in RULES
    return e.value


# ------------------------------------------------------------------ unpacking: what is kept


@pytest.mark.parametrize("make", [tar_gz, zip_file])
def test_an_archive_unpacks_with_its_folders_modes_and_inner_links(tmp_path, make):
    entries = [("./", "dir"), ("./bot.py", b"print(1)\n", 0o755), ("lib/", "dir"), ("lib/util.py", b"x = 1\n"),
               ("data/deep/file.txt", b"deep"), ("run", "sym", "bot.py"), ("lib/up", "sym", "../data")]
    if make is tar_gz:
        entries += [("copy.py", "hard", "bot.py"), ("suid", b"#!/bin/sh\n", 0o6755)]
    out = unpack(make(tmp_path / "a", entries), tmp_path / "bot")
    root = tmp_path / "bot"
    assert (root / "bot.py").read_bytes() == b"print(1)\n"
    assert os.access(root / "bot.py", os.X_OK)
    assert (root / "lib/util.py").read_text() == "x = 1\n" and (root / "data/deep/file.txt").read_text() == "deep"
    assert os.readlink(root / "run") == "bot.py" and (root / "lib/up/deep/file.txt").read_text() == "deep"
    if make is tar_gz:
        assert (root / "copy.py").read_bytes() == b"print(1)\n" and not (root / "copy.py").is_symlink()
        mode = stat.S_IMODE(os.stat(root / "suid").st_mode)
        assert mode & (stat.S_ISUID | stat.S_ISGID) == 0 and mode & 0o111
    assert out.bytes == sum(len(e[1]) for e in entries if isinstance(e[1], bytes)) + (9 if make is tar_gz else 0)


# ------------------------------------------------------------------ unpacking: every rule refused by name


def test_format_neither_tar_gz_nor_zip_nor_a_damaged_one(tmp_path):
    (tmp_path / "a").write_bytes(b"just some text, not an archive")
    assert refused(tmp_path / "a", tmp_path / "b").rule == "format"
    good = tar_gz(tmp_path / "g.tgz", [("bot.py", b"print(1)\n" * 1000)]).read_bytes()
    (tmp_path / "cut").write_bytes(good[: len(good) // 2])
    e = refused(tmp_path / "cut", tmp_path / "c")
    assert e.rule == "format" and "damaged" in e.message
    plain = tmp_path / "p.tar"
    with tarfile.open(plain, "w") as t:  # an uncompressed tar is not one of the two formats
        t.addfile(tarfile.TarInfo("x"), io.BytesIO(b""))
    assert refused(plain, tmp_path / "d").rule == "format"


@pytest.mark.parametrize("make", [tar_gz, zip_file])
def test_size_and_count_caps(tmp_path, make):
    a = make(tmp_path / "a", [("big", b"\0" * 200_000)])
    e = refused(a, tmp_path / "b", UnpackLimits(archive_bytes=a.stat().st_size - 1))
    assert e.rule == "archive-size" and f"{a.stat().st_size} bytes" in e.message
    e = refused(a, tmp_path / "c", UnpackLimits(unpacked_bytes=100_000))  # compresses to almost nothing
    assert e.rule == "unpacked-size" and "'big'" in e.message
    many = make(tmp_path / "m", [(f"f{i}", b"x" * 600) for i in range(10)])  # each under the cap, not together
    e = refused(many, tmp_path / "d", UnpackLimits(unpacked_bytes=5_000))
    assert e.rule == "unpacked-size"
    e = refused(many, tmp_path / "e", UnpackLimits(files=9))
    assert e.rule == "file-count"
    deep = make(tmp_path / "n", [("a/b/c/d", b"x")])  # the folders it implies count as entries
    assert refused(deep, tmp_path / "f", UnpackLimits(files=3)).rule == "file-count"
    assert unpack(deep, tmp_path / "g", UnpackLimits(files=4)).files == 1


def test_a_tar_header_of_gigabytes_stops_at_the_cap_of_the_decompressed_stream(tmp_path):
    """A pax header is read whole by tarfile: one naming a file of 3 MB is refused while it is read,
    not after (the decompressed stream is bounded), and not by the name rule that would come later."""
    a = tar_gz(tmp_path / "a", [("n" * 3_000_000, b"x")])
    e = refused(a, tmp_path / "b", UnpackLimits(unpacked_bytes=64_000, files=8))
    assert e.rule == "unpacked-size" and "unpacks to more than" in e.message


@pytest.mark.parametrize("make", [tar_gz, zip_file])
@pytest.mark.parametrize("name,rule", [
    ("/etc/cron.d/evil", "absolute-path"),
    ("\\windows\\evil", "absolute-path"),
    ("C:/evil", "absolute-path"),
    ("../evil", "parent-path"),
    ("a/../../evil", "parent-path"),
    ("a/b/../../../evil", "parent-path"),
    ("a\\b", "bad-name"),
    ("x" * 256, "bad-name"),
    ("/".join("d" * 40), "bad-name"),
])
def test_a_name_that_leads_out_or_cannot_be_a_path_is_refused(tmp_path, make, name, rule):
    e = refused(make(tmp_path / "a", [("ok.py", b"1"), (name, b"evil")]), tmp_path / "b")
    assert e.rule == rule and repr(name)[:40] in e.message
    assert not (tmp_path / "evil").exists()


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("make", [tar_gz, zip_file])
def test_the_same_path_twice_and_a_file_used_as_a_folder(tmp_path, make):
    assert refused(make(tmp_path / "a", [("x", b"1"), ("x", b"2")]), tmp_path / "b").rule == "duplicate"
    assert refused(make(tmp_path / "c", [("x", b"1"), ("x/y", b"2")]), tmp_path / "d").rule == "duplicate"


@pytest.mark.parametrize("make", [tar_gz, zip_file])
def test_links_out_are_refused(tmp_path, make):
    outside = tmp_path / "secret"
    outside.write_text("host's")
    for i, entries in enumerate([[("l", "sym", "/etc/passwd")], [("l", "sym", "../secret")],
                                 [("a/", "dir"), ("a/l", "sym", "../../secret")],
                                 # each link inside when made; once p is the folder itself, l = p/../secret leads out
                                 [("l", "sym", "p/../secret"), ("p", "sym", ".")]]):
        e = refused(make(tmp_path / f"a{i}", entries), tmp_path / f"b{i}")
        assert e.rule == "link-out", entries
    assert refused(make(tmp_path / "t", [("l", "sym", "sub"), ("sub/", "dir"), ("l/x", b"through")]),
                   tmp_path / "u").rule == "through-link"
    if make is tar_gz:
        for i, target in enumerate(["../secret", "/etc/passwd", "missing", "sub"]):
            e = refused(tar_gz(tmp_path / f"h{i}", [("sub/", "dir"), ("h", "hard", target)]), tmp_path / f"k{i}")
            assert e.rule == "link-out" and "hard link" in e.message
    assert outside.read_text() == "host's"


@pytest.mark.parametrize("make,kind", [(tar_gz, "fifo"), (tar_gz, "chr"), (zip_file, "fifo")])
def test_devices_and_fifos_are_refused(tmp_path, make, kind):
    e = refused(make(tmp_path / "a", [("ok", b"1"), ("dev", kind)]), tmp_path / "b")
    assert e.rule == "special-file" and ("FIFO" in e.message or "device" in e.message)


PARTS = st.sampled_from(["a", "b", "..", ".", "", "x y", "\\", "C:", "é", "-"])


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PARTS, min_size=1, max_size=6), st.booleans())
def test_property_a_name_is_refused_or_lands_inside_the_folder(parts, lead):
    name = ("/" if lead else "") + "/".join(parts)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "fence").mkdir()
        a = tar_gz(tmp / "a.tgz", [(name, b"payload")])
        root = tmp / "fence" / "bot"
        try:
            unpack(a, root)
        except ArchiveRefused as e:
            assert e.rule in ("absolute-path", "parent-path", "bad-name"), (name, e.rule)
            written = []
        else:
            written = [Path(d, f) for d, _, fs in os.walk(root) for f in fs]
            assert len(written) == 1 and written[0].read_bytes() == b"payload"
        everything = [Path(d, f) for d, _, fs in os.walk(tmp) for f in fs]
        assert sorted(everything) == sorted([tmp / "a.tgz", *written]), name  # nothing anywhere else


@given(st.text(max_size=40))
def test_property_safe_name_never_gives_a_path_out(name):
    try:
        p = safe_name(name, UnpackLimits())
    except ArchiveRefused as e:
        assert e.rule in ("absolute-path", "parent-path", "bad-name")
        return
    if p is not None:
        assert not p.is_absolute() and ".." not in p.parts and "\\" not in str(p)
        assert os.path.normpath(os.path.join("/r/bot", str(p))).startswith("/r/bot/")


# ------------------------------------------------------------------ tokens


@pytest.fixture
def ladder(tmp_path):
    return LadderFolder.init(tmp_path / "ladder").path


def test_a_token_names_its_author_until_revoked_and_only_its_hash_is_kept(ladder):
    tmp_path = ladder
    t1 = S.make_token(tmp_path, "alice")
    t2 = S.make_token(tmp_path, "bob")
    t3 = S.make_token(tmp_path, "alice")
    assert len({t1, t2, t3}) == 3 and all(t.startswith("mlt_") and len(t) > 40 for t in (t1, t2, t3))
    assert (S.author_of(tmp_path, t1), S.author_of(tmp_path, t2), S.author_of(tmp_path, t3)) == ("alice", "bob", "alice")
    for wrong in (None, "", t1[:-1], t1 + "x", t2.upper(), "mlt_" + "A" * 43, "x" * 10_000):
        assert S.author_of(tmp_path, wrong) is None
    stored = (tmp_path / S.TOKENS_FILE).read_text()
    assert not any(t in stored or t[4:] in stored for t in (t1, t2, t3))
    assert stat.S_IMODE(os.stat(tmp_path / S.TOKENS_FILE).st_mode) == 0o600
    listed = S.tokens(tmp_path)
    assert [t["author"] for t in listed] == ["alice", "bob", "alice"] and all("sha256" not in t for t in listed)
    assert S.revoke(tmp_path, token_id=listed[0]["id"]) == 1
    assert S.author_of(tmp_path, t1) is None and S.author_of(tmp_path, t3) == "alice"
    assert S.revoke(tmp_path, author="alice") == 1 and S.revoke(tmp_path, author="alice") == 0
    assert S.author_of(tmp_path, t3) is None and S.author_of(tmp_path, t2) == "bob"
    with pytest.raises(ValueError):
        S.revoke(tmp_path, token_id="ab")
    with pytest.raises(ValueError):
        S.make_token(tmp_path, "../evil")


def test_every_stored_hash_is_compared_in_constant_time_whatever_matched(ladder, monkeypatch):
    tmp_path = ladder
    tokens = [S.make_token(tmp_path, f"author{i}") for i in range(5)]
    calls = []
    real = S.hmac.compare_digest
    monkeypatch.setattr(S.hmac, "compare_digest", lambda a, b: calls.append(1) or real(a, b))
    assert S.author_of(tmp_path, tokens[0]) == "author0"
    assert len(calls) == 5  # not stopped at the first, matching one
    calls.clear()
    assert S.author_of(tmp_path, "mlt_guess") is None and len(calls) == 5


def test_a_damaged_tokens_file_lets_nobody_in(ladder):
    tmp_path = ladder
    t = S.make_token(LadderFolder(tmp_path), "alice")  # a LadderFolder or its path
    (tmp_path / S.TOKENS_FILE).write_text('{"format": "something else", "tokens": []}')
    assert S.author_of(tmp_path, t) is None
    with pytest.raises(ValueError):
        S.make_token(tmp_path, "bob")
    with pytest.raises(LadderError, match="not a ladder"):
        S.make_token(tmp_path.parent, "bob")


# ------------------------------------------------------------------ the build, in the sandbox

needs_bwrap = pytest.mark.skipif(bwrap_status()[0] is None, reason=f"no bubblewrap here: {bwrap_status()[1]}")


@needs_bwrap
def test_a_build_writes_its_own_folder_only_and_has_no_network(tmp_path):
    ladder = tmp_path / "ladder"
    bot = ladder / "uploads" / "u1" / "bot"
    bot.mkdir(parents=True)
    (ladder / "uploads" / "u1" / "upload.json").write_text("{}")
    (ladder / "tokens.json").write_text("hashes")
    (bot / "build.sh").write_text(
        "set -u\n"
        "echo built > made.txt && mkdir -p out && cp made.txt out/\n"
        "echo tmp > /tmp/scratch && echo tmp-ok\n"
        f"ls {ladder}/tokens.json 2>/dev/null && echo SAW-TOKENS\n"
        f"echo x > {ladder}/uploads/u1/upload.json 2>/dev/null\n"  # (under /tmp: into its own tmpfs, gone after)
        f"echo x > {tmp_path}/outside 2>/dev/null\n"
        "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), timeout=3)' 2>/dev/null"
        " && echo NETWORK || echo no-network\n"
        "echo to-stderr >&2\n")
    r = S.build(bot, "sh build.sh")
    assert r.returncode == 0 and not r.timed_out, r.output
    assert (bot / "made.txt").read_text() == "built\n" and (bot / "out" / "made.txt").exists()
    for word in ("tmp-ok", "no-network", "to-stderr"):
        assert word in r.output
    for word in ("SAW-TOKENS", "NETWORK\n"):
        assert word not in r.output, r.output
    assert (ladder / "uploads" / "u1" / "upload.json").read_text() == "{}" and not (tmp_path / "outside").exists()


@needs_bwrap
def test_a_build_that_fails_hangs_or_floods_is_ended_and_said_so(tmp_path):
    (tmp_path / "b").mkdir()
    r = S.build(tmp_path / "b", "sh -c 'echo compiling; echo error: no such thing >&2; exit 3'")
    assert r.returncode == 3 and "error: no such thing" in r.output
    assert S._ended(r.returncode, r, S.BuildLimits()) == "the build command exited with status 3"
    lim = S.BuildLimits(seconds=1.5, output_bytes=1000)
    r = S.build(tmp_path / "b", "sh -c 'yes flood | head -c 100000; sleep 60 & sleep 60'", lim)
    assert r.timed_out and r.returncode is None
    assert "ran longer than 1.5 s" in S._ended(r.returncode, r, lim)
    assert r.output.startswith("[... 99000 bytes of output before this]") and len(r.output) < 1100
    with pytest.raises(FileNotFoundError):
        S.build(tmp_path / "b", "no-such-compiler --all")


@needs_bwrap
def test_a_build_that_fills_its_folder_is_stopped_while_it_runs(tmp_path):
    (tmp_path / "b").mkdir()
    lim = S.BuildLimits(folder_mb=2, folder_files=50, seconds=60)
    r = S.build(tmp_path / "b", "sh -c 'i=0; while :; do head -c 100000 /dev/zero > f$i; i=$((i+1)); done'", lim)
    assert r.over and "it was stopped" in r.over and not r.timed_out
    assert S._ended(r.returncode, r, lim) == r.over
    (tmp_path / "c").mkdir()
    r = S.build(tmp_path / "c", "sh -c 'for i in $(seq 60); do : > f$i; done'", lim)  # ends before it is looked at
    assert r.returncode == 0 and r.over == "the build made more than 50 files and folders in the bot's folder"


@needs_bwrap
def test_a_build_under_a_folder_every_bot_sees_still_sees_nothing_of_the_ladder(ladder, monkeypatch):
    """Where the ladder lies under a system folder (/opt, /var: shown read-only to every sandboxed
    process), the build is told to hide the ladder's folder: the seed stays out of its sight while
    its own folder is there.  Simulated by taking /tmp off the private folders."""
    from referee.seats import sandbox

    real_private = sandbox.private_folders
    monkeypatch.setattr(sandbox, "private_folders", lambda root="/": ("/home", "/root"))

    class Uncovered(S.BuildLimits):  # and no tmpfs over /tmp for the disk cap: /tmp shown like /opt
        def sandbox_limits(self):
            return dataclasses.replace(super().sandbox_limits(), disk_mb=None)

    lim = Uncovered()
    bot = ladder / "uploads" / "u1" / "bot"
    bot.mkdir(parents=True)
    (bot / "own.txt").write_text("mine")
    probe = f"sh -c 'cat {ladder}/seed.secret || echo no-seed; cat own.txt; echo built > out.txt'"
    seed = LadderFolder(ladder).seed()
    exposed = S.build(bot, probe, lim)
    assert seed in exposed.output  # the control: without hiding, a system folder's ladder is readable
    r = S.build(bot, probe, lim, hide=(str(ladder),))
    assert seed not in r.output and "no-seed" in r.output and "mine" in r.output
    assert r.returncode == 0 and (bot / "out.txt").read_text() == "built\n"
    monkeypatch.setattr(sandbox, "private_folders", real_private)  # submit refuses an exposed ladder: here it is not
    seen = {}
    monkeypatch.setattr(S, "build", lambda *a, **k: seen.update(k) or S.BuildResult(1, 0.0, "stop here"))
    token = S.make_token(ladder, "eva")
    (ladder.parent / "a.tgz").write_bytes(tar_gz(ladder.parent / "a.tgz", [("x.py", b"1")]).read_bytes())
    with pytest.raises(S.UploadRefused):
        S.submit(ladder, token, ladder.parent / "a.tgz", "x", "python3 x.py", "make")
    assert seen["hide"] == (str(ladder.resolve()),)


def test_a_ladder_under_a_folder_every_sandboxed_program_reads_takes_no_uploads(ladder, monkeypatch):
    token = S.make_token(ladder, "eva")
    a = tar_gz(ladder.parent / "a.tgz", [("x.py", b"1")])
    assert S.exposed_folder(ladder) is None  # under /tmp: covered for every bot
    from referee.seats import sandbox

    monkeypatch.setattr(sandbox, "private_folders", lambda root="/": ("/home", "/root"))  # as if it lay under /opt
    assert S.exposed_folder(ladder) == "/" + str(ladder.resolve()).strip("/").split("/")[0]
    with pytest.raises(S.UploadRefused) as e:
        S.submit(ladder, token, a, "x", "python3 x.py")
    assert e.value.step == "sandbox" and e.value.status == 503 and "every sandboxed program can read" in e.value.message
    assert not (ladder / "uploads").exists()


def test_a_ladder_is_not_made_added_to_or_run_under_a_folder_every_bot_sees(tmp_path, monkeypatch):
    """Under /opt or /var every sandboxed bot reads the ladder's files whole, its secret seed among
    them (so every deck): init refuses such a folder and such a seed file, and a ladder moved there
    since is refused by add and run (found by an attack: a bot's check printed the seed)."""
    from referee.ladder.run import run_ladder
    from referee.seats import sandbox

    made = LadderFolder.init(tmp_path / "season")  # under /tmp: covered for every bot
    seed = tmp_path / "seed.txt"
    seed.write_text("0123456789abcdef0123")
    monkeypatch.setattr(sandbox, "private_folders", lambda root="/": ("/home", "/root"))  # as if /tmp were /opt
    top = "/" + str(tmp_path.resolve()).strip("/").split("/")[0]
    with pytest.raises(LadderError, match=f"cannot lie under {top}"):
        LadderFolder.init(tmp_path / "other")
    assert not (tmp_path / "other").exists()
    with pytest.raises(LadderError, match="seed file cannot lie under"):
        LadderFolder.init(Path("/home/nowhere-marias-test"), seed_file=seed)
    assert not Path("/home/nowhere-marias-test").exists()
    with pytest.raises(LadderError, match="cannot lie under"):
        made.add("rnd", "random")
    with pytest.raises(LadderError, match="cannot lie under"):
        run_ladder(made.path, groups=1)
    assert made.versions() == []


def test_the_command_line_lists_and_revokes_tokens_and_a_revoked_one_names_no_author(ladder):
    from typer.testing import CliRunner

    from referee.cli import app

    cli = CliRunner()
    made = cli.invoke(app, ["ladder", "token", str(ladder), "eva"])
    assert made.exit_code == 0
    token = made.stdout.strip()
    cli.invoke(app, ["ladder", "token", str(ladder), "jan"])
    listed = cli.invoke(app, ["ladder", "tokens", str(ladder)])
    assert listed.exit_code == 0 and token not in listed.stdout
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert [r[1] for r in rows] == ["eva", "jan"] and all(r[-1] == "valid" for r in rows)
    assert S.author_of(ladder, token) == "eva"
    gone = cli.invoke(app, ["ladder", "revoke", str(ladder), rows[0][0]])
    assert gone.exit_code == 0 and "revoked 1 token" in gone.stdout
    assert S.author_of(ladder, token) is None
    again = cli.invoke(app, ["ladder", "revoke", str(ladder), rows[0][0]])
    assert again.exit_code == 1 and "no valid token matched" in again.output
    neither = cli.invoke(app, ["ladder", "revoke", str(ladder)])
    assert neither.exit_code == 2 and "not both and not neither" in neither.output
    assert [line.split()[-1] for line in cli.invoke(app, ["ladder", "tokens", str(ladder)]).stdout.splitlines()][1] == "valid"
