"""Starting the server for ``marias serve``: check the folders, warn off loopback, print the URL."""

from __future__ import annotations

import ipaddress
import sys
import threading
from pathlib import Path

from ..analysis.deals import Settings
from .app import create_app
from .folders import BadFolder, Roots

LOOPBACK = ("127.0.0.1", "localhost", "::1")
SHUTDOWN_S = 5
"""How long Ctrl-C waits at most for answers in progress. A live page's event stream would never
finish by itself: the server tells the streams to end (``app.state.stopping``), which they do
within a tick; this bound is only the backstop."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str) -> list[str]:
    """The Host headers answered: this machine's loopback names, and the bound address when it is another."""
    hosts = ["127.0.0.1", "localhost", "[::1]"]
    if not is_loopback(host):
        hosts = ["*"] if host in ("0.0.0.0", "::") else hosts + [host]
    return hosts


def server_for(app, host: str, port: int):
    """The uvicorn server that serves ``app``: quiet, and on Ctrl-C ending the live pages' streams
    before it waits for the connections to close."""
    import uvicorn

    class Server(uvicorn.Server):
        async def shutdown(self, sockets=None):
            app.state.stopping.set()
            await super().shutdown(sockets)

    return Server(uvicorn.Config(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=SHUTDOWN_S))


def warm(app, folders: list[Path]) -> None:
    """Compute every tournament's tables once in the background, so the first page answers at once."""
    def run():
        for it in app.state.roots.items()[0]:
            if it.kind != "log":
                try:
                    app.state.cache.get(app.state.roots.resolve(it.root, it.rel, want="dir"))
                except Exception:  # noqa: BLE001 - shown when the page is asked for
                    pass
    threading.Thread(target=run, name="warm-tables", daemon=True).start()


def serve(folders: list[Path], host: str = "127.0.0.1", port: int = 8000, *, play_dir: Path | None = None,
          extra_bots: dict[str, str] | None = None, max_mb: float | None = None, analysis_worlds: int | None = None,
          out=sys.stderr) -> int:
    try:
        Roots(folders)
    except BadFolder as e:
        print(f"error: {e}", file=out)
        return 2
    if not is_loopback(host):
        print(f"warning: serving on {host}: anyone who can reach this machine on port {port} can read the served "
              f"folders and start games (bots run here). Use the default 127.0.0.1 unless you mean it.", file=out)
    app = create_app(folders, play_dir=play_dir, extra_bots=extra_bots, allowed_hosts=allowed_hosts(host),
                     max_bytes=int(max_mb * 2**20) if max_mb else None,
                     analysis=Settings() if analysis_worlds is None else Settings(worlds=analysis_worlds))
    warm(app, folders)
    shown = f"[{host}]" if ":" in host else host
    server = server_for(app, host, port)

    def announce():  # the URL once it answers
        while not server.started and not server.should_exit:
            threading.Event().wait(0.05)
        if server.started:
            print(f"marias serve: http://{shown}:{port}/  (folders: {', '.join(str(f) for f in app.state.roots.folders)}; "
                  f"Ctrl-C stops)", file=out, flush=True)

    threading.Thread(target=announce, daemon=True).start()
    server.run()
    return 0 if server.started else 1
