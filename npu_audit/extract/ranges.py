"""A 1-based source range: what findings, notes and fixes point at (no libcst here: the checks and a
warm run use ranges without the parser)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Range"]


@dataclass(frozen=True)
class Range:
    """A span of source text that findings, notes and fixes point at."""

    line: int  # 1-based
    column: int  # 1-based, in characters
    end_line: int
    end_column: int  # 1-based, exclusive
