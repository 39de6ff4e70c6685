"""Fixit-style: every rule's own `invalid` examples must produce its finding, `valid` ones must not.

An example may start with `# npu-audit-test: key=value, ...` to set release/product/scenario.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from npu_audit.checks import all_rules
from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings

CHECK_RULES = [r for r in all_rules() if not getattr(r, "file_level", False)]


def run_example(tmp_path, source: str):
    settings = Settings()
    first = source.splitlines()[0] if source else ""
    if first.startswith("# npu-audit-test:"):
        for pair in first.split(":", 1)[1].split(","):
            key, value = (x.strip() for x in pair.split("="))
            settings = replace(settings, **{key: value})
    path = tmp_path / "example.py"
    path.write_text(source, encoding="utf-8")
    report = analyze_file(Job(file=str(path), display="example.py", roots=(str(tmp_path),), settings=settings))
    assert not report.internal_error, [f.message for f in report.findings]
    return report.findings


def _cases(kind):
    for rule in CHECK_RULES:
        for i, example in enumerate(getattr(rule, kind)):
            yield pytest.param(rule, example, id=f"{rule.name}-{kind}-{i}")


@pytest.mark.parametrize("rule,example", list(_cases("invalid")))
def test_invalid_examples_are_reported(tmp_path, rule, example):
    findings = run_example(tmp_path, example)
    assert rule.code in {f.code for f in findings}, f"{rule.name} not reported; got {[(f.code, f.message) for f in findings]}"


@pytest.mark.parametrize("rule,example", list(_cases("valid")))
def test_valid_examples_are_clean(tmp_path, rule, example):
    findings = [f for f in run_example(tmp_path, example) if f.code == rule.code]
    assert not findings, [f.message for f in findings]


@pytest.mark.parametrize("rule", CHECK_RULES, ids=lambda r: r.name)
def test_every_rule_has_examples_and_docs(rule):
    assert rule.invalid and rule.valid, "a rule shows wrong and right code"
    assert rule.code.startswith("NPU") and rule.name == rule.name.lower()
    for text in (rule.summary, rule.what, rule.why, rule.fix_safety):
        assert text.strip()
    doc = rule.documentation()
    for heading in ("## What it does", "## Why is this bad?", "## Fix safety"):
        assert heading in doc


def test_codes_and_names_are_unique_and_stable():
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules) == len({r.name for r in rules})
    required = {"unknown-option", "wrong-field", "bytes-required", "invalid-value", "out-of-range", "malformed-value",
                "missing-companion", "conflicting-options", "dynamic-dims-mismatch", "deprecated-option", "no-effect",
                "scenario-mismatch", "product-unsupported", "duplicate-option", "npu-optimizer-name",
                "inconsistent-with-code", "prefer-precision-mode-v2", "syntax-error", "unreadable-file"}
    assert required <= {r.name for r in rules}


def test_findings_have_positions_and_actionable_messages(tmp_path):
    for rule in CHECK_RULES:
        for example in rule.invalid:
            for f in run_example(tmp_path, example):
                assert f.line >= 1 and f.column >= 1 and (f.end_line, f.end_column) >= (f.line, f.column)
                assert f.message and f.severity in ("error", "warning", "info")
