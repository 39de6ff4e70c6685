"""Writing a file atomically through a temporary file next to it, and leaving no temporary file behind.

A file npu-audit writes (a fixed file, :mod:`.atomic`; a report or a diff, ``-o FILE``) is first written to
``.NAME.XXXXXXXX.npu-audit.tmp`` in the same folder (``NAME`` the target's name, ``XXXXXXXX`` eight random
lowercase hex digits), then renamed over ``NAME``. A process killed in between (``kill -9``, a CI timeout)
leaves that temporary file; the next write of the same target removes such files first
(:func:`remove_stale`): only regular files of this user whose name is exactly that pattern for that target,
never a link, never anything else, and never the temporary file of a write still in progress (the writer
holds a lock on it, where the system has ``flock``).
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from typing import Optional

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock (a stale temporary file is removed regardless)
    fcntl = None  # type: ignore[assignment]

#: The end of the name of every temporary file npu-audit writes next to a target.
SUFFIX = ".npu-audit.tmp"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def temp_pattern(name: str) -> re.Pattern[str]:
    """The names of the temporary files written for a target named ``name``, and nothing else."""
    return re.compile(r"\." + re.escape(name) + r"\.[0-9a-f]{8}" + re.escape(SUFFIX), re.DOTALL)


def remove_stale(folder: str, name: str) -> list[str]:
    """Remove the temporary files an interrupted write of ``folder/name`` left (see the module's docstring);
    the paths removed. Errors are ignored: a file that cannot be removed stays, and the write goes on."""
    pattern = temp_pattern(name)
    try:
        names = os.listdir(folder or os.curdir)
    except OSError:
        return []
    removed = []
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    for entry in names:
        if not pattern.fullmatch(entry):
            continue
        path = os.path.join(folder, entry)
        try:
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
        except OSError:  # (gone, a link, or not ours to read)
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or (uid is not None and info.st_uid != uid):
                continue
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:  # a write in progress holds it
                    continue
            now = os.lstat(path)  # (still the file opened, not a link put in its place)
            if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino) or not stat.S_ISREG(now.st_mode):
                continue
            os.unlink(path)
            removed.append(path)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def open_temp(target: str, mode: int = 0o600) -> tuple[int, str]:
    """A new temporary file for writing ``target`` (already resolved: no link in its name), in its folder,
    created with ``mode`` (minus the umask), never through a link, and locked until its descriptor is
    closed; (descriptor, path). Stale temporary files of the same target are removed first."""
    folder, name = os.path.split(target)
    remove_stale(folder, name)
    while True:
        temp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}{SUFFIX}")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode)
            break
        except FileExistsError:  # pragma: no cover - a name clash: draw again
            continue
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # pragma: no cover - (no lock on this file system: the write goes on without one)
            pass
    return fd, temp


def write_report(path: str, data: bytes) -> None:
    """Write a report file atomically (a temporary file in the same folder, renamed over it).

    A new file gets the mode the umask gives (like any file the shell creates); an existing one
    keeps its mode. A symlink is followed (the file it points to is replaced, the link stays); a
    target that is not a regular file (``/dev/stdout``, a FIFO) is written in place."""
    target = os.path.realpath(path)
    try:
        st: Optional[os.stat_result] = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(target, "wb") as fh:
            fh.write(data)
        return
    # 0o666 minus the umask for a new file; an existing file's mode is copied below
    fd, tmp = open_temp(target, 0o666 if st is None else 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            if st is not None:
                os.chmod(tmp, stat.S_IMODE(st.st_mode))
            os.replace(tmp, target)  # (before the descriptor, and with it the lock, is closed)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
