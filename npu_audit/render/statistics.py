"""Counts of findings per check, shared by the text, concise and JSON outputs (``--statistics``)."""

from __future__ import annotations

from collections.abc import Iterable

from npu_audit.findings import Finding


def rows(findings: Iterable[Finding]) -> list[dict]:
    """One row per check that reported something, most frequent first (then by code):
    ``{"code", "name", "count", "fixable", "fixable_safe"}``. ``fixable`` counts the
    findings that carry a fix (as the summary's ``fixable``), ``fixable_safe`` those whose fix is
    safe (applied by ``--fix`` without ``--unsafe-fixes``)."""
    by_code: dict[str, dict] = {}
    for f in findings:
        row = by_code.get(f.code)
        if row is None:
            row = by_code[f.code] = {"code": f.code, "name": f.name, "count": 0, "fixable": 0, "fixable_safe": 0}
        row["count"] += 1
        if f.fix is not None:
            row["fixable"] += 1
            if f.fix.applicability == "safe":
                row["fixable_safe"] += 1
    return sorted(by_code.values(), key=lambda r: (-r["count"], r["code"]))


def table(findings: Iterable[Finding]) -> list[str]:
    """The rows as aligned text lines: ``count  code  name  fixable``."""
    data = rows(findings)
    if not data:
        return []
    lines = []
    w_count = max(len(str(r["count"])) for r in data)
    w_code = max(len(r["code"]) for r in data)
    w_name = max(len(r["name"]) for r in data)
    for r in data:
        safe, unsafe = r["fixable_safe"], r["fixable"] - r["fixable_safe"]
        fixable = []
        if safe:
            fixable.append(f"{safe} fixable")
        if unsafe:
            fixable.append(f"{unsafe} with --unsafe-fixes")
        lines.append(f"{r['count']:>{w_count}}  {r['code']:<{w_code}}  {r['name']:<{w_name}}  {', '.join(fixable)}".rstrip())
    return lines
