"""An exclude pattern with a '[' that no ']' closes is discarded by git (and by pathspec 1.x), so it
excluded nothing and npu-audit said nothing. It is a configuration error (exit 2) that names the file, the
key and the pattern, as the other invalid settings are; complete ranges and escaped brackets still work."""

from __future__ import annotations

import json

import pytest

from npu_audit.cli import main
from npu_audit.settings import glob_problem

BAD = ('import tensorflow as tf\nconfig = tf.ConfigProto()\n'
       'custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n'
       'custom_op.name = "NpuOptimizer"\n'
       'custom_op.parameter_map["precison_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n')


@pytest.mark.parametrize("pattern", ["[", "data[0-9", "a/[!", "x[]", "[^]"])
def test_an_unclosed_range_in_pyproject_exclude_is_a_configuration_error(tmp_path, monkeypatch, capsys, pattern):
    (tmp_path / "train.py").write_text(BAD, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(f'[tool.npu-audit]\nexclude = ["build/", {json.dumps(pattern)}]\n',
                                             encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["--no-cache", "."]) == 2
    err = capsys.readouterr().err
    assert f"pyproject.toml: [tool.npu-audit] exclude: {pattern!r} is not a gitignore-style pattern" in err
    assert "no ']' closes" in err and "Traceback" not in err


def test_an_unclosed_range_in_extend_exclude_and_on_the_command_line_is_refused(tmp_path, monkeypatch, capsys):
    (tmp_path / "train.py").write_text(BAD, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.npu-audit]\nextend-exclude = ["gen["]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["--no-cache", "."]) == 2
    assert "[tool.npu-audit] extend-exclude: 'gen[' is not a gitignore-style pattern" in capsys.readouterr().err
    assert main(["--no-cache", "--isolated", "--exclude", "gen[", "."]) == 2
    assert "--exclude 'gen[' is not a gitignore-style pattern" in capsys.readouterr().err


@pytest.mark.parametrize("pattern", ["data[0-9]/", "[]]", "a[!]]b", "\\[", "x[a-z]*.py", "# [ in a comment", ""])
def test_complete_ranges_and_escaped_brackets_are_accepted(pattern):
    assert glob_problem(pattern) is None


def test_a_valid_range_still_excludes(tmp_path, monkeypatch, capsys):
    (tmp_path / "data1").mkdir()
    (tmp_path / "data1" / "train.py").write_text(BAD, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.npu-audit]\nexclude = ["data[0-9]/"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["--no-cache", "."]) == 0, capsys.readouterr()
