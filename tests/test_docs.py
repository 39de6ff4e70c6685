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
