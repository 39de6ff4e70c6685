"""SARIF 2.1.0 output (GitHub code scanning, VS Code SARIF viewer, ...).

One run. ``tool.driver.rules`` describes every rule given (not only the ones with results), so
viewers can show documentation for all of them. Artifact URIs are relative to ``root`` (default:
the current working directory) under ``uriBaseId`` ``%SRCROOT%``; files outside it get absolute
``file://`` URIs. Columns are 1-based and count code points (``columnKind: unicodeCodePoints``).

``partialFingerprints.primaryLocationLineHash`` is computed here so alerts keep their identity
when lines move: a hash of the rule id and the whitespace-normalised text of the finding's line,
plus the occurrence number of that (rule, text) pair in the file: ``"<16 hex digits>:<n>"``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from urllib.parse import quote

import npu_audit
from npu_audit.findings import Finding, Fix, RunReport
from npu_audit.render import line_of, source_lines

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/npu-audit/npu-audit"
SRCROOT = "%SRCROOT%"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def plain_text(markdown: str) -> str:
    """Plain text of a rule's Markdown documentation: headings unmarked, code blocks indented."""
    out = []
    in_code = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            out.append("    " + line if line else "")
            continue
        m = re.match(r"#{1,6}\s+(.*)", line)
        out.append(m.group(1) if m else line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


def line_hash(code: str, line_text: str) -> str:
    normalised = " ".join(line_text.split())
    return hashlib.sha256(f"{code}\0{normalised}".encode()).hexdigest()[:16]


class _Artifacts:
    def __init__(self, root: str | None):
        self.root = Path(os.path.abspath(root if root is not None else os.getcwd()))

    @property
    def root_uri(self) -> str:
        return self.root.as_uri().rstrip("/") + "/"

    def location(self, path: str) -> dict:
        absolute = Path(os.path.abspath(path))
        try:
            rel = absolute.relative_to(self.root)
        except ValueError:
            return {"uri": absolute.as_uri()}
        return {"uri": quote(PurePosixPath(*rel.parts).as_posix(), safe="/"), "uriBaseId": SRCROOT}


def _region(line: int, column: int, end_line: int, end_column: int) -> dict:
    return {"startLine": max(line, 1), "startColumn": max(column, 1), "endLine": max(end_line, 1), "endColumn": max(end_column, 1)}


def rule_descriptor(rule) -> dict:
    doc = rule.documentation()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": (rule.what or rule.summary).strip()},
        "help": {"text": plain_text(doc), "markdown": doc},
        "helpUri": rule.help_uri,
        "defaultConfiguration": {"level": LEVEL.get(rule.severity, "warning")},
        "properties": {"tags": list(rule.tags)},
    }


def _fix(fix: Fix, finding: Finding, artifacts: _Artifacts) -> dict | None:
    changes = []
    if fix.edits:
        changes.append(
            {
                "artifactLocation": artifacts.location(finding.path),
                "replacements": [
                    {"deletedRegion": _region(e.line, e.column, e.end_line, e.end_column), "insertedContent": {"text": e.content}}
                    for e in fix.edits
                ],
            }
        )
    folder = os.path.dirname(finding.path)
    for rel, content in fix.new_files:
        changes.append(
            {
                "artifactLocation": artifacts.location(os.path.join(folder, rel)),
                "replacements": [{"deletedRegion": _region(1, 1, 1, 1), "insertedContent": {"text": content}}],
            }
        )
    if not changes:
        return None
    return {
        "description": {"text": fix.message},
        "artifactChanges": changes,
        "properties": {"applicability": fix.applicability},
    }


def to_dict(report: RunReport, rules: Sequence = (), root: str | None = None) -> dict:
    artifacts = _Artifacts(root)
    descriptors: list[dict] = []
    index: dict[str, int] = {}
    for rule in rules:
        if rule.code not in index:
            index[rule.code] = len(descriptors)
            descriptors.append(rule_descriptor(rule))

    results = []
    notifications = []
    for fr in sorted(report.files, key=lambda fr: fr.path):
        lines = source_lines(fr.text)
        occurrences: dict[tuple[str, str], int] = {}
        if fr.internal_error:
            notifications.append(
                {
                    "level": "error",
                    "message": {"text": f"internal error while checking {fr.path}"},
                    "locations": [{"physicalLocation": {"artifactLocation": artifacts.location(fr.path)}}],
                }
            )
        for f in sorted(fr.findings, key=Finding.sort_key):
            if f.code not in index:  # a finding of a rule not passed in: describe it minimally
                index[f.code] = len(descriptors)
                descriptors.append({"id": f.code, "name": f.name, "defaultConfiguration": {"level": LEVEL.get(f.severity, "warning")}})
            h = line_hash(f.code, line_of(lines, f.line))
            occurrences[(f.code, h)] = occurrences.get((f.code, h), 0) + 1
            result: dict = {
                "ruleId": f.code,
                "ruleIndex": index[f.code],
                "level": LEVEL.get(f.severity, "warning"),
                "message": {"text": f.message + (f"\nhint: {f.hint}" if f.hint else "")},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": artifacts.location(f.path),
                            "region": _region(f.line, f.column, f.end_line, f.end_column),
                        }
                    }
                ],
            }
            if f.related:
                result["relatedLocations"] = [
                    {
                        "id": i,
                        "physicalLocation": {
                            "artifactLocation": artifacts.location(r.path),
                            "region": {"startLine": max(r.line, 1), "startColumn": max(r.column, 1)},
                        },
                        "message": {"text": r.message},
                    }
                    for i, r in enumerate(f.related)
                ]
            result["partialFingerprints"] = {"primaryLocationLineHash": f"{h}:{occurrences[(f.code, h)]}"}
            fix = _fix(f.fix, f, artifacts) if f.fix is not None else None
            if fix is not None:
                result["fixes"] = [fix]
            result["properties"] = {"name": f.name, "certainty": f.certainty, "option": f.option, "tags": list(f.tags)}
            results.append(result)

    invocation: dict = {"executionSuccessful": not notifications}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    driver = {
        "name": "npu-audit",
        "version": npu_audit.__version__,
        "semanticVersion": npu_audit.__version__,
        "informationUri": INFORMATION_URI,
        "rules": descriptors,
    }
    run = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "originalUriBaseIds": {SRCROOT: {"uri": artifacts.root_uri}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(report: RunReport, *, rules: Sequence = (), root: str | None = None) -> str:
    return json.dumps(to_dict(report, rules, root), indent=2, ensure_ascii=False) + "\n"
