"""The result cache as a user meets it: a warm run says exactly what a cold run says, and never what
the tree said before it changed (a file edited, added or deleted, a helper module edited, settings,
options, another npu-audit or knowledge base).

Files get modification times in the past: a run whose files were modified in the last seconds is not
kept whole (their ``stat`` could not vouch for their content), and these tests are about runs that are.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
from pathlib import Path

import pytest

import npu_audit.cache
import npu_audit.pipeline
from npu_audit.cli import main
from npu_audit.findings import FileReport

CONFIG = '''import tensorflow as tf
{imports}
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes({mode})
'''


def script(mode: str = '"allow_fp32_to_fp16"', imports: str = "") -> str:
    return CONFIG.format(mode=mode, imports=imports)


_clock = [time.time_ns() - 1000 * 1_000_000_000]


def write(path: Path, text: str) -> None:
    """Write ``path`` with a modification time in the past, later than any written before."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    _clock[0] += 1_000_000_000
    os.utime(path, ns=(_clock[0], _clock[0]))


@pytest.fixture
def tree(tmp_path, monkeypatch):
    root = tmp_path / "tree"
    write(root / "train.py", script())
    write(root / "consts.py", 'MODE = "allow_mix_precision"\n')
    write(root / "models" / "net.py", script("MODE", "from consts import MODE"))
    write(root / "models" / "clean.py", "import os\nprint(os.sep)\n")
    write(root / "models" / "bad.py", script('"bogus_mode"'))
    monkeypatch.chdir(root)
    return root


_reports = []  # where the reports are written: the test's temporary folder


@pytest.fixture(autouse=True)
def _report_folder(tmp_path):
    _reports.append(tmp_path)
    yield
    _reports.pop()


def audit(cache: Path | None, *args: str, isolated: bool = True) -> str:
    """The report of ``npu-audit ARGS .`` run in-process (``cache``: its folder; None: --no-cache). The
    cache says nothing on stderr: every entry it reads is one it wrote, signed with the user's key."""
    out = _reports[-1] / f"report-{time.monotonic_ns()}.out"
    options = ["--cache-dir", str(cache)] if cache is not None else ["--no-cache"]
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        main([*options, "--no-progress", *(["--isolated"] if isolated else []), "-o", str(out), *args, "."])
    assert "cache" not in said.getvalue(), said.getvalue()
    return out.read_text(encoding="utf-8")


def cold(*args: str, isolated: bool = True) -> str:
    return audit(None, *args, isolated=isolated)


def no_analysis(monkeypatch):
    """From now on, analysing a file fails the test: the run must come whole from the cache."""
    def refuse(*args, **kwargs):
        raise AssertionError("a file was analysed")
    monkeypatch.setattr(npu_audit.pipeline, "_execute", refuse)


def codes(report: str) -> list[tuple[str, str]]:
    return sorted((d["path"], d["name"]) for d in json.loads(report)["diagnostics"])


@pytest.mark.parametrize("fmt", ["json", "text", "sarif", "concise", "lsp"])
def test_a_warm_run_says_byte_for_byte_what_a_cold_run_says(tree, tmp_path, monkeypatch, fmt):
    cache = tmp_path / "cache"
    expected = cold("--format", fmt)
    statistics = cold("--format", "json", "--statistics")
    assert audit(cache, "--format", fmt) == expected  # fills the cache
    no_analysis(monkeypatch)
    assert audit(cache, "--format", fmt) == expected  # the whole run from the cache
    assert audit(cache, "--format", "json", "--statistics") == statistics


