"""The output stage: one renderer module per output format.

``render(report, fmt, rules=...)`` returns the whole output as one string. Each format lives in its
own module, imported only when used so that start-up stays fast:

======== ====================== =============================================================
format   module                 what
======== ====================== =============================================================
text     ``render.text``        human output (ruff-style), optional colours and statistics
concise  ``render.concise``     one line per finding (``path:line:col: CODE [name] message``)
json     ``render.json_format`` the versioned public JSON contract (``"version": 1``)
lsp      ``render.lsp``         LSP 3.17 diagnostics and code actions (UTF-16, 0-based)
sarif    ``render.sarif``       SARIF 2.1.0 (GitHub code scanning and other SARIF viewers)
github   ``render.github``      GitHub Actions workflow commands (annotations)
======== ====================== =============================================================
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from npu_audit.findings import RunReport
from npu_audit.text import split_lines

FORMATS = ("text", "concise", "json", "lsp", "sarif", "github")

_MODULES = {
    "text": "npu_audit.render.text",
    "concise": "npu_audit.render.concise",
    "json": "npu_audit.render.json_format",
    "lsp": "npu_audit.render.lsp",
    "sarif": "npu_audit.render.sarif",
    "github": "npu_audit.render.github",
}



def source_lines(text: str | None) -> list[str]:
    """The lines of ``text`` (without their line breaks), split the way line numbers count them."""
    if text is None:
        return []
    lines = split_lines(text)
    if lines and lines[-1] == "" and text:  # a trailing line break does not start another line
        lines.pop()
    return lines


def line_of(lines: Sequence[str], line: int) -> str:
    """The 1-based ``line`` of ``lines``, or "" when out of range."""
    return lines[line - 1] if 0 < line <= len(lines) else ""


def render(
    report: RunReport,
    fmt: str,
    *,
    rules: Sequence = (),
    color: bool = False,
    statistics: bool = False,
    show_source: bool = True,
    root: str | None = None,
) -> str:
    """Render ``report`` in format ``fmt`` (one of :data:`FORMATS`).

    ``rules`` are the :class:`npu_audit.checks.base.Rule` objects to take metadata from (help
    links, SARIF rule descriptors). ``color`` and ``show_source`` only affect the text format,
    ``statistics`` the text, concise and json formats; ``root`` is the folder SARIF artifact URIs
    are made relative to (default: the current working directory).
    """
    if fmt not in _MODULES:
        raise ValueError(f"unknown output format {fmt!r} (choose from {', '.join(FORMATS)})")
    module = importlib.import_module(_MODULES[fmt])
    if fmt == "text":
        return module.render(report, rules=rules, color=color, statistics=statistics, show_source=show_source)
    if fmt == "sarif":
        return module.render(report, rules=rules, root=root)
    if fmt in ("concise", "json"):
        return module.render(report, rules=rules, statistics=statistics)
    return module.render(report, rules=rules)
