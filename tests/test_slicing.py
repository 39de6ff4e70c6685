"""The relevance slice (npu_audit/slicing.py): what it keeps, that positions stay exact, and that the
findings, configs and fixes of a sliced analysis equal those of the whole file."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest

from npu_audit.extract.positions import python_ast
from npu_audit.fix import fix_file
from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings
from npu_audit.slicing import ENV_OFF, slice_text
from npu_audit.text import split_lines_keepends

FIXTURES = Path(__file__).parent / "fixtures"


def sliced(source: str) -> str:
    result = slice_text(source, python_ast(source))
    assert result is not None
    return result.text


def kept(source: str) -> list[str]:
    """The stripped lines the slice keeps, asserting that it keeps every line where it was."""
    return kept_lines(source, sliced(source))


def kept_lines(source: str, text: str) -> list[str]:
    before, after = split_lines_keepends(source), split_lines_keepends(text)
    assert len(before) == len(after)
    out = []
    inside = False  # within a stand-in string spanning dropped lines
    for old, new in zip(before, after):
        if inside:
            assert new.strip() in ("", '"""')
            inside = new.strip() != '"""'
        elif new.strip() in ("pass", '"""'):  # a stand-in for dropped lines, at their indentation
            assert old[: len(old) - len(old.lstrip())] == new[: len(new) - len(new.lstrip())]
            inside = new.strip() == '"""'
        elif new.strip():
            assert new == old  # a kept line is kept whole, at its place
            out.append(new.strip())
    assert not inside
    return out


def analyse(tmp_path: Path, source: str, monkeypatch, whole: bool, name: str = "train.py", settings=None,
            force_parse: bool = False):
    if whole:
        monkeypatch.setenv(ENV_OFF, "1")
    else:
        monkeypatch.delenv(ENV_OFF, raising=False)
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    report = analyze_file(Job(file=str(path), display=name, roots=(str(tmp_path),), settings=settings or Settings(),
                              want_configs=True, force_parse=force_parse))
    assert not report.internal_error, [f.message for f in report.findings]
    return report


def findings(report) -> list[tuple]:
    return sorted((f.code, f.line, f.column, f.end_line, f.end_column, f.message) for f in report.findings)


def same_both_ways(tmp_path, source, monkeypatch, name="train.py", settings=None, force_parse=False):
    whole = analyse(tmp_path, source, monkeypatch, True, name, settings, force_parse)
    part = analyse(tmp_path, source, monkeypatch, False, name, settings, force_parse)
    assert findings(part) == findings(whole)
    assert json.dumps(part.configs, sort_keys=True, default=str) == json.dumps(whole.configs, sort_keys=True, default=str)
    return part


HELPER_RETURNS = '''\
import tensorflow as tf
from npu_bridge.npu_init import *


def build_model(x):
    y = x * 2
    for i in range(3):
        y = y + i
    return y


def make_config(mode):
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(mode)
    custom_op.parameter_map["enable_dump"].b = "yes"
    return config


def main():
    model = build_model(3)
    print(model)
    mode = "allow_mix_precision"
    config = make_config(mode)
    with tf.Session(config=config) as sess:
        sess.run(model)


if __name__ == "__main__":
    main()
'''


def test_config_built_in_a_helper_and_returned(tmp_path, monkeypatch):
    lines = kept(HELPER_RETURNS)
    for line in ('mode = "allow_mix_precision"', "config = make_config(mode)", "return config",
                 "def make_config(mode):", 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(mode)',
                 "with tf.Session(config=config) as sess:", "main()", 'if __name__ == "__main__":'):
        assert line in lines
    for line in ("y = x * 2", "for i in range(3):", "print(model)", "sess.run(model)", "model = build_model(3)"):
        assert line not in lines
    report = same_both_ways(tmp_path, HELPER_RETURNS, monkeypatch)
    [config] = report.configs
    assert "allow_mix_precision" in json.dumps(config)
    assert report.findings  # enable_dump written with the wrong field/value: something to report


FLAG_UNDER_IF = '''\
import tensorflow as tf

flags = tf.app.flags
FLAGS = flags.FLAGS
flags.DEFINE_string("precision", "allow_fp32_to_fp16", "precision mode")
flags.DEFINE_boolean("mixed", True, "mixed precision")
flags.DEFINE_integer("epochs", 10, "epochs")


def train():
    total = 0
    for epoch in range(FLAGS.epochs):
        total += epoch
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    if FLAGS.mixed:
        custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(FLAGS.precision)
    else:
        print("full precision")
    print(total)
    return tf.Session(config=config)


def main(_):
    train()


if __name__ == "__main__":
    tf.app.run(main)
'''


def test_flag_default_written_under_an_if(tmp_path, monkeypatch):
    lines = kept(FLAG_UNDER_IF)
    for line in ("flags = tf.app.flags", "FLAGS = flags.FLAGS", 'flags.DEFINE_string("precision", "allow_fp32_to_fp16", '
                 '"precision mode")', "if FLAGS.mixed:", "else:", "train()", "tf.app.run(main)"):
        assert line in lines
    for line in ("total = 0", "for epoch in range(FLAGS.epochs):", "print(total)", 'print("full precision")'):
        assert line not in lines
    report = same_both_ways(tmp_path, FLAG_UNDER_IF, monkeypatch)
    text = json.dumps(report.configs)
    assert "allow_fp32_to_fp16" in text and "flag-default" in text


SESSION_ELSEWHERE = '''\
import tensorflow as tf
from npu_bridge.estimator import npu_ops
from npu_bridge.estimator.npu import util


def open_session(cfg, log_dir):
    writer = tf.summary.FileWriter(log_dir)
    writer.flush()
    return tf.Session(config=cfg)


def train_loop():
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["iterations_per_loop"].i = 10
    loss = tf.reduce_mean(tf.zeros([4]))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    sess = open_session(config, "/tmp/logs")
    util.set_iteration_per_loop(sess, train_op, 100)
    for step in range(1000):
        sess.run(train_op)


train_loop()
'''


def test_config_passed_to_a_session_in_another_function(tmp_path, monkeypatch):
    lines = kept(SESSION_ELSEWHERE)
    for line in ("return tf.Session(config=cfg)", 'sess = open_session(config, "/tmp/logs")',
                 "util.set_iteration_per_loop(sess, train_op, 100)", "def open_session(cfg, log_dir):", "train_loop()"):
        assert line in lines
    for line in ("writer = tf.summary.FileWriter(log_dir)", "writer.flush()", "for step in range(1000):",
                 "sess.run(train_op)"):
        assert line not in lines
    report = same_both_ways(tmp_path, SESSION_ELSEWHERE, monkeypatch)
    assert "set_iteration_per_loop" in json.dumps(report.configs)  # the fact reached the config


