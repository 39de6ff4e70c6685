"""The triage sample stays readable and precision.py counts as its README says."""

from __future__ import annotations

import importlib.util
from pathlib import Path

TRIAGE = Path(__file__).parent / "triage"


def _precision():
    spec = importlib.util.spec_from_file_location("triage_precision", TRIAGE / "precision.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sample_rows_have_verdicts_and_reasons():
    rows = _precision().read_sample(TRIAGE / "sample.tsv")
    assert len(rows) == 40
    assert {r["severity"] for r in rows} == {"error", "warning", "info"}
    for r in rows:
        assert r["why"].strip(), r["id"]
        assert (r["verdict"] == "wrong") == (r["should_be"] == "none"), r["id"]
        if r["verdict"] == "right":
            assert r["should_be"] == r["severity"], r["id"]


def test_precision_counts_severity_moves_and_disappearances():
    precision = _precision()
    rows = [
        {"id": "1", "path": "a.py", "line": 3, "column": 5, "code": "NPU101", "name": "unknown-option",
         "severity": "error", "verdict": "right-but-wrong-severity", "should_be": "warning"},
        {"id": "2", "path": "a.py", "line": 9, "column": 5, "code": "NPU201", "name": "missing-companion",
         "severity": "error", "verdict": "wrong", "should_be": "none"},
        {"id": "3", "path": "b.py", "line": 4, "column": 1, "code": "NPU301", "name": "deprecated-option",
         "severity": "warning", "verdict": "right", "should_be": "warning"},
    ]
    report = {"diagnostics": [
        {"path": "a.py", "line": 3, "column": 5, "code": "NPU101", "severity": "warning"},
        {"path": "b.py", "line": 4, "column": 1, "code": "NPU301", "severity": "warning"},
    ]}
    per_severity, per_check, _pairs = precision.tally(rows, report)
    assert per_severity["warning"]["reported"] == 2 and per_severity["warning"]["correct"] == 2
    assert per_severity["error"]["gone_wrong"] == 1 and per_severity["error"]["reported"] == 0
    assert per_check["NPU101 unknown-option"]["correct"] == 1
