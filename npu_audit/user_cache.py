"""The user's cache folder for what npu-audit keeps between runs of any project: the knowledge-base
snapshot (npu_audit.knowledge.loader) and the compiled methods of its record classes (npu_audit.records).
Analysis results are cached per project elsewhere (npu_audit.cache)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional


def folder() -> Optional[Path]:
    """``$XDG_CACHE_HOME/npu-audit``, else ``~/.cache/npu-audit`` (it may not exist yet). A relative
    ``XDG_CACHE_HOME`` is ignored, as the XDG base-directory specification says; None when no absolute
    folder is known (no home folder): a folder relative to where npu-audit runs would be inside the project it
    audits, and what it holds is loaded as code."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "npu-audit"


def write(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically (a temporary file in its folder, then a rename: a reader sees the
    old content or the new), creating the folder; False when that fails. What this folder holds only saves
    time, so a failure is not an error."""
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