SESSION_HANDED_ON = '''\
import tensorflow as tf
from npu_bridge.estimator.npu import util


def load_data(path):
    records = [line.split(",") for line in open(path)]
    return tf.data.Dataset.from_tensor_slices(records)


def fit(session, dataset, epochs):
    iterator = dataset.make_one_shot_iterator()
    for epoch in range(epochs):
        session.run(iterator.get_next())


def loop_on_device(session, op):
    return util.set_iteration_per_loop(session, op, 100)


def main():
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["iterations_per_loop"].i = 10
    dataset = load_data("train.csv")
    train_op = tf.no_op()
    with tf.Session(config=config) as sess:
        fit(sess, dataset, 3)
        train_op = loop_on_device(sess, train_op)
        sess.run(train_op)
    other = tf.Session(config=config)
    fit(other, dataset, 1)


main()
'''


def test_a_session_handed_on_keeps_only_what_can_reach_npu_code(tmp_path, monkeypatch):
    # a session's NPU options are fixed when it opens: helpers that merely run it (and the data they are
    # given) cannot change them and are left out; a helper that calls an NPU API with it is kept, with the
    # session it is given
    lines = kept_in_tree(tmp_path, SESSION_HANDED_ON)
    for line in ("with tf.Session(config=config) as sess:", "train_op = loop_on_device(sess, train_op)",
                 "return util.set_iteration_per_loop(session, op, 100)", "other = tf.Session(config=config)"):
        assert line in lines
    for line in ('dataset = load_data("train.csv")', "fit(sess, dataset, 3)", "fit(other, dataset, 1)",
                 "def fit(session, dataset, epochs):", "def load_data(path):"):
        assert line not in lines
    report = same_both_ways(tmp_path, SESSION_HANDED_ON, monkeypatch)
    assert [(f.code, f.line) for f in report.findings if f.name == "inconsistent-with-code"] == [("NPU402", 24)], \
        findings(report)


OUTSIDE_THE_TREE = '''\
import tensorflow as tf
import mylib
from npu_bridge.estimator.npu import util

rate = mylib.schedule(0.1)
scaled = tf.multiply(rate, 2.0)
kept_rate = mylib.schedule(0.2)
warm = mylib.warmup(kept_rate)
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["iterations_per_loop"].i = 10
loops = {loops}
with tf.Session(config=config) as sess:
    optimizer = tf.train.GradientDescentOptimizer(scaled)
    train_op = util.set_iteration_per_loop(sess, optimizer.minimize(warm), loops)
'''


@pytest.mark.parametrize("loops", ["100", "int(mylib.LOOPS)"])
def test_what_only_a_call_outside_the_tree_reads_is_left_out(tmp_path, monkeypatch, loops):
    # tf is no module of the tree: tf.multiply(rate, 2.0) and GradientDescentOptimizer(scaled) give an
    # unknown value whatever their arguments, so the statements computing those arguments are left out;
    # an argument of a call into a module of the tree (mylib.warmup), of a method of an object that is not
    # such an import (optimizer.minimize) or of a call the interpreter models (int, set_iteration_per_loop)
    # is still computed
    (tmp_path / "mylib.py").write_text("LOOPS = 100\n\n\ndef schedule(x):\n    return x\n\n\n"
                                       "def warmup(x):\n    return x\n", encoding="utf-8")
    source = OUTSIDE_THE_TREE.format(loops=loops)
    lines = kept_in_tree(tmp_path, source)
    for line in ("kept_rate = mylib.schedule(0.2)", "warm = mylib.warmup(kept_rate)", f"loops = {loops}",
                 "optimizer = tf.train.GradientDescentOptimizer(scaled)"):
        assert line in lines
    for line in ("rate = mylib.schedule(0.1)", "scaled = tf.multiply(rate, 2.0)"):
        assert line not in lines
    report = same_both_ways(tmp_path, source, monkeypatch)
    assert [f.line for f in report.findings if f.name == "inconsistent-with-code"] == [12], findings(report)


WALRUS_IN_AN_OUTSIDE_CALL = '''\
import tensorflow as tf
from npu_bridge.estimator.npu import util

steps = 100
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["iterations_per_loop"].i = 10
tf.logging.info("loops", (loops := steps))
with tf.Session(config=config) as sess:
    train_op = util.set_iteration_per_loop(sess, tf.no_op(), loops)
'''


def test_an_argument_of_a_call_outside_the_tree_that_binds_a_name_is_read(tmp_path, monkeypatch):
    # (loops := steps) binds the name a later NPU call reads: what it reads is needed
    assert "steps = 100" in kept_in_tree(tmp_path, WALRUS_IN_AN_OUTSIDE_CALL)
    report = same_both_ways(tmp_path, WALRUS_IN_AN_OUTSIDE_CALL, monkeypatch)
    assert [f.line for f in report.findings if f.name == "inconsistent-with-code"] == [8], findings(report)


def test_a_name_that_is_not_only_an_import_from_outside_the_tree_keeps_what_its_calls_read(tmp_path):
    (tmp_path / "mylib.py").write_text("def schedule(x):\n    return x\n", encoding="utf-8")
    source = OUTSIDE_THE_TREE.format(loops="100").replace("import mylib\n", "import mylib\nif mylib:\n    tf = mylib\n")
    assert "scaled = tf.multiply(rate, 2.0)" in kept_in_tree(tmp_path, source)


VALUE_FROM_A_LOOP = '''\
import tensorflow as tf

MODES = ["allow_fp32_to_fp16", "force_fp16"]
precision = None
for candidate in MODES:
    if candidate.startswith("allow"):
        precision = candidate
history = []
for epoch in range(5):
    history.append(epoch * 2)
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(precision)
print(history)
'''


def test_value_computed_in_a_loop(tmp_path, monkeypatch):
    lines = kept(VALUE_FROM_A_LOOP)
    for line in ('MODES = ["allow_fp32_to_fp16", "force_fp16"]', "precision = None", "for candidate in MODES:",
                 'if candidate.startswith("allow"):', "precision = candidate"):
        assert line in lines
    for line in ("history = []", "for epoch in range(5):", "history.append(epoch * 2)", "print(history)"):
        assert line not in lines
    same_both_ways(tmp_path, VALUE_FROM_A_LOOP, monkeypatch)


