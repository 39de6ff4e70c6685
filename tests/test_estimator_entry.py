"""rules/estimator_entry.toml: what NPUEstimator's appended NpuOptimizer entry writes for an NPURunConfig
keyword left unset, per release, and how the loader holds the table to its schema and to the other tables."""

from __future__ import annotations

import shutil

import pytest

from npu_audit.knowledge.loader import KnowledgeBaseError, load, rules_dir

RULES = rules_dir()


def _row(release, key):
    return next(w for w in load().estimator.writes if w.release == release and w.key == key)


def test_legacy_estimator_writes_its_precision_mode_by_scenario():
    row = _row("legacy", "precision_mode")
    assert row.written and row.kwarg == "precision_mode" and row.field == "s" and row.severity == "error"
    assert [(v.value, v.when_key, v.when_truthy) for v in row.values] == [
        ("allow_fp32_to_fp16", "graph_run_mode", True), ("force_fp16", "graph_run_mode", False)]
    # every row says where in the adapter's history it is seen
    assert all(s.repo and len(s.commit) == 40 and s.line > 0 for s in row.sources)
    assert row.cite[0].adapter.startswith("tf_adapter/python/npu_bridge/estimator/npu/npu_estimator.py:")


def test_current_estimator_writes_no_default_for_these_keywords():
    """The current adapter writes precision_mode, op_debug_level and variable_format_optimize only when given:
    the table says so, and npurunconfig.toml (the current adapter) writes no default for them."""
    kb = load()
    assert kb.estimator.for_release("current") == ()
    for key in ("precision_mode", "op_debug_level", "variable_format_optimize"):
        assert _row("current", key).written is False
        spec = kb.runconfig.kwargs[key]
        assert spec.written == "if-not-none" and spec.default is None


@pytest.mark.parametrize("old,new,problem", [
    ('key = "precision_mode"\nwritten = true', 'key = "precison_mode"\nwritten = true', "is not an option"),
    ('kwarg = "op_debug_level"\nkey = "op_debug_level"\nwritten = true',
     'kwarg = "op_debug_level"\nkey = "variable_format_optimize"\nwritten = true', "writes 'op_debug_level'"),
    ('when = { key = "graph_run_mode", truthy = true }', 'when = { key = "graph_mode", truthy = true }', "when.key"),
    ('severity = "warning"', 'severity = "fatal"', "'fatal' is not one of"),
    ('commit = "36bfa870d08b1cf5b098925e69a036c84627fda7"', 'commit = "36bfa870"', "does not match"),
    ('release = "current"\nkwarg = "precision_mode"\nkey = "precision_mode"\nwritten = false\n',
     'release = "current"\nkwarg = "precision_mode"\nkey = "precision_mode"\nwritten = false\nseverity = "error"\n', ""),
])
def test_a_broken_row_is_rejected_with_the_file_and_the_row(tmp_path, old, new, problem):
    broken = tmp_path / "rules"
    shutil.copytree(RULES, broken)
    path = broken / "estimator_entry.toml"
    text = path.read_text(encoding="utf-8")
    assert old in text, f"fixture drifted: {old!r}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(KnowledgeBaseError) as raised:
        load.__wrapped__(str(broken))
    message = str(raised.value)
    assert message.startswith("estimator_entry.toml: [write[") and problem in message, message
