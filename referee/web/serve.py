"""Starting the server for ``marias serve``: check the folders, warn off loopback, print the URL."""

from __future__ import annotations

import errno
import ipaddress
import socket
import sys
import threading
from pathlib import Path

from ..analysis.deals import Settings
from .app import create_app
from .folders import BadFolder, Roots
from .play import IDLE_MINUTES

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

    # no access log: a request's path may hold a seat's token (an invite link), which is never written anywhere
    return Server(uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                                 timeout_graceful_shutdown=SHUTDOWN_S))


class PortTaken(OSError):
    """The address cannot be listened on; the message says why and what to do."""


def listen_socket(host: str, port: int) -> socket.socket:
    """The socket the server listens on, bound here (as uvicorn binds it) so that a port in use is
    told in words (:class:`PortTaken`) rather than as uvicorn's logged ``[Errno 98]`` and exit 1."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise PortTaken(f"port {port} on {host} is taken: another program (another marias serve?) listens "
                            f"there; stop it or choose a free port with --port, e.g. --port {port + 1 if port < 65535 else 8000}") from None
        if e.errno == errno.EACCES:
            raise PortTaken(f"port {port} on {host} needs privileges this user lacks (ports below 1024): "
                            f"choose another with --port, e.g. --port 8000") from None
        if e.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT) or isinstance(e, socket.gaierror):
            raise PortTaken(f"cannot listen on {host}: not an address of this machine ({e.strerror or e}); "
                            f"give another with --host") from None
        raise PortTaken(f"cannot listen on {host} port {port}: {e.strerror or e}") from None
    sock.set_inheritable(True)
    return sock


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
          extra_bots: dict[str, str] | None = None, max_mb: float | None = None, table_idle_minutes: float = IDLE_MINUTES,
          analysis_worlds: int | None = None, out=None) -> int:
    out = out or sys.stderr  # looked up now: a caller (a test's runner) may have replaced it
    try:
        Roots(folders)
    except BadFolder as e:
        print(f"error: {e}", file=out)
        return 2
    if not is_loopback(host):
        print(f"warning: serving on {host}: anyone who can reach this machine on port {port} can read the served "
              f"folders and start games (bots run here). Use the default 127.0.0.1 unless you mean it.", file=out)
    try:
        sock = listen_socket(host, port)
    except PortTaken as e:
        print(f"error: {e}", file=out)
        return 2
    app = create_app(folders, play_dir=play_dir, extra_bots=extra_bots, allowed_hosts=allowed_hosts(host),
                     max_bytes=int(max_mb * 2**20) if max_mb else None, table_idle_minutes=table_idle_minutes,
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
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0 if server.started else 1