def test_blocks_emptied_get_a_pass_and_one_liners_stay_whole():
    source = (
        "import tensorflow as tf\n"
        "def f(x):\n"
        "    if x:\n"
        "        y = 1\n"
        "    else: z = 2; w = 3\n"
        "    try:\n"
        "        cfg = tf.ConfigProto()\n"
        "    except ValueError:\n"
        "        print('no')\n"
        "    return cfg\n"
        "f(1)\n"
    )
    text = sliced(source)
    compile(text, "sliced", "exec")  # still Python
    assert "    except ValueError:\n        pass\n" in text  # the clause stays, its block is a pass
    assert "y = 1" not in text and "z = 2" not in text  # nothing keeps the if
    assert "cfg = tf.ConfigProto()" in text


def test_an_elif_chain_is_kept_whole():
    source = (
        "import tensorflow as tf\n"
        "import os\n"
        "config = tf.ConfigProto()\n"
        "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        "mode = os.environ.get('MODE')\n"
        "if mode == 'a':\n"
        "    print('a')\n"
        "elif mode == 'b':\n"
        "    custom_op.parameter_map['precision_mode'].s = b'force_fp16'\n"
        "else:\n"
        "    print('c')\n"
    )
    lines = kept(source)
    assert ["if mode == 'a':", "elif mode == 'b':", "else:"] == [x for x in lines if x.endswith(":")]
    compile(sliced(source), "sliced", "exec")


def test_a_helper_of_another_module_of_the_tree_is_kept(tmp_path, monkeypatch):
    (tmp_path / "npu_setup.py").write_text(
        "def set_precision(config, mode):\n"
        "    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        "    custom_op.name = 'NpuOptimizer'\n"
        "    custom_op.parameter_map['precision_mode'].s = mode\n", encoding="utf-8")
    (tmp_path / "plain.py").write_text("def log(x):\n    print(x)\n", encoding="utf-8")
    source = (
        "import tensorflow as tf\n"
        "from npu_setup import set_precision\n"
        "from plain import log\n"
        "config = tf.ConfigProto()\n"
        "set_precision(config, b'allow_mix_precision')\n"
        "log('started')\n"
    )
    # (a file without NPU markers that imports a module with them: the second phase parses it)
    report = same_both_ways(tmp_path, source, monkeypatch, force_parse=True)
    assert "allow_mix_precision" in json.dumps(report.configs)
    lines = kept(source)
    assert "log('started')" not in lines  # (no slice_text reach given: nothing of the tree reaches)


LAZY_SCRIPT = (
    "import tensorflow as tf\n"
    "OPTIONS = []\n"
    "def default_mode():\n"
    "    return 'allow_mix_precision'\n"
    "def register():\n"
    "    OPTIONS.append('fusion.cfg')\n"
    "class Settings(object):\n"
    "    def __init__(self):\n"
    "        self.mode = 'high_precision'\n"
    "class Model(object):\n"
    "    def __init__(self, units):\n"
    "        self.units = units\n"
    "        self.layers = [tf.layers.Dense(units) for _ in range(3)]\n"
    "    def call(self, x):\n"
    "        for layer in self.layers:\n"
    "            x = layer(x)\n"
    "        return x\n"
    "def preprocess(images):\n"
    "    return images / 255.0\n"
    "register()\n"
    "settings = Settings()\n"
    "config = tf.ConfigProto()\n"
    "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
    "custom_op.name = 'NpuOptimizer'\n"
    "custom_op.parameter_map['precision_mode'].s = tf.compat.as_bytes(default_mode())\n"
    "custom_op.parameter_map['op_select_implmode'].s = tf.compat.as_bytes(settings.mode)\n"
    "custom_op.parameter_map['fusion_switch_file'].s = tf.compat.as_bytes(OPTIONS[0])\n"
    "model = Model(10)\n"
    "print(model.call(preprocess(1)))\n"
)


def test_definitions_nothing_asks_about_are_not_read_and_the_slice_is_the_same():
    lazy = slice_text(LAZY_SCRIPT, python_ast(LAZY_SCRIPT))
    eager = slice_text(LAZY_SCRIPT, python_ast(LAZY_SCRIPT), lazy=False)
    assert lazy is not None and eager is not None
    assert lazy.text == eager.text
    assert eager.read == eager.statements
    # the model class and the input function are never read: 10 of the file's 29 statements
    assert lazy.read == lazy.statements - 10
    lines = kept_lines(LAZY_SCRIPT, lazy.text)
    # read because the kept statements ask: what changes OPTIONS, what default_mode returns, what stores .mode
    for line in ("OPTIONS.append('fusion.cfg')", "register()", "return 'allow_mix_precision'",
                 "self.mode = 'high_precision'", "settings = Settings()"):
        assert line in lines
    assert not any("layers" in line or "255.0" in line for line in lines)


def test_reading_definitions_on_demand_gives_the_same_slice_on_every_fixture():
    paths = fixture_files() + sorted((Path(__file__).parent.parent / "examples").glob("*.py"))
    compared = 0
    for path in paths:
        text = path.read_bytes().decode("utf-8", "replace")  # (a fixture of an encoding problem is not UTF-8)
        tree = python_ast(text)
        lazy, eager = slice_text(text, tree), slice_text(text, tree, lazy=False)
        if eager is None:
            continue
        assert lazy is not None and lazy.text == eager.text, path
        compared += 1
    assert compared > 50


def fixture_files() -> list[Path]:
    return sorted(p for folder in ("checks", "extract", "fix") for p in (FIXTURES / folder).glob("*.py")
                  if not p.name.endswith(".fixed.py"))


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_findings_and_configs_are_the_same_sliced(tmp_path, monkeypatch, path):
    from tests.test_check_fixtures import settings_for

    raw = path.read_bytes()
    settings = settings_for(raw.decode("utf-8", "replace")) if path.parent.name == "checks" else Settings()
    for extra in (path.parent / "pkg",):
        if extra.is_dir():
            shutil.copytree(extra, tmp_path / "pkg")
    target = tmp_path / path.name
    results = []
    for whole in (True, False):
        if whole:
            monkeypatch.setenv(ENV_OFF, "1")
        else:
            monkeypatch.delenv(ENV_OFF, raising=False)
        target.write_bytes(raw)
        report = analyze_file(Job(file=str(target), display=path.name, roots=(str(tmp_path),), settings=settings,
                                  want_configs=True))
        results.append((findings(report), json.dumps(report.configs, sort_keys=True, default=str)))
    assert results[1] == results[0]


