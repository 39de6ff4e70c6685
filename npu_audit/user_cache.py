"""The user's cache folder for what npu-audit keeps between runs of any project: the knowledge-base
snapshot (npu_audit.knowledge.loader) and the compiled methods of its record classes (npu_audit.records).
Analysis results are cached per project elsewhere (npu_audit.cache)."""

from __future__ import annotations

import os
from pathlib import Path


def folder() -> Path:
    """``$XDG_CACHE_HOME/npu-audit``, else ``~/.cache/npu-audit`` (it may not exist yet)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "npu-audit"
