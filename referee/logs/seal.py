"""The seal of a log (protocol/LOGS.md, "Seal"): a hash chain over its lines and an Ed25519
signature of the final hash.

Every line ends with ``,"chain":"H"}``: H is the SHA-256 of the previous line's H (64 ASCII
hex digits; 64 zeros before the first line) followed by the line's *body*, its bytes with
that tail (and a signature after it) replaced by ``}``.  The footer's H is the final hash;
a signed footer names its ``signer`` key in the body and carries ``"signature"`` after the
chain field.  Keys are Ed25519 (the ``cryptography`` package), written by ``marias keygen``.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

#: The chain value before the first line.
GENESIS = "0" * 64
#: How every sealed line ends: the chain field, and on a signed footer the signature.
SEAL_TAIL = re.compile(r',"chain":"([0-9a-f]{64})"(?:,"signature":"([0-9a-f]{128})")?\}$')


def make_private_dir(path) -> Path:
    """Create ``path`` and any missing parents with mode 0700 (existing folders are left as they are)."""
    path = Path(path)
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for q in reversed(missing):
        try:
            q.mkdir(mode=0o700)
        except FileExistsError:
            continue
        os.chmod(q, 0o700)  # whatever the umask
    return path


def chain_hash(prev: str, body: bytes) -> str:
    """SHA-256 (hex) of the previous line's chain value (64 ASCII hex digits) followed by
    this line's body: its UTF-8 bytes with the seal tail replaced by the closing ``}``."""
    return hashlib.sha256(prev.encode("ascii") + body).hexdigest()


def seal_line(prev: str, text: str, signer=None) -> tuple[str, str]:
    """``text`` (one JSON object, as written) sealed after the chain value ``prev``:
    returns (the line to write, its chain value).  With ``signer`` (an Ed25519 private
    key) the chain value is signed and the signature follows the chain field."""
    if not text.endswith("}") or text == "{}":
        raise ValueError("a sealed line is a non-empty JSON object")
    h = chain_hash(prev, text.encode("utf-8"))
    tail = f',"chain":"{h}"'
    if signer is not None:
        tail += f',"signature":"{signer.sign(h.encode("ascii")).hex()}"'
    return text[:-1] + tail + "}", h


def load_signing_key(key):
    """An Ed25519 private key from a PEM file (``marias keygen``), raw 32 bytes, or a key object."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if isinstance(key, Ed25519PrivateKey):
        return key
    if isinstance(key, (bytes, bytearray)) and len(key) == 32:
        return Ed25519PrivateKey.from_private_bytes(bytes(key))
    data = Path(key).read_bytes()
    try:
        k = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{key}: not an unencrypted PEM private key ({e})") from None
    if not isinstance(k, Ed25519PrivateKey):
        raise ValueError(f"{key}: not an Ed25519 private key")
    return k


def signing_key_bytes(key) -> bytes:
    """The raw 32 bytes of an Ed25519 private key (:func:`load_signing_key`'s argument)."""
    from cryptography.hazmat.primitives import serialization

    return load_signing_key(key).private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                               serialization.NoEncryption())


def public_key_text(private_key) -> str:
    """``ed25519:`` and the 64 hex digits of the raw 32-byte public key."""
    from cryptography.hazmat.primitives import serialization

    raw = private_key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519:" + raw.hex()


def load_public_key(value: str) -> str:
    """A public key as ``ed25519:HEX``: from a PEM file (``KEY.pub`` of ``marias keygen``),
    a file holding ``ed25519:HEX``, or that text itself."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    text = value.strip()
    if not re.fullmatch(r"(ed25519:)?[0-9a-f]{64}", text):
        try:
            data = Path(value).read_bytes()
        except OSError as e:
            raise ValueError(f"{value}: not a public key (ed25519:HEX) and cannot be read: {e.strerror or e}") from None
        text = data.decode("utf-8", "replace").strip()
        if not re.fullmatch(r"(ed25519:)?[0-9a-f]{64}", text):
            try:
                k = serialization.load_pem_public_key(data)
            except (ValueError, TypeError):
                raise ValueError(f"{value}: neither a PEM public key nor ed25519:HEX") from None
            if not isinstance(k, Ed25519PublicKey):
                raise ValueError(f"{value}: not an Ed25519 public key")
            text = k.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()
    return text if text.startswith("ed25519:") else "ed25519:" + text


def verify_signature(public_key: str, chain: str, signature: str) -> bool:
    """Whether ``signature`` (hex) is the Ed25519 signature of ``public_key`` over the
    64 ASCII hex digits ``chain``."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key.removeprefix("ed25519:")))
        key.verify(bytes.fromhex(signature), chain.encode("ascii"))
        return True
    except (InvalidSignature, ValueError):
        return False


def generate_key_pair(path) -> tuple[Path, Path, str]:
    """``marias keygen``: a new Ed25519 key, the private key as PEM (PKCS#8) in ``path``
    (mode 0600, created exclusively) and the public key as PEM in ``path.pub``.
    Returns both paths and the public key as ``ed25519:HEX``."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = Path(path)
    pub_path = path.with_name(path.name + ".pub")
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    if pub_path.exists():
        raise FileExistsError(f"{pub_path} exists; not overwritten")
    make_private_dir(path.parent)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "wb") as f:
        f.write(private)
    with os.fdopen(os.open(pub_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644), "wb") as f:
        f.write(public)
    return path, pub_path, public_key_text(key)


class ChainCheck:
    """The hash chain checked line by line (a log streamed, not held): feed each line with
    :meth:`line`; :attr:`problems` collects (line number, problem) as :func:`chain_problems` does."""

    def __init__(self):
        self.prev = GENESIS
        self.problems: list[tuple[int, str]] = []

    def line(self, n: int, raw, is_last: bool, ends_with_newline: bool) -> None:
        out = self.problems
        text = raw if isinstance(raw, str) else raw.decode("utf-8", "surrogateescape")
        m = SEAL_TAIL.search(text)
        if m is None:
            if is_last and not ends_with_newline:
                return
            out.append((n, "the line carries no chain field at its end: it is not part of the sealed log"))
            return
        body = (text[:m.start()] + "}").encode("utf-8", "surrogateescape")
        if chain_hash(self.prev, body) != m.group(1):
            out.append((n, "the line's chain value does not follow from the previous line's and this line's "
                           "content: a line was changed, inserted, removed or reordered here"))
        if m.group(2) is not None and not is_last:
            out.append((n, "a signature on a line that is not the last"))
        self.prev = m.group(1)


def chain_problems(lines: list, ends_with_newline: bool = True) -> list[tuple[int, str]]:
    """Check the hash chain over a log's lines (str or bytes, without newlines):
    (line number, problem) for each line that carries no chain field or whose chain
    value does not follow from the previous line's and its own content.  A changed
    line is named once (the next line is checked against the recorded value); a
    truncated last line is left to the reader's "truncated" report."""
    check = ChainCheck()
    last = len(lines)
    for n, raw in enumerate(lines, 1):
        check.line(n, raw, n == last, ends_with_newline)
    return check.problems
