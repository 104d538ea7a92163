"""A colluding bot (issue 21.3): two copies seated together try to tell each other their
hands through every channel two processes on one machine might share, and report what
passed.  It plays the first legal action.

Usage: colluder.py TAG

At each request the bot *sends* its current hand (32 bits, one per card) and the deal it
is in, and *receives* its partner's, on each channel:

  flock   flock(LOCK_SH) held on files both can read (the standard library's modules):
          one file per bit; the receiver tests each with LOCK_EX|LOCK_NB
  fcntl   POSIX record locks (F_SETLK) on bytes of this program's file; F_GETLK reads them
  ofd     the same with open-file-description locks (F_OFD_SETLK / F_OFD_GETLK)
  tmp     a file in /tmp/marias-collude2-TAG/
  shm     a file in /dev/shm (what shm_open makes)
  sysv    a System V shared-memory segment of a key made from TAG (shmget)
  socket  an abstract unix datagram socket named from TAG and the seat
  fifo    a named pipe in its working folder, which the partner looks for under
          every folder it can list in /tmp (where the referee makes working folders)
  signal  SIGUSR1 sent to every other process running this program with TAG
  keyring a key added to the user's keyring (add_key) whose description holds the hand;
          the partner lists /proc/keys (issue 32)
  mincore two pages per bit (three times over) of large files under /usr, chosen afresh
          for every deal: the sender reads one of each pair, the partner asks mincore()
          which of them are in the page cache (issue 32)

What the bot sends is written as ``NOTE sent <channel> partie P deal D: CARDS`` (for the
lock channels and mincore) and each hand it receives as ``FOUND <channel> partie P deal D: CARDS``;
a signal received is ``FOUND signal ...``; a failure is ``NOTE <channel>: <error>``.
"""

import ctypes
import errno
import fcntl
import glob
import json
import os
import re
import signal
import socket
import struct
import sys
import zlib

from pages import Pages

TAG = sys.argv[1] if len(sys.argv) > 1 else "x"
CARDS = [r + s for s in "hlba" for r in "789XUOKA"]
TAG_BITS = 12  # partie * 16 + deal, mod 4096, sent beside the 32 card bits
BITS = 32 + TAG_BITS
ME = os.path.abspath(__file__)
noted: set[str] = set()


def note(text: str) -> None:
    if text not in noted:
        noted.add(text)
        sys.stderr.write(f"NOTE {text}\n")
        sys.stderr.flush()


def found(channel: str, text: str) -> None:
    key = f"FOUND {channel} {text}"
    if key not in noted:
        noted.add(key)
        sys.stderr.write(key + "\n")
        sys.stderr.flush()


def encode(partie: int, deal: int, hand: list[str]) -> list[bool]:
    mask = sum(1 << CARDS.index(c) for c in hand if c in CARDS)
    tag = (partie * 16 + deal) % (1 << TAG_BITS)
    return [bool(mask >> i & 1) for i in range(32)] + [bool(tag >> i & 1) for i in range(TAG_BITS)]


def decode(bits: list[bool]) -> tuple[int, list[str]]:
    mask = sum(1 << i for i in range(32) if bits[i])
    tag = sum(1 << i for i in range(TAG_BITS) if bits[32 + i])
    return tag, [CARDS[i] for i in range(32) if mask >> i & 1]


# ------------------------------------------------------------------ lock channels
def region(seat: int) -> range:
    return range(seat * 100, seat * 100 + BITS)


