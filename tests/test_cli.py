"""The shipped CLI as a subprocess: exit codes, formats, configuration, fixes on disk, cache, bad input."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from npu_audit.cli import main

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "train_sample.py"
CHECK_FIXTURES = REPO / "tests" / "fixtures" / "checks"
GOLDEN = REPO / "tests" / "golden"

GOOD = '''import tensorflow as tf
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["precision_mode_v2"].s = tf.compat.as_bytes("mixed_float16")
'''
BAD = GOOD + 'custom_op.parameter_map["precison_mode"].s = "allow_mix_precision"\n'


def run(*args, cwd=None, env=None):
    full_env = dict(os.environ, NO_COLOR="1", **(env or {}))
    return subprocess.run([sys.executable, "-m", "npu_audit", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=full_env, timeout=300)


def test_version_and_help():
    assert run("--version").stdout.startswith("npu-audit ")
    assert "Exit codes" in run("--help").stdout


def test_exit_codes(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    assert run(tmp_path / "good.py", "--no-cache").returncode == 0
    assert run(tmp_path / "bad.py", "--no-cache").returncode == 1
    assert run(tmp_path / "missing.py").returncode == 1  # a finding for that path (NPU002), see below
    assert run(tmp_path, "--release", "future").returncode == 2
    assert run(tmp_path, "--select", "no-such-check").returncode == 2
    info_only = tmp_path / "info"
    info_only.mkdir()
    (info_only / "a.py").write_text(GOOD.replace("precision_mode_v2\"].s = tf.compat.as_bytes(\"mixed_float16\")",
                                                 "precision_mode\"].s = tf.compat.as_bytes(\"must_keep_origin_dtype\")"))
    proc = run(info_only, "--no-cache")
    assert "NPU501" in proc.stdout and proc.returncode == 0  # info findings do not fail the run


def test_sample_text_and_json_golden():
    text = run("examples/train_sample.py", "--no-cache", cwd=REPO)
    assert text.returncode == 1
    data = run("examples/train_sample.py", "--no-cache", "--format", "json", cwd=REPO)
    for name, out in (("cli_sample.txt", text.stdout), ("cli_sample.json", data.stdout)):
        golden = GOLDEN / name
        if os.environ.get("NPU_AUDIT_UPDATE_GOLDEN"):
            golden.write_text(out, encoding="utf-8")
        assert out == golden.read_text(encoding="utf-8"), name
    parsed = json.loads(data.stdout)
    assert parsed["version"] == 1 and parsed["summary"]["findings"] == len(parsed["diagnostics"])


def test_folder_of_fixtures_all_formats_agree():
    results = {}
    for fmt in ("json", "sarif", "github", "lsp"):
        proc = run(CHECK_FIXTURES, "--no-cache", "--format", fmt, "--jobs", "2")
        assert proc.returncode == 1, proc.stderr
        results[fmt] = proc.stdout
    diagnostics = json.loads(results["json"])["diagnostics"]
    assert len(diagnostics) > 40
    sarif = json.loads(results["sarif"])["runs"][0]["results"]
    lsp = [d for f in json.loads(results["lsp"])["files"] for d in f["diagnostics"]]
    github = [line for line in results["github"].splitlines() if line.startswith("::")]
    assert len(sarif) == len(lsp) == len(github) == len(diagnostics)


def test_bad_files_are_reported_and_the_run_goes_on(tmp_path):
    (tmp_path / "ok.py").write_text(BAD)
    (tmp_path / "py2.py").write_text('print "hello"\ncustom_op.parameter_map["use_off_line"].b = True\n')
    (tmp_path / "py2_not_npu.py").write_text('print "no npu configuration here"\n')
    (tmp_path / "blob.py").write_bytes(b"\x00\x01\x02parameter_map")
    (tmp_path / "latin.py").write_bytes(b"x = '\xe9'\n")
    (tmp_path / "dir with space").mkdir()
    (tmp_path / "dir with space" / "\u8bad\u7ec3.py").write_text(BAD)
    os.symlink(tmp_path, tmp_path / "dir with space" / "loop")
    proc = run(tmp_path, "--no-cache", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    by_path = {}
    for d in json.loads(proc.stdout)["diagnostics"]:
        by_path.setdefault(Path(d["path"]).name, set()).add(d["name"])
    assert "syntax-error" in by_path["py2.py"]
    assert "py2_not_npu.py" not in by_path  # only files that can hold NPU configuration are parsed
    assert "unreadable-file" in by_path["blob.py"] and "unreadable-file" in by_path["latin.py"]
    assert "unknown-option" in by_path["ok.py"] and "unknown-option" in by_path["\u8bad\u7ec3.py"]


def test_select_ignore_and_inline_suppression(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    assert "NPU103" not in run(tmp_path, "--no-cache", "--ignore", "bytes-required").stdout
    only = run(tmp_path, "--no-cache", "--select", "NPU1", "--format", "json")
    assert {d["code"][:4] for d in json.loads(only.stdout)["diagnostics"]} == {"NPU1"}
    (tmp_path / "bad.py").write_text(BAD.rstrip("\n") + "  # npu-audit: ignore[unknown-option, NPU103]\n")
    assert run(tmp_path, "--no-cache").returncode == 0


def test_pyproject_nearest_wins_and_per_file_ignores(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.npu-audit]\nignore = ["unknown-option"]\n')
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[tool.npu-audit]\nselect = ["NPU1"]\n[tool.npu-audit.per-file-ignores]\n'
                                        '"*_ok.py" = ["bytes-required"]\n')
    (tmp_path / "top.py").write_text(BAD)
    (sub / "inner.py").write_text(BAD)
    (sub / "inner_ok.py").write_text(BAD)
    data = json.loads(run(tmp_path, "--no-cache", "--format", "json").stdout)["diagnostics"]
    got = {(Path(d["path"]).name, d["code"]) for d in data}
    assert ("top.py", "NPU101") not in got and ("top.py", "NPU103") in got
    assert ("inner.py", "NPU101") in got and ("inner.py", "NPU103") in got
    assert ("inner_ok.py", "NPU103") not in got
    assert run(tmp_path, "--no-cache", "--isolated", "--format", "json").stdout.count("NPU101") == 3
    (tmp_path / "pyproject.toml").write_text('[tool.npu-audit]\nrelease = "future"\n')
    proc = run(tmp_path / "top.py", "--no-cache")
    assert proc.returncode == 2 and "release" in proc.stderr


def test_fix_writes_atomically_keeps_mode_and_diff_writes_nothing(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(BAD)
    os.chmod(script, 0o751)
    before = script.read_bytes()
    diff = run(script, "--diff")
    assert diff.returncode == 1 and "+custom_op.parameter_map[\"precison_mode\"].s = tf.compat.as_bytes(" in diff.stdout
    assert script.read_bytes() == before
    fixed = run(script, "--fix")
    assert fixed.returncode == 1  # the unknown key remains (its fix is unsafe)
    assert "tf.compat.as_bytes(\"allow_mix_precision\")" in script.read_text()
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".npu-audit-")]
    unsafe = run(script, "--fix", "--unsafe-fixes")
    assert unsafe.returncode == 0, unsafe.stdout
    assert "precision_mode" in script.read_text() and "precison" not in script.read_text()
    assert run(script, "--fix", "--unsafe-fixes").returncode == 0 and "Fixed 0 findings" in run(script, "--fix").stderr


def test_show_config_names_a_config_object_no_run_config_takes(tmp_path):
    (tmp_path / "dump.py").write_text("from npu_bridge.npu_init import *\n\n\ndef dump_settings():\n"
                                      "    return DumpConfig(enable_dump=True, dump_path='/tmp/d')\n")
    cfg = json.loads(run(tmp_path, "--show-config", "--format", "json", "--no-cache").stdout)
    (config,) = cfg["configs"]
    assert config["kind"] == "config-object" and config["object"] == "DumpConfig"
    assert config["entries"][0]["options"]["enable_dump"]["value"] is True
    table = run(tmp_path, "--show-config", "--no-cache").stdout
    assert "DumpConfig(...) that no NPURunConfig read here takes" in table, table


def test_show_config_and_knowledge_outputs(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    cfg = json.loads(run(tmp_path, "--show-config", "--format", "json").stdout)
    assert cfg["version"] == 1
    options = cfg["configs"][0]["entries"][0]["options"]
    assert options["precision_mode_v2"]["value"] == "mixed_float16" and options["precision_mode_v2"]["line"] == 5
    table = run(tmp_path, "--show-config", "--product", "atlas-a2", "--scenario", "training").stdout
    assert "precision_mode_v2" in table and "default" in table
    rules = json.loads(run("--list-rules", "--format", "json").stdout)
    assert len(rules["options"]) == 106 and {r["name"] for r in rules["rules"]} >= {"unknown-option", "no-effect"}
    explained = run("--explain", "precision_mode").stdout
    assert "precision_mode_v2" in explained and "mixed_float16" in explained and "must_keep_origin_dtype" in explained
    assert "What it does" in run("--explain", "NPU101").stdout
    assert run("--explain", "nonsense_key").returncode == 2


def test_show_config_and_diff_say_what_to_do_with_a_file_they_cannot_read(tmp_path):
    """--show-config and --diff print a file problem as one line on stderr: the hint comes with it (it
    says what to do: raise the size limit; declare the encoding of the GBK comment, whose bytes stop --diff)."""
    (tmp_path / "big.py").write_text(BAD)
    shown = run(tmp_path / "big.py", "--show-config", "--max-file-size", "10", "--no-cache")
    assert shown.returncode == 1 and "file too large to analyse" in shown.stderr
    assert "(hint: to analyse it, raise the limit with --max-file-size BYTES" in shown.stderr
    (tmp_path / "gbk.py").write_bytes(BAD.encode() + "# 中文注释\n".encode("gbk"))
    diffed = run(tmp_path / "gbk.py", "--diff", "--no-cache")
    assert "not fixed: not valid utf-8" in diffed.stderr
    assert "(hint: if the text is Chinese (the bytes decode as GBK), declare '# -*- coding: gbk -*-'" in diffed.stderr


def test_cache_gives_the_same_answer_and_notices_changes(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    cache = tmp_path / ".cache"
    first = run(tmp_path / "bad.py", "--cache-dir", cache, "--format", "json")
    second = run(tmp_path / "bad.py", "--cache-dir", cache, "--format", "json")
    assert first.stdout == second.stdout and any(cache.glob("results-v*.sqlite3"))
    (tmp_path / "bad.py").write_text(GOOD)
    assert run(tmp_path / "bad.py", "--cache-dir", cache).returncode == 0


def test_helper_module_change_invalidates_cached_caller(tmp_path):
    (tmp_path / "helpers.py").write_text('MODE = "allow_mix_precision_fp16"\n')
    (tmp_path / "train.py").write_text(GOOD.replace('tf.compat.as_bytes("mixed_float16")', "tf.compat.as_bytes(MODE)")
                                       .replace("precision_mode_v2", "precision_mode")
                                       .replace("import tensorflow as tf", "import tensorflow as tf\nfrom helpers import MODE"))
    cache = tmp_path / ".cache"
    assert run(tmp_path, "--cache-dir", cache).returncode == 0
    (tmp_path / "helpers.py").write_text('MODE = "allow_mix_precision_fp15"\n')
    assert run(tmp_path, "--cache-dir", cache).returncode == 1


def test_concurrent_runs_share_the_cache_safely(tmp_path):
    for i in range(30):
        (tmp_path / f"m{i}.py").write_text(BAD if i % 2 else GOOD)
    cache = tmp_path / ".cache"
    cmd = [sys.executable, "-m", "npu_audit", str(tmp_path), "--cache-dir", str(cache), "--format", "json", "--jobs", "1"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [1, 1, 1, 1], [o[1] for o in outputs]
    first = json.loads(outputs[0][0])["diagnostics"]
    assert all(json.loads(o[0])["diagnostics"] == first for o in outputs)
    assert len(first) == 30  # 15 files x (unknown-option + bytes-required)


# -- configuration: invalid settings are errors, settings come from each file's project root -------------------


def _project(base: Path, table: str) -> Path:
    """A project with a pyproject.toml holding ``table``, a script, a vendored copy and a test."""
    proj = base / "proj"
    for rel in ("train.py", "third_party/vendored.py", "tests/test_train.py", "models/net.py"):
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_text(BAD)
    (proj / "pyproject.toml").write_text(table)
    return proj


BAD_TABLES = [
    ('[tool.npu-audit]\nselect = ["NPU9"]\n', "select", "NPU9"),  # matches no check: would switch every check off
    ('[tool.npu-audit]\nselect = ["N"]\n', "select", "'N'"),  # not a code prefix: matches nothing
    ('[tool.npu-audit]\nignore = ["unknown-opton"]\n', "ignore", "unknown-opton"),
    ('[tool.npu-audit]\nselect = "NPU1"\n', "select", "list"),
    ('[tool.npu-audit]\nselect = []\n', "select", "empty"),
    ('[tool.npu-audit]\nselct = ["NPU1"]\n', "selct", "select"),  # unknown key, with the allowed ones
    ("[tool]\nnpu-audit = 5\n", "tool.npu-audit", "table"),
    ('[tool.npu-audit\nselect = ["NPU1"]\n', "TOML", "line 1"),  # syntax error in a file that holds our table
    ('[tool.npu_audit]\nselect = ["NPU1"]\n', "[tool.npu_audit]", "[tool.npu-audit]"),
    ('[tool.npu-audit]\nrespect-gitignore = "yes"\n', "respect-gitignore", "true or false"),
    ('[tool.npu-audit]\nmax-file-size = -1\n', "max-file-size", "positive"),
    ('[tool.npu-audit]\nexclude = [1]\n', "exclude", "list"),
    ('[tool.npu-audit.per-file-ignores]\n"tests/**" = ["NPU999"]\n', "per-file-ignores", "NPU999"),
    ('[tool.npu-audit.per-file-ignores]\n"tests/**" = "NPU1"\n', "per-file-ignores", "list"),
]


@pytest.mark.parametrize("table, key, detail", BAD_TABLES)
def test_invalid_pyproject_settings_are_errors_naming_file_key_and_allowed(tmp_path, monkeypatch, capsys, table, key,
                                                                          detail):
    proj = _project(tmp_path, table)
    for args, cwd in (((str(proj), "--no-cache"), tmp_path), ((".", "--no-cache", "--format", "json"), proj)):
        monkeypatch.chdir(cwd)
        code = main(list(args))
        out, err = capsys.readouterr()
        assert code == 2 and out == "", (out, err)
        assert "pyproject.toml" in err and key in err and detail in err, err
        assert all(line.startswith("npu-audit: ") for line in err.splitlines()), err  # no traceback
    assert main([str(proj), "--no-cache", "--isolated", "--jobs", "1"]) == 1  # --isolated does not read it


def test_every_configuration_problem_is_listed_at_once(tmp_path):
    proj = _project(tmp_path, '[tool.npu-audit]\nrelease = "future"\nselect = ["NPU9"]\n')
    (proj / "models" / "pyproject.toml").write_text('[tool.npu-audit]\nproduct = "atlas-z9"\n')
    proc = run(proj, "--no-cache")
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("npu-audit: ")]
    assert len(errors) == 3 and "release" in proc.stderr and "NPU9" in proc.stderr and "atlas-z9" in proc.stderr


def test_broken_pyproject_without_npu_audit_settings_is_a_warning(tmp_path):
    proj = _project(tmp_path, '[project\nname = "x"\n')
    proc = run(proj, "--no-cache", "--format", "json")
    assert proc.returncode == 1 and "warning" in proc.stderr and "pyproject.toml" in proc.stderr
    assert len(json.loads(proc.stdout)["diagnostics"]) == 8  # checked with the defaults


def _findings_below(proc, proj: Path, cwd: Path) -> set:
    """(path relative to the project, code) of every finding, whatever the paths were shown relative to."""
    out = set()
    for d in json.loads(proc.stdout)["diagnostics"]:
        path = (cwd / d["path"]).resolve().relative_to(proj.resolve())
        out.add((path.as_posix(), d["code"]))
    return out


def test_settings_are_resolved_from_each_files_project_root_whatever_the_cwd(tmp_path):
    proj = _project(tmp_path, '[tool.npu-audit]\nexclude = ["third_party/**"]\n'
                              '[tool.npu-audit.per-file-ignores]\n"tests/**" = ["unknown-option"]\n'
                              '"models" = ["bytes-required"]\n')
    expected = {("train.py", "NPU101"), ("train.py", "NPU103"), ("tests/test_train.py", "NPU103"),
                ("models/net.py", "NPU101")}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    runs = [((".",), proj), (("./",), proj), ((proj,), tmp_path), (("proj",), tmp_path), (("./proj",), tmp_path),
            ((proj,), elsewhere), (("../proj",), elsewhere)]
    for paths, cwd in runs:
        proc = run(*paths, "--no-cache", "--format", "json", cwd=cwd)
        assert proc.returncode == 1, proc.stderr
        assert _findings_below(proc, proj, cwd) == expected, (paths, cwd)
    # a sub-folder given on its own keeps its project's settings; "tests" and "./tests" are the same
    for sub in ("tests", "./tests", "tests/", str(proj / "tests")):
        proc = run(sub, "--no-cache", "--format", "json", cwd=proj)
        assert _findings_below(proc, proj, proj) == {("tests/test_train.py", "NPU103")}, sub
    for sub in ("third_party", "./third_party/vendored.py"):
        proc = run(sub, "--no-cache", "--format", "json", cwd=proj)
        assert proc.returncode == 0 and json.loads(proc.stdout)["diagnostics"] == [], sub  # excluded by its project


def test_nested_project_settings_apply_to_its_own_files(tmp_path):
    proj = _project(tmp_path, '[tool.npu-audit]\nignore = ["unknown-option"]\nexclude = ["third_party/**"]\n')
    (proj / "models" / "pyproject.toml").write_text('[tool.npu-audit]\nignore = ["bytes-required"]\n'
                                                    'exclude = ["net.py"]\n')
    (proj / "models" / "other.py").write_text(BAD)
    for paths, cwd in (((proj,), None), ((".",), proj / "models"), (("models/other.py",), proj)):
        proc = run(*paths, "--no-cache", "--format", "json", cwd=cwd)
        got = {(Path(d["path"]).name, d["code"]) for d in json.loads(proc.stdout)["diagnostics"]}
        assert ("other.py", "NPU101") in got and ("other.py", "NPU103") not in got, paths
        assert not any(name == "net.py" for name, _ in got), paths  # the inner project excludes it
        if paths == (proj,):
            assert ("train.py", "NPU103") in got and ("train.py", "NPU101") not in got


def test_respect_gitignore_of_a_project_and_no_gitignore(tmp_path):
    proj = _project(tmp_path, "[tool.npu-audit]\nrespect-gitignore = false\n")
    (proj / ".gitignore").write_text("models/\n")
    names = lambda proc: {Path(d["path"]).name for d in json.loads(proc.stdout)["diagnostics"]}  # noqa: E731
    assert "net.py" in names(run(proj, "--no-cache", "--format", "json"))
    (proj / "pyproject.toml").write_text("[tool.npu-audit]\nrespect-gitignore = true\n")
    assert "net.py" not in names(run(proj, "--no-cache", "--format", "json"))
    assert "net.py" in names(run(proj, "--no-cache", "--format", "json", "--no-gitignore"))


def test_language_server_applies_per_file_ignores_relative_to_the_project(tmp_path):
    from npu_audit.lsp.analysis import Engine

    proj = _project(tmp_path, '[tool.npu-audit.per-file-ignores]\n"tests/**" = ["unknown-option"]\n')
    engine = Engine(workers=1)
    try:
        for rel, expected in (("tests/test_train.py", {"NPU103"}), ("train.py", {"NPU101", "NPU103"})):
            path = proj / rel
            report, problem, _settings = engine.analyze(path.as_uri(), BAD, (str(proj),))
            assert problem is None and {f.code for f in report.findings} == expected, rel
        (proj / "pyproject.toml").write_text('[tool.npu-audit]\nselect = ["NPU9"]\n')
        _report, problem, _settings = engine.analyze((proj / "train.py").as_uri(), BAD, (str(proj),))
        assert problem is not None and "NPU9" in problem
    finally:
        engine.executor.shutdown()


# -- paths, stdin and the report file -----------------------------------------------------------------------------


def test_missing_path_is_a_finding_and_the_other_paths_are_checked(tmp_path):
    (tmp_path / "ok.py").write_text(BAD)
    proc = run(tmp_path / "missing.py", tmp_path / "ok.py", "--no-cache", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)  # one whole document
    by_name = {}
    for d in data["diagnostics"]:
        by_name.setdefault(Path(d["path"]).name, []).append(d)
    assert [(d["code"], d["name"], d["line"], d["column"]) for d in by_name["missing.py"]] == [
        ("NPU002", "unreadable-file", 1, 1)]
    assert "no such file" in by_name["missing.py"][0]["message"]
    assert {d["code"] for d in by_name["ok.py"]} == {"NPU101", "NPU103"}
    alone = run(tmp_path / "missing.py", "--no-cache")
    assert alone.returncode == 1 and "missing.py:1:1: NPU002 [unreadable-file]" in alone.stdout
    shown = run(tmp_path / "missing.py", tmp_path / "ok.py", "--show-config", "--no-cache")
    assert shown.returncode == 1 and "missing.py" in shown.stderr and "precison_mode" in shown.stdout


def test_output_file_usage_errors_and_modes(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    for target in (tmp_path / "no" / "such" / "report.json", tmp_path, tmp_path / "bad.py" / "x.json"):
        proc = run(tmp_path / "bad.py", "--no-cache", "-o", target)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr and "-o" in proc.stderr, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.py"]
    report = tmp_path / "report.json"
    shell = f'umask 027 && "{sys.executable}" -m npu_audit "{tmp_path / "bad.py"}" --no-cache --format json -o "{report}"'
    proc = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    assert stat.S_IMODE(report.stat().st_mode) == 0o640  # 0666 minus the umask, not 0600
    assert json.loads(report.read_text())["summary"]["findings"] == 2
    os.chmod(report, 0o604)
    assert run(tmp_path / "bad.py", "--no-cache", "--format", "concise", "-o", report).returncode == 1
    assert stat.S_IMODE(report.stat().st_mode) == 0o604 and report.read_text().count("\n") == 2
    link = tmp_path / "latest.txt"
    os.symlink(report.name, link)
    assert run(tmp_path / "bad.py", "--no-cache", "-o", link).returncode == 1
    assert link.is_symlink() and "Found 2 errors" in report.read_text()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def run_stdin(data: str, *args, cwd=None):
    return subprocess.run([sys.executable, "-m", "npu_audit", *map(str, args)], input=data, capture_output=True,
                          text=True, cwd=cwd, env=dict(os.environ, NO_COLOR="1"), timeout=300)


def test_stdin_with_stdin_filename_for_display_and_settings(tmp_path):
    proc = run_stdin(BAD, "-", "--format", "concise", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout.startswith("-:6:25: NPU101 [unknown-option] "), proc.stdout
    proj = _project(tmp_path, '[tool.npu-audit.per-file-ignores]\n"tests/**" = ["unknown-option"]\n')
    named = run_stdin(BAD, "-", "--stdin-filename", "proj/tests/test_new.py", "--format", "json", cwd=tmp_path)
    assert named.returncode == 1
    assert {(d["path"], d["code"]) for d in json.loads(named.stdout)["diagnostics"]} == {("proj/tests/test_new.py", "NPU103")}
    clean = run_stdin(GOOD, "--stdin-filename", "train.py", cwd=proj)  # --stdin-filename alone reads stdin too
    assert clean.returncode == 0 and "No problems found" in clean.stdout
    assert run_stdin(BAD, "-", tmp_path / "x.py").returncode == 2  # stdin and paths do not mix
    assert run_stdin(BAD, "-", "--fix").returncode == 2


def test_exit_zero(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    proc = run(tmp_path / "bad.py", "--no-cache", "--exit-zero")
    assert proc.returncode == 0 and "NPU101" in proc.stdout
    assert run(tmp_path / "bad.py", "--exit-zero", "--release", "future").returncode == 2  # errors stay errors


def test_concise_format_and_statistics_in_json(tmp_path):
    text = run("examples/train_sample.py", "--no-cache", "--format", "concise", cwd=REPO)
    golden = GOLDEN / "cli_sample_concise.txt"
    if os.environ.get("NPU_AUDIT_UPDATE_GOLDEN"):
        golden.write_text(text.stdout, encoding="utf-8")
    assert text.returncode == 1 and text.stdout == golden.read_text(encoding="utf-8")
    data = json.loads(run("examples/train_sample.py", "--no-cache", "--format", "json", cwd=REPO).stdout)
    assert len(text.stdout.splitlines()) == len(data["diagnostics"])
    assert "statistics" not in data["summary"]  # only on request
    stats = json.loads(run("examples/train_sample.py", "--no-cache", "--format", "json", "--statistics", cwd=REPO).stdout)
    assert stats["diagnostics"] == data["diagnostics"]
    rows = stats["summary"]["statistics"]
    counts: dict = {}
    for d in data["diagnostics"]:
        counts[d["code"]] = counts.get(d["code"], 0) + 1
    assert {r["code"]: r["count"] for r in rows} == counts
    assert [r["count"] for r in rows] == sorted((r["count"] for r in rows), reverse=True)
    assert sum(r["fixable"] for r in rows) == data["summary"]["fixable"]
    assert run("examples/train_sample.py", "--format", "sarif", "--statistics", cwd=REPO).returncode == 2


def test_cache_respects_select_ignore_and_per_file_ignores(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    cache = tmp_path / ".cache"

    def codes(*args):
        proc = run(tmp_path / "bad.py", "--cache-dir", cache, "--format", "json", *args)
        return {d["code"] for d in json.loads(proc.stdout)["diagnostics"]}

    assert codes() == {"NPU101", "NPU103"}
    assert codes("--ignore", "unknown-option") == {"NPU103"}  # not the cached answer of the first run
    assert codes("--select", "NPU101") == {"NPU101"}
    (tmp_path / "pyproject.toml").write_text('[tool.npu-audit.per-file-ignores]\n"bad.py" = ["NPU103"]\n')
    assert codes() == {"NPU101"}


@pytest.mark.skipif(any(k.startswith(("COV_CORE_", "COVERAGE_")) for k in os.environ),
                    reason="coverage measured in subprocesses loads sqlite3 into them")
def test_one_file_without_cache_loads_only_what_it_needs(tmp_path):
    """A one-file run without cache is what pre-commit and editors pay for on every file: it must not load
    the cache's database, the gitignore pattern library, the TOML reader or the graph library, none of
    which such a run uses, nor ``tempfile``, used only to write the knowledge base's snapshot.
    ``--isolated``: no pyproject.toml above the temporary folder is read. The knowledge base's snapshot
    lives in the test's own cache folder, written by a first run (a run without a snapshot builds the
    knowledge base from rules/*.toml, with the TOML reader). The run itself must still find the typo."""
    script = tmp_path / "train.py"
    script.write_text(BAD, encoding="utf-8")
    probe = (
        "import sys, runpy\n"
        f"sys.argv = ['npu-audit', '--no-cache', '--isolated', '--format', 'json', {str(script)!r}]\n"
        "try:\n"
        "    runpy.run_module('npu_audit', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "heavy = sorted(m for m in ('sqlite3', 'pathspec', 'tomllib', 'tomli', 'networkx', 'tempfile')\n"
        "               if m in sys.modules)\n"
        "print('@@', code, ','.join(heavy))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NPU_AUDIT_NO_KB_SNAPSHOT"}
    env.update(NO_COLOR="1", XDG_CACHE_HOME=str(tmp_path / "cache"))
    for attempt in ("first run: writes the snapshot", "second run: the one measured"):
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                              timeout=300, env=env)
        report, _, tail = done.stdout.rpartition("@@")
        code, _, heavy = tail.strip().partition(" ")
        assert code == "1", (attempt, done.stderr)
        assert "precison_mode" in report
    assert (tmp_path / "cache" / "npu-audit").is_dir()
    assert heavy == "", f"loaded without need: {heavy}"


@pytest.mark.parametrize("pattern", ["!", "\\"])
def test_an_exclude_pattern_gitignore_cannot_read_is_a_usage_error(tmp_path, pattern):
    """A pattern the gitignore syntax cannot read (a lone ``!`` or ``\\``) stopped the walk with the pattern
    library's traceback and exit code 1, the code of a run with findings. It is a usage error (exit 2) that
    names the pattern, on the command line and in pyproject.toml alike; the other patterns still work."""
    (tmp_path / "train.py").write_text(GOOD, encoding="utf-8")
    done = run("--no-cache", "--exclude", pattern, "train.py", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"--exclude {pattern!r} is not a gitignore-style pattern" in done.stderr
    assert "Traceback" not in done.stderr

    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(BAD, encoding="utf-8")
    (project / "pyproject.toml").write_text(
        f'[tool.npu-audit]\nexclude = ["build/", {json.dumps(pattern)}]\n', encoding="utf-8")
    done = run("--no-cache", "project", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "pyproject.toml: [tool.npu-audit] exclude:" in done.stderr and repr(pattern) in done.stderr
    assert "Traceback" not in done.stderr

    (project / "pyproject.toml").write_text('[tool.npu-audit]\nexclude = ["build/", "# a comment"]\n',
                                            encoding="utf-8")
    assert run("--no-cache", "project", cwd=tmp_path).returncode == 1  # (the typo in train.py)


def test_a_negative_jobs_count_is_a_usage_error(tmp_path):
    """``--jobs -3`` was taken silently as 0 (one worker per core); it is a usage error that says what to
    give, and 0 still means one worker per core."""
    (tmp_path / "train.py").write_text(BAD, encoding="utf-8")
    done = run("--no-cache", "--jobs", "-3", "train.py", cwd=tmp_path)
    assert done.returncode == 2 and "--jobs -3: give a number of worker processes" in done.stderr
    assert run("--no-cache", "--jobs", "0", "train.py", cwd=tmp_path).returncode == 1
