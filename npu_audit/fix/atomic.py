"""Writing fixed files: atomically, inside the checked folders, keeping what the file was.

:func:`replace_file` replaces a checked file with its fixed bytes through a temporary file in the
same folder (fsync, then rename; :mod:`.write`), so readers see the old or the new file, never a mix. It refuses
(:class:`WriteRefused`, with a message for the user) rather than change anything but the content:

* a path that reaches, through a symlink (to the file or to a folder above it), a file outside the
  given roots;
* a file that is not a regular file, or has other hard links (a new file would split them);
* a read-only file (no write permission bit, or not writable by this user);
* a file of another owner, or of a group the new file cannot get (unless running as root, which
  can give the new file the old owner);
* a file whose content changed since it was read.

The mode (including set-id bits) is copied to the new file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from typing import Optional

from npu_audit.fix.write import open_temp


class WriteRefused(Exception):
    """The file was left unchanged on purpose; ``str(exc)`` says why."""


def inside_roots(path: str, roots: Iterable[str]) -> bool:
    """Whether the real path of ``path`` is one of ``roots`` or lies below one (roots are resolved
    too: a root given through a symlink is its target)."""
    real = os.path.realpath(path)
    for root in roots:
        r = os.path.realpath(root)
        if real == r or real.startswith(r.rstrip(os.sep) + os.sep):
            return True
    return False


def replace_file(path: str, data: bytes, *, expected: Optional[bytes] = None, roots: Optional[Iterable[str]] = None) -> None:
    """Replace the content of the existing file ``path`` with ``data``; raises WriteRefused or OSError."""
    real = os.path.realpath(path)
    if roots is not None and not inside_roots(path, roots):
        raise WriteRefused(f"it is a symlink (or inside a symlinked folder) that leads outside the checked paths, "
                           f"to {real}; not written")
    st = os.stat(real)
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused("not a regular file; not written")
    if st.st_nlink > 1:
        raise WriteRefused(f"it has {st.st_nlink} hard links; replacing it would split them, so it was not written "
                           "(apply the diff from --diff instead)")
    mode = stat.S_IMODE(st.st_mode)
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(real, os.W_OK):
        raise WriteRefused(f"it is read-only (mode {mode:04o}); not replaced")
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    if euid is not None and euid != 0 and st.st_uid != euid:
        raise WriteRefused(f"it belongs to another user (uid {st.st_uid}); replacing it would change its owner, "
                           "so it was not written")
    if expected is not None:
        with open(real, "rb") as fh:
            if fh.read() != expected:
                raise WriteRefused("it changed on disk while npu-audit was fixing it; not written")
    fd, tmp = open_temp(real)  # (.NAME.XXXXXXXX.npu-audit.tmp: stale ones of this file are removed first)
    try:
        with os.fdopen(fd, "wb") as fh:  # (open until it is renamed: its lock says a write is in progress)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            tst = os.stat(tmp)
            if euid == 0 and (tst.st_uid, tst.st_gid) != (st.st_uid, st.st_gid):
                os.chown(tmp, st.st_uid, st.st_gid)
            elif tst.st_gid != st.st_gid:
                try:
                    os.chown(tmp, -1, st.st_gid)
                except OSError:
                    raise WriteRefused(f"it belongs to group {st.st_gid}, which a new file cannot get; "
                                       "not written") from None
            os.chmod(tmp, mode)
            os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def check_new_file(path: str, roots: Iterable[str]) -> None:
    """Raise WriteRefused when the folder of a file to create leads outside ``roots``."""
    folder = os.path.dirname(path) or os.curdir
    if not inside_roots(folder, roots):
        raise WriteRefused(f"{path} would be created in {os.path.realpath(folder)}, outside the checked paths; "
                           "not written")


def create_new(path: str, data: bytes, roots: Optional[Iterable[str]] = None) -> bool:
    """Create ``path`` with ``data`` only if it does not exist (never overwrites). True if created.
    Raises WriteRefused when its folder leads outside ``roots``."""
    if roots is not None:
        check_new_file(path, roots)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return True
