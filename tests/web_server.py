"""``marias serve``'s app under uvicorn on a free port, in a thread of the test: for the browser, and
for requests that must run at once or might hang (a hung request cannot hold the test up)."""

from __future__ import annotations

import socket
import threading
import time
import urllib.error
import urllib.request

from referee.analysis.deals import Settings
from referee.web.app import create_app
from referee.web.serve import server_for


class LiveServer:
    def __init__(self, folders, play_dir, **kw):
        kw.setdefault("analysis", Settings(worlds=0, bidding=False))  # a log page asks for it: cheap, unless a test says
        self.app = create_app(folders, play_dir=play_dir, sandbox="none", **kw)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.server = server_for(self.app, "127.0.0.1", self.port)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}"

    def get(self, path: str, timeout: float) -> tuple[int, bytes]:
        """(status, body) of a GET; AssertionError when no answer comes within ``timeout`` s."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
        except (TimeoutError, urllib.error.URLError) as e:
            raise AssertionError(f"{path}: no answer in {timeout} s: the server hung ({e})") from None

    def stop(self):
        self.server.should_exit = True
        self.thread.join(30)
        assert not self.thread.is_alive(), "the server did not stop (an open page kept it running)"


def serving(tmp_path):
    """A live server over ``tmp_path/served`` (plays in its ``plays``) for a test's fixture, stopped after it."""
    (tmp_path / "served").mkdir()
    srv = LiveServer([tmp_path / "served"], tmp_path / "served" / "plays")
    yield srv
    srv.stop()