PADDED_FIX = '''\
import os
import tensorflow as tf


class Reader:
    def __init__(self, folder):
        self.files = sorted(os.listdir(folder))

    def batches(self, size):
        for i in range(0, len(self.files), size):
            yield self.files[i:i + size]


def make_config():
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["enable_dump"].i = 1  # npu-audit: ignore[unknown-option]
    custom_op.parameter_map["dump_path"].s = b"/tmp/dump"
    custom_op.parameter_map["jit_compile"].b = False
    return config


def main():
    reader = Reader("/data")
    for batch in reader.batches(32):
        print(len(batch))
    with tf.Session(config=make_config()) as sess:
        sess.run(tf.no_op())


main()
'''


def test_a_fix_through_a_sliced_analysis_equals_one_without(tmp_path, monkeypatch):
    assert "self.files = sorted(os.listdir(folder))" not in kept(PADDED_FIX)  # the slice does drop code
    fixed = []
    for whole in (True, False):
        if whole:
            monkeypatch.setenv(ENV_OFF, "1")
        else:
            monkeypatch.delenv(ENV_OFF, raising=False)
        target = tmp_path / "train.py"
        target.write_text(PADDED_FIX, encoding="utf-8")
        job = Job(file=str(target), display=str(target), roots=(str(tmp_path),), settings=Settings())
        result = fix_file(job, analyze_file(job), unsafe=True)
        assert result.applied
        fixed.append((result.fixed, sorted(asdict(f)["message"] for f in result.applied)))
    assert fixed[1] == fixed[0]
    assert b"self.files = sorted(os.listdir(folder))" in fixed[1][0]  # the original bytes, edited in place


def test_no_slice_without_an_ast():
    assert slice_text("print 'python 2'\n", python_ast("print 'python 2'\n")) is None


def test_methods_of_an_object_from_another_module_and_callbacks_are_kept(tmp_path, monkeypatch):
    (tmp_path / "worker.py").write_text(
        "import tensorflow as tf\n\n\n"
        "class Worker:\n"
        "    def build(self, dump_mode):\n"
        "        config = tf.ConfigProto()\n"
        "        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        "        custom_op.name = 'NpuOptimizer'\n"
        "        custom_op.parameter_map['dump_debug_mode'].s = tf.compat.as_bytes(dump_mode)\n"
        "        return config\n\n\n"
        "def attach(trainer):\n"
        "    trainer.make_session()\n", encoding="utf-8")
    source = (
        "import tensorflow as tf\n"
        "from worker import Worker, attach\n\n\n"
        "class Trainer:\n"
        "    def start(self):\n"
        "        print('starting')\n"
        "        attach(self)\n\n"
        "    def make_session(self):\n"
        "        config = tf.ConfigProto()\n"
        "        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        "        custom_op.parameter_map['precision_mode'].s = b'allow_mix_precision'\n"
        "        return tf.Session(config=config)\n\n\n"
        "def main():\n"
        "    worker = Worker()\n"
        "    worker.build('./not/a/mode')\n"  # a method of an object another module's class made
        "    Trainer().start()\n\n\n"
        "main()\n"
    )
    lines = kept(source)
    assert "worker.build('./not/a/mode')" not in lines  # (no reach given: nothing of the tree reaches)
    report = same_both_ways(tmp_path, source, monkeypatch)
    assert {f.code for f in report.findings} >= {"NPU104"}  # the bad dump_debug_mode, through worker.build
    assert "Trainer.start" in json.dumps(report.configs)  # make_session reached through attach(self)


def test_statements_joined_by_a_backslash_are_kept_or_dropped_together(tmp_path, monkeypatch):
    source = (
        "import tensorflow as tf\n"
        "config = tf.ConfigProto()\n"
        "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        "custom_op.name = 'NpuOptimizer'\n"
        "custom_op.parameter_map['precision_mode'].s = b'bad'\n"
        "print(2); \\\n"
        "  sess = tf.Session(config=config)\n"
    )
    text = sliced(source)
    compile(text, "sliced", "exec")  # (dropping `print(2); \` alone left an indented line: a false syntax error)
    assert "print(2); \\\n" in text
    report = same_both_ways(tmp_path, source, monkeypatch)
    assert [f.code for f in report.findings] == ["NPU104"]


def kept_in_tree(tmp_path: Path, source: str, name: str = "train.py") -> list[str]:
    """:func:`kept`, with the modules of ``tmp_path`` read as the pipeline reads them (``TreeReach``)."""
    from npu_audit.knowledge.loader import load
    from npu_audit.slice_knowledge import slice_knowledge
    from npu_audit.slicing import TreeReach

    reach = TreeReach(str(tmp_path.resolve()), (str(tmp_path.resolve()),))
    known = slice_knowledge(load())  # (as the pipeline slices)
    result = slice_text(source, python_ast(source), (), reach, reach.exports, known.modelled, known.sessions)
    assert result is not None
    return kept_lines(source, result.text)


NPU_HELPERS = (
    "import tensorflow as tf\n\n\n"
    "def load_data(path):\n"
    "    return [line for line in open(path)]\n\n\n"
    "def make_config(mode):\n"
    "    config = tf.ConfigProto()\n"
    "    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
    "    custom_op.name = 'NpuOptimizer'\n"
    "    custom_op.parameter_map['precision_mode'].s = tf.compat.as_bytes(mode)\n"
    "    return config\n\n\n"
    "def npu_config():\n"
    "    return make_config('allow_fp32_to_fp16')\n\n\n"
    "def call_with(fn, value):\n"
    "    return fn(value)\n"
)


@pytest.mark.parametrize("style", ["from", "module"])
def test_calls_of_a_helper_module_are_kept_only_for_its_npu_names(tmp_path, monkeypatch, style):
    (tmp_path / "npu_helpers.py").write_text(NPU_HELPERS, encoding="utf-8")
    prefix = "" if style == "from" else "npu_helpers."
    source = (
        "import tensorflow as tf\n"
        + ("from npu_helpers import load_data, npu_config\n" if style == "from" else "import npu_helpers\n")
        + f"rows = {prefix}load_data('train.txt')\n"
        f"config = {prefix}npu_config()\n"
        "print(len(rows))\n"
    )
    lines = kept_in_tree(tmp_path, source)
    assert f"config = {prefix}npu_config()" in lines  # reaches the config: kept
    assert f"rows = {prefix}load_data('train.txt')" not in lines  # the data pipeline: not read
    report = same_both_ways(tmp_path, source, monkeypatch, force_parse=True)
    assert "allow_fp32_to_fp16" in json.dumps(report.configs)


