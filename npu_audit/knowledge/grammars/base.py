"""What every value grammar shares: the problem and grammar records, and the helpers that split a value
into pieces and word a problem with the offsets of the bad part."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

from npu_audit.text import did_you_mean


@dataclass(frozen=True)
class GrammarProblem:
    """One bad part of a string a grammar checked."""

    start: int  # 0-based offset into the checked string where the bad part starts
    end: int  # end offset (exclusive); start == end for "missing X" at a position
    message: str  # what is wrong, in plain words, no trailing period


@dataclass(frozen=True)
class Grammar:
    """A named format the string values of an option must follow (``Domain.grammar``), with examples the tests run."""

    name: str
    summary: str  # one-line format description for docs and hover
    check: Callable[[str, Optional[str]], list]  # (text, product or None) -> list[GrammarProblem]
    examples_valid: tuple[str, ...]
    examples_invalid: tuple[str, ...]


P = GrammarProblem

# ---------------------------------------------------------------------------------------------------------
# small helpers

_UINT = re.compile(r"[0-9]+")
_INT = re.compile(r"-?[0-9]+")
_WS = " \t\n\r\f\v"


def _q(s: str, limit: int = 40) -> str:
    """Quote a piece of the input for a message (shortened when long)."""
    if len(s) > limit:
        s = s[: limit - 3] + "..."
    return "'" + "".join(c if c.isprintable() else repr(c)[1:-1] for c in s) + "'"


def _suggest(word: str, choices) -> str:
    """' (did you mean 'x'?)' when a choice is close to word, else ''."""
    if len(word) > 200:  # the similarity measure is quadratic
        return ""
    close = did_you_mean(word, choices)
    return f" (did you mean '{close}'?)" if close else ""


def _pieces(text: str, sep: str, base: int = 0) -> list:
    """Split text on sep, keeping the absolute offset of each piece: [(start, piece), ...]."""
    out = []
    start = 0
    while True:
        j = text.find(sep, start)
        if j < 0:
            out.append((base + start, text[start:]))
            return out
        out.append((base + start, text[start:j]))
        start = j + len(sep)


def _empty_piece(what: str, sep: str, pos: int, seg_start: int, seg_end: int) -> GrammarProblem:
    """Problem for an empty piece at pos inside the segment [seg_start, seg_end) split on sep."""
    n = len(sep)
    if pos == seg_start:
        return P(pos, pos + n, f"'{sep}' with no {what} before it")
    if pos == seg_end:
        return P(pos - n, pos, f"trailing '{sep}' with no {what} after it")
    return P(pos - n, pos + n, f"empty {what} between two '{sep}'")


def _empty_value(text: str, expected: str) -> list:
    return [P(0, len(text), f"empty value; expected {expected}")]


def _space_problem(piece: str, start: int, what: str) -> Optional[GrammarProblem]:
    """Problem for whitespace around a piece (pointing at the whitespace), else None."""
    stripped_left = piece.lstrip(_WS)
    if len(stripped_left) != len(piece):
        return P(
            start, start + len(piece) - len(stripped_left), f"space before {what} {_q(piece.strip(_WS))}"
        )
    stripped = piece.rstrip(_WS)
    if len(stripped) != len(piece):
        return P(start + len(stripped), start + len(piece), f"space after {what} {_q(stripped)}")
    return None


def _bad_number(piece: str, start: int, what: str, allow_negative: bool = False) -> Optional[GrammarProblem]:
    """Problem when piece is not a plain integer (non-negative unless allow_negative), else None."""
    if piece == "":
        return P(start, start, f"missing {what}")
    sp = _space_problem(piece, start, what)
    if sp is not None:
        return sp
    if (_INT if allow_negative else _UINT).fullmatch(piece):
        return None
    if not allow_negative and _INT.fullmatch(piece):
        return P(start, start + len(piece), f"{what} {piece} is negative; expected a non-negative integer")
    return P(start, start + len(piece), f"{what} {_q(piece)} is not an integer")


def _as_str(text: Any) -> str:
    if isinstance(text, (bytes, bytearray)):
        return bytes(text).decode("utf-8", "replace")
    return text if isinstance(text, str) else str(text)