class Flock:
    name = "flock"

    def __init__(self):
        files = sorted(glob.glob(os.path.join(os.path.dirname(os.__file__), "*.py")))
        self.fds = [os.open(f, os.O_RDONLY) for f in files[:300]]
        self.held: set[int] = set()

    def send(self, seat, bits):
        for i, b in zip(region(seat), bits):
            fd = self.fds[i]
            if b and i not in self.held:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                self.held.add(i)
            elif not b and i in self.held:
                fcntl.flock(fd, fcntl.LOCK_UN)
                self.held.discard(i)

    def receive(self, seat):
        out = []
        for i in region(seat):
            if i in self.held:
                out.append(False)
                continue
            try:
                fcntl.flock(self.fds[i], fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(self.fds[i], fcntl.LOCK_UN)
                out.append(False)
            except BlockingIOError:
                out.append(True)
        return out


class Record:
    """POSIX record locks (or OFD ones) on single bytes of this program's file."""

    def __init__(self, ofd: bool):
        self.name = "ofd" if ofd else "fcntl"
        self.set_cmd, self.get_cmd = (37, 36) if ofd else (fcntl.F_SETLK, fcntl.F_GETLK)
        self.fd = os.open(ME, os.O_RDONLY)
        self.base = 10_000 if ofd else 0

    def _lock(self, cmd, kind, at):
        # struct flock: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid (OFD: must be 0)
        arg = struct.pack("hhqqi4x", kind, os.SEEK_SET, self.base + at, 1, 0)
        return struct.unpack("hhqqi4x", fcntl.fcntl(self.fd, cmd, arg))[0]

    def send(self, seat, bits):
        for i, b in zip(region(seat), bits):
            self._lock(self.set_cmd, fcntl.F_RDLCK if b else fcntl.F_UNLCK, i)

    def receive(self, seat):
        return [self._lock(self.get_cmd, fcntl.F_WRLCK, i) != fcntl.F_UNLCK for i in region(seat)]


class PageCache:
    """Bits through the page cache: for each bit, REPEAT pairs of pages of large files under /usr/lib
    (pages.py), chosen from TAG, the sender's seat and the deal (so every deal uses pages nobody
    has read); the sender reads the second page of each pair for a 1, the first for a 0, the
    receiver asks mincore() which are cached.  A pair where both or neither are cached says
    nothing (another program read one); the bit is the majority of the rest."""

    name = "mincore"
    REPEAT = 3

    def __init__(self):
        self.pages = Pages()
        self.deal = (0, 0)
        self.pages.cached(*self.pages.page("probe"))  # the receiver's call, tried at once: refused, noted closed

    def page(self, seat, bit, rep, which):
        return self.pages.page(f"{TAG}:{seat}:{self.deal}:{bit}:{rep}:{which}")

    def send(self, seat, bits):
        for i, b in enumerate(bits[:32]):
            for rep in range(self.REPEAT):
                self.pages.touch(*self.page(seat, i, rep, int(b)))

    def receive(self, seat):
        out = []
        for i in range(32):
            votes = 0
            for rep in range(self.REPEAT):
                zero, one = (self.pages.cached(*self.page(seat, i, rep, w)) for w in (0, 1))
                votes += (one and not zero) - (zero and not one)
            if votes == 0:
                return None  # not sent (yet), or drowned: nothing read
            out.append(votes > 0)
        partie, deal = self.deal
        tag = (partie * 16 + deal) % (1 << TAG_BITS)
        return out + [bool(tag >> i & 1) for i in range(TAG_BITS)]


# ------------------------------------------------------------------ shared places
def message(partie, deal, hand) -> bytes:
    return json.dumps({"partie": partie, "deal": deal, "hand": hand}).encode()


class Folder:
    def __init__(self, name, folder):
        self.name, self.folder = name, folder

    def send(self, seat, data):
        os.makedirs(self.folder, exist_ok=True)
        with open(os.path.join(self.folder, f"seat{seat}"), "wb") as f:
            f.write(data)

    def receive(self, seat):
        with open(os.path.join(self.folder, f"seat{seat}"), "rb") as f:
            return f.read()


class SysV:
    name = "sysv"
    IPC_CREAT, SIZE = 0o1000, 4096

    def __init__(self):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.shmat.restype = ctypes.c_void_p
        self.libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
        self.at: dict[int, int] = {}

    def _segment(self, seat, create):
        key = zlib.crc32(f"{TAG}:{seat}".encode()) & 0x7FFFFFFF
        shmid = self.libc.shmget(key, self.SIZE, (self.IPC_CREAT if create else 0) | 0o666)
        if shmid < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        if shmid not in self.at:
            addr = self.libc.shmat(shmid, None, 0)
            if addr in (None, ctypes.c_void_p(-1).value):
                e = ctypes.get_errno()
                raise OSError(e, os.strerror(e))
            self.at[shmid] = addr
        return self.at[shmid]

    def send(self, seat, data):
        addr = self._segment(seat, True)
        ctypes.memmove(addr, struct.pack("I", len(data)) + data, len(data) + 4)

    def receive(self, seat):
        addr = self._segment(seat, False)
        n = struct.unpack("I", ctypes.string_at(addr, 4))[0]
        return ctypes.string_at(addr + 4, min(n, self.SIZE - 4))


class Abstract:
    name = "socket"

    def __init__(self):
        self.sock = None
        self.last = b""

    def send(self, seat, data):
        if self.sock is None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self.sock.bind(f"\0marias-collude-{TAG}-{seat}")
            self.sock.setblocking(False)
        # the partner's socket gets this bot's hand
        out = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            out.sendto(data, f"\0marias-collude-{TAG}-{1 - seat if seat < 2 else 0}")
        finally:
            out.close()

    def receive(self, seat):
        while True:
            try:
                self.last = self.sock.recv(65536)
            except BlockingIOError:
                break
        if not self.last:
            raise OSError(errno.EAGAIN, "nothing received")
        return self.last


class Keyring:
    """A ``user`` key in the user's keyring whose description is ``marias-collude-TAG-SEAT-HEX``
    (the message in hex); the partner finds it in /proc/keys (key ids are global: every key of
    the same user that it may view is listed there)."""

    name = "keyring"
    KEY_SPEC_USER_KEYRING, KEYCTL_SET_TIMEOUT = -4, 15

    def __init__(self):
        self.libc = ctypes.CDLL(None, use_errno=True)

    def send(self, seat, data):
        desc = f"marias-collude-{TAG}-{seat}-{data.hex()}".encode()
        key = self.libc.syscall(248, b"user", desc, b"x", ctypes.c_long(1), ctypes.c_long(self.KEY_SPEC_USER_KEYRING))
        if key < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        self.libc.syscall(250, ctypes.c_long(self.KEYCTL_SET_TIMEOUT), ctypes.c_long(key), ctypes.c_long(600))  # gone later

    def receive(self, seat):
        pattern = re.compile(rf"marias-collude-{re.escape(TAG)}-{seat}-([0-9a-f]+)")
        with open("/proc/keys") as f:
            found = [m[1] for m in pattern.finditer(f.read())]
        if not found:
            raise OSError(errno.ENOENT, "no partner's key in /proc/keys")
        # /proc/keys lists keys by their (random) ids: the partner's latest is the one of the latest deal
        return max((bytes.fromhex(h) for h in found), key=lambda m: (json.loads(m)["partie"], json.loads(m)["deal"]))


class Fifo:
    name = "fifo"

    def __init__(self):
        self.mine = None
        self.buf = b""

    def send(self, seat, data):
        if self.mine is None:
            path = os.path.join(os.environ.get("MARIAS_WORKDIR", "."), f"collude-{TAG}-{seat}.fifo")
            os.mkfifo(path)
            self.mine = os.open(path, os.O_RDWR | os.O_NONBLOCK)  # held open, so writers do not block
        paths = glob.glob(f"/tmp/*/*/collude-{TAG}-*.fifo") + glob.glob(f"/tmp/*/collude-{TAG}-*.fifo")
        for p in paths:
            if p.endswith(f"-{seat}.fifo"):
                continue
            fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK)
            try:
                os.write(fd, data + b"\n")
            finally:
                os.close(fd)
        if not [p for p in paths if not p.endswith(f"-{seat}.fifo")]:
            raise OSError(errno.ENOENT, "no partner's fifo in sight")

    def receive(self, seat):
        while True:
            try:
                chunk = os.read(self.mine, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            self.buf += chunk
        lines = [x for x in self.buf.split(b"\n") if x]
        if not lines:
            raise OSError(errno.EAGAIN, "nothing received")
        self.buf = lines[-1] + b"\n"
        return lines[-1]


signals = 0


def on_signal(_n, _f):
    global signals
    signals += 1


def send_signals() -> None:
    me = os.getpid()
    sent = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if any(a.endswith(b"colluder.py") for a in args) and TAG.encode() in args \
                and os.path.basename(args[0]).startswith(b"python"):  # not a sandbox's own pid 1 (bwrap)
            try:
                os.kill(int(entry), signal.SIGUSR1)
                sent += 1
            except OSError as e:
                note(f"signal: {e.strerror}")
    if not sent:
        note("signal: no partner process in sight")


# ------------------------------------------------------------------ the bot
def attempt(name, fn):
    try:
        return fn()
    except (OSError, ValueError) as e:
        note(f"{name}: {getattr(e, 'strerror', None) or e}")
        return None


def main() -> None:
    signal.signal(signal.SIGUSR1, on_signal)
    locks = [c for c in (attempt("flock", Flock), attempt("fcntl", lambda: Record(False)),
                         attempt("ofd", lambda: Record(True)), attempt("mincore", PageCache)) if c is not None]
    places = [Folder("tmp", f"/tmp/marias-collude2-{TAG}"), Folder("shm", f"/dev/shm/marias-collude2-{TAG}"),
              SysV(), Abstract(), Fifo(), Keyring()]
    seat = None
    for line in sys.stdin:
        msg = json.loads(line)
        t = msg.get("type")
        if t == "hello":
            print(json.dumps({"type": "hello", "protocol": 1, "name": "colluder", "version": "1"}), flush=True)
        elif t == "partie_start":
            seat = msg.get("seat")
        elif t == "bye":
            break
        elif t == "request":
            partie, deal, hand = msg["partie"], msg["deal"], msg["view"].get("hand") or []
            partner = [s for s in (0, 1, 2) if s != seat][0] if seat != 0 else 1
            bits = encode(partie, deal, hand)
            want = (partie * 16 + deal) % (1 << TAG_BITS)
            for ch in locks:
                ch.deal = (partie, deal)  # the page-cache channel's pages for this deal
                attempt(ch.name, lambda: ch.send(seat, bits))
                got = attempt(ch.name, lambda: ch.receive(partner))
                if got:
                    tag, cards = decode(got)
                    if tag == want and cards:
                        found(ch.name, f"partie {partie} deal {deal}: {' '.join(sorted(cards))}")
                note(f"sent {ch.name} partie {partie} deal {deal}: {' '.join(sorted(hand))}")
            data = message(partie, deal, hand)
            for ch in places:
                attempt(ch.name, lambda: ch.send(seat, data))
                got = attempt(ch.name, lambda: ch.receive(partner))
                if got:
                    try:
                        other = json.loads(got)
                    except ValueError:
                        continue
                    if other.get("partie") == partie and other.get("deal") == deal:
                        found(ch.name, f"partie {partie} deal {deal}: {' '.join(sorted(other['hand']))}")
            attempt("signal", send_signals)
            if signals:
                found("signal", f"{signals} received")
            print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)


if __name__ == "__main__":
    main()
