"""Atomic file writes: a temporary file in the same folder, fsync, then rename over the target."""

from __future__ import annotations

import os
import stat
import tempfile
from typing import Optional


def write_atomic(path: str, data: bytes, keep_mode_of: Optional[str] = None) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never a mix.

    The file mode of the existing file (or ``keep_mode_of``) is kept. Symlinks are followed: the
    file they point to is replaced, the link stays.
    """
    target = os.path.realpath(path)
    folder = os.path.dirname(target) or "."
    mode = None
    source = keep_mode_of or target
    try:
        mode = stat.S_IMODE(os.stat(source).st_mode)
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=".npu-audit-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def create_new(path: str, data: bytes) -> bool:
    """Create ``path`` with ``data`` only if it does not exist (never overwrites). True if created."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return True
