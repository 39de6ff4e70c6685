"""The TOML reader of this Python (``tomllib``; ``tomli`` before 3.11), imported when first needed.

A run reads no TOML when no pyproject.toml lies at or above the files it analyses (or with
``--isolated``) and the knowledge base's compiled snapshot is there. Importing the reader up front costs
7 ms of a one-file run.
"""

from __future__ import annotations

import sys
from types import ModuleType


def toml_library() -> ModuleType:
    """The module with ``loads`` and ``TOMLDecodeError``."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # pragma: no cover

    return tomli  # pragma: no cover
