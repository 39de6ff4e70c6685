"""Which session or estimator a config is linked to (issue 12 cause 4, "wrong object linked").

A config runs in what takes it: a session opened with it runs its own entries; NPURunConfig(session_config=...)
runs them and then NPUEstimator's entry, which writes graph_run_mode by itself (1 unless given
graph_run_mode=0). A session kept on an object holds whichever method set it last. These tests pin what is said
when the link is known, and that nothing is said when it is not (the fixtures inconsistent-with-code.methods.py
and scenario-mismatch.py pin the single-file cases).
"""

from __future__ import annotations

from pathlib import Path

from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings

MAKER = '''import tensorflow as tf
from npu_bridge.npu_init import *


class ConfigMaker(object):
    def __init__(self):
        self.run_options = tf.ConfigProto(allow_soft_placement=True)
        entry = self.run_options.graph_options.rewrite_options.custom_optimizers.add()
        entry.name = "NpuOptimizer"
        entry.parameter_map["hcom_parallel"].b = True
        entry.parameter_map["graph_run_mode"].i = 0
'''

ESTIMATOR = '''from npu_bridge.npu_init import *


def build_estimator(maker, model_fn):
    run_config = NPURunConfig(session_config=maker.run_options, iterations_per_loop=100)
    return NPUEstimator(model_fn=model_fn, config=run_config)
'''

MAIN = '''from maker import ConfigMaker
from estimator import build_estimator

estimator = build_estimator(ConfigMaker(), None)
'''


def analyse(root: Path, name: str):
    report = analyze_file(Job(file=str(root / name), display=name, roots=(str(root),), settings=Settings()))
    assert not report.internal_error, [f.message for f in report.findings]
    return report.findings


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")


def codes(findings, code: str) -> list[tuple[int, str]]:
    return [(f.line, f.message) for f in findings if f.code == code]


def test_config_kept_on_an_object_for_another_module_has_no_assumed_scenario(tmp_path):
    # the module that builds the config cannot tell whether a session (inference) or an estimator's
    # NPURunConfig (training: its own entry writes graph_run_mode = 1 after this one) takes it
    write(tmp_path, {"maker.py": MAKER, "estimator.py": ESTIMATOR, "main.py": MAIN})
    assert codes(analyse(tmp_path, "maker.py"), "NPU303") == []


def test_config_kept_on_an_object_and_opened_by_a_session_of_the_class_is_inference(tmp_path):
    # a method of the same class opens the session with it: it runs as it is, graph_run_mode = 0
    write(tmp_path, {"maker.py": MAKER + '''
    def open(self):
        self.sess = tf.Session(config=self.run_options)
        return self.sess
'''})
    found = codes(analyse(tmp_path, "maker.py"), "NPU303")
    assert found == [(10, "'hcom_parallel' is documented for training only, but this config is for online inference "
                          "(graph_run_mode)")]


def test_estimator_in_the_same_module_trains_whatever_the_session_config_writes(tmp_path):
    # the link is seen: NPUEstimator's entry comes last, so the config trains and the leftover 0 is lost
    write(tmp_path, {"maker.py": MAKER + '''

def build_estimator(model_fn):
    run_config = NPURunConfig(session_config=ConfigMaker().run_options)
    return NPUEstimator(model_fn=model_fn, config=run_config)
'''})
    findings = analyse(tmp_path, "maker.py")
    assert codes(findings, "NPU303") == []
    assert [line for line, _ in codes(findings, "NPU305")] == [11]


def test_set_iteration_per_loop_follows_the_session_of_the_calls_read_in_order(tmp_path):
    # `self.sess` is opened by two methods; run() is called after open_training() by fit(), so it is paired
    # with that session (5 against 20); read on its own, run() could follow either and is paired with none
    write(tmp_path, {"net.py": '''import tensorflow as tf
from npu_bridge.estimator.npu import util
from npu_bridge.npu_init import *


class Net(object):
    def open_eval(self):
        self.sess = tf.Session(config=npu_config_proto())

    def run(self, op):
        return util.set_iteration_per_loop(self.sess, op, 20)

    def open_training(self):
        config = tf.ConfigProto()
        entry = config.graph_options.rewrite_options.custom_optimizers.add()
        entry.name = "NpuOptimizer"
        entry.parameter_map["iterations_per_loop"].i = 5
        self.sess = tf.Session(config=config)

    def fit(self, op):
        self.open_training()
        return self.run(op)
'''})
    assert codes(analyse(tmp_path, "net.py"), "NPU402") == [
        (17, "iterations_per_loop is 5 but set_iteration_per_loop uses 20: both must be equal")]
