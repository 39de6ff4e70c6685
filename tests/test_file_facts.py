"""Facts a check learns from the file system are part of the cached result's key: a check asks the
extraction (``Extraction.file_exists``), which records the path as a dependency of the file's result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
UNSAFE = REPO / "tests" / "fixtures" / "fix" / "unsafe_migrations.py"


def _ini_fix_offered(tmp_path: Path, cache: Path) -> bool:
    proc = subprocess.run([sys.executable, "-m", "npu_audit", "t.py", "--format", "json", "--cache-dir", str(cache)],
                          capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ, NO_COLOR="1"), timeout=300)
    report = json.loads(proc.stdout)
    return any(f["fix"] and f["fix"]["new_files"] for f in report["diagnostics"] if f["code"] == "NPU301")


def test_the_ini_next_to_the_script_is_a_dependency_of_the_cached_result(tmp_path):
    (tmp_path / "t.py").write_bytes(UNSAFE.read_bytes())
    cache = tmp_path / "cache"
    assert _ini_fix_offered(tmp_path, cache)  # no t_op_precision.ini yet: the fix would write it
    assert _ini_fix_offered(tmp_path, cache)  # (from the cache)
    ini = tmp_path / "t_op_precision.ini"
    ini.write_text("[ByOpType]\n")
    assert not _ini_fix_offered(tmp_path, cache)  # an existing file is never overwritten: no fix
    ini.unlink()
    assert _ini_fix_offered(tmp_path, cache)


def test_checks_do_not_look_at_the_file_system_themselves():
    import re

    checks = REPO / "npu_audit" / "checks"
    touching = re.compile(r"\bos\.path\.(exists|isfile|isdir|lexists|getsize|getmtime)\(|\bos\.(stat|lstat|listdir|scandir|"
                          r"walk)\(|\bopen\((?!\))|\.(exists|is_file|is_dir|read_text|read_bytes|stat)\(\)")
    found = [f"{path.relative_to(REPO)}:{n}: {line.strip()}" for path in sorted(checks.rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1) if touching.search(line)]
    assert found == []
