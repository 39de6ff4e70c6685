"""The concise format and per-check statistics (text, concise, json), rendered from the fixed report
of test_render.py and compared with golden files (NPU_AUDIT_UPDATE_GOLDEN=1 regenerates them)."""

from __future__ import annotations

import json

import pytest

from npu_audit.findings import FileReport, Finding, RunReport
from npu_audit.render import render
from tests.test_render import RULES, _check_golden, make_report


@pytest.mark.parametrize(
    "golden, fmt, options",
    [
        ("concise.txt", "concise", {}),
        ("concise_statistics.txt", "concise", {"statistics": True}),
        ("json_statistics.json", "json", {"statistics": True}),
    ],
)
def test_golden(golden, fmt, options):
    _check_golden(golden, render(make_report(), fmt, rules=RULES, **options))


def test_concise_has_one_line_per_finding_in_text_order():
    report = make_report()
    lines = render(report, "concise", rules=RULES).splitlines()
    text = render(report, "text", rules=RULES)
    headers = [line for line in text.splitlines() if line in lines]
    assert lines == headers and len(lines) == len(report.findings)  # the text format's first lines, same order


def test_concise_never_splits_a_finding_over_two_lines():
    f = Finding("dir\nname.py", 3, 7, 3, 9, "NPU101", "unknown-option", "error", "bad\r\nkey\x1b[31m\tx")
    out = render(RunReport([FileReport(path=f.path, findings=[f])]), "concise")
    assert out.count("\n") == 1 and "\x1b" not in out and "\r" not in out and "\t" not in out
    assert out.startswith("dir\u240aname.py:3:7: NPU101 [unknown-option] bad")


def test_statistics_agree_across_formats():
    report = make_report()
    rows = json.loads(render(report, "json", rules=RULES, statistics=True))["summary"]["statistics"]
    assert sum(r["count"] for r in rows) == len(report.findings)
    text = render(report, "text", rules=RULES, statistics=True)
    concise = render(report, "concise", rules=RULES, statistics=True)
    assert concise.splitlines() == text.splitlines()[: len(rows)]
    for r in rows:
        assert any(line.split()[:3] == [str(r["count"]), r["code"], r["name"]] for line in concise.splitlines())
    assert "statistics" not in json.loads(render(report, "json", rules=RULES))["summary"]
