"""Findings users can trust (issue 12): what runs when, findings once, severities that follow the value.

The annotated fixtures (tests/fixtures/checks/) say where findings are and at which severity; these tests
pin what those fixtures cannot: the wording that names both conditions, one finding for a helper called
twice with its call sites as related locations, and messages that do not contradict the config.
"""

from __future__ import annotations

from pathlib import Path

from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings

HEAD = '''import tensorflow as tf
from npu_bridge.npu_init import *

FLAGS = tf.app.flags.FLAGS
'''


def analyse(tmp_path: Path, body: str, name: str = "train.py"):
    path = tmp_path / name
    path.write_text(HEAD + body, encoding="utf-8")
    report = analyze_file(Job(file=str(path), display=name, roots=(str(tmp_path),), settings=Settings()))
    assert not report.internal_error, [f.message for f in report.findings]
    return report.findings


def line_of(tmp_path: Path, marker: str, name: str = "train.py") -> int:
    lines = (tmp_path / name).read_text(encoding="utf-8").splitlines()
    hits = [i for i, line in enumerate(lines, 1) if marker in line]
    assert len(hits) == 1, marker
    return hits[0]


def test_separate_opt_in_flags_are_information_naming_both_conditions(tmp_path):
    findings = analyse(tmp_path, '''
def session_config():
    config = tf.ConfigProto()
    op = config.graph_options.rewrite_options.custom_optimizers.add()
    op.name = "NpuOptimizer"
    if FLAGS.data_dump_flag:
        op.parameter_map["enable_dump"].b = True
        op.parameter_map["dump_path"].s = tf.compat.as_bytes(FLAGS.data_dump_path)
    if FLAGS.over_dump:
        op.parameter_map["enable_dump_debug"].b = True
        op.parameter_map["dump_path"].s = tf.compat.as_bytes(FLAGS.over_dump_path)
    return config
''')
    conflicts = [f for f in findings if f.name == "conflicting-options"]
    assert len(conflicts) == 1
    f = conflicts[0]
    assert (f.severity, f.certainty) == ("info", "conditional")
    assert "'if FLAGS.data_dump_flag' and 'if FLAGS.over_dump'" in f.message
    assert "separate conditions" in f.message
    assert [r.line for r in f.related] == [line_of(tmp_path, '["enable_dump_debug"]')]


def test_nested_condition_keeps_the_relation_severity_and_names_the_inner_branch(tmp_path):
    findings = analyse(tmp_path, '''
def session_config():
    config = tf.ConfigProto()
    op = config.graph_options.rewrite_options.custom_optimizers.add()
    op.name = "NpuOptimizer"
    if FLAGS.npu:
        op.parameter_map["dynamic_input"].b = True
        op.parameter_map["dynamic_graph_execute_mode"].s = tf.compat.as_bytes("lazy_recompile")
        if FLAGS.loop_mode:
            op.parameter_map["iterations_per_loop"].i = 10
    return config
''')
    f = next(f for f in findings if f.name == "conflicting-options")
    assert (f.severity, f.certainty) == ("error", "conditional")
    assert f.message.endswith("[may happen: if FLAGS.npu; if FLAGS.loop_mode]")


def test_a_helper_called_twice_reports_its_lines_once_with_both_calls(tmp_path):
    findings = analyse(tmp_path, '''
def npu_session_config():
    config = tf.ConfigProto()
    op = config.graph_options.rewrite_options.custom_optimizers.add()
    op.name = "NpuOptimizer"
    op.parameter_map["dynamic_input"].b = True
    return config


if FLAGS.mode == "train":
    train_config = npu_session_config()  # first call
else:
    eval_config = npu_session_config()  # second call
''')
    places = [(f.line, f.column, f.code) for f in findings]
    assert len(places) == len(set(places)), findings
    f = next(f for f in findings if f.name == "deprecated-option")
    assert f.line == line_of(tmp_path, '["dynamic_input"]')
    assert f.certainty == "conditional" and f.message.endswith("[may happen: when npu_session_config() is called]")
    assert sorted(r.line for r in f.related) == [line_of(tmp_path, "# first call"), line_of(tmp_path, "# second call")]
    assert all("npu_session_config()" in r.message for r in f.related)


