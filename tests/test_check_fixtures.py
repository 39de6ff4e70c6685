"""Annotated check fixtures (Fixit/ruff style): tests/fixtures/checks/<rule-name>.py.

Each fixture is a small, realistic TensorFlow 1.x script fragment with wrong and right forms side by
side. A line where a finding must be reported ends with a comment ``# expect: CODE[, CODE...]``, for a
multi-line statement on the line where the finding starts (findings carry 1-based lines). A trailing
``(may happen)`` (``# expect: NPU104 (may happen)``) says the finding is about a conditional write: it
must be reported as conditional, with "may happen" in its message. A code may carry the severity the
finding must have: ``# expect: NPU202:info (may happen)``. Right forms carry no annotation.

For every code that appears in a fixture's annotations, the set of (line, code) of the findings must
equal the annotated set exactly; findings of other codes are ignored (their own fixtures test them).
The first line may set the target: ``# npu-audit-test: release=legacy, product=atlas-a2, scenario=inference``.

A rule may have more fixtures named ``<rule-name>.<variant>.py`` (e.g. cases that need a file of their
own); ``inline-suppression.py`` tests suppression comments.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Optional

import pytest

from npu_audit.checks import all_rules
from npu_audit.findings import FileReport
from npu_audit.knowledge.loader import load
from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings, validate_product, validate_release, validate_scenario

FIXTURES = Path(__file__).parent / "fixtures" / "checks"
FIXTURE_FILES = sorted(FIXTURES.glob("*.py"))
FILE_LEVEL = {"syntax-error", "unreadable-file", "internal-error"}  # reported by the pipeline, not by checks
CODES = {r.code for r in all_rules()}

EXPECT = re.compile(r"#\s*expect:\s*(?P<body>.*)$")
MAY = re.compile(r"\(\s*may happen\s*\)\s*$")
SETTINGS_LINE = "# npu-audit-test:"

# Known rule bugs, found while writing the fixtures. The fixtures say what SHOULD happen; while a bug
# is open its exact mismatch is an expected failure (xfail). When a bug is fixed the test fails with
# "fixed": delete its entry. Each entry: (kind, code, unique text of the fixture line, description);
# kind "extra" = reported but must not be, "missing" = annotated but not reported.
KNOWN_BUGS: dict[str, list[tuple[str, str, str, str]]] = {}


# ---------------------------------------------------------------------------------------------
# reading fixtures


@dataclass(frozen=True)
class Expectation:
    line: int
    codes: tuple[str, ...]
    conditional: bool  # "(may happen)"
    severities: tuple[Optional[str], ...] = ()  # per code: "error" | "warning" | "info" | None (any)


def rule_name_of(path: Path) -> str:
    return path.name.split(".", 1)[0]


def parse_expectations(text: str) -> list[Expectation]:
    """``# expect:`` annotations, read from real comments only (tokenize tells them from strings)."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type != tokenize.COMMENT:
            continue
        m = EXPECT.search(tok.string)
        if not m:
            continue
        body = m.group("body").strip()
        conditional = bool(MAY.search(body))
        body = MAY.sub("", body).strip()
        items = tuple(c.strip() for c in body.split(","))
        assert items and all(re.fullmatch(r"NPU\d{3}(:(error|warning|info))?", c) for c in items), (
            f"line {tok.start[0]}: malformed annotation {tok.string!r}; expected '# expect: CODE[:severity][, ...]'")
        codes = tuple(c.partition(":")[0] for c in items)
        severities = tuple(c.partition(":")[2] or None for c in items)
        unknown = [c for c in codes if c not in CODES]
        assert not unknown, f"line {tok.start[0]}: unknown rule code(s) {unknown} in {tok.string!r}"
        out.append(Expectation(tok.start[0], codes, conditional, severities))
    return out


def settings_for(text: str) -> Settings:
    settings = Settings()
    first = text.splitlines()[0] if text else ""
    if not first.startswith(SETTINGS_LINE):
        return settings
    checks = {"release": validate_release, "product": lambda v, w: validate_product(v, load(), w),
              "scenario": validate_scenario}
    for pair in first[len(SETTINGS_LINE):].split(","):
        if not pair.strip():
            continue
        key, _, value = (x.strip() for x in pair.partition("="))
        assert key in checks, f"unknown setting {key!r} in {first!r}"
        settings = replace(settings, **{key: checks[key](value, SETTINGS_LINE)})
    return settings


@cache
def analyse(name: str) -> tuple[str, FileReport]:
    path = FIXTURES / name
    text = path.read_text(encoding="utf-8")
    report = analyze_file(Job(file=str(path), display=name, roots=(str(FIXTURES),), settings=settings_for(text)))
    return text, report


def describe(findings, lines) -> str:
    return "\n".join(f"  {f.line}:{f.column} {f.code} [{f.certainty}] {f.message}\n      | {lines[f.line - 1].strip()}"
                     for f in findings if 0 < f.line <= len(lines))


