"""The user's cache folder: what npu-audit keeps between runs of any project (the knowledge-base snapshot,
npu_audit.knowledge.loader) and the per-user secret key that signs what npu-audit caches.

Caches live where the audited repository may be able to write (``XDG_CACHE_HOME`` pointing inside a CI
checkout, a ``~/.cache`` restored from a shared CI cache, ``.npu-audit-cache/`` committed to the project).
Nothing read from them is ever code (the snapshot is JSON), and nothing read from them is believed unless
it carries a MAC made with :func:`secret_key`: a random key that only this user's processes can read. A
file checked out by git can never be that key, since git records no 0600 mode and no owner, and a key that
is a link, is readable by others or is owned by someone else is refused (no caching, never a wrong result).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
import sys
from pathlib import Path
from typing import Optional

#: Name of the key file in the user's cache folder.
KEY_NAME = "secret.key"
#: Length of the key in bytes.
KEY_BYTES = 32
#: Length of a MAC in bytes (HMAC-SHA-256).
MAC_BYTES = 32

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_key_memo: dict[Path, Optional[bytes]] = {}
_refusals: list[str] = []
_refused: set[Path] = set()  # the key files refused in this process


def folder() -> Optional[Path]:
    """``$XDG_CACHE_HOME/npu-audit``, else ``~/.cache/npu-audit`` (it may not exist yet). A relative
    ``XDG_CACHE_HOME`` is ignored, as the XDG base-directory specification says; None when no absolute
    folder is known (no home folder): a folder relative to where npu-audit runs would be inside the project
    it audits."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "npu-audit"


def secret_key() -> Optional[bytes]:
    """This user's random key for signing cache entries (created on first use, mode 0600), or None when no
    key can be trusted: no cache folder, a key file that is a link, not a regular file, not owned by this
    user, readable or writable by others, or of the wrong size. None means: cache nothing, read nothing.
    Why a key was refused is kept for :func:`refusals`."""
    where = folder()
    if where is None:
        return None
    if where not in _key_memo:
        _key_memo[where] = _load_or_create_key(where / KEY_NAME)
    return _key_memo[where]


def refusals() -> list[str]:
    """Why a key file was refused in this process, each reason once: the notes not yet taken by an earlier
    call (the caller prints them on stderr); empty when no key was refused since."""
    taken = list(_refusals)
    _refusals.clear()
    return taken


def was_refused() -> bool:
    """Whether a key file was refused in this process (:func:`refusals` gives, or gave, the reason): a caller
    that finds no key need not say so again."""
    return bool(_refused)


def _load_or_create_key(path: Path) -> Optional[bytes]:
    key = _read_key(path)
    if key is not None or path.exists() or path.is_symlink():
        return key
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    temp = path.with_name(f".{KEY_NAME}.{os.getpid()}.tmp")
    try:
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        try:
            os.write(descriptor, os.urandom(KEY_BYTES))
        finally:
            os.close(descriptor)
        try:
            os.link(temp, path)  # (atomic, and never replaces a key another process created meanwhile)
        except FileExistsError:
            pass
    except OSError:
        return None
    finally:
        try:
            os.unlink(temp)
        except OSError:
            pass
    return _read_key(path)


def _read_key(path: Path) -> Optional[bytes]:
    try:
        descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        _refuse(path, f"cannot be opened ({exc.strerror or exc}; a link is never followed)")
        return None
    try:
        info = os.fstat(descriptor)
        problem = _key_file_problem(info)
        if problem:
            _refuse(path, problem)
            return None
        data = os.read(descriptor, KEY_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    if len(data) != KEY_BYTES:
        _refuse(path, f"holds {len(data)} bytes, not {KEY_BYTES}")
        return None
    return data


def _key_file_problem(info: os.stat_result) -> Optional[str]:
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if sys.platform != "win32":
        if info.st_uid != os.geteuid():
            return "is owned by another user"
        if info.st_mode & 0o077:
            return f"is readable or writable by others (mode {stat.S_IMODE(info.st_mode):o}, 600 expected)"
    return None


def _refuse(path: Path, problem: str) -> None:
    _refused.add(path)
    _refusals.append(f"{path} {problem}: npu-audit caches nothing in this run (remove the file to get a new key)")


def sign(key: bytes, data: bytes) -> bytes:
    """The MAC of ``data`` under ``key`` (HMAC-SHA-256, :data:`MAC_BYTES` bytes)."""
    return hmac.digest(key, data, hashlib.sha256)


def signed(key: bytes, data: bytes) -> bytes:
    """``data`` with its MAC in front: what :func:`unsigned` accepts."""
    return sign(key, data) + data


def unsigned(key: bytes, blob: bytes) -> Optional[bytes]:
    """The data of a :func:`signed` blob, or None when its MAC does not match (made with another key,
    edited, truncated, or never signed)."""
    if len(blob) < MAC_BYTES:
        return None
    mac, data = blob[:MAC_BYTES], blob[MAC_BYTES:]
    return data if hmac.compare_digest(mac, sign(key, data)) else None


def write(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically (a temporary file in its folder, then a rename: a reader sees the
    old content or the new), creating the folder; False when that fails. What this folder holds only saves
    time, so a failure is not an error. A link at ``path`` is replaced, never written through."""
    import tempfile  # (only when something is written: 2 ms of a start otherwise)

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    except OSError:
        return False
    return True
