"""The documentation sends readers only to things that exist: README.md, CHANGELOG.md, rules/README.md and
every page of docs/.

- Paths they cite (`npu_audit/cache.py`, `tests/`, `docs/usage.md`) exist in the repository; paths are cited
  from the repository root, whatever page cites them.
- Relative links (`[usage](docs/usage.md#exit-codes)`, `(../rules/README.md)`) lead to a file, and a link
  with `#anchor` to a heading of that page (GitHub's anchors: lower case, punctuation dropped, spaces as
  hyphens).
- Every page of docs/ is linked from README, so none is left where nobody finds it.

The Ascend vendor documents are cited as `docs/<file>.txt` and adapter facts as `adapter/...` (rules/*.toml
and --explain use these names): they are the vendor's, not files of this repository, and live in the
shared sources beside it (../shared), checked when present."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
OURS = ("npu_audit/", "tests/", "benchmarks/", "rules/", ".ci/", "examples/")
THEIRS = ("docs/", "adapter/")
PACKAGES = ("extract/", "fix/", "render/", "knowledge/", "checks/", "lsp/")  # named inside npu_audit/
CITED = re.compile(r"(?<![\w/.\-])((?:npu_audit|tests|benchmarks|rules|examples|\.ci|docs|adapter|extract|fix|render|"
                   r"knowledge|checks|lsp)/[A-Za-z0-9_./\-]*)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", flags=re.S | re.M)
PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))
DOCUMENTS = ["README.md", "CHANGELOG.md", "rules/README.md", *PAGES]


def _text(doc: str) -> str:
    return (ROOT / doc).read_text(encoding="utf-8")


def _cited(doc: str) -> list[str]:
    return sorted({m.group(1).rstrip(".") for m in CITED.finditer(_text(doc)) if "<" not in m.group(1)})


def _vendor(path: str) -> bool:
    """A vendor document's citation name: `docs/<file>` that is not a page of this repository."""
    return path.startswith("docs/") and not path.endswith(".md") and not (ROOT / path).exists()


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(doc: str) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+?)\s*#*$", FENCE.sub("", _text(doc)), flags=re.M):
        slug = _slug(heading)
        anchors.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def _links(doc: str) -> list[str]:
    return LINK.findall(FENCE.sub("", _text(doc)))


def test_the_documents_are_found():
    assert {"docs/usage.md", "docs/configuration.md", "docs/rules.md", "docs/outputs.md", "docs/editors.md",
            "docs/architecture.md", "docs/performance.md"} <= set(PAGES)


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_cited_paths_exist(doc):
    missing = []
    for path in _cited(doc):
        if path.startswith(OURS):
            if not (ROOT / path).exists():
                missing.append(path)
        elif path.startswith(PACKAGES):
            if not (ROOT / "npu_audit" / path).exists():
                missing.append(path)
        elif path.startswith("docs/") and not _vendor(path):
            if not (ROOT / path).exists():
                missing.append(path)
        elif path.startswith(THEIRS) and SHARED.is_dir() and not (SHARED / path).exists():
            missing.append(path)
    assert not missing, f"{doc} cites paths that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_vendor_citations_are_explained(doc):
    """A page that names vendor documents as `docs/<file>` says that they are not this repository's files
    (the repository has a docs/ folder of its own), and where the project keeps its copies."""
    vendor = [p for p in _cited(doc) if _vendor(p)]
    if vendor and doc != "rules/README.md":
        text = " ".join(_text(doc).split())
        assert "not files of this repository" in text and "../shared/docs/" in text, (doc, vendor)


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_relative_links_lead_to_a_file_and_heading(doc):
    broken = []
    for target in _links(doc):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (ROOT / doc).parent / path if path else ROOT / doc
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file.resolve().relative_to(ROOT).as_posix()):
            broken.append(f"{target}: no such heading")
    assert not broken, f"{doc} has links that lead nowhere: {broken}"


def test_the_link_check_sees_links_and_headings():
    assert "docs/usage.md" in {t.partition("#")[0] for t in _links("README.md")}
    assert "exit-codes" in _anchors("docs/usage.md")
    assert "npu101-unknown-option" in _anchors("docs/rules.md")
    assert _slug("Findings: `--format json`") == "findings---format-json"


def test_every_docs_page_is_linked_from_readme():
    linked = {t.partition("#")[0] for t in _links("README.md")}
    assert not [p for p in PAGES if p not in linked], "pages of docs/ that README does not link to"


def test_the_check_sees_citations():
    assert len(_cited("README.md")) > 10
    assert len(_cited("docs/architecture.md")) > 20


def test_the_quick_start_is_two_commands_that_ci_runs():
    """A fresh machine needs exactly two commands: one installs npu-audit and runs it on the sample, one runs
    the tests. .ci/run runs the same two, so the quick start is what CI proves."""
    readme = _text("README.md")
    block = re.search(r"## Quick start\n.*?```sh\n(.*?)```", readme, flags=re.S)
    assert block is not None, "README has no Quick start with a sh block"
    commands = block.group(1).strip().splitlines()
    assert len(commands) == 2
    assert commands[0].endswith("npu-audit examples/train_sample.py")
    assert commands[1] == ".venv/bin/python -m pytest -q"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "npu-audit examples/train_sample.py" in ci and "\npython -m pytest -q\n" in ci
    assert "Python 3.10+" in readme


def test_the_quick_start_says_how_many_findings_the_sample_has():
    from npu_audit.pipeline import Job, analyze_file
    from npu_audit.settings import Settings

    said = re.search(r"shipped sample script \(it has (\d+) findings", _text("README.md"))
    assert said is not None, "README's quick start no longer says how many findings the sample has"
    sample = ROOT / "examples" / "train_sample.py"
    report = analyze_file(Job(file=str(sample), display="examples/train_sample.py", roots=(str(sample.parent),),
                              settings=Settings()))
    assert len(report.findings) == int(said.group(1))


def test_the_finding_readme_explains_is_what_npu_audit_prints(tmp_path):
    """README's "Reading a finding" shows a finding of the sample as the terminal shows it, word for word,
    and its summary lines."""
    block = re.search(r"## Reading a finding\n.*?```text\n(.*?)```", _text("README.md"), flags=re.S)
    assert block is not None, "README has no 'Reading a finding' section with a text block"
    env = {**os.environ, "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "npu_audit", "--no-cache", "--isolated", "examples/train_sample.py"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120).stdout
    shown = block.group(1)
    finding, _, summary = shown.partition("\n\n")
    assert finding.strip("\n") and finding in out
    assert summary.strip() and summary.strip() in out
