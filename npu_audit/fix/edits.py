"""Apply a set of edits (1-based line/column ranges in characters) to a text, keeping every other character."""

from __future__ import annotations

from npu_audit.findings import Edit
from npu_audit.text import line_starts


def offset(starts: list[int], text: str, line: int, column: int) -> int:
    if line - 1 >= len(starts):
        return len(text)
    return min(starts[line - 1] + column - 1, len(text))


def apply_edits(text: str, edits: list[Edit]) -> tuple[str, list[Edit]]:
    """Apply non-overlapping edits; return the new text and the edits left out because they overlap."""
    starts = line_starts(text)
    spans = []
    for e in edits:
        a, b = offset(starts, text, e.line, e.column), offset(starts, text, e.end_line, e.end_column)
        spans.append((a, b, e))
    spans.sort(key=lambda s: (s[0], s[1]))
    chosen: list[tuple[int, int, Edit]] = []
    skipped: list[Edit] = []
    last_end = -1
    for a, b, e in spans:
        if a < last_end or (a == last_end and chosen and chosen[-1][0] == chosen[-1][1] == a):
            skipped.append(e)
            continue
        chosen.append((a, b, e))
        last_end = b
    out, pos = [], 0
    for a, b, e in chosen:
        out.append(text[pos:a])
        out.append(e.content)
        pos = b
    out.append(text[pos:])
    return "".join(out), skipped
