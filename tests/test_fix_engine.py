"""The fix engine behind --fix, --diff and the language server: a safe fix keeps the effective
configuration, the report says what really happened, files are written carefully or not at all, and
diffs apply. Most tests drive the command line (as a subprocess, or in-process where a rule must be
replaced by a faulty one to show that the engine catches it)."""

from __future__ import annotations

import ast
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from npu_audit import cli
from npu_audit.checks.rules.bytes_required import BytesRequired
from npu_audit.checks.rules.prefer_precision_mode_v2 import PreferPrecisionModeV2
from npu_audit.findings import Edit, Fix
from npu_audit.fix import CHANGES_CONFIG, NOT_VALID, fix_file
from npu_audit.fix.effective import signature
from npu_audit.knowledge.loader import load
from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings

REPO = Path(__file__).resolve().parent.parent

SESSION = (
    "import tensorflow as tf\n"
    "\n"
    "sess_cfg = tf.ConfigProto()\n"
    "npu = sess_cfg.graph_options.rewrite_options.custom_optimizers.add()\n"
    "npu.name = 'NpuOptimizer'\n"
)
# A first precision_mode that a later one overwrites; the later one comes from a command-line flag,
# so it cannot be migrated: moving only the first would leave both keys in one entry.
DEAD_THEN_FLAG = (
    "import argparse\n" + SESSION
    + "ap = argparse.ArgumentParser()\n"
    "ap.add_argument('--precision', default='allow_fp32_to_fp16')\n"
    "opts = ap.parse_args()\n"
    "npu.parameter_map['precision_mode'].s = tf.compat.as_bytes('allow_mix_precision')\n"
    "npu.parameter_map['use_off_line'].b = True\n"
    "npu.parameter_map['precision_mode'].s = tf.compat.as_bytes(opts.precision)\n"
    "sess = tf.Session(config=sess_cfg)\n"
)
# Two literal writes, both with an exact precision_mode_v2 value.
DEAD_THEN_LITERAL = (
    SESSION
    + "npu.parameter_map['precision_mode'].s = tf.compat.as_bytes('allow_mix_precision')\n"
    "npu.parameter_map['precision_mode'].s = tf.compat.as_bytes('must_keep_origin_dtype')\n"
)
# NPURunConfig's own precision_mode, and the wrapped session config's entry with another one.
RUNCONFIG_OVER_ENTRY = (
    "import tensorflow as tf\n"
    "from npu_bridge.estimator.npu.npu_config import NPURunConfig\n"
    "\n"
    "inner = tf.ConfigProto()\n"
    "opt = inner.graph_options.rewrite_options.custom_optimizers.add()\n"
    "opt.name = 'NpuOptimizer'\n"
    "opt.parameter_map['precision_mode'].s = tf.compat.as_bytes('allow_fp32_to_fp16')\n"
    "\n"
    "run_cfg = NPURunConfig(\n"
    "    precision_mode='must_keep_origin_dtype',\n"
    "    session_config=inner,\n"
    ")\n"
)
BYTES_AND_MIGRATION = SESSION + "npu.parameter_map['precision_mode'].s = 'allow_mix_precision'\n"
DEAD_LINE = DEAD_THEN_FLAG.splitlines().index("npu.parameter_map['precision_mode'].s = tf.compat.as_bytes('allow_mix_precision')") + 1


def run(*args, cwd=None, input=None):
    return subprocess.run([sys.executable, "-m", "npu_audit", *map(str, args)], capture_output=True,
                          cwd=cwd, env=dict(os.environ, NO_COLOR="1"), timeout=300, input=input)


def text_of(proc, stream="stdout") -> str:
    return getattr(proc, stream).decode("utf-8", "replace")


def effective(path: Path):
    """The comparable effective configuration of a file, from ``--show-config --format json``."""
    proc = run(path, "--show-config", "--format", "json", "--no-cache")
    assert proc.returncode == 0, text_of(proc, "stderr")
    return signature(json.loads(proc.stdout)["configs"], load(), "current")


def script(tmp_path: Path, text: str, name: str = "train.py") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def job_for(path: Path, **kw) -> Job:
    return Job(file=str(path), display=str(path), roots=(str(path.parent),), settings=Settings(), **kw)