def test_a_config_handed_to_a_helper_that_is_not_an_npu_name_is_kept(tmp_path, monkeypatch):
    # remember() has no NPU code: the call matters only because it is handed the config (the helper may
    # keep it, hand it on, or open a session with it through code the slice cannot see)
    (tmp_path / "npu_helpers.py").write_text(NPU_HELPERS + "\n\nSEEN = []\n\n\ndef remember(value):\n"
                                             "    SEEN.append(value)\n", encoding="utf-8")
    source = (
        "import tensorflow as tf\n"
        "from npu_helpers import remember, load_data\n\n\n"
        "def main():\n"
        "    config = tf.ConfigProto()\n"
        "    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        "    custom_op.name = 'NpuOptimizer'\n"
        "    custom_op.parameter_map['enable_dump'].b = True\n"
        "    rows = load_data('train.txt')\n"
        "    remember(config)\n"
        "    remember(rows)\n\n\n"
        "main()\n"
    )
    lines = kept_in_tree(tmp_path, source)
    assert "remember(config)" in lines
    assert "rows = load_data('train.txt')" not in lines and "remember(rows)" not in lines
    same_both_ways(tmp_path, source, monkeypatch)


def test_npu_names_of_a_helper_module_include_reexports_and_flag_definitions(tmp_path):
    from npu_audit.slicing import TreeReach

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "impl.py").write_text(NPU_HELPERS, encoding="utf-8")
    (tmp_path / "pkg" / "__init__.py").write_text(
        "from .impl import npu_config\n"
        "from absl import flags\n\n\n"
        "def define_flags():\n"
        "    flags.DEFINE_string('precision_mode', 'allow_mix_precision', 'how to compute')\n\n\n"
        "def session_config():\n"
        "    return npu_config()\n\n\n"
        "def batches(rows, size):\n"
        "    return [rows[i:i + size] for i in range(0, len(rows), size)]\n", encoding="utf-8")
    reach = TreeReach(str(tmp_path.resolve()), (str(tmp_path.resolve()),))
    assert reach.exports("pkg", 0) == {"npu_config", "define_flags", "session_config"}
    assert reach.exports("pkg.impl", 0) == {"make_config", "npu_config"}


