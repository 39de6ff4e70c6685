"""The JSON output: a documented, versioned public contract.

One JSON object (one diagnostic per line, UTF-8 text kept as is, trailing newline)::

    {
      "version": 1,                      # bumped on any incompatible change
      "tool": {"name": "npu-audit", "version": "<npu_audit.__version__>"},
      "settings": {...},                 # the effective settings of the run
      "diagnostics": [                   # sorted by path, line, column, code
        {
          "path": "train.py",            # as given on the command line
          "line": 7, "column": 25,       # 1-based; columns count characters (code points)
          "end_line": 7, "end_column": 40,   # end exclusive
          "code": "NPU101", "name": "unknown-option",
          "severity": "error",           # "error" | "warning" | "info"
          "message": "...", "hint": "..." | null,
          "option": "precision_mode" | null,
          "certainty": "always",         # "always" | "conditional" (the finding "may" apply)
          "tags": ["deprecated", "unnecessary"],
          "related": [{"path", "line", "column", "message"}],
          "fix": null | {
            "applicability": "safe" | "unsafe",
            "message": "...",
            "edits": [{"line", "column", "end_line", "end_column", "content"}],
            "new_files": [{"path", "content"}]   # relative to the script's folder
          }
        }
      ],
      "files": [{"path": "train.py", "parsed": true}],   # every path of the run, sorted: what
                                 # `npu-audit merge` counts once when shards overlap
      "summary": {"files", "files_parsed", "findings", "error", "warning", "info", "fixable",
                  "statistics"}  # "statistics" only with --statistics: [{"code", "name", "count",
                                 # "fixable", "fixable_safe"}], most frequent first
    }

Keys appear in this order. New keys may be added without changing ``version``.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
from collections.abc import Sequence

import npu_audit
from npu_audit.findings import Finding, Fix, RunReport

SCHEMA_VERSION = 1


def fix_dict(fix: Fix | None) -> dict | None:
    """A fix in the public JSON shape (also used in LSP diagnostic data)."""
    if fix is None:
        return None
    return {
        "applicability": fix.applicability,
        "message": fix.message,
        "edits": [
            {"line": e.line, "column": e.column, "end_line": e.end_line, "end_column": e.end_column, "content": e.content}
            for e in fix.edits
        ],
        "new_files": [{"path": path, "content": content} for path, content in fix.new_files],
    }


def diagnostic_dict(f: Finding) -> dict:
    return {
        "path": f.path,
        "line": f.line,
        "column": f.column,
        "end_line": f.end_line,
        "end_column": f.end_column,
        "code": f.code,
        "name": f.name,
        "severity": f.severity,
        "message": f.message,
        "hint": f.hint,
        "option": f.option,
        "certainty": f.certainty,
        "tags": list(f.tags),
        "related": [{"path": r.path, "line": r.line, "column": r.column, "message": r.message} for r in f.related],
        "fix": fix_dict(f.fix),
    }


def to_dict(report: RunReport, statistics: bool = False) -> dict:
    summary = report.summary()
    if statistics:
        from npu_audit.render.statistics import rows

        summary["statistics"] = rows(report.findings)
    return {
        "version": SCHEMA_VERSION,
        "tool": {"name": "npu-audit", "version": npu_audit.__version__},
        "settings": report.settings,
        "diagnostics": [diagnostic_dict(f) for f in report.findings],
        "files": [{"path": r.path, "parsed": r.parsed} for r in sorted(report.files, key=lambda r: r.path)],
        "summary": summary,
    }


def _default(o):
    """JSON form of setting values json does not know (paths, sets, dataclasses, enums)."""
    if isinstance(o, (set, frozenset)):
        return sorted(o, key=str)
    if hasattr(o, "__fspath__"):
        return os.fspath(o)
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return dataclasses.asdict(o)
    if isinstance(o, enum.Enum):
        return o.value
    return str(o)


def render(report: RunReport, *, rules: Sequence = (), statistics: bool = False) -> str:
    """Pretty-printed, except that each diagnostic takes one line: reviewers still read it, and big
    reports use json's fast C encoder (``indent`` would force the slow pure-Python one)."""
    data = to_dict(report, statistics)
    diagnostics = data.pop("diagnostics")
    files = data.pop("files")
    summary = data.pop("summary")
    dump = lambda o: json.dumps(o, ensure_ascii=False, default=_default)  # noqa: E731
    head = "".join(f'  "{k}": {dump(v)},\n' for k, v in data.items())
    body = _lines("diagnostics", diagnostics, dump)
    return "{\n" + head + body + _lines("files", files, dump) + f'  "summary": {dump(summary)}\n' + "}\n"


def _lines(key: str, items: list, dump) -> str:
    """``"key": [...]`` with one item per line (an empty list on one line)."""
    if not items:
        return f'  "{key}": [],\n'
    return f'  "{key}": [\n' + ",\n".join("    " + dump(item) for item in items) + "\n  ],\n"