# -- 1. a safe fix keeps the effective configuration ------------------------------------------------


def test_dead_write_before_an_unmigratable_one_is_not_migrated(tmp_path):
    path = script(tmp_path, DEAD_THEN_FLAG)
    before = effective(path)
    proc = run(path, "--fix", "--no-cache")
    fixed = path.read_text()
    assert "precision_mode_v2" not in fixed  # precision_mode_v2 next to precision_mode: the session would not start
    assert effective(path) == before
    report = json.loads(run(path, "--format", "json", "--no-cache").stdout)
    npu501 = [d for d in report["diagnostics"] if d["code"] == "NPU501" and d["line"] == DEAD_LINE]
    assert npu501 and npu501[0]["fix"] is None and "every write must move together" in npu501[0]["hint"]
    assert proc.returncode in (0, 1)


def test_every_write_of_the_key_moves_together(tmp_path):
    path = script(tmp_path, DEAD_THEN_LITERAL)
    before = effective(path)
    proc = run(path, "--fix", "--no-cache")
    fixed = path.read_text()
    assert "'precision_mode'" not in fixed
    assert "npu.parameter_map['precision_mode_v2'].s = tf.compat.as_bytes('origin')\n" in fixed
    assert effective(path) == before
    config = json.loads(run(path, "--show-config", "--format", "json", "--no-cache").stdout)["configs"][0]
    assert config["entries"][0]["options"]["precision_mode_v2"]["value"] == "origin"
    assert "Fixed" in text_of(proc, "stderr")


def test_runconfig_precision_over_a_wrapped_entry_is_not_migrated(tmp_path):
    path = script(tmp_path, RUNCONFIG_OVER_ENTRY)
    before = effective(path)
    run(path, "--fix", "--no-cache")
    assert "precision_mode='must_keep_origin_dtype'" in path.read_text()
    assert "precision_mode_v2" not in path.read_text()
    assert effective(path) == before


def _one_write_migration(self, ctx, entry, _w, migration):
    """The old NPU501 fix: migrate the first precision_mode write of the entry alone."""
    for w in entry.writes:
        if w.key == migration.from_key and w.value.resolved:
            row = migration.row(w.value.decoded())
            edits = self._fix(ctx, w, migration.to_key, row.new) if row is not None and row.exact else None
            return Fix("safe", "Migrate one write", edits) if edits else None
    return None