def test_show_config_from_the_cache_is_the_cold_one(tree, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    expected = cold("--show-config", "--format", "json")
    assert audit(cache, "--show-config", "--format", "json") == expected
    no_analysis(monkeypatch)
    assert audit(cache, "--show-config", "--format", "json") == expected


def test_an_edited_file_is_analysed_again(tree, tmp_path):
    cache = tmp_path / "cache"
    audit(cache, "--format", "json")
    write(tree / "train.py", script('"bogus_mode"'))
    assert audit(cache, "--format", "json") == cold("--format", "json")
    assert ("train.py", "invalid-value") in codes(audit(cache, "--format", "json"))
    write(tree / "models" / "bad.py", script('"force_fp16"'))
    assert ("models/bad.py", "invalid-value") not in codes(audit(cache, "--format", "json"))


def test_added_and_deleted_files(tree, tmp_path):
    cache = tmp_path / "cache"
    audit(cache, "--format", "json")
    write(tree / "models" / "new.py", script('"bogus_mode"'))
    report = audit(cache, "--format", "json")
    assert ("models/new.py", "invalid-value") in codes(report) and report == cold("--format", "json")
    (tree / "models" / "bad.py").unlink()
    report = audit(cache, "--format", "json")
    assert ("models/bad.py", "invalid-value") not in codes(report) and report == cold("--format", "json")
    assert json.loads(report)["summary"]["files"] == 5


def test_an_edited_helper_module_changes_its_importers_findings(tree, tmp_path):
    cache = tmp_path / "cache"
    assert ("models/net.py", "invalid-value") not in codes(audit(cache, "--format", "json"))
    write(tree / "consts.py", 'MODE = "allow_mix_precisio"\n')
    report = audit(cache, "--format", "json")
    assert ("models/net.py", "invalid-value") in codes(report) and report == cold("--format", "json")


def test_a_helper_module_outside_the_files_checked(tree, tmp_path, monkeypatch):
    """A helper in a folder .gitignore leaves out is not checked, but its importer reads it: an edit of it
    (or its removal) is seen although the files of the run did not change."""
    write(tree / ".gitignore", "vendor/\n")
    write(tree / "vendor" / "modes.py", 'MODE = "allow_mix_precision"\n')
    write(tree / "app.py", script("MODE", "from vendor.modes import MODE"))
    cache = tmp_path / "cache"
    first = audit(cache, "--format", "json")
    assert "vendor/modes.py" not in first and ("app.py", "invalid-value") not in codes(first)
    write(tree / "vendor" / "modes.py", 'MODE = "bogus_mode"\n')
    report = audit(cache, "--format", "json")
    assert ("app.py", "invalid-value") in codes(report) and report == cold("--format", "json")
    (tree / "vendor" / "modes.py").unlink()
    assert audit(cache, "--format", "json") == cold("--format", "json")


def test_options_and_settings_are_part_of_the_key(tree, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    plain = audit(cache, "--format", "json")
    only = audit(cache, "--format", "json", "--select", "NPU5")
    assert only == cold("--format", "json", "--select", "NPU5") and only != plain
    assert audit(cache, "--format", "json", "--release", "legacy") == cold("--format", "json", "--release", "legacy")
    assert audit(cache, "--format", "json", "--exclude", "models") == cold("--format", "json", "--exclude", "models")
    assert audit(cache, "--format", "json") == plain


def test_pyproject_settings_changes_are_seen(tree, tmp_path):
    cache = tmp_path / "cache"
    before = audit(cache, "--format", "json", isolated=False)
    write(tree / "pyproject.toml", '[tool.npu-audit]\nignore = ["invalid-value"]\n')
    after = audit(cache, "--format", "json", isolated=False)
    assert after == cold("--format", "json", isolated=False) and after != before and "invalid-value" not in after
    write(tree / "models" / "pyproject.toml", '[tool.npu-audit]\nselect = ["NPU104"]\n')  # a nested project
    assert audit(cache, "--format", "json", isolated=False) == cold("--format", "json", isolated=False)
    write(tree / "models" / "pyproject.toml", '[tool.npu-audit]\nselect = ["NPU5"]\n')
    assert audit(cache, "--format", "json", isolated=False) == cold("--format", "json", isolated=False)
    (tree / "models" / "pyproject.toml").unlink()
    (tree / "pyproject.toml").unlink()
    assert audit(cache, "--format", "json", isolated=False) == before


def test_another_npu_audit_or_knowledge_base_does_not_reuse_results(tree, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    audit(cache, "--format", "json")
    seen = []
    execute = npu_audit.pipeline._execute

    def counting(jobs, *args, **kwargs):
        seen.extend(jobs)
        return execute(jobs, *args, **kwargs)

    monkeypatch.setattr(npu_audit.pipeline, "_execute", counting)
    monkeypatch.setattr(npu_audit.cache, "__version__", "99.0")
    assert audit(cache, "--format", "json") == cold("--format", "json") and len(seen) >= 5
    seen.clear()
    monkeypatch.setattr(npu_audit.cache.Cache, "tool_token", lambda self: "another knowledge base")
    assert audit(cache, "--format", "json") == cold("--format", "json") and len(seen) >= 5


def test_a_run_with_a_file_modified_just_now_is_not_kept_whole(tree, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    (tree / "train.py").write_text(script('"force_fp16"'), encoding="utf-8")  # modified now
    expected = cold("--format", "json")
    assert audit(cache, "--format", "json") == expected
    calls = []
    execute = npu_audit.pipeline._execute
    monkeypatch.setattr(npu_audit.pipeline, "_execute", lambda *a, **k: calls.append(1) or execute(*a, **k))
    assert audit(cache, "--format", "json") == expected
    assert calls  # looked up file by file, not as a whole


def test_files_named_on_the_command_line(tree, tmp_path):
    cache = tmp_path / "cache"
    out = tmp_path / "named.json"

    def named() -> list[tuple[str, str]]:
        main(["--cache-dir", str(cache), "--isolated", "--format", "json", "-o", str(out), "models/net.py",
              "models/bad.py"])
        return codes(out.read_text(encoding="utf-8"))

    assert named() == named() and ("models/net.py", "invalid-value") not in named()
    write(tree / "consts.py", 'MODE = "bogus"\n')
    assert ("models/net.py", "invalid-value") in named()


def test_several_commands_keep_their_own_whole_run(tree, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    expected = {args: cold("--format", "json", *args) for args in ((), ("--select", "NPU1"), ("--ignore", "NPU5"))}
    for args in expected:
        assert audit(cache, "--format", "json", *args) == expected[args]
    no_analysis(monkeypatch)
    for args in expected:
        assert audit(cache, "--format", "json", *args) == expected[args]


def test_a_module_added_next_to_a_script_hides_the_one_its_import_found(tree, tmp_path):
    """``from consts import MODE`` in models/net.py found consts.py at the top; a models/consts.py now comes
    first, as for Python itself. Removing it again brings the first one back."""
    cache = tmp_path / "cache"
    assert ("models/net.py", "invalid-value") not in codes(audit(cache, "--format", "json"))
    write(tree / "models" / "consts.py", 'MODE = "bogus_mode"\n')
    report = audit(cache, "--format", "json")
    assert ("models/net.py", "invalid-value") in codes(report) and report == cold("--format", "json")
    (tree / "models" / "consts.py").unlink()
    report = audit(cache, "--format", "json")
    assert ("models/net.py", "invalid-value") not in codes(report) and report == cold("--format", "json")


def test_a_module_an_import_did_not_find_is_added(tree, tmp_path):
    write(tree / "models" / "deep" / "run.py", script("MODE", "from presets.modes import MODE"))
    cache = tmp_path / "cache"
    assert ("models/deep/run.py", "invalid-value") not in codes(audit(cache, "--format", "json"))
    write(tree / "presets" / "__init__.py", "")
    write(tree / "presets" / "modes.py", 'MODE = "bogus_mode"\n')
    report = audit(cache, "--format", "json")
    assert ("models/deep/run.py", "invalid-value") in codes(report) and report == cold("--format", "json")


def test_a_package_in_an_ignored_folder_added_later(tree, tmp_path):
    """The module comes into existence in a folder the run does not check: no file of the run changes."""
    write(tree / ".gitignore", "vendor/\n")
    write(tree / "vendor" / "keep.txt", "")
    write(tree / "app.py", script("MODE", "from vendor.modes import MODE"))
    cache = tmp_path / "cache"
    assert ("app.py", "invalid-value") not in codes(audit(cache, "--format", "json"))
    write(tree / "vendor" / "modes.py", 'MODE = "bogus_mode"\n')
    report = audit(cache, "--format", "json")
    assert ("app.py", "invalid-value") in codes(report) and report == cold("--format", "json")


def test_an_edit_that_keeps_the_size_and_the_modification_time(tree, tmp_path):
    """As ``cp -p`` or ``touch -r`` can leave a file: the change time still tells."""
    cache = tmp_path / "cache"
    audit(cache, "--format", "json")
    for path in (tree / "models" / "bad.py", tree / "consts.py"):
        before = path.stat()
        path.write_text(path.read_text(encoding="utf-8").replace("bogus_mode", "bogus_mod!").replace(
            '"allow_mix_precision"', '"allow_mix_precisio!"'), encoding="utf-8")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    time.sleep(npu_audit.cache.RACY_SECONDS)  # the change times are recent: the run would not be kept
    report = audit(cache, "--format", "json")
    assert report == cold("--format", "json") and ("models/net.py", "invalid-value") in codes(report)


def test_other_files_written_into_the_tree_keep_the_whole_run(tree, tmp_path, monkeypatch):
    """A report, a log or a new folder in the tree's folders changes them, but not what an import finds."""
    cache = tmp_path / "cache"
    expected = cold("--format", "json")
    assert audit(cache, "--format", "json") == expected
    write(tree / "npu-audit.sarif", "{}")
    write(tree / "models" / "train.log", "step 1")
    (tree / "checkpoints").mkdir()
    os.utime(tree, ns=(_clock[0], _clock[0]))  # (as if written a while ago)
    os.utime(tree / "models", ns=(_clock[0], _clock[0]))
    assert audit(cache, "--format", "json") == expected  # (the new folder: looked up again)
    no_analysis(monkeypatch)
    assert audit(cache, "--format", "json") == expected


def test_a_module_added_next_to_a_script_named_on_the_command_line(tree, tmp_path):
    """The same, file by file (a run that names files is not kept whole)."""
    cache = tmp_path / "cache"
    out = tmp_path / "named.json"

    def named() -> list[tuple[str, str]]:
        main(["--cache-dir", str(cache), "--isolated", "--format", "json", "-o", str(out), "models/net.py"])
        return codes(out.read_text(encoding="utf-8"))

    assert ("models/net.py", "invalid-value") not in named()
    write(tree / "models" / "consts.py", 'MODE = "bogus_mode"\n')
    assert ("models/net.py", "invalid-value") in named()


def test_findings_are_kept_whole():
    """What a whole run keeps of a finding reads back as the finding (its fix, edits, new files, related)."""
    from dataclasses import asdict

    from npu_audit.cache import _finding_dict
    from npu_audit.findings import Edit, Finding, Fix, Related

    finding = Finding(path="a.py", line=1, column=2, end_line=1, end_column=5, code="NPU101", name="unknown-option",
                      severity="error", message="m", hint="h", option="o",
                      related=(Related(path="b.py", line=3, column=4, message="r"),),
                      fix=Fix("unsafe", "fix it", (Edit(1, 2, 1, 5, '"x"'),), (("a.ini", "Op=1\n"),)),
                      certainty="conditional", tags=("deprecated",))
    assert json.loads(json.dumps(_finding_dict(finding))) == json.loads(json.dumps(asdict(finding)))
    report = FileReport.from_dict({"path": "a.py", "findings": [_finding_dict(finding)], "text": None, "configs": [],
                                   "parsed": True, "internal_error": False})
    assert report.findings == [finding]


def test_the_last_commands_keep_their_whole_runs_with_their_texts(tree, tmp_path, monkeypatch):
    """Older whole runs make room for newer ones; what the kept ones show (the source lines of the text
    format, kept once for all of them) is still there."""
    cache = tmp_path / "cache"
    kept = npu_audit.cache.RUNS_KEPT
    commands = [("--exclude", f"nothing-{i}") for i in range(kept + 2)]
    expected = cold("--format", "text")
    assert "bogus_mode" in expected  # (a source line shown under its finding)
    for command in commands:
        assert audit(cache, "--format", "text", *command) == expected
    with monkeypatch.context() as patched:
        no_analysis(patched)
        for command in commands[-kept:]:
            assert audit(cache, "--format", "text", *command) == expected
    write(tree / "models" / "bad.py", script('"bogus_mode" '))  # the newest run shows another text
    changed = cold("--format", "text")
    assert audit(cache, "--format", "text", *commands[-1]) == changed
    assert audit(cache, "--format", "text", *commands[-2]) == changed
    no_analysis(monkeypatch)
    for command in commands[-2:]:
        assert audit(cache, "--format", "text", *command) == changed