# ---------------------------------------------------------------------------------------------
# tests


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_fixture_is_analysed(path):
    text, report = analyse(path.name)
    assert not report.internal_error, [f.message for f in report.findings]
    assert report.parsed, "the prefilter skipped the fixture: it has no NPU marker"
    assert not [f for f in report.findings if f.name in FILE_LEVEL], [f.message for f in report.findings]
    assert parse_expectations(text), "a fixture annotates at least one finding"


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_findings_match_annotations(path):
    text, report = analyse(path.name)
    lines = text.splitlines()
    expectations = parse_expectations(text)
    codes = {c for e in expectations for c in e.codes}
    expected = {(e.line, c) for e in expectations for c in e.codes}
    got = {(f.line, f.code) for f in report.findings if f.code in codes}
    missing, extra = expected - got, got - expected

    known = set()
    for kind, code, marker, _why in KNOWN_BUGS.get(path.stem, []):
        hits = [i for i, line in enumerate(lines, 1) if marker in line]
        assert len(hits) == 1, f"KNOWN_BUGS marker {marker!r} matches {len(hits)} lines of {path.name}"
        known.add((kind, hits[0], code))
    mismatch = {("missing", line, code) for line, code in missing} | {("extra", line, code) for line, code in extra}

    def explain() -> str:
        parts = []
        if missing:
            parts.append("missing (annotated, not reported):\n" + "\n".join(
                f"  {line}:{code}\n      | {lines[line - 1].strip()}" for line, code in sorted(missing)))
        if extra:
            parts.append("extra (reported, not annotated):\n" + describe(
                [f for f in report.findings if (f.line, f.code) in extra], lines))
        return "\n".join(parts)

    fixed = known - mismatch
    assert not fixed, f"known bug(s) fixed, remove them from KNOWN_BUGS[{path.stem!r}]: {sorted(fixed)}"
    if mismatch - known:
        pytest.fail(f"{path.name}: findings differ from the annotations\n{explain()}", pytrace=False)
    if known:
        reasons = "; ".join(why for _k, _c, _m, why in KNOWN_BUGS[path.stem])
        pytest.xfail(f"known bug(s): {reasons}")


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_conditional_annotations_are_conditional_findings(path):
    text, report = analyse(path.name)
    for e in parse_expectations(text):
        for code in e.codes:
            found = [f for f in report.findings if f.line == e.line and f.code == code]
            for f in found:
                if e.conditional:
                    assert f.certainty == "conditional" and "may happen" in f.message, (
                        f"line {e.line}: {code} should be a 'may happen' finding: {f.message}")
                else:
                    assert f.certainty == "always" and "may happen" not in f.message, (
                        f"line {e.line}: {code} is conditional; annotate it '(may happen)': {f.message}")


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_severity_annotations_match(path):
    text, report = analyse(path.name)
    for e in parse_expectations(text):
        for code, severity in zip(e.codes, e.severities):
            if severity is None:
                continue
            found = [f for f in report.findings if f.line == e.line and f.code == code]
            assert found and all(f.severity == severity for f in found), (
                f"line {e.line}: {code} should be {severity}: {[(f.severity, f.message) for f in found]}")


def test_every_check_rule_has_a_fixture():
    names = {rule_name_of(p) for p in FIXTURE_FILES}
    for rule in all_rules():
        if rule.name in FILE_LEVEL:
            continue
        assert rule.name in names, f"no fixture tests/fixtures/checks/{rule.name}.py for {rule.code}"


def test_rule_fixtures_annotate_their_rule_and_show_right_forms():
    by_name = {r.name: r for r in all_rules()}
    for path in FIXTURE_FILES:
        name = rule_name_of(path)
        if name not in by_name:
            continue  # behaviour fixtures such as inline-suppression.py
        text, _report = analyse(path.name)
        codes = {c for e in parse_expectations(text) for c in e.codes}
        assert by_name[name].code in codes, f"{path.name} never expects {by_name[name].code}"
        assert re.search(r"#.*\bright\b", text), f"{path.name} shows no right form ('# right' comment)"


def test_fixture_names_are_rules_or_known_behaviours():
    names = {r.name for r in all_rules()} | {"inline-suppression"}
    assert {rule_name_of(p) for p in FIXTURE_FILES} <= names
    assert set(KNOWN_BUGS) <= {p.stem for p in FIXTURE_FILES}


def test_conditional_findings_say_may_happen():
    conditional = 0
    for path in FIXTURE_FILES:
        _text, report = analyse(path.name)
        for f in report.findings:
            if f.certainty == "conditional":
                conditional += 1
                assert "may happen" in f.message, f"{path.name}:{f.line} {f.code}: {f.message}"
            else:
                assert f.certainty == "always", f"{path.name}:{f.line} {f.code}: certainty {f.certainty!r}"
    assert conditional, "the fixtures contain conditional writes"


def test_finding_positions_are_inside_the_file():
    for path in FIXTURE_FILES:
        text, report = analyse(path.name)
        lines = text.splitlines()
        for f in report.findings:
            where = f"{path.name}:{f.line}:{f.column} {f.code}"
            assert 1 <= f.line <= len(lines) and 1 <= f.end_line <= len(lines), where
            assert 1 <= f.column <= len(lines[f.line - 1]) + 1, where
            assert 1 <= f.end_column <= len(lines[f.end_line - 1]) + 1, where
            assert (f.end_line, f.end_column) >= (f.line, f.column), where
            for r in f.related:
                if r.path == f.path:
                    assert 1 <= r.line <= len(lines) and 1 <= r.column <= len(lines[r.line - 1]) + 1, where
            if f.fix is not None:
                for edit in f.fix.edits:
                    assert 1 <= edit.line <= len(lines) + 1 and (edit.end_line, edit.end_column) >= (edit.line, edit.column), where


def test_annotation_parser_reads_comments_only():
    text = ('x = "# expect: NPU101"\n'
            'y = 1  # expect: NPU101, NPU102\n'
            'z = 2  # npu-audit: ignore  # expect: NPU004 (may happen)\n'
            'w = 3  # expect: NPU202:info, NPU101 (may happen)\n')
    assert parse_expectations(text) == [Expectation(2, ("NPU101", "NPU102"), False, (None, None)),
                                        Expectation(3, ("NPU004",), True, (None,)),
                                        Expectation(4, ("NPU202", "NPU101"), True, ("info", None))]
    with pytest.raises(AssertionError):
        parse_expectations("y = 1  # expect: NPU202:fatal\n")
    with pytest.raises(AssertionError):
        parse_expectations("y = 1  # expect: NPU9999\n")
