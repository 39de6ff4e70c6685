"""Fixit-style: every rule's own examples are its tests (and its docs).

An `invalid` example must yield exactly its expected findings of the rule (line, column, message and
severity) and, after the fix engine applied the rule's fixes, exactly its expected fixed text (the
text unchanged when it expects none); a `valid` example yields no finding of the rule. An example may
start with `# npu-audit-test: key=value, ...` to set release/product/scenario (tests/examples.py).
"""

from __future__ import annotations

import pytest

from npu_audit.checks import all_rules
from npu_audit.checks.base import Invalid
from tests.examples import findings_of, fixed_by, observed

RULES = all_rules()
#: a rule no script can trigger on purpose (a defect of npu-audit itself)
NO_EXAMPLES = {"internal-error"}
EXAMPLE_RULES = [r for r in RULES if r.name not in NO_EXAMPLES]


def _cases(kind):
    for rule in EXAMPLE_RULES:
        for i, example in enumerate(getattr(rule, kind)):
            yield pytest.param(rule, example, id=f"{rule.name}-{kind}-{i}")


def _expected(rule, example: Invalid) -> list[tuple]:
    return [(e.line, e.column, e.message, None if e.severity in (None, rule.severity) else e.severity)
            for e in example.findings]


@pytest.mark.parametrize("rule,example", list(_cases("invalid")))
def test_invalid_examples_yield_their_findings_and_fixed_text(tmp_path, rule, example):
    assert isinstance(example, Invalid)
    assert example.findings, "an invalid example expects at least one finding"
    for e in example.findings:
        assert e.severity != rule.severity, "give a severity only when it differs from the rule's default"
    findings = findings_of(tmp_path, example.code)
    assert observed(findings, rule.code, rule.severity) == _expected(rule, example)
    hints = [f.hint for f in findings if f.code == rule.code]
    assert [h for h, e in zip(hints, example.findings) if e.hint is not None] == [
        e.hint for e in example.findings if e.hint is not None]
    options = [f.option for f in findings if f.code == rule.code]
    assert [o for o, e in zip(options, example.findings) if e.option is not None] == [
        e.option for e in example.findings if e.option is not None]
    (tmp_path / "fix").mkdir()
    fixed = fixed_by(tmp_path / "fix", example.code, rule.code)
    original = example.code if isinstance(example.code, str) else None
    assert fixed.text == (example.fixed if example.fixed is not None else original)
    assert fixed.new_files == list(example.new_files)
    assert example.fixed is None or example.fixed != original, "fixed text equal to the example: leave it out"


@pytest.mark.parametrize("rule,example", list(_cases("valid")))
def test_valid_examples_are_clean(tmp_path, rule, example):
    findings = [f for f in findings_of(tmp_path, example) if f.code == rule.code]
    assert not findings, [f.message for f in findings]


@pytest.mark.parametrize("rule", EXAMPLE_RULES, ids=lambda r: r.name)
def test_declared_fixability_matches_the_examples(tmp_path, rule):
    """A rule declaring no fix never yields one in its examples; a rule declaring fixes shows one with
    its fixed text, and the applicabilities it declares are the ones its examples show."""
    with_fix, without_fix, applicabilities = 0, 0, set()
    for i, example in enumerate(list(rule.invalid) + list(rule.valid)):
        code = example.code if isinstance(example, Invalid) else example
        (tmp_path / str(i)).mkdir()
        for f in findings_of(tmp_path / str(i), code):
            if f.code != rule.code:
                continue
            if f.fix is None:
                without_fix += 1
            else:
                with_fix += 1
                applicabilities.add(f.fix.applicability)
    if rule.fix == "none":
        assert with_fix == 0 and rule.fix_applicability == ()
        return
    assert any(e.fixed is not None or e.new_files for e in rule.invalid), "show a fix in an example"
    assert applicabilities == set(rule.fix_applicability)
    if rule.fix == "always":
        assert without_fix == 0
    else:
        assert without_fix > 0, "a rule that fixes only some findings shows one it does not fix"


@pytest.mark.parametrize("rule", EXAMPLE_RULES, ids=lambda r: r.name)
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
    for rule in EXAMPLE_RULES:
        for example in rule.invalid:
            for f in findings_of(tmp_path, example.code):
                assert f.line >= 1 and f.column >= 1 and (f.end_line, f.end_column) >= (f.line, f.column)
                assert f.message and f.severity in ("error", "warning", "info")


@pytest.mark.parametrize("rule,example", list(_cases("invalid")))
def test_every_finding_of_an_example_says_what_to_write_instead(tmp_path, rule, example):
    """Each finding comes with a hint (what to write instead, or what to do with a file npu-audit cannot
    read): editors show it next to the message, and `--format json` and SARIF carry it for the tools that
    read them."""
    findings = [f for f in findings_of(tmp_path, example.code) if f.code == rule.code]
    assert findings and all(f.hint for f in findings), [f.message for f in findings if not f.hint]
