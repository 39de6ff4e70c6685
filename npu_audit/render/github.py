"""GitHub Actions workflow commands: one annotation per finding.

``::error file=train.py,line=7,col=25,endLine=7,endColumn=40,title=NPU101 unknown-option::message``
(``warning`` for warnings, ``notice`` for infos). GitHub accepts ``col``/``endColumn`` only when the
annotation starts and ends on the same line, so they are left out for multi-line findings.
"""

from __future__ import annotations

from collections.abc import Sequence

from npu_audit.findings import Finding, RunReport

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """Escape a command's message (after ``::``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value (``file=``, ``title=``, ...)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding) -> str:
    props = [("file", f.path), ("line", str(f.line))]
    if f.end_line == f.line:
        props += [("col", str(f.column)), ("endLine", str(f.end_line)), ("endColumn", str(f.end_column))]
    else:
        props += [("endLine", str(f.end_line))]
    props.append(("title", f"{f.code} {f.name}"))
    message = f.message + (f"\nhint: {f.hint}" if f.hint else "")
    head = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::{COMMAND.get(f.severity, 'warning')} {head}::{escape_data(message)}"


def render(report: RunReport, *, rules: Sequence = ()) -> str:
    return "".join(annotation(f) + "\n" for f in report.findings)
