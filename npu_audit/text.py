"""Text utilities every stage shares: lines as Python counts them, and "did you mean" suggestions.

**Lines.** A line ends at ``\\r\\n``, ``\\r`` or ``\\n``: the line breaks of Python's tokenizer, libcst,
``ast`` line numbers and the LSP. ``str.splitlines`` also breaks on ``\\f``, ``\\v``, ``\\x1c``-``\\x1e``,
``\\x85``, ``\\u2028`` and ``\\u2029``, which would shift every later line number, so nothing in npu-audit
uses it on source text.

**Suggestions.** One function, one cutoff, for the command line, the checks, ``--explain``, the settings
and the language server alike, so a typo gets the same suggestion wherever it is shown: a candidate
that differs only in case is the best guess; otherwise the closest candidates by
:class:`difflib.SequenceMatcher` ratio, at least :data:`SUGGESTION_CUTOFF`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import accumulate
from typing import Optional

#: A line break as Python's tokenizer sees it (``\r\n`` first: it is one break).
LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: The same, for source bytes in an ASCII-compatible encoding.
LINE_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their line breaks. A final line break is followed by one empty
    line (a cursor after it has a line)."""
    return LINE_BREAK.split(text)


#: An identifier-like word. CPython reads non-ASCII identifiers normalised (NFKC), so in non-ASCII text a
#: name may be spelled otherwise than the ast holds it: a word test is exact only where both are ASCII.
IDENTIFIER_WORD = re.compile(r"[^\W\d]\w*")

# What str.splitlines also breaks lines at, besides "\n", "\r" and "\r\n" (Python source does not)
_OTHER_BREAKS = re.compile("[\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def split_lines_keepends(text: str) -> list[str]:
    """The lines of ``text``, each with its line break; no empty line after a final line break (so
    ``lines[n - 1]`` is line ``n`` of an ``ast`` or libcst position)."""
    if not _OTHER_BREAKS.search(text):
        return text.splitlines(True)  # (the same lines, split in C)
    out, pos = [], 0
    for m in LINE_BREAK.finditer(text):
        out.append(text[pos:m.end()])
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


def source_lines(text: str) -> tuple[str, ...]:
    """:func:`split_lines_keepends` of ``text`` as a tuple. The last few texts asked for are remembered by
    identity: the slice, the module's NPU names and the helper reader each cut the same source text."""
    global _recent_lines
    recent = _recent_lines  # (replaced whole, never changed in place: threads of the language server)
    for known, lines in recent:
        if known is text:
            return lines
    lines = tuple(split_lines_keepends(text))
    _recent_lines = ((text, lines),) + recent[:3]
    return lines


_recent_lines: tuple[tuple[str, tuple[str, ...]], ...] = ()


def continues_below(line: str) -> bool:
    """Whether a physical line ends with a backslash: its logical line goes on below."""
    return line.rstrip("\r\n").endswith("\\")


def statement_end(lines: Sequence[str], last: int) -> int:
    """The last line of a statement whose tree ends at line ``last`` (1-based; ``lines`` with their line
    breaks): a line ending with a backslash goes on below, and CPython's tree does not count a next line
    that holds no code of its own (``pass \\`` then ``;``, or then a comment or nothing). A next line with
    code is not taken (``a; \\`` then ``b``: another statement, which has its own lines)."""
    while last < len(lines) and continues_below(lines[last - 1]):
        rest = lines[last].strip().lstrip(";").strip()
        if rest and not rest.startswith("#"):
            break
        last += 1
    return last


def line_starts(text: str) -> list[int]:
    """Offset of the first character of each line (``starts[n - 1]`` for line ``n``); a final line break
    starts one more (empty) line. The lines of a text :func:`source_lines` cut lately are not cut again
    (a helper module's text: cut into statements, then built into a tree)."""
    lines: Optional[Sequence[str]] = next((known for seen, known in _recent_lines if seen is text), None)
    if lines is None:
        if _OTHER_BREAKS.search(text):
            return [0] + [m.end() for m in LINE_BREAK.finditer(text)]
        lines = text.splitlines(True)
    starts = [0, *accumulate(map(len, lines))]  # (the same offsets, counted in C)
    if text and text[-1] not in "\r\n":
        starts.pop()  # (the end of a last line without a line break starts nothing)
    return starts


# ---------------------------------------------------------------------------------------------
# "did you mean"

#: The least :class:`difflib.SequenceMatcher` ratio a candidate needs to be suggested.
SUGGESTION_CUTOFF = 0.75


def suggestions(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` candidates close to ``word``, the best first: one equal to it but for case, then the
    closest by similarity (at least :data:`SUGGESTION_CUTOFF`)."""
    import difflib  # (only a mistake needs it: not imported by a run that finds none)

    pool = list(dict.fromkeys(candidates))
    lowered = word.lower()
    out = [c for c in pool if c.lower() == lowered][:1]
    for c in difflib.get_close_matches(word, pool, n=n + len(out), cutoff=SUGGESTION_CUTOFF):
        if c not in out:
            out.append(c)
    return out[:n]


def did_you_mean(word: str, candidates: Iterable[str]) -> Optional[str]:
    """The one candidate :func:`suggestions` puts first, or None."""
    found = suggestions(word, candidates, n=1)
    return found[0] if found else None


def similar(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are close enough for one to be suggested for the other."""
    import difflib

    return difflib.SequenceMatcher(None, a, b).ratio() >= SUGGESTION_CUTOFF
