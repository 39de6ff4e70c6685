"""README's rule reference is generated from the rule classes and must be current."""

from pathlib import Path

from npu_audit.docgen import render_readme

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_rule_reference_is_up_to_date():
    text = README.read_text(encoding="utf-8")
    assert render_readme(text) == text, "run `python -m npu_audit.docgen` to regenerate README's rule reference"


def test_every_rule_has_a_readme_anchor():
    from npu_audit.checks import all_rules

    text = README.read_text(encoding="utf-8")
    for rule in all_rules():
        assert f"### {rule.code} {rule.name}" in text


def test_docs_show_the_examples_the_tests_run():
    """--explain, SARIF help and README show each rule's first invalid example, the findings it yields,
    and its fixed text (else the first valid example) as "Use instead": the examples tests/test_rules.py
    runs, not separate snippets."""
    from npu_audit.checks import all_rules
    from npu_audit.checks.base import Rule
    from npu_audit.explain import explain_rule, rule_summary

    assert not hasattr(Rule, "example_bad") and not hasattr(Rule, "example_good")
    text = README.read_text(encoding="utf-8")
    for rule in all_rules():
        assert "example_bad" not in vars(type(rule)) and "example_good" not in vars(type(rule))
        if not rule.invalid:
            continue
        first = rule.invalid[0]
        code, findings, instead = rule.shown_example()
        assert findings == first.findings
        if isinstance(first.code, str):
            assert code == first.code
        if first.fixed is not None:
            assert instead == first.fixed
        elif isinstance(rule.valid[0], str):
            assert instead == rule.valid[0]
        doc = explain_rule(rule)
        section = text.split(f"### {rule.code} {rule.name}", 1)[1].split("\n### ", 1)[0]
        for shown in (doc, section):
            assert code.strip("\n") in shown and instead.strip("\n") in shown
            for e in findings:
                assert f"(line {e.line}, column {e.column}" in shown and e.message in shown
                assert e.hint is None or f"Hint: {e.hint}" in shown
        summary = rule_summary(rule)
        assert summary["example"] == code and summary["use_instead"] == instead and summary["fix"] == rule.fix
        assert [f["hint"] for f in summary["example_findings"]] == [e.hint for e in findings]


def test_readme_fix_column_is_the_declared_fixability():
    from npu_audit.checks import all_rules

    text = README.read_text(encoding="utf-8")
    for rule in all_rules():
        fix = "—" if rule.fix == "none" else f"{rule.fix} ({', '.join(rule.fix_applicability)})"
        assert f"| `{rule.name}` | {rule.severity} | {fix} |" in text