def test_unread_mixed_precision_switch_follows_the_value_and_the_entry(tmp_path):
    findings = analyse(tmp_path, '''
def with_mixed_precision():
    config = tf.ConfigProto()
    op = config.graph_options.rewrite_options.custom_optimizers.add()
    op.name = "NpuOptimizer"
    op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    op.parameter_map["enable_auto_mix_precision"].b = True  # on anyway
    return config


def without_mixed_precision():
    config = tf.ConfigProto()
    op = config.graph_options.rewrite_options.custom_optimizers.add()
    op.name = "NpuOptimizer"
    op.parameter_map["enable_auto_mix_precision"].b = True  # believed on
    op.parameter_map["min_group_size"].b = 1  # leftover
    return config
''')
    unread = {f.line: f for f in findings if f.name == "unknown-option"}
    on_anyway = unread[line_of(tmp_path, "# on anyway")]
    assert on_anyway.severity == "warning"
    assert "is on here anyway, through precision_mode" in on_anyway.message
    assert "NOT" not in on_anyway.message and "not on" not in on_anyway.message
    believed = unread[line_of(tmp_path, "# believed on")]
    assert believed.severity == "error" and "nothing in this config turns it on" in believed.message
    assert unread[line_of(tmp_path, "# leftover")].severity == "warning"


def test_dead_wrong_field_write_is_a_duplicate_not_a_wrong_field(tmp_path):
    findings = analyse(tmp_path, '''
config = tf.ConfigProto()
op = config.graph_options.rewrite_options.custom_optimizers.add()
op.name = "NpuOptimizer"
if FLAGS.profiling:
    op.parameter_map["precision_mode"].b = True  # dead
op.parameter_map["precision_mode"].s = tf.compat.as_bytes(FLAGS.precision_mode)
''')
    dead = line_of(tmp_path, "# dead")
    assert [f.name for f in findings if f.line == dead] == ["duplicate-option"]
    assert next(f for f in findings if f.line == dead).severity == "warning"


def test_a_helper_of_another_module_called_twice_is_one_finding_at_the_first_call(tmp_path):
    # (sample-2026 id 3: HRNet's Trainer.build_graph() called twice with a swapped dump_debug_mode)
    (tmp_path / "helper.py").write_text('''import tensorflow as tf


def make_config(mode):
    config = tf.ConfigProto()
    op = config.graph_options.rewrite_options.custom_optimizers.add()
    op.name = "NpuOptimizer"
    op.parameter_map["enable_dump_debug"].b = True
    op.parameter_map["dump_path"].s = tf.compat.as_bytes("/tmp/overflow")
    op.parameter_map["dump_debug_mode"].s = tf.compat.as_bytes(mode)
    return config
''', encoding="utf-8")
    findings = analyse(tmp_path, '''from helper import make_config

init_config = tf.ConfigProto()
init_op = init_config.graph_options.rewrite_options.custom_optimizers.add()
init_op.name = "NpuOptimizer"
init_sess = tf.Session(config=init_config)

MODE = "./output/over_dump"
train_config = make_config(MODE)  # first call
eval_config = make_config(MODE)  # second call
with tf.Session(config=train_config) as sess:
    pass
with tf.Session(config=eval_config) as sess:
    pass
''')
    invalid = [f for f in findings if f.name == "invalid-value"]
    assert len(invalid) == 1, [(f.line, f.message) for f in invalid]
    (f,) = invalid
    assert f.line == line_of(tmp_path, "# first call") and "(set by make_config() in helper.py)" in f.message
    assert [(r.line, r.message) for r in f.related] == [
        (line_of(tmp_path, "# second call"), "also reached through this call of make_config()")]
