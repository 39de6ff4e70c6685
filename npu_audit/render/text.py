"""Human-readable output, ruff-style.

Per finding::

    train.py:7:25: NPU101 [unknown-option] Unknown option "precison_mode"
      |
    7 | custom_op.parameter_map["precison_mode"].s = b"allow_fp32_to_fp16"
      |                         ^^^^^^^^^^^^^^^
      = hint: did you mean "precision_mode"?
      = fix (safe): Replace with "precision_mode"

then a summary line. Markers stay aligned under tabs (expanded to tab stops of ``TAB_SIZE`` cells in
both the source line and the marker line) and wide East Asian characters (two cells each).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence

from npu_audit.findings import FileReport, Finding, RunReport
from npu_audit.render import source_lines

TAB_SIZE = 4

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_CYAN = "\x1b[36m"
_SEVERITY_COLOR = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[34m"}


class _Style:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, text: str, *codes: str) -> str:
        if not self.enabled or not codes or not text:
            return text
        return "".join(codes) + text + _RESET


# -- cells --------------------------------------------------------------------------------------


def _visible(ch: str) -> str:
    """A control character as something harmless to print (no terminal escape injection)."""
    o = ord(ch)
    if o < 0x20:
        return chr(0x2400 + o)  # ␀ .. ␟
    if o == 0x7F:
        return "\u2421"  # ␡
    if 0x80 <= o < 0xA0:
        return "\ufffd"
    return ch


def clean(text: str) -> str:
    """``text`` with control characters other than newline and tab made visible."""
    return "".join(c if c in "\n\t" else _visible(c) for c in text)


def char_width(ch: str) -> int:
    """Terminal cells taken by one (non-tab) character."""
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def layout(line: str) -> tuple[str, list[int]]:
    """The display form of a source line and the cell where each character (and the end) starts.

    Tabs are expanded to the next multiple of :data:`TAB_SIZE` cells, counting wide characters as
    two cells, so a marker built from the returned offsets lines up under the displayed text.
    """
    shown = []
    starts = []
    cell = 0
    for ch in line:
        starts.append(cell)
        if ch == "\t":
            n = TAB_SIZE - cell % TAB_SIZE
            shown.append(" " * n)
            cell += n
        else:
            v = _visible(ch)
            shown.append(v)
            cell += char_width(v)
    starts.append(cell)
    return "".join(shown), starts


def marker(line: str, column: int, end_column: int | None) -> tuple[str, str]:
    """(displayed line, marker) marking the 1-based character columns [column, end_column).

    ``end_column=None`` marks to the end of the line. The marker has at least one caret.
    """
    shown, starts = layout(line)
    n = len(line)
    start = min(max(column, 1), n + 1) - 1
    end = n if end_column is None else min(max(end_column - 1, start), n)
    first, last = starts[start], starts[end]
    return shown, " " * first + "^" * max(last - first, 1)


# -- findings -----------------------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _pairs(report: RunReport) -> list[tuple[Finding, FileReport]]:
    pairs = [(f, fr) for fr in report.files for f in fr.findings]
    pairs.sort(key=lambda p: p[0].sort_key())
    return pairs


def _finding_block(f: Finding, fr: FileReport, lines: list[str], style: _Style, show_source: bool) -> list[str]:
    sev = _SEVERITY_COLOR.get(f.severity, "")
    header = (
        f"{style(clean(f.path), _BOLD)}:{f.line}:{f.column}: {style(f.code, _CYAN, _BOLD)} "
        f"{style('[' + f.name + ']', sev)} {clean(f.message)}"
    )
    out = [header]
    width = len(str(f.line))
    pad = " " * width
    if show_source and fr.text is not None and 0 < f.line <= len(lines):
        shown, mark = marker(lines[f.line - 1], f.column, f.end_column if f.end_line == f.line else None)
        out.append(f"{pad} |")
        out.append(f"{f.line} | {shown}".rstrip())
        carets = mark.lstrip(" ")
        out.append(f"{pad} | {mark[: len(mark) - len(carets)]}{style(carets, sev, _BOLD)}")
    if f.hint:
        out.append(f"{pad} = {style('hint', _BOLD)}: {clean(f.hint)}")
    for r in f.related:
        out.append(f"{pad} = {style('note', _BOLD)}: {clean(r.message)} at {clean(r.path)}:{r.line}:{r.column}")
    if f.fix is not None:
        out.append(f"{pad} = {style('fix', _BOLD)} ({f.fix.applicability}): {clean(f.fix.message)}")
    return out


def _summary(report: RunReport, findings: list[Finding], style: _Style) -> list[str]:
    checked = _plural(len(report.files), "file")
    if not findings:
        return [f"No problems found ({checked} checked)."]
    counts = Counter(f.severity for f in findings)
    parts = [
        style(_plural(counts["error"], "error"), _SEVERITY_COLOR["error"], _BOLD) if counts["error"] else "0 errors",
        style(_plural(counts["warning"], "warning"), _SEVERITY_COLOR["warning"], _BOLD) if counts["warning"] else "0 warnings",
        style(_plural(counts["info"], "info"), _SEVERITY_COLOR["info"], _BOLD) if counts["info"] else "0 infos",
    ]
    in_files = _plural(len({f.path for f in findings}), "file")
    out = [f"Found {', '.join(parts)} in {in_files} ({checked} checked)."]
    safe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "safe")
    unsafe = sum(1 for f in findings if f.fix is not None and f.fix.applicability != "safe")
    if safe or unsafe:
        line = f"{safe} fixable with `npu-audit --fix`"
        if unsafe:
            line += f" ({unsafe} more with --unsafe-fixes)"
        out.append(line + ".")
    return out


def _statistics(findings: list[Finding]) -> list[str]:
    from npu_audit.render import statistics

    return statistics.table(findings)


def render(
    report: RunReport,
    *,
    rules: Sequence = (),
    color: bool = False,
    statistics: bool = False,
    show_source: bool = True,
) -> str:
    style = _Style(color)
    pairs = _pairs(report)
    findings = [f for f, _ in pairs]
    out: list[str] = []
    if statistics:
        out += _statistics(findings)
        if out:
            out.append("")
    else:
        cache: dict[int, list[str]] = {}
        for f, fr in pairs:
            lines = cache.get(id(fr))
            if lines is None:
                lines = cache[id(fr)] = source_lines(fr.text)
            out += _finding_block(f, fr, lines, style, show_source)
            out.append("")
    out += _summary(report, findings, style)
    return "\n".join(out) + "\n"


__all__ = ["render", "marker", "layout", "char_width", "clean", "TAB_SIZE"]