def test_engine_refuses_a_safe_fix_that_changes_the_effective_config(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(PreferPrecisionModeV2, "_fix_together", _one_write_migration)
    path = script(tmp_path, DEAD_THEN_FLAG)
    job = job_for(path)
    report = analyze_file(job)
    assert any(f.code == "NPU501" and f.fix is not None for f in report.findings)  # the faulty rule offers it
    fx = fix_file(job, report, unsafe=False)
    assert b"precision_mode_v2" not in fx.fixed
    (rejected,) = [r for r in fx.rejected if r.finding.code == "NPU501"]
    assert rejected.reason == CHANGES_CONFIG and "precision_mode_v2" in rejected.detail
    left = [f for f in fx.remaining.findings if f.code == "NPU501" and f.line == DEAD_LINE]
    assert left and left[0].fix is None and "no automatic fix here" in left[0].hint
    # the command line says so, and the file keeps its meaning
    code = cli.main([str(path), "--fix", "--no-cache", "--jobs", "1"])
    err = capsys.readouterr().err
    assert "NPU501 [prefer-precision-mode-v2] fix not applied: it would change the effective configuration" in err
    assert "precision_mode_v2" not in path.read_text() and code in (0, 1)


def test_engine_refuses_a_fix_that_breaks_the_file(tmp_path, monkeypatch):
    def broken(self, ctx, w):
        r = w.value_range
        return Fix("safe", "Break it", (Edit(r.line, r.column, r.line, r.column, "tf.compat.as_bytes(("),))

    monkeypatch.setattr(BytesRequired, "_bytes_fix", broken)
    path = script(tmp_path, SESSION + "npu.parameter_map['dump_path'].s = '/tmp/dumps'\n")
    job = job_for(path)
    fx = fix_file(job, analyze_file(job), unsafe=False)
    assert not fx.changed and [r.reason for r in fx.rejected] == [NOT_VALID]


# Two dead writes of one option: removing both would empty the `if` block (not valid Python), removing
# the one after the block alone is fine. Both fixes used to be refused together.
DEAD_IN_BLOCK_AND_AFTER = (
    SESSION
    + "if FLAGS.fast:\n"
    "    npu.parameter_map['mix_compile_mode'].b = True\n"
    "npu.parameter_map['mix_compile_mode'].b = False\n"
    "npu.parameter_map['mix_compile_mode'].b = True\n"
)


def test_removals_of_one_option_that_fail_together_are_tried_one_by_one(tmp_path):
    path = script(tmp_path, DEAD_IN_BLOCK_AND_AFTER)
    job = job_for(path)
    report = analyze_file(job)
    dead = [f for f in report.findings if f.code == "NPU305"]
    assert len(dead) == 2 and all(f.fix is not None for f in dead)
    fx = fix_file(job, report, unsafe=False)
    fixed = fx.fixed.decode("utf-8")
    lines = fixed.splitlines()
    block = lines.index("if FLAGS.fast:")
    # the write after the block is gone; the block keeps its only statement (its removal is refused)
    assert lines[block + 1:] == ["    npu.parameter_map['mix_compile_mode'].b = True",
                                 "npu.parameter_map['mix_compile_mode'].b = True"]
    assert [f.line for f in fx.applied] == [block + 3]
    assert [r.reason for r in fx.rejected] == [NOT_VALID]
    # idempotent: a second --fix finds nothing left to do
    path.write_bytes(fx.fixed)
    again = fix_file(job, analyze_file(job), unsafe=True)
    assert not again.applied and not again.changed


# The same, with a fix that writes code among the option's fixes (a str wrapped for a bytes field): the
# removal that would empty the block used to take the option's other fixes down with it, and a second
# --fix then applied them (found by the long property tests, tests/test_fuzz.py).
DEAD_IN_BLOCK_THEN_WRAPPED = (
    SESSION
    + "if FLAGS.x:\n"
    "    npu.parameter_map['HCCL_algorithm'].s = '0'\n"
    "npu.parameter_map['HCCL_algorithm'].b = False\n"
    "npu.parameter_map['HCCL_algorithm'].s = ''\n"
)


def test_a_removal_that_fails_alone_does_not_hold_back_the_options_other_fixes(tmp_path):
    path = script(tmp_path, DEAD_IN_BLOCK_THEN_WRAPPED)
    job = job_for(path)
    fx = fix_file(job, analyze_file(job), unsafe=False)
    lines = fx.fixed.decode("utf-8").splitlines()
    block = lines.index("if FLAGS.x:")
    # the dead `.b = False` is gone and both strings are wrapped; the block keeps its only statement
    assert lines[block + 1:] == ["    npu.parameter_map['HCCL_algorithm'].s = tf.compat.as_bytes('0')",
                                 "npu.parameter_map['HCCL_algorithm'].s = tf.compat.as_bytes('')"]
    assert sorted(f.code for f in fx.applied) == ["NPU103", "NPU103", "NPU305"]
    assert [(r.finding.code, r.reason) for r in fx.rejected] == [("NPU305", NOT_VALID)]
    path.write_bytes(fx.fixed)
    again = fix_file(job, analyze_file(job), unsafe=True)
    assert not again.applied and not again.changed


# -- 2. a file that was not written keeps its findings, and the exit code says so -------------------


def test_read_only_file_is_refused_and_keeps_its_findings(tmp_path):
    path = script(tmp_path, BYTES_AND_MIGRATION)
    os.chmod(path, 0o444)
    before = path.read_bytes()
    proc = run(path, "--fix", "--format", "json", "--no-cache")
    assert proc.returncode == 2
    assert path.read_bytes() == before and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert "read-only (mode 0444); not replaced" in text_of(proc, "stderr")
    codes = {d["code"] for d in json.loads(proc.stdout)["diagnostics"]}
    assert {"NPU103", "NPU501"} <= codes


def test_write_error_keeps_findings_and_fails_the_run(tmp_path, monkeypatch, capsys):
    import npu_audit.fix.atomic as atomic

    def denied(*_args, **_kw):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(atomic, "replace_file", denied)
    path = script(tmp_path, BYTES_AND_MIGRATION)
    code = cli.main([str(path), "--fix", "--no-cache", "--jobs", "1"])
    out, err = capsys.readouterr()
    assert code == 2
    assert "No problems found" not in out and "NPU103" in out
    assert "not fixed: could not write it: Permission denied" in err
    assert "Fixed 0 findings in 0 files." in err


# -- 3. never write outside the given paths, keep owner, mode and links ----------------------------


def test_symlinks_leading_outside_are_not_written(tmp_path):
    outside = tmp_path / "outside"
    tree = tmp_path / "tree"
    tree.mkdir()
    target = script(outside, BYTES_AND_MIGRATION, "shared.py")
    script(outside / "pkg", BYTES_AND_MIGRATION, "inner.py")
    os.symlink(target, tree / "link.py")
    os.symlink(outside / "pkg", tree / "pkg")
    mine = script(tree, BYTES_AND_MIGRATION, "mine.py")
    before = {p: p.read_bytes() for p in (target, outside / "pkg" / "inner.py")}
    proc = run(tree, "--fix", "--no-cache")
    err = text_of(proc, "stderr")
    assert proc.returncode == 2
    for p, data in before.items():
        assert p.read_bytes() == data, p
    assert err.count("leads outside the checked paths") == 2
    assert "tf.compat.as_bytes(" in mine.read_text()  # the file inside is fixed


def test_symlink_inside_the_tree_is_followed_once(tmp_path):
    tree = tmp_path / "tree"
    real = script(tree, BYTES_AND_MIGRATION, "real.py")
    os.symlink(real, tree / "alias.py")
    proc = run(tree, "--fix", "--no-cache")
    assert proc.returncode in (0, 1), text_of(proc, "stderr")
    assert (tree / "alias.py").is_symlink() and "tf.compat.as_bytes(" in real.read_text()


def test_hard_links_are_kept_or_refused(tmp_path):
    path = script(tmp_path / "a", BYTES_AND_MIGRATION)
    other = tmp_path / "b.py"
    os.link(path, other)
    proc = run(path, "--fix", "--no-cache")
    assert proc.returncode == 2 and "hard links" in text_of(proc, "stderr")
    assert os.stat(path).st_ino == os.stat(other).st_ino and path.read_text() == BYTES_AND_MIGRATION


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_owner_group_and_mode_are_kept(tmp_path):
    path = script(tmp_path, BYTES_AND_MIGRATION)
    os.chown(path, 12345, 23456)
    os.chmod(path, 0o640)
    proc = run(path, "--fix", "--no-cache")
    assert proc.returncode in (0, 1), text_of(proc, "stderr")
    st = path.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (12345, 23456, 0o640)
    assert "tf.compat.as_bytes(" in path.read_text()


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners")
def test_another_users_file_is_refused(tmp_path, monkeypatch, capsys):
    path = script(tmp_path, BYTES_AND_MIGRATION)
    owner = path.stat().st_uid
    monkeypatch.setattr(os, "geteuid", lambda: owner + 4242)  # run as someone else (not root)
    code = cli.main([str(path), "--fix", "--no-cache", "--jobs", "1"])
    assert code == 2 and path.read_text() == BYTES_AND_MIGRATION
    assert f"belongs to another user (uid {owner}); replacing it would change its owner" in capsys.readouterr().err


# -- 4. counts, diffs, cache and progress ----------------------------------------------------------


def test_fixable_count_is_what_fix_fixes(tmp_path):
    # two findings share the value literal (NPU103, and NPU501 with NPU306's rename folded in): one migration
    # fixes both
    path = script(tmp_path, BYTES_AND_MIGRATION + "npu.parameter_map['enable_dump'].i = 1\n")
    check = text_of(run(path, "--no-cache"))
    promised = int(re.search(r"^(\d+) fixable with `npu-audit --fix`", check, re.M).group(1))
    proc = run(path, "--fix", "--no-cache")
    fixed = int(re.search(r"^Fixed (\d+) findings? in 1 file\.$", text_of(proc, "stderr"), re.M).group(1))
    assert promised == fixed == 3
    after = json.loads(run(path, "--format", "json", "--no-cache").stdout)
    assert not [d for d in after["diagnostics"] if d["fix"] and d["fix"]["applicability"] == "safe"]
    diff = run(script(tmp_path / "again", BYTES_AND_MIGRATION), "--diff", "--no-cache")
    assert "Would fix 2 findings in 1 file." in text_of(diff, "stderr")


# The first write's value has a newer name, which the fix writes; precision_mode stays (the second write
# has no precision_mode_v2 equivalent), so the finding stays too, reworded. Its fix was applied all the same.
RENAMED_BUT_KEPT = (
    SESSION
    + "npu.parameter_map['precision_mode'].s = tf.compat.as_bytes('allow_mix_precision')\n"
    "npu.parameter_map['precision_mode'].s = tf.compat.as_bytes('allow_fp32_to_fp16')\n"
)


def test_a_finding_whose_fix_was_applied_counts_as_fixed_when_it_stays_reworded(tmp_path):
    path = script(tmp_path, RENAMED_BUT_KEPT)
    assert re.search(r"^1 fixable with `npu-audit --fix`", text_of(run(path, "--no-cache")), re.M)
    proc = run(path, "--fix", "--no-cache")
    assert "Fixed 1 finding in 1 file." in text_of(proc, "stderr")
    assert "tf.compat.as_bytes('allow_mix_precision_fp16')" in path.read_text()
    after = json.loads(run(path, "--format", "json", "--no-cache").stdout)["diagnostics"]
    assert [d["line"] for d in after if d["code"] == "NPU501"] == [6, 7]  # (still reported, without the rename)


def _apply(patch: bytes, folder: Path, tool: str) -> None:
    if tool == "patch":
        cmd = ["patch", "-p1", "--batch", "--quiet"]
    else:
        cmd = ["git", "apply", "--unsafe-paths", "-"]
    proc = subprocess.run(cmd, input=patch, cwd=folder, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode() + proc.stdout.decode()


@pytest.mark.parametrize("tool", ["patch", "git"])
@pytest.mark.parametrize("name,encoding,marker", [
    ("gbk script.py", "gbk", "# 混合精度"),
    ("latin.py", "latin-1", "# réglage"),
    ("dir with space/run \"q\".py", "utf-8", "# ünï 😀"),
])
def test_diff_applies_in_the_files_encoding(tmp_path, tool, name, encoding, marker):
    if tool == "patch" and shutil.which("patch") is None:
        pytest.skip("GNU patch not installed")
    cookie = f"# -*- coding: {encoding} -*-\n" if encoding != "utf-8" else ""
    text = cookie + BYTES_AND_MIGRATION.replace("'allow_mix_precision'", f"'allow_mix_precision'  {marker}")
    data = text.encode(encoding)
    for folder in ("diffed", "fixed"):
        (tmp_path / folder / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / name).write_bytes(data)
    diff = run(name, "--diff", "--no-cache", cwd=tmp_path / "diffed")
    assert diff.returncode == 1 and diff.stdout
    assert (tmp_path / "diffed" / name).read_bytes() == data  # --diff changes nothing
    assert ("+npu.parameter_map['precision_mode_v2'].s = tf.compat.as_bytes('mixed_float16')  " + marker).encode(
        encoding) in diff.stdout  # the diff is in the file's own bytes
    run(name, "--fix", "--no-cache", cwd=tmp_path / "fixed")
    expected = (tmp_path / "fixed" / name).read_bytes()
    assert expected != data
    _apply(diff.stdout, tmp_path / "diffed", tool)
    assert (tmp_path / "diffed" / name).read_bytes() == expected


def test_diff_creates_new_files_as_patches(tmp_path):
    unsafe = (REPO / "tests" / "fixtures" / "fix" / "unsafe_migrations.py").read_bytes()
    for folder in ("diffed", "fixed"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "t.py").write_bytes(unsafe)
    diff = run("t.py", "--diff", "--unsafe-fixes", "--no-cache", cwd=tmp_path / "diffed")
    assert b"--- /dev/null\n+++ b/t_op_precision.ini\n" in diff.stdout
    run("t.py", "--fix", "--unsafe-fixes", "--no-cache", cwd=tmp_path / "fixed")
    _apply(diff.stdout, tmp_path / "diffed", "git")
    for name in ("t.py", "t_op_precision.ini"):
        assert (tmp_path / "diffed" / name).read_bytes() == (tmp_path / "fixed" / name).read_bytes(), name


def test_fix_and_diff_use_the_cache(tmp_path):
    path = script(tmp_path, BYTES_AND_MIGRATION)
    cache = tmp_path / "cache"
    first = run(path, "--diff", "--cache-dir", cache)
    assert cache.is_dir() and any(cache.iterdir()), "the first analysis of --diff fills the cache"
    again = run(path, "--diff", "--cache-dir", cache)
    assert again.stdout == first.stdout and again.returncode == first.returncode == 1
    fixed = run(path, "--fix", "--cache-dir", cache)
    assert fixed.returncode in (0, 1) and "tf.compat.as_bytes(" in path.read_text()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_shown_while_fixing(tmp_path, monkeypatch):
    for i in range(3):
        script(tmp_path, BYTES_AND_MIGRATION, f"s{i}.py")
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    cli.main([str(tmp_path), "--fix", "--no-cache", "--jobs", "1", "--format", "text"])
    assert "fixing: 3/3 files" in err.getvalue()


# -- 5. suppressions and NPU103 ----------------------------------------------------------------------


def test_suppression_codes_are_case_insensitive(tmp_path):
    text = SESSION + ("npu.parameter_map['hcom_paralel'].b = True  # npu-audit: ignore[npu101]\n"
                      "npu.parameter_map['dump_path'].s = '/tmp/d'  # npu-audit: ignore[Bytes-Required, npu202]\n")
    path = script(tmp_path, text)
    report = json.loads(run(path, "--format", "json", "--no-cache").stdout)
    got = {(d["line"], d["code"]) for d in report["diagnostics"]}
    assert (6, "NPU101") not in got and (7, "NPU103") not in got and (6, "NPU004") not in got
    assert [(d["line"], d["message"]) for d in report["diagnostics"] if d["code"] == "NPU004"] == [
        (7, "unused suppression: nothing to ignore for npu202 on this line")]
    run(path, "--fix", "--no-cache")
    fixed = path.read_text()
    assert "# npu-audit: ignore[npu101]" in fixed and "# npu-audit: ignore[Bytes-Required]" in fixed


def test_bytes_required_on_an_integer_option_moves_the_value_to_i(tmp_path):
    text = SESSION + ("npu.parameter_map['iterations_per_loop'].s = '10'\n"
                      "other = tf.ConfigProto()\n"
                      "npu2 = other.graph_options.rewrite_options.custom_optimizers.add()\n"
                      "npu2.name = 'NpuOptimizer'\n"
                      "npu2.parameter_map['iterations_per_loop'].s = str(4 * 5)\n")
    path = script(tmp_path, text)
    report = json.loads(run(path, "--format", "json", "--no-cache").stdout)
    npu103 = [d for d in report["diagnostics"] if d["code"] == "NPU103"]
    assert len(npu103) == 2
    for d in npu103:
        assert "bytes field" not in d["message"] and "integer option (read from .i)" in d["message"]
        assert d["fix"]["applicability"] == "safe"
    assert run(path, "--fix", "--no-cache").returncode == 0
    fixed = path.read_text()
    assert "npu.parameter_map['iterations_per_loop'].i = 10\n" in fixed
    assert fixed.endswith("npu2.parameter_map['iterations_per_loop'].i = int(str(4 * 5))\n")
    after = json.loads(run(path, "--format", "json", "--no-cache").stdout)
    assert not [d for d in after["diagnostics"] if d["code"] in ("NPU102", "NPU103")]


# -- 6. one pure engine, shared by the language server ---------------------------------------------


def test_fix_package_is_pure():
    for module in (REPO / "npu_audit" / "fix").glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                assert not any(n in ("argparse", "npu_audit.cli") or n.startswith("npu_audit.cli") for n in names), module
                assert not any(n.startswith(("npu_audit.render", "npu_audit.lsp")) for n in names), module
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                assert called not in ("print", "exit", "_exit"), (module, called)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "sys":
                assert node.attr not in ("stdout", "stderr", "exit", "argv"), (module, node.attr)


def _engine_actions(path: Path, text: str, only=None):
    from npu_audit.lsp.analysis import Engine

    engine = Engine(workers=1)
    try:
        job, _ = engine.job(path.as_uri(), text, (str(path.parent),))
        report = analyze_file(job)
        zero = {"start": {"line": 0, "character": 0}, "end": {"line": 10_000, "character": 0}}
        return engine.code_actions(report, path.as_uri(), zero, only, "utf-16", (), text, (str(path.parent),))
    finally:
        engine.shutdown()


def _apply_lsp(text: str, edits: list[dict]) -> str:
    from npu_audit.render.lsp import from_utf16_column

    lines = text.splitlines(keepends=True)

    def offset(p):
        line = lines[p["line"]] if p["line"] < len(lines) else ""
        return sum(len(x) for x in lines[: p["line"]]) + from_utf16_column(line.rstrip("\r\n"), p["character"]) - 1

    for e in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        text = text[: offset(e["range"]["start"])] + e["newText"] + text[offset(e["range"]["end"]):]
    return text


def test_language_server_fix_all_is_the_engine(tmp_path):
    text = "# 中文 😀\n" + BYTES_AND_MIGRATION + "npu.parameter_map['enable_dump'].i = 1\n"
    path = script(tmp_path, text)
    (action,) = _engine_actions(path, text, only=["source.fixAll.npu-audit"])
    uri = path.as_uri()
    got = _apply_lsp(text, action["edit"]["changes"][uri])
    expected = fix_file(job_for(path), None, unsafe=False).fixed_text
    assert got == expected
    assert "npu.parameter_map['precision_mode_v2'].s = tf.compat.as_bytes('mixed_float16')" in got
    assert "['enable_dump'].b = True" in got


def test_language_server_refuses_fixes_the_engine_refuses(tmp_path, monkeypatch):
    monkeypatch.setattr(PreferPrecisionModeV2, "_fix_together", _one_write_migration)
    path = script(tmp_path, DEAD_THEN_FLAG)
    actions = _engine_actions(path, DEAD_THEN_FLAG)
    quick = [a for a in actions if a["kind"] == "quickfix" and a["diagnostics"][0]["code"] == "NPU501"]
    assert quick and all(a["title"].startswith("Suppress") for a in quick)
    fix_all = [a for a in actions if a["kind"] == "source.fixAll.npu-audit"]
    for action in fix_all:
        assert "precision_mode_v2" not in _apply_lsp(DEAD_THEN_FLAG, action["edit"]["changes"][path.as_uri()])


def _dies_on_b(job, report, unsafe):
    if job.file.endswith("b.py"):
        os._exit(9)  # as the out-of-memory killer would
    return fix_file(job, report, unsafe)


def test_a_worker_that_dies_costs_only_its_own_file(tmp_path, monkeypatch):
    import multiprocessing

    import npu_audit.fix.engine as engine

    if multiprocessing.get_start_method() != "fork":
        pytest.skip("the faulty worker is patched in through fork")
    monkeypatch.setattr(engine, "fix_file", _dies_on_b)
    items = []
    for name in ("a.py", "b.py", "c.py"):
        path = script(tmp_path, BYTES_AND_MIGRATION, name)
        items.append((job_for(path), None))
    fixes = engine.fix_files(items, unsafe=False, jobs=2)
    assert [fx.display.rsplit("/", 1)[-1] for fx in fixes] == ["a.py", "b.py", "c.py"]
    assert fixes[0].changed and fixes[2].changed
    assert not fixes[1].changed and fixes[1].problems == [
        "npu-audit's worker process died while fixing this file; left unchanged"]
