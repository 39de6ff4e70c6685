"""Command-line defaults a user relies on: no path checks the current folder (as ruff does; it was a usage
error), ``-`` still reads stdin, and --list-rules says whether each check fixes, and how safely."""

from __future__ import annotations

import io
import json
import re
import sys

import pytest

from npu_audit import explain
from npu_audit.checks import all_rules
from npu_audit.cli import main

BAD = ('import tensorflow as tf\nconfig = tf.ConfigProto()\n'
       'custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n'
       'custom_op.name = "NpuOptimizer"\n'
       'custom_op.parameter_map["precison_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n')


def test_no_path_checks_the_current_folder_like_a_dot(tmp_path, monkeypatch, capsys):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "train.py").write_text(BAD, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["--no-cache", "--format", "concise"]) == 1
    without = capsys.readouterr()
    assert main(["--no-cache", "--format", "concise", "."]) == 1
    with_dot = capsys.readouterr()
    assert "NPU101" in without.out and "precison_mode" in without.out
    assert without.out == with_dot.out and "error" not in without.err


def test_no_path_in_a_clean_folder_exits_zero(tmp_path, monkeypatch, capsys):
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["--no-cache"]) == 0
    assert "1 file checked" in capsys.readouterr().out


def test_no_path_with_fix_fixes_the_current_folder(tmp_path, monkeypatch, capsys):
    script = tmp_path / "train.py"
    script.write_text(BAD.replace('tf.compat.as_bytes("allow_mix_precision")', '"allow_mix_precision"')
                      .replace("precison_mode", "precision_mode_v2").replace("allow_mix_precision", "mixed_float16"),
                      encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    main(["--no-cache", "--fix"])
    capsys.readouterr()
    assert 'tf.compat.as_bytes("mixed_float16")' in script.read_text(encoding="utf-8")  # NPU103's safe fix


@pytest.mark.parametrize("argv", [["-"], ["--stdin-filename", "train.py"]])
def test_stdin_is_still_read_with_a_dash_or_stdin_filename(tmp_path, monkeypatch, capsys, argv):
    (tmp_path / "other.py").write_text("x = 1\n", encoding="utf-8")  # not checked: stdin is
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BAD.encode())))
    assert main(["--no-cache", "--format", "concise", *argv]) == 1
    out = capsys.readouterr().out
    assert "precison_mode" in out and "other.py" not in out


def test_list_rules_text_has_a_fix_column(capsys):
    assert main(["--list-rules"]) == 0
    out = capsys.readouterr().out
    header, _, rest = out.partition("\n\n")
    assert header == "Checks (code, name, severity, fix, summary):"
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^  (NPU\d{3})  \S+ +\S+ +(\S+)  ", rest, re.M)}
    assert len(rows) == len(all_rules())
    assert rows["NPU001"] == "-"  # syntax-error: nothing to fix
    assert rows["NPU103"] == "safe"  # bytes-required: tf.compat.as_bytes(...)
    assert rows["NPU101"] == "unsafe"  # unknown-option: the renamed key changes what the adapter reads
    assert "Fix: safe = --fix applies it; unsafe = applied only with --fix --unsafe-fixes" in out


def test_list_rules_json_adds_fix_kind_and_keeps_its_fields(capsys):
    assert main(["--list-rules", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["version"] == 1
    by_code = {r["code"]: r for r in data["rules"]}
    for rule in by_code.values():
        assert {"code", "name", "severity", "summary", "fix", "fix_applicability", "fix_safety", "url"} <= set(rule)
        assert rule["fix_kind"] in explain.FIX_KINDS
        assert (rule["fix_kind"] == "none") == (rule["fix"] == "none")
    assert by_code["NPU004"]["fix_kind"] == "safe" and by_code["NPU202"]["fix_kind"] == "unsafe"
    assert by_code["NPU105"]["fix_kind"] == "none"


def test_fix_kind_names_a_check_with_both_kinds_of_fix():
    class Both:
        fix = "sometimes"
        fix_applicability = ("safe", "unsafe")

    assert explain.fix_kind(Both()) == "safe+unsafe"
