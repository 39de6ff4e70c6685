"""Concise output: one line per finding, nothing else (for grep, editors' problem matchers, logs)::

    train.py:7:25: NPU101 [unknown-option] unknown option 'precison_mode': ...

``path:line:column: CODE [name] message`` with 1-based line and column (characters), sorted by path,
line, column and code. Control characters in paths and messages (a newline included) are shown as
visible symbols, so a finding never spans two lines. No summary line: a clean run prints nothing
(the exit code says it). With ``--statistics`` the per-check counts are printed instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from npu_audit.findings import Finding, RunReport
from npu_audit.render import statistics as stats
from npu_audit.render.text import _visible


def _one_line(text: str) -> str:
    return "".join(_visible(c) for c in text)


def line(f: Finding) -> str:
    return f"{_one_line(f.path)}:{f.line}:{f.column}: {f.code} [{f.name}] {_one_line(f.message)}"


def render(report: RunReport, *, rules: Sequence = (), statistics: bool = False) -> str:
    lines = stats.table(report.findings) if statistics else [line(f) for f in report.findings]
    return "".join(x + "\n" for x in lines)
