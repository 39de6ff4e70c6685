"""The shipped TensorFlow 2 sample stays a good demo: ``npu-audit examples/train_tf2_sample.py`` (the
README quick start) finds one mistake of each kind the sample was written to show, on its line.

(examples/train_sample.py, the TensorFlow 1 sample, is pinned by the golden output in test_cli.py.)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TF2_SAMPLE = "examples/train_tf2_sample.py"

# (line, code, certainty, what the line writes): one finding per check, each on the line that makes it
TF2_EXPECTED = [
    (17, "NPU501", "always", 'options.precision_mode = "allow_mix_precision"'),  # precision_mode_v2 migration
    (18, "NPU104", "always", 'options.graph_run_mode = "1"'),  # a str where the adapter takes an int
    (19, "NPU101", "always", 'options.op_compiler_cache_mod = "enable"'),  # a misspelt option: ValueError
    (23, "NPU106", "conditional", 'options.dump_config.dump_step = "0|10-5|20"'),  # only with --dump
    (37, "NPU307", "always", "npu.global_options().memory_config.atomic_clean_policy = 1"),  # after open()
]


def npu_audit(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "npu_audit", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_tf2_sample_findings_codes_and_lines():
    proc = npu_audit(TF2_SAMPLE, "--no-cache", "--format", "json")
    assert proc.returncode == 1, proc.stderr  # findings
    data = json.loads(proc.stdout)
    found = [(d["line"], d["code"], d["certainty"]) for d in data["diagnostics"]]
    assert found == [(line, code, certainty) for line, code, certainty, _ in TF2_EXPECTED]
    lines = (REPO / TF2_SAMPLE).read_text(encoding="utf-8").splitlines()
    for line, code, _certainty, text in TF2_EXPECTED:
        assert lines[line - 1].strip() == text, (code, line)
    assert len({code for _line, code, _certainty, _text in TF2_EXPECTED}) == len(TF2_EXPECTED)  # one per check


def test_tf2_sample_text_summary():
    proc = npu_audit(TF2_SAMPLE, "--no-cache")
    assert proc.returncode == 1, proc.stderr
    summary = proc.stdout.strip().splitlines()[-2:]
    assert summary == ["Found 4 errors, 0 warnings, 1 info in 1 file (1 file checked).",
                       "1 fixable with `npu-audit --fix` (2 more with --unsafe-fixes)."]


def test_tf2_sample_fixes_leave_what_needs_a_person(tmp_path: Path):
    """--fix --unsafe-fixes on a copy: the migration, the type and the spelling are fixed; the malformed
    range and the write after open() are left for the user (no fix could know the intent)."""
    copy = tmp_path / "train_tf2_sample.py"
    shutil.copyfile(REPO / TF2_SAMPLE, copy)
    fixed = npu_audit(str(copy), "--no-cache", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert fixed.returncode == 1, fixed.stderr  # findings remain
    text = copy.read_text(encoding="utf-8")
    assert 'options.precision_mode_v2 = "mixed_float16"' in text
    assert "options.graph_run_mode = 1\n" in text
    assert 'options.op_compiler_cache_mode = "enable"' in text
    after = json.loads(npu_audit(str(copy), "--no-cache", "--format", "json", cwd=tmp_path).stdout)
    assert [(d["line"], d["code"]) for d in after["diagnostics"]] == [(23, "NPU106"), (37, "NPU307")]
