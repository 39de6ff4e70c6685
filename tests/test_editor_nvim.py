"""The language server in a real editor: Neovim's built-in LSP client, end to end.

Neovim starts headless with tests/editor/init.lua (the documented set-up, nothing else: ``--clean``)
and runs tests/editor/drive.lua, which opens a copy of tests/fixtures/editor/train_loop.py, applies
one quick fix and then the fix-all action through Neovim's own workspace-edit code, writes the file,
then edits and writes the helper module the script imports. The Lua records what the editor showed
as JSON; this test compares it, and the files on disk, with what a user must see.

Needs ``nvim`` (0.7 or newer): ``apt-get install neovim``, or ``.ci/editor-setup``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

HERE = Path(__file__).parent
EDITOR = HERE / "editor"
FIXTURES = HERE / "fixtures" / "editor"
START_MS = 20000  # the wait for the server to start (loading the knowledge base)
WAIT_MS = 8000  # each other wait inside the editor session
SESSION_SECONDS = 60  # the whole Neovim run (normally about 5 s)
BROKEN_DUMP_STEPS = 'DUMP_STEPS = "0|100-50|200"'  # written into the helper module: a range going downwards


def nvim() -> str:
    found = shutil.which("nvim")
    if found is None:
        pytest.skip("nvim is not installed: install neovim (apt-get install neovim) to run the editor test")
    return found


def npu_audit_executable() -> str:
    """The npu-audit console script of the running environment (the one the tests import)."""
    beside = Path(sys.executable).parent / ("npu-audit.exe" if os.name == "nt" else "npu-audit")
    found = str(beside) if beside.is_file() else shutil.which("npu-audit")
    if found is None:
        pytest.fail(f"no npu-audit executable beside {sys.executable} or on PATH: install the package "
                    "(pip install -e '.[test]') so that the editor can start `npu-audit lsp`")
    return found


def shown(diagnostics: list[dict]) -> list[tuple[int, int, str]]:
    """(line, column, code) of what the editor listed, 1-based."""
    return [(d["line"], d["column"], d["code"]) for d in diagnostics]


def run_session(tmp_path: Path) -> tuple[dict, Path, Path]:
    work = tmp_path / "project"
    work.mkdir()
    script = work / "train_loop.py"
    helper = work / "run_settings.py"
    shutil.copyfile(FIXTURES / "train_loop.py", script)
    shutil.copyfile(FIXTURES / "run_settings.py", helper)
    out = tmp_path / "observed.json"
    env = dict(os.environ,
               NPU_AUDIT_EXECUTABLE=npu_audit_executable(),
               NPU_AUDIT_TEST_OUT=str(out),
               NPU_AUDIT_TEST_SCRIPT=str(script),
               NPU_AUDIT_TEST_HELPER=str(helper),
               NPU_AUDIT_TEST_HELPER_LINE=BROKEN_DUMP_STEPS,
               NPU_AUDIT_TEST_START_MS=str(START_MS), NPU_AUDIT_TEST_WAIT_MS=str(WAIT_MS),
               # the editor's logs and state stay in the test's folder
               XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    command = [nvim(), "--headless", "--clean", "-u", str(EDITOR / "init.lua"),
               "-c", f"luafile {EDITOR / 'drive.lua'}"]
    try:
        proc = subprocess.run(command, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=SESSION_SECONDS)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"Neovim did not finish the editing session within {SESSION_SECONDS} s; "
                    f"output:\n{exc.stdout}\n{exc.stderr}")
    if not out.is_file():
        pytest.fail(f"Neovim ended (exit code {proc.returncode}) without writing its observations; "
                    f"output:\n{proc.stdout}\n{proc.stderr}")
    observed = json.loads(out.read_text(encoding="utf-8"))
    if "error" in observed:
        waits = "\n".join(f"  {w['what']}: {w['ms']} ms{'' if w['ok'] else ' (timed out)'}"
                          for w in observed.get("waits", []))
        pytest.fail(f"the editing session in Neovim {observed.get('nvim')} failed: {observed['error']}\n"
                    f"waits:\n{waits}\nNeovim's output:\n{proc.stdout}\n{proc.stderr}")
    return observed, script, helper


def test_neovim_shows_fixes_and_follows_a_helper_module(tmp_path: Path):
    observed, script, helper = run_session(tmp_path)
    original = (FIXTURES / "train_loop.py").read_text(encoding="utf-8")
    fixed = (FIXTURES / "train_loop.expected.py").read_text(encoding="utf-8")
    assert observed["filetype"] == "python"

    # the diagnostics of the opened script, where the editor puts them
    assert shown(observed["opened"]) == [(12, 23, "NPU501"), (16, 23, "NPU301"), (16, 49, "NPU103"),
                                         (17, 38, "NPU102")], observed["opened"]
    assert all(d["source"] == "npu-audit" for d in observed["opened"])

    # the quick fix at the NPU501 diagnostic migrates to precision_mode_v2, and only that line changes
    assert observed["quickfix"] == "Migrate to precision_mode_v2 = 'mixed_float16'", observed["quickfix_titles"]
    old_line = 'npu_opt.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision_fp16")'
    new_line = 'npu_opt.parameter_map["precision_mode_v2"].s = tf.compat.as_bytes("mixed_float16")'
    assert observed["after_quickfix_text"] == original.replace(old_line, new_line)
    assert shown(observed["after_quickfix"]) == [(16, 23, "NPU301"), (16, 49, "NPU103"), (17, 38, "NPU102")]

    # fix-all fixes the rest that a machine can fix; the written file is the expected text
    assert observed["fix_all_kind"] == "source.fixAll.npu-audit"
    assert script.read_text(encoding="utf-8") == fixed
    assert shown(observed["saved"]) == [(16, 23, "NPU301")]  # a deprecated option: a person decides

    # writing the helper module re-checks the open script that takes DUMP_STEPS from it
    assert BROKEN_DUMP_STEPS + "\n" in helper.read_text(encoding="utf-8")
    assert shown(observed["after_helper"]) == [(15, 40, "NPU106"), (16, 23, "NPU301")], observed["after_helper"]
    malformed = observed["after_helper"][0]
    assert "100-50" in malformed["message"] and malformed["severity"] == 1  # vim.diagnostic.severity.ERROR
