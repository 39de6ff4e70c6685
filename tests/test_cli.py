"""The shipped CLI as a subprocess: exit codes, formats, configuration, fixes on disk, cache, bad input."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

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
    assert run(tmp_path / "missing.py").returncode == 2
    assert run(tmp_path, "--release", "future").returncode == 2
    assert run(tmp_path, "--select", "no-such-check").returncode == 2
    assert run().returncode == 2
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
