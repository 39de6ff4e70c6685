"""Fixes: before/after fixtures (libcst CodemodTest style), byte-exactness, idempotence, re-check.

tests/fixtures/fix/<name>.py is the input, <name>.fixed.py the expected result byte for byte
(regenerate with NPU_AUDIT_UPDATE_GOLDEN=1 and review the diff). A first line
`# npu-audit-fix: unsafe` applies unsafe fixes too.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import libcst
import pytest

from npu_audit.fix import applicable, fix_file
from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures" / "fix"
CASES = sorted(p.name[:-3] for p in FIXTURES.glob("*.py") if not p.name.endswith(".fixed.py"))


def is_unsafe(path: Path) -> bool:
    return path.read_bytes().startswith(b"# npu-audit-fix: unsafe")


def fix_copy(tmp_path: Path, name: str, source: Path = None):
    source = source or FIXTURES / f"{name}.py"
    target = tmp_path / f"{name}.py"
    shutil.copyfile(source, target)
    job = Job(file=str(target), display=str(target), roots=(str(tmp_path),), settings=Settings())
    report = analyze_file(job)
    return fix_file(job, report, unsafe=is_unsafe(FIXTURES / f"{name}.py")), target


@pytest.mark.parametrize("name", CASES)
def test_fix_gives_expected_bytes(tmp_path, name):
    fx, _ = fix_copy(tmp_path, name)
    expected = FIXTURES / f"{name}.fixed.py"
    if os.environ.get("NPU_AUDIT_UPDATE_GOLDEN"):
        expected.write_bytes(fx.fixed)
    assert fx.applied, "the fixture has something to fix"
    assert fx.fixed == expected.read_bytes()


@pytest.mark.parametrize("name", CASES)
def test_fixed_file_parses_and_is_idempotent(tmp_path, name):
    fx, target = fix_copy(tmp_path, name)
    libcst.parse_module(fx.fixed.decode("utf-8-sig" if fx.fixed.startswith(b"\xef\xbb\xbf") else _encoding(fx.fixed)))
    target.write_bytes(fx.fixed)
    job = Job(file=str(target), display=str(target), roots=(str(tmp_path),), settings=Settings())
    report = analyze_file(job)
    again = fix_file(job, report, unsafe=is_unsafe(FIXTURES / f"{name}.py"))
    assert not again.applied and again.fixed == fx.fixed


@pytest.mark.parametrize("name", CASES)
def test_fixed_rules_recheck_clean(tmp_path, name):
    fx, target = fix_copy(tmp_path, name)
    fixed_codes = {f.code for f in fx.applied}
    remaining = [f for f in fx.remaining.findings if f.code in fixed_codes and applicable(f, is_unsafe(FIXTURES / f"{name}.py"))]
    assert not remaining, [(f.code, f.line, f.message) for f in remaining]


def _encoding(data: bytes) -> str:
    head = data[:200].decode("ascii", "replace")
    return "latin-1" if "latin-1" in head else "utf-8"


def test_crlf_bom_and_encoding_are_kept(tmp_path):
    crlf, _ = fix_copy(tmp_path, "crlf")
    assert crlf.fixed.count(b"\r\n") == crlf.original.count(b"\r\n") and b"\n" not in crlf.fixed.replace(b"\r\n", b"")
    bom, _ = fix_copy(tmp_path, "bom")
    assert bom.fixed.startswith(b"\xef\xbb\xbf") and "中文注释 😀".encode() in bom.fixed
    latin, _ = fix_copy(tmp_path, "latin1")
    assert "café".encode("latin-1") in latin.fixed and "café".encode() not in latin.fixed


def test_only_the_edited_ranges_change(tmp_path):
    fx, _ = fix_copy(tmp_path, "bytes_required")
    before = fx.original.decode().splitlines()
    after = fx.fixed.decode().splitlines()
    assert len(before) == len(after)
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert changed == [5, 6, 8]
    for i in changed:
        # the fix only inserted the wrapper: removing it gives the original line back
        assert after[i].replace("tf.compat.as_bytes(", "", 1).replace('")', '"', 1).replace("')", "'", 1) == before[i]
    assert "# keep this comment" in after[5] and "# a comment inside the statement" in after[8]


def test_unsafe_fixes_need_opting_in(tmp_path):
    target = tmp_path / "unsafe_migrations.py"
    shutil.copyfile(FIXTURES / "unsafe_migrations.py", target)
    job = Job(file=str(target), display=str(target), roots=(str(tmp_path),), settings=Settings())
    safe_only = fix_file(job, analyze_file(job), unsafe=False)
    assert all(f.fix.applicability == "safe" for f in safe_only.applied)
    assert b"hcom_paralel" in safe_only.fixed


def test_ini_for_op_precision_mode_is_offered_and_never_overwrites(tmp_path):
    fx, _ = fix_copy(tmp_path, "unsafe_migrations")
    (path, content), = fx.new_files
    assert path.endswith("unsafe_migrations_op_precision.ini")
    assert "[ByOpType]\nPooling=high_precision\nSoftmaxV2=high_precision\n" in content
    # with the file already there, the migration is not applied at all
    other = tmp_path / "again"
    other.mkdir()
    (other / "unsafe_migrations_op_precision.ini").write_text("mine\n")
    fx2, _ = fix_copy(other, "unsafe_migrations")
    assert not fx2.new_files and b"op_select_implmode" in fx2.fixed
    assert (other / "unsafe_migrations_op_precision.ini").read_text() == "mine\n"
