"""The rule reference (docs/rules.md) is generated from the rule classes and must be current."""

import re
from pathlib import Path

from npu_audit.docgen import PAGES, RULES_PAGE, render_rules_page

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / RULES_PAGE


def test_rule_reference_is_up_to_date():
    text = RULES.read_text(encoding="utf-8")
    assert render_rules_page(text) == text, "run `python -m npu_audit.docgen` to regenerate docs/rules.md"


def test_every_generated_page_is_up_to_date():
    """What ``python -m npu_audit.docgen`` writes is what the repository holds: running it changes nothing."""
    for name, render in PAGES.items():
        text = (ROOT / name).read_text(encoding="utf-8")
        assert render(text) == text, f"run `python -m npu_audit.docgen` to regenerate {name}"


def test_every_rule_has_an_anchor_in_the_reference():
    from npu_audit.checks import all_rules

    text = RULES.read_text(encoding="utf-8")
    for rule in all_rules():
        assert f"\n## {rule.code} {rule.name}\n" in text


def test_rule_links_lead_to_the_rule_reference():
    """SARIF's helpUri, the editor's codeDescription.href and --explain's url name the generated page and
    the rule's own heading in it, so a reader who follows them lands on the rule."""
    from npu_audit.checks import all_rules

    text = RULES.read_text(encoding="utf-8")
    headings = {_slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
    for rule in all_rules():
        page, anchor = rule.help_uri.split("#", 1)
        assert page.endswith("/" + RULES_PAGE), rule.help_uri
        assert anchor in headings, rule.help_uri


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_docs_show_the_examples_the_tests_run():
    """--explain, SARIF help and docs/rules.md show each rule's first invalid example, the findings it
    yields, and its fixed text (else the first valid example) as "Use instead": the examples
    tests/test_rules.py runs, not separate snippets."""
    from npu_audit.checks import all_rules
    from npu_audit.checks.base import Rule
    from npu_audit.explain import explain_rule, rule_summary

    assert not hasattr(Rule, "example_bad") and not hasattr(Rule, "example_good")
    text = RULES.read_text(encoding="utf-8")
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
        section = text.split(f"\n## {rule.code} {rule.name}\n", 1)[1].split("\n## ", 1)[0]
        for shown in (doc, section):
            assert code.strip("\n") in shown and instead.strip("\n") in shown
            for e in findings:
                assert f"(line {e.line}, column {e.column}" in shown and e.message in shown
                assert e.hint is None or f"Hint: {e.hint}" in shown
        summary = rule_summary(rule)
        assert summary["example"] == code and summary["use_instead"] == instead and summary["fix"] == rule.fix
        assert [f["hint"] for f in summary["example_findings"]] == [e.hint for e in findings]


def test_reference_fix_column_is_the_declared_fixability():
    from npu_audit.checks import all_rules

    text = RULES.read_text(encoding="utf-8")
    for rule in all_rules():
        fix = "—" if rule.fix == "none" else f"{rule.fix} ({', '.join(rule.fix_applicability)})"
        assert f"| `{rule.name}` | {rule.severity} | {fix} |" in text
