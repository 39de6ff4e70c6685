"""Paths that README.md and rules/README.md cite exist, so readers (and the issue tracker) are never sent
to a file or folder that is not there. Vendor docs are cited as `docs/...` and adapter facts as
`adapter/...`: they live in the shared sources beside the repository (../shared), checked when present."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
OURS = ("npu_audit/", "tests/", "benchmarks/", "rules/", ".ci/")
THEIRS = ("docs/", "adapter/")
PACKAGES = ("extract/", "fix/", "render/", "knowledge/", "checks/", "lsp/")  # named inside npu_audit/
CITED = re.compile(r"(?<![\w/.\-])((?:npu_audit|tests|benchmarks|rules|\.ci|docs|adapter|extract|fix|render|knowledge|checks|lsp)/[A-Za-z0-9_./\-]*)")


def _cited(doc: str) -> list[str]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    return sorted({m.group(1).rstrip(".") for m in CITED.finditer(text) if "<" not in m.group(1)})


@pytest.mark.parametrize("doc", ["README.md", "rules/README.md"])
def test_cited_paths_exist(doc):
    missing = []
    for path in _cited(doc):
        if path.startswith(OURS):
            if not (ROOT / path).exists():
                missing.append(path)
        elif path.startswith(PACKAGES):
            if not (ROOT / "npu_audit" / path).exists():
                missing.append(path)
        elif path.startswith(THEIRS) and SHARED.is_dir() and not (SHARED / path).exists():
            missing.append(path)
    assert not missing, f"{doc} cites paths that do not exist: {missing}"


def test_the_check_sees_citations():
    assert len(_cited("README.md")) > 20


def test_the_quick_start_says_how_many_findings_the_sample_has():
    from npu_audit.pipeline import Job, analyze_file
    from npu_audit.settings import Settings

    said = re.search(r"shipped sample script \(it has (\d+) findings", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert said is not None, "README's quick start no longer says how many findings the sample has"
    sample = ROOT / "examples" / "train_sample.py"
    report = analyze_file(Job(file=str(sample), display="examples/train_sample.py", roots=(str(sample.parent),),
                              settings=Settings()))
    assert len(report.findings) == int(said.group(1))
