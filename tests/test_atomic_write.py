"""A write npu-audit makes (``--fix``, ``-o FILE``) leaves no temporary file behind, not even one that an
earlier, killed run left: it removes those of its own naming for the file it writes, and nothing else."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "train_sample.py"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="symbolic links are POSIX here")

#: Names an interrupted write of x.py leaves.
STALE = [".x.py.abcd1234.npu-audit.tmp", ".x.py.0badcafe.npu-audit.tmp"]
#: Names that look alike but are not npu-audit's temporary files of x.py.
ALIKE = [".x.py.ABCD1234.npu-audit.tmp", ".x.py.abcd12345.npu-audit.tmp", ".x.py.abcd123.npu-audit.tmp",
         ".y.py.abcd1234.npu-audit.tmp", "x.py.abcd1234.npu-audit.tmp", ".x.py.abcd1234.npu-audit.tmp.keep",
         ".x.py.abcd1234.npu-audit.tmpx", ".xapy.abcd1234.npu-audit.tmp", ".x.py.abcd1234.npu_audit.tmp"]


def plant(folder: pathlib.Path) -> pathlib.Path:
    """The stale and the look-alike files, a link and a folder of the stale pattern; the link's target."""
    for name in STALE + ALIKE:
        (folder / name).write_text("kept\n")
    target = folder.parent / f"{folder.name}-link-target"
    target.write_text("the link's target\n")
    (folder / ".x.py.deadbeef.npu-audit.tmp").symlink_to(target)
    (folder / ".x.py.feedf00d.npu-audit.tmp").mkdir()
    return target


def npu_audit(folder: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "npu_audit", "--no-cache", "--no-progress", *args],
                          capture_output=True, text=True, cwd=folder)


def assert_only_the_stale_ones_are_gone(folder: pathlib.Path, target: pathlib.Path) -> None:
    for name in STALE:
        assert not (folder / name).exists(), name
    for name in ALIKE:
        assert (folder / name).read_text() == "kept\n", name
    assert (folder / ".x.py.deadbeef.npu-audit.tmp").is_symlink()
    assert target.read_text() == "the link's target\n"
    assert (folder / ".x.py.feedf00d.npu-audit.tmp").is_dir()
    assert not [p for p in os.listdir(folder) if p.endswith(".npu-audit.tmp")
                and p not in {".x.py.deadbeef.npu-audit.tmp", ".x.py.feedf00d.npu-audit.tmp", *ALIKE}]


def test_fix_removes_the_temporary_files_a_killed_fix_left(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(SAMPLE, folder / "x.py")
    target = plant(folder)
    done = npu_audit(folder, "--fix", "x.py")
    assert "Fixed 4 findings in 1 file." in done.stderr, done.stderr
    assert (folder / "x.py").read_bytes() != SAMPLE.read_bytes()
    assert_only_the_stale_ones_are_gone(folder, target)


def test_a_report_file_removes_the_temporary_files_a_killed_run_left(tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    target = plant(folder)
    done = npu_audit(tmp_path, "-o", str(folder / "x.py"), str(SAMPLE))
    assert done.returncode == 1, done.stderr
    assert "NPU" in (folder / "x.py").read_text()
    assert_only_the_stale_ones_are_gone(folder, target)


def test_a_write_in_progress_keeps_its_temporary_file(tmp_path):
    """Another run's temporary file, still being written (it holds its lock), is not removed."""
    from npu_audit.fix import write

    fd, temp = write.open_temp(str(tmp_path / "x.py"))
    try:
        assert write.temp_pattern("x.py").fullmatch(os.path.basename(temp))
        assert write.remove_stale(str(tmp_path), "x.py") == []
        assert os.path.exists(temp)
    finally:
        os.close(fd)
    assert write.remove_stale(str(tmp_path), "x.py") == [temp]
    assert not os.path.exists(temp)


def test_a_report_replaces_the_file_and_keeps_its_mode(tmp_path):
    from npu_audit.fix import write

    report = tmp_path / "report.json"
    report.write_text("old\n")
    report.chmod(0o640)
    write.write_report(str(report), b"new\n")
    assert report.read_bytes() == b"new\n"
    assert (report.stat().st_mode & 0o777) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["report.json"]
