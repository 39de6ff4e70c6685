"""npu_audit.text: lines as Python counts them, and one "did you mean" for the command line, the checks,
--explain and the language server."""

from __future__ import annotations

import re

import pytest

from npu_audit import explain
from npu_audit.checks import all_rules
from npu_audit.cli import main
from npu_audit.knowledge.loader import load
from npu_audit.lsp.hover import key_markdown
from npu_audit.text import (
    SUGGESTION_CUTOFF,
    did_you_mean,
    line_starts,
    similar,
    split_lines,
    split_lines_keepends,
    suggestions,
)

SCRIPT = '''import tensorflow as tf
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["{key}"].b = True
'''

# typos of parameter_map keys: close enough to suggest, differing only in case, and one that used to
# be suggested by the editor's hover (similarity 0.69) but not by the command line
TYPOS = ["precison_mode", "PRECISION_MODE", "enable_dump_dbg", "op_debug_lvl", "iterations", "no_such_thing_at_all"]


def _cli_hint(tmp_path, capsys, key: str):
    import json

    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(key=key))
    main([str(path), "--no-cache", "--format", "json", "--select", "unknown-option"])
    report = json.loads(capsys.readouterr().out)
    [finding] = [f for f in report["diagnostics"] if f["code"] == "NPU101"]
    m = re.fullmatch(r"did you mean '(.+)'\?", finding["hint"] or "")
    return m.group(1) if m else None


def _hover_first(kb, key: str):
    text = key_markdown(kb, key, "current")
    m = re.search(r"Did you mean `([^`]+)`", text)
    return m.group(1) if m else None


@pytest.mark.parametrize("typo", TYPOS)
def test_cli_and_language_server_suggest_the_same_key(tmp_path, capsys, typo):
    kb = load()
    cli = _cli_hint(tmp_path, capsys, typo)
    assert cli == _hover_first(kb, typo)
    assert cli == did_you_mean(typo, kb.options)
    # --explain offers the same key first
    kind, found = explain_lookup(kb, typo)
    assert kind is None and (found[:1] == [cli] if cli else cli not in found)


def explain_lookup(kb, query):
    return explain.find_subject(kb, all_rules(), query)


def test_the_suggestions_the_issue_names():
    kb = load()
    assert did_you_mean("precison_mode", kb.options) == "precision_mode"
    assert did_you_mean("PRECISION_MODE", kb.options) == "precision_mode"  # case alone: the best guess
    assert did_you_mean("iterations", kb.options) is None  # 0.69 < SUGGESTION_CUTOFF
    assert SUGGESTION_CUTOFF == 0.75


def test_suggestions_order_and_limit():
    pool = ["precision_mode", "precision_mode_v2", "op_precision_mode", "Precison_Mode"]
    assert suggestions("precison_mode", pool)[0] == "Precison_Mode"  # equal but for case comes first
    assert len(suggestions("precision_mod", pool, n=2)) == 2
    assert suggestions("zzz", pool) == []
    assert did_you_mean("x", []) is None
    assert similar("NpuOptimiser".lower(), "NpuOptimizer".lower())
    assert not similar("adam", "npuoptimizer")


@pytest.mark.parametrize("text, lines", [
    ("", [""]),
    ("a", ["a"]),
    ("a\n", ["a", ""]),
    ("a\r\nb", ["a", "b"]),
    ("a\r\rb\n", ["a", "", "b", ""]),
    # form feed, \x85 and \u2028 do not end a line for Python's tokenizer (str.splitlines says they do)
    ("a\x0cb\u2028c\x85d\ne", ["a\x0cb\u2028c\x85d", "e"]),
])
def test_lines_break_where_python_breaks_them(text, lines):
    assert split_lines(text) == lines
    assert "".join(split_lines_keepends(text)) == text
    assert len(split_lines_keepends(text)) == len(lines) - (1 if lines[-1] == "" else 0)
    starts = line_starts(text)
    assert len(starts) == len(lines)
    assert all(text[start:].startswith(line) for start, line in zip(starts, lines))


def test_lines_break_only_where_python_source_does():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from npu_audit.text import LINE_BREAK

    def reference(text: str) -> list[str]:
        starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
        return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)]) if a < b]

    @settings(max_examples=500, deadline=None)
    @given(st.text(alphabet=st.sampled_from(list("ab \t\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029")), max_size=40))
    def same(text: str) -> None:
        assert split_lines_keepends(text) == reference(text)

    same()
    assert split_lines_keepends("a\x0cb\r\nc\u2028d") == ["a\x0cb\r\n", "c\u2028d"]  # (str.splitlines breaks at \f)


def test_line_starts_are_where_python_source_lines_start():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from npu_audit.text import LINE_BREAK, line_starts, source_lines

    @settings(max_examples=500, deadline=None)
    @given(st.text(alphabet=st.sampled_from(list("ab \t\r\n\v\f\x1c\x85\u2028")), max_size=40))
    def same(text: str) -> None:
        expected = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
        text = "".join(list(text))  # (a new object: not one source_lines has cut)
        assert line_starts(text) == expected
        source_lines(text)  # (now it has: the starts come from its lines)
        assert line_starts(text) == expected

    same()
    assert line_starts("a\nb") == [0, 2] and line_starts("a\r\n") == [0, 3] and line_starts("") == [0]