def test_a_fix_in_a_file_with_deep_code_the_slice_leaves_out(tmp_path, monkeypatch):
    # CPython accepts the chain and the slice drops it (never built), so the file is analysed; libcst's
    # native parser dies with SIGSEGV on it, so the fix engine checks the fix with CPython alone (run in
    # a process of its own: a crash would take pytest down with it)
    import subprocess
    import sys

    deep = " or ".join(["ready"] * 20_000)
    source = (
        "import tensorflow as tf\n"
        f"FLAG = {deep}\n"
        "config = tf.ConfigProto()\n"
        "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        "custom_op.name = 'NpuOptimizer'\n"
        "custom_op.parameter_map['precision_mode'].s = tf.compat.as_bytes('allow_mix_precision')\n"
    )
    target = tmp_path / "train.py"
    target.write_text(source, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != ENV_OFF}
    done = subprocess.run([sys.executable, "-m", "npu_audit", "--isolated", "--no-cache", "--fix", str(target)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    fixed = target.read_text(encoding="utf-8")
    assert "precision_mode_v2" in fixed and "syntax-error" not in done.stdout
    compile(fixed, "train.py", "exec")



TRAINER_CLASS = '''\
import tensorflow as tf
from npu_bridge.npu_init import *


def build_network(x, depth):
    for i in range(depth):
        x = tf.layers.dense(x, 64, name="dense%d" % i)
    return x


class Trainer(object):
    def __init__(self, mode):
        self.mode = mode
        self.opts = {}
        self.opts["dump"] = "yes"
        self.cache = {}
        self.cache["step"] = 0
        self.inputs = tf.placeholder(tf.float32)
        self.model = build_network(self.inputs, 12)
        self.loss = tf.reduce_mean(self.model)
        config = tf.ConfigProto()
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.name = "NpuOptimizer"
        custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(self.mode)
        custom_op.parameter_map["enable_dump"].b = self.opts["dump"]
        self.sess = tf.Session(config=config)

    def train(self):
        for var in tf.global_variables():
            print(var.name)
        step = self.sess.run(self.loss)
        self.cache["last"] = step


if __name__ == "__main__":
    Trainer("allow_mix_precision").train()
'''


def test_an_object_whose_attributes_are_read_keeps_only_the_stores_of_those(tmp_path, monkeypatch):
    # ``self.mode`` reads ``self`` only as the base of an attribute: the stores of other attributes (the
    # model, the loss, a cache) are not needed; nor is what a session stored in an attribute is then used
    # for; and a constant stored in an attribute of a config (``custom_op.name``) makes no other ``x.name``
    # a use of the config. The stores of the attributes the kept statements read are kept, and so are the
    # changes of what they hold (``opts``)
    lines = kept_in_tree(tmp_path, TRAINER_CLASS)
    for line in ("self.mode = mode", "self.opts = {}", 'self.opts["dump"] = "yes"',
                 "self.sess = tf.Session(config=config)", 'custom_op.name = "NpuOptimizer"'):
        assert line in lines
    for line in ("self.model = build_network(self.inputs, 12)", "self.loss = tf.reduce_mean(self.model)",
                 "step = self.sess.run(self.loss)", "print(var.name)", 'self.cache["last"] = step',
                 'self.cache["step"] = 0', "def build_network(x, depth):"):
        assert line not in lines
    report = same_both_ways(tmp_path, TRAINER_CLASS, monkeypatch)
    assert [(f.code, f.line) for f in report.findings] == [("NPU501", 24)], findings(report)  # (self.mode's value)


WHOLE_OBJECT = '''\
import tensorflow as tf
import mylib


class Options(object):
    pass


opts = Options()
opts.impl = "high_precision"
opts.extra = mylib.compute()
mode = {read}
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["op_select_implmode"].s = tf.compat.as_bytes(mode)
'''


# (``opts.describe``: an attribute the file does not define, maybe a method of a class of another module
# that reads any attribute of the object when it is called)
@pytest.mark.parametrize(("read", "whole"), [("opts.impl", False), ("str(opts)", True),
                                              ('opts.__dict__["impl"]', True), ("opts.describe", True)])
def test_an_object_read_whole_keeps_every_store_into_it(tmp_path, monkeypatch, read, whole):
    source = WHOLE_OBJECT.format(read=read)
    lines = kept_in_tree(tmp_path, source)
    assert 'opts.impl = "high_precision"' in lines
    assert ("opts.extra = mylib.compute()" in lines) is whole
    report = same_both_ways(tmp_path, source, monkeypatch)
    if read == "opts.impl":
        assert "high_precision" in json.dumps(report.configs)


@pytest.mark.parametrize("read", ['getattr(opts, "impl")', 'hasattr(opts, "impl") and "high_precision"'])
def test_what_only_a_builtin_the_interpreter_does_not_model_reads_is_left_out(tmp_path, monkeypatch, read):
    # ``getattr``, ``hasattr``: bound nowhere in the file, no star import of a module of the tree could bind
    # them, and the interpreter gives their calls an unknown value: the object's stores cannot change it
    (tmp_path / "shims.py").write_text("def unrelated():\n    return 1\n")
    source = WHOLE_OBJECT.format(read=read)
    lines = kept_in_tree(tmp_path, source)
    assert f"mode = {read}" in lines
    assert 'opts.impl = "high_precision"' not in lines and "opts.extra = mylib.compute()" not in lines
    same_both_ways(tmp_path, source, monkeypatch)
    # a star import of a module of the tree may bind the name: then the object is read whole again
    lines = kept_in_tree(tmp_path, "from shims import *\n" + source)
    assert 'opts.impl = "high_precision"' in lines and "opts.extra = mylib.compute()" in lines


RECEIVER = '''\
import tensorflow as tf
import mylib


class Trainer(object):
    def __init__(self, mode):
        self.mode = mode
        self.model = mylib.build_network(12)
        self.setup()

    def setup(self):
        config = tf.ConfigProto()
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.name = "NpuOptimizer"
        custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(self.mode)
        custom_op.parameter_map["op_select_implmode"].s = tf.compat.as_bytes({impl})
        self.sess = tf.Session(config=config)


Trainer("force_fp16")
'''


@pytest.mark.parametrize(("impl", "whole"), [('"high_precision"', False), ('self.__dict__["impl"]', True)])
def test_a_method_of_the_file_called_on_self_needs_what_it_reads_of_self(tmp_path, monkeypatch, impl, whole):
    # ``self.setup()`` hands ``self`` to the method's first parameter: when the method reads only attributes of
    # it, the stores of the others (the model) are not needed; when it reads it whole, every store is
    source = RECEIVER.format(impl=impl)
    lines = kept_in_tree(tmp_path, source)
    for line in ("self.mode = mode", "self.setup()", 'Trainer("force_fp16")'):
        assert line in lines
    assert ("self.model = mylib.build_network(12)" in lines) is whole
    report = same_both_ways(tmp_path, source, monkeypatch)
    assert "force_fp16" in json.dumps(report.configs)


OTHER_RECEIVER = '''\
import tensorflow as tf
import mylib


class Trainer(object):
    def setup(self):
        return self.mode


runner = mylib.Runner()
runner.model = mylib.build_network(12)
runner.mode = "force_fp16"
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(runner.setup())
'''


def test_an_object_of_another_module_whose_method_has_the_name_of_one_of_the_file_is_read_whole(tmp_path):
    # ``runner.setup()`` may call mylib's ``setup``, which may read any attribute of ``runner``
    lines = kept_in_tree(tmp_path, OTHER_RECEIVER)
    assert "runner.model = mylib.build_network(12)" in lines and 'runner.mode = "force_fp16"' in lines


def test_whether_an_import_reaches_npu_code_is_asked_again_after_forget(tmp_path):
    # answers are kept for the run (every file of a project asks about the same modules); the language
    # server calls imports.forget() before each analysis, and a helper that gained NPU code counts then
    from npu_audit import imports
    from npu_audit.slicing import TreeReach

    (tmp_path / "helpers.py").write_text("import tuning\n", encoding="utf-8")
    (tmp_path / "tuning.py").write_text("RATE = 0.1\n", encoding="utf-8")
    root = str(tmp_path.resolve())
    imports.forget()
    assert TreeReach(root, (root,))("helpers", 0) is False
    (tmp_path / "tuning.py").write_text('RATE = 0.1\nOPTION = "parameter_map"\n', encoding="utf-8")
    imports.forget()
    assert TreeReach(root, (root,))("helpers", 0) is True


HANDED_ON_BY_A_METHOD = {
    "npu_helpers.py": (
        "import tensorflow as tf\n\n\n"
        "def make_config(trainer):\n"
        "    config = tf.ConfigProto()\n"
        "    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        '    custom_op.name = "NpuOptimizer"\n'
        '    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(trainer.precision_mode)\n'
        "    return config\n"
    ),
    "train.py": (
        "import tensorflow as tf\n"
        "from npu_helpers import make_config\n\n\n"
        "class Trainer(object):\n"
        "    def __init__(self, mode):\n"
        "        self.precision_mode = mode\n"
        "        self.lr = 0.01\n"
        "        self.build()\n\n"
        "    def build(self):\n"
        "        config = make_config(self)\n"
        "        self.sess = tf.Session(config=config)\n\n\n"
        'if __name__ == "__main__":\n'
        '    Trainer("allow_mix_precision")\n'
    ),
}


def test_self_handed_on_by_a_method_of_the_class_keeps_the_stores_into_it(tmp_path, monkeypatch):
    # (found in review) ``self.build()`` reads ``self`` whole: ``build`` hands it to another module's
    # helper, which reads ``trainer.precision_mode``, stored by the caller
    for name, text in HANDED_ON_BY_A_METHOD.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert "self.precision_mode = mode" in kept_in_tree(tmp_path, HANDED_ON_BY_A_METHOD["train.py"])
    report = same_both_ways(tmp_path, HANDED_ON_BY_A_METHOD["train.py"], monkeypatch, force_parse=True)
    assert "allow_mix_precision" in json.dumps(report.configs)


NPU_BASE_CLASS = (
    "import tensorflow as tf\n\n\n"
    "class BaseTrainer(object):\n"
    "    def configure_npu(self):\n"
    "        config = tf.ConfigProto()\n"
    "        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
    '        custom_op.name = "NpuOptimizer"\n'
    '        custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(self.precision_mode)\n'
    "        self.sess = tf.Session(config=config)\n"
)

SUBCLASS = '''\
from trainers import BaseTrainer


class Trainer(BaseTrainer):
    def __init__(self, mode):
        self.precision_mode = mode
        self.steps = 100
        {call}


if __name__ == "__main__":
    Trainer("allow_mix_precision")
'''


@pytest.mark.parametrize("call", ["self.configure_npu()", "super().configure_npu()",
                                  "super(Trainer, self).configure_npu()"])
def test_a_method_inherited_from_an_npu_class_of_another_module_is_kept(tmp_path, monkeypatch, call):
    # (found in review, older than the attribute rules) the call was dropped: the class does not define
    # the method, whose NPU code is in the base class of another module
    (tmp_path / "trainers.py").write_text(NPU_BASE_CLASS, encoding="utf-8")
    source = SUBCLASS.format(call=call)
    lines = kept_in_tree(tmp_path, source)
    assert call in lines and "self.precision_mode = mode" in lines
    report = same_both_ways(tmp_path, source, monkeypatch, force_parse=True)
    assert "allow_mix_precision" in json.dumps(report.configs)


LIST_IN_AN_ATTRIBUTE = '''\
import tensorflow as tf


class Trainer(object):
    def __init__(self):
        self.modes = []
        self.modes.append("allow_mix_precision")
        self.model = None
        config = tf.ConfigProto()
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.name = "NpuOptimizer"
        custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(self.modes[0])
        self.sess = tf.Session(config=config)


Trainer()
'''


def test_a_list_in_an_attribute_keeps_what_is_appended_to_it(tmp_path, monkeypatch):
    # (found in review, older than the attribute rules) ``self.modes.append(...)`` changes what
    # ``self.modes`` holds: needed with the attribute
    lines = kept_in_tree(tmp_path, LIST_IN_AN_ATTRIBUTE)
    assert 'self.modes.append("allow_mix_precision")' in lines and "self.model = None" not in lines
    report = same_both_ways(tmp_path, LIST_IN_AN_ATTRIBUTE, monkeypatch)
    assert "allow_mix_precision" in json.dumps(report.configs)


METHOD_THROUGH_AN_ALIAS = '''\
import tensorflow as tf


class Trainer(object):
    def __init__(self, mode):
        self.mode = mode
        self.steps = 100
        run = self.configure
        run()

    def configure(self):
        config = tf.ConfigProto()
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.name = "NpuOptimizer"
        custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(self.mode)
        self.sess = tf.Session(config=config)


Trainer("allow_mix_precision")
'''


def test_a_function_called_through_an_alias_is_called_from_its_place(tmp_path, monkeypatch):
    # (found in review, older than the attribute rules) ``run()`` was dropped with what ``self.mode``
    # holds, and ``configure`` was read on its own, with ``self.mode`` unknown. A method read without
    # being called takes ``self`` with it (it may hand it on): ``self`` is read whole there
    lines = kept_in_tree(tmp_path, METHOD_THROUGH_AN_ALIAS)
    assert "run()" in lines and "self.mode = mode" in lines and "self.steps = 100" in lines
    report = same_both_ways(tmp_path, METHOD_THROUGH_AN_ALIAS, monkeypatch)
    assert "allow_mix_precision" in json.dumps(report.configs)


@pytest.mark.parametrize("tail", [";\n", "# a comment\n", "\n"])
def test_a_dropped_statement_continued_by_a_backslash_is_replaced_whole(tail):
    # CPython's tree ends `pass \` on its first line; the line below (only `;`, a comment or nothing)
    # belongs to the same logical line, so a stand-in for the first line alone would leave `;` behind
    import ast

    from npu_audit.extract.demand import HelperText
    from npu_audit.slicing import slice_text

    text = ("import tensorflow as tf\nconfig = tf.ConfigProto()\n"
            "steps = 10 \\\n" + tail + "sess = tf.Session(config=config)\n")
    result = slice_text(text, ast.parse(text))
    assert result is not None and result.kept < result.statements  # (`steps = 10` is dropped)
    ast.parse(result.text)
    assert result.text.count("\n") == text.count("\n")
    assert "sess = tf.Session(config=config)\n" in result.text
    helper = HelperText(text, ast.parse(text))
    assert helper.spans[2] == (3, 4)  # (the helper reader cuts a module at the same lines)


MODULE_ATTRIBUTES = '''\
import numpy as np
import tensorflow as tf
import mylib
from absl import flags

flags.DEFINE_integer("steps", 100, "iterations per loop")
FLAGS = {flags_object}


class Trainer(object):
    def __init__(self):
        self.precision = "force_fp16"

    def train(self):
        config = tf.ConfigProto()
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.name = "NpuOptimizer"
        custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(self.precision)
        custom_op.parameter_map["iterations_per_loop"].i = {steps}
        custom_op.parameter_map["enable_data_pre_proc"].b = np.mean([1.0]) > 0.5
        self.sess = tf.Session(config=config)

    def restore(self):
        saver = {saver}.train.Saver(max_to_keep=1)
        self.steps = 10
        self.mean = 0.5


Trainer().train()
'''


@pytest.mark.parametrize(("flags_object", "steps", "saver", "outside"), [
    ("flags.FLAGS", "FLAGS.steps", "tf", True),
    ("tf.app.flags.FLAGS", "FLAGS.steps", "tf.compat.v1", True),
    ("flags.FLAGS", "mylib.SETTINGS.steps", "mylib", False),
])
def test_names_of_a_module_from_outside_the_tree_ask_nothing_of_the_file(tmp_path, monkeypatch, flags_object,
                                                                          steps, saver, outside):
    # ``tf.train`` is no method ``train`` of the file, and no store into an attribute (``self.steps``,
    # ``self.mean``) changes what ``FLAGS.steps`` or ``np.mean`` gives: ``restore`` is left out; a module of
    # the tree (``mylib``) may hold an object of the file's class, so the same reads through it keep what they
    # may read
    (tmp_path / "mylib.py").write_text("SETTINGS = None\n", encoding="utf-8")
    source = MODULE_ATTRIBUTES.format(flags_object=flags_object, steps=steps, saver=saver)
    lines = kept_in_tree(tmp_path, source)
    assert "Trainer().train()" in lines and (f"FLAGS = {flags_object}" in lines) is outside
    restore = [f"saver = {saver}.train.Saver(max_to_keep=1)", "self.steps = 10"]
    assert all((line in lines) is not outside for line in restore), lines
    assert "self.mean = 0.5" not in lines  # (``np`` is no module of the tree in every case)
    report = same_both_ways(tmp_path, source, monkeypatch)
    assert "force_fp16" in json.dumps(report.configs)


LAYER_PACKAGE = {
    "__init__.py": "from npu_bridge.npu_init import *\nfrom . import ops\nfrom . import utils\nfrom . import layers\n{extra}",
    "ops.py": (
        "import tensorflow as tf\n\n\n"
        "def set_gpu_fraction(mode):\n"
        "    config = tf.ConfigProto()\n"
        "    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        '    custom_op.name = "NpuOptimizer"\n'
        '    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(mode)\n'
        "    return config\n\n\n"
        "def relu(x):\n"
        "    return tf.nn.relu(x)\n"
    ),
    "utils.py": "def flatten(x):\n    return x\n",
    "layers.py": (
        "import tensorflow as tf\n"
        "from . import ops\n"
        "from . import utils\n\n\n"
        "class Layer(object):\n"
        '    """A layer.\n\n'
        "    >>> sess = tf.InteractiveSession()\n"
        '    """\n\n'
        "    def __init__(self, name):\n"
        "        self.name = utils.flatten(name)\n\n\n"
        "class Conv2d(Layer):\n"
        "    def __init__(self, net, n_filter):\n"
        '        Layer.__init__(self, "conv")\n'
        "        self.outputs = ops.relu(tf.layers.conv2d(net, n_filter, 3))\n\n\n"
        "def init_session(mode):\n"
        "    return ops.set_gpu_fraction(mode)\n"
    ),
}

MODEL_WITH_LAYERS = '''\
from npu_bridge.npu_init import *
from layerlib.layers import *
from layerlib import *


def build(images):
    net = Conv2d(images, 64)
    return net


config = init_session("allow_mix_precision")
model = build(None)
'''


def layer_package_exports(tmp_path: Path, extra: str):
    """The NPU names of ``layerlib.layers`` (:data:`LAYER_PACKAGE` written under ``tmp_path``, its __init__
    ending with ``extra``)."""
    from npu_audit.slicing import TreeReach

    package = tmp_path / "layerlib"
    package.mkdir()
    for name, text in LAYER_PACKAGE.items():
        (package / name).write_text(text.format(extra=extra) if name == "__init__.py" else text, encoding="utf-8")
    root = str(tmp_path.resolve())
    return TreeReach(root, (root,)).exports("layerlib.layers", 0)


@pytest.mark.parametrize(("extra", "precise"), [("", True), ("utils = ops\n", False)])
def test_npu_names_of_a_package_module_follow_what_its_imports_export(tmp_path, monkeypatch, extra, precise):
    # layers.py imports two modules of its package: ``ops`` can reach NPU code through ``set_gpu_fraction``
    # alone, ``utils`` not at all (only the package as a whole can); a docstring's example runs nothing. So
    # the layers, which call ``utils.flatten`` and ``ops.relu``, are no NPU names, and a model script's calls
    # of them are left out. A package that binds ``utils`` to something else in its __init__ may give that
    # instead of the submodule: then the layers count again, as every name of a star import of it does.
    exports = layer_package_exports(tmp_path, extra)
    assert exports is not None and "init_session" in exports
    assert ("Conv2d" in exports) is not precise and ("Layer" in exports) is not precise
    lines = kept_in_tree(tmp_path, MODEL_WITH_LAYERS)
    assert 'config = init_session("allow_mix_precision")' in lines
    assert ("net = Conv2d(images, 64)" in lines) is not precise
    report = same_both_ways(tmp_path, MODEL_WITH_LAYERS, monkeypatch, force_parse=True)  # (no NPU marker)
    assert "allow_mix_precision" in json.dumps(report.configs)


def test_a_long_chain_of_helper_modules_is_read_without_exhausting_the_stack(tmp_path, monkeypatch):
    # the NPU names of a module follow those of the modules it imports, read in turn: a chain of 300 modules
    # (each calling the next, the last building the config) stops being followed at a fixed depth, where any
    # name counts, instead of failing the analysis with a RecursionError
    last = 300
    for i in range(last):
        (tmp_path / f"m{i}.py").write_text(f"from m{i + 1} import build as step\n\n\ndef build(mode):\n"
                                           "    return step(mode)\n", encoding="utf-8")
    (tmp_path / f"m{last}.py").write_text(
        "import tensorflow as tf\n\n\ndef build(mode):\n    config = tf.ConfigProto()\n"
        "    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        '    custom_op.name = "NpuOptimizer"\n    return config\n', encoding="utf-8")
    source = ("import tensorflow as tf\nfrom m0 import build\n\nconfig = build('x')\n"
              "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
              "custom_op.parameter_map['precision_mode'].s = b'force_fp16'\n")
    report = analyse(tmp_path, source, monkeypatch, whole=False)  # (asserts no internal error)
    assert "config = build('x')" in kept_in_tree(tmp_path, source)
    assert report.parsed


def test_a_long_chain_of_aliases_of_a_module_is_sliced_without_exhausting_the_stack(tmp_path, monkeypatch):
    # whether ``aN.mode`` can be changed by a store of the file follows aN back, alias by alias, to ``tf``: past
    # a fixed depth it is not followed (the stores are kept) instead of failing the analysis with a RecursionError
    aliases = "".join(f"a{i} = a{i - 1}.v1\n" for i in range(1, 3000))
    source = ("import tensorflow as tf\na0 = tf.compat\n" + aliases + "config = tf.ConfigProto()\n"
              "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
              'custom_op.name = "NpuOptimizer"\n'
              "custom_op.parameter_map['precision_mode'].s = a2999.mode\n\n\n"
              "class Trainer(object):\n    def configure(self):\n        self.mode = 'force_fp16'\n")
    lines = kept_in_tree(tmp_path, source)
    assert "custom_op.parameter_map['precision_mode'].s = a2999.mode" in lines
    assert "self.mode = 'force_fp16'" in lines  # (not known to be fixed: the store may change a2999.mode)
    analyse(tmp_path, source, monkeypatch, whole=False)  # (asserts no internal error)


@pytest.mark.parametrize("init", ["from .ops import set_gpu_fraction as utils\n", "import ops as utils\n"])
def test_a_package_that_imports_another_module_under_a_submodule_name_answers_for_it(tmp_path, init):
    # ``from . import utils`` in a package whose __init__ binds ``utils`` by an import of its own may give that
    # import, not the submodule: the package's answer counts (the layers stay NPU names)
    exports = layer_package_exports(tmp_path, init)
    assert exports is None or "Layer" in exports


def test_a_docstring_is_blanked_on_the_lines_python_counts(tmp_path):
    # a form feed is no line break for Python (str.splitlines takes it for one): the string statement blanked
    # is the one on CPython's line, and the call beside it stays an NPU name's
    (tmp_path / "ops.py").write_text(LAYER_PACKAGE["ops.py"], encoding="utf-8")
    (tmp_path / "session.py").write_text(
        "import ops\n# page\x0cbreak\n\n\ndef init_session(mode):\n    return ops.set_gpu_fraction(mode)\n"
        '    """Unreachable, but a string statement."""\n', encoding="utf-8")
    from npu_audit.slicing import TreeReach

    root = str(tmp_path.resolve())
    assert "init_session" in TreeReach(root, (root,)).exports("session", 0)
