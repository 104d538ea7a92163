"""Failed units are printed once per cause (issue 25 point 10): a Dask scheduler that dies mid-run
fails every unit still on the cluster with the same error, which used to print a line (or a
traceback) per unit before the one useful line.  A fake Dask client stands in for the dead scheduler."""

from __future__ import annotations

from typer.testing import CliRunner

from referee.tournaments import cluster as C
from referee.tournaments.failures import cause, lines


class _DeadFuture:
    def done(self):
        return True

    def result(self):
        raise OSError("Timed out trying to connect to tcp://127.0.0.1:8786 after 30 s\n"
                      "Traceback (most recent call last):\n  File \"comm/core.py\", line 342, in connect\n"
                      "    ... (the rest of a long traceback)")


class _DeadScheduler:
    """A client whose scheduler is gone: every submitted group fails with the same connection error."""

    def submit(self, *args, **kwargs):
        return _DeadFuture()

    def cancel(self, futures, force=False):
        pass

    def close(self, timeout=None):
        pass


def test_failures_are_grouped_by_cause():
    failed = [(f"t01-p{k:02d}-s{arr}", f"lost on the cluster: KilledWorker: Attempted to run task "
               f"'marias-group-t01-p{k:02d}-s012-4242-99{k}' on 4 different workers")
              for k in range(1, 7) for arr in ("012", "120", "201")]
    failed.append(("t02-p01-s012", "crashed: the worker died (attempt 2); most likely responsible: x (seat 1, on move)"))
    out = lines(failed)
    assert len(out) == 2
    assert out[0].startswith("failed: 18 partie (t01-p01-s012, t01-p01-s120, t01-p01-s201, t01-p02-s012 and 14 more): "
                             "lost on the cluster: KilledWorker")
    assert out[1] == "failed: t02-p01-s012: crashed: the worker died (attempt …); most likely responsible: x (seat 1, on move)"
    assert cause("boom\nTraceback (most recent call last):\n  ...") == "boom"


def test_a_dead_scheduler_prints_one_line_per_cause(tmp_path, monkeypatch):
    from referee.cli import app

    monkeypatch.setattr(C, "connect", lambda address, timeout=None: _DeadScheduler())
    res = CliRunner().invoke(app, ["tournament", "-b", "a=random", "-b", "b=random", "-b", "c=random", "-b", "d=random",
                                   "--partie", "3", "--seed", "dead", "--sandbox", "none", "--out", str(tmp_path / "t"),
                                   "--cluster", "tcp://127.0.0.1:8786"])
    assert res.exit_code == 1, res.output
    err = res.stderr
    failed = [line for line in err.splitlines() if "failed" in line]
    # during the run: the first failure of the cause, said once; at the end: one line for the cause, then the advice
    assert len(failed) == 3, err
    assert "Traceback" not in err
    assert failed[1].startswith("failed: 72 partie (t0") and " and 68 more): " in failed[1] and "OSError: Timed out trying to connect" in failed[1]
    assert failed[2] == "72 partie failed and are not counted; run the same command again to retry them."
