"""marias match: progress with an ETA; Ctrl-C says the log is incomplete and where it is (issue 25 point 3)."""

import os
import signal
import subprocess
import sys
import time


def test_ctrl_c_names_the_incomplete_log(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "referee.cli", "match", "-b", "robot", "-b", "robot", "-b", "random",
                             "-n", "500", "--log", str(tmp_path / "runs")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    line = ""
    while not line.startswith("partie 1:"):
        line = proc.stderr.readline()
        assert line, "no progress line"
    assert "(partie 1/500," in line and "ETA" in line
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    logs = list((tmp_path / "runs").glob("match-*.jsonl"))
    assert len(logs) == 1
    assert f"stopped before the end: the log {logs[0]} is incomplete" in err
