"""What the published package declares matches what the project holds: the Python versions (requires-python,
the classifiers, the version ruff and mypy check for), the licence (its text ships as LICENSE), and the
source distribution, which holds every file of the repository so that its own tests pass when unpacked.
(.ci/wheel-check builds and installs the wheel itself; CI runs it.)"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]


def lowest_python() -> tuple[int, int]:
    found = re.fullmatch(r">=\s*3\.(\d+)", PROJECT["requires-python"])
    assert found, f"requires-python {PROJECT['requires-python']!r} is not of the form '>=3.N'"
    return 3, int(found.group(1))


def test_the_oldest_python_is_310_and_ruff_and_mypy_check_for_it():
    assert lowest_python() == (3, 10)  # pytest-lsp, in the test extra, needs 3.10
    assert sys.version_info[:2] >= lowest_python()
    assert PYPROJECT["tool"]["ruff"]["target-version"] == "py310"
    assert PYPROJECT["tool"]["mypy"]["python_version"] == "3.10"


def test_the_classifiers_name_each_declared_python_and_no_older_one():
    classifiers = PROJECT["classifiers"]
    minors = sorted(int(m) for c in classifiers for m in re.findall(r"^Programming Language :: Python :: 3\.(\d+)$", c))
    assert minors == [10, 11, 12, 13], minors
    assert minors[0] == lowest_python()[1]
    assert "Operating System :: POSIX :: Linux" in classifiers
    assert any(c.startswith("Development Status :: ") for c in classifiers)


def test_the_licence_is_declared_as_spdx_and_its_text_ships():
    assert PROJECT["license"] == "Apache-2.0"
    assert PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    # PEP 639: no licence classifier beside a licence expression
    assert not [c for c in PROJECT["classifiers"] if c.startswith("License ::")]


def _tracked_top_level() -> set[str]:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (an unpacked sdist): the tracked files are not known")
    done = subprocess.run([git, "ls-files"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        pytest.skip(f"git ls-files failed: {done.stderr.strip()}")
    return {line.split("/", 1)[0] for line in done.stdout.splitlines() if line}


def test_the_sdist_includes_every_tracked_file_at_the_top_level():
    """The sdist lacked LICENSE, examples/ and .ci/, and its tests failed on them. Every tracked top-level
    file or folder (except .gitignore, which hatch adds by itself) is in the sdist's include list."""
    include = PYPROJECT["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    anchored = {entry.lstrip("/") for entry in include}
    assert all(entry.startswith("/") for entry in include), "anchor each entry at the root: a bare 'tests' " \
                                                           "also matches a tests folder inside a virtualenv"
    missing = sorted(_tracked_top_level() - anchored - {".gitignore"})
    assert not missing, f"tracked but not in [tool.hatch.build.targets.sdist] include: {missing}"
    for name in ("LICENSE", "examples", ".ci", "CHANGELOG.md", "docs"):
        assert name in anchored


def test_ci_scripts_are_valid_bash_and_run_the_wheel_check():
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash on this machine")
    for script in (ROOT / ".ci" / "run", ROOT / ".ci" / "wheel-check"):
        done = subprocess.run([bash, "-n", str(script)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (script, done.stderr)
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ".ci/wheel-check" in run and "requires-python" in run
