"""Extraction blind spots of issue 12: what a script does with its NPU config that the interpreter must
see (a config handed to somebody else's Session, ...). Scripts are written for these tests."""

from __future__ import annotations

import textwrap

import pytest

from npu_audit.knowledge.loader import load


@pytest.fixture(scope="module")
def kb():
    return load()


def _extract(kb, tmp_path, source, extra=None):
    from npu_audit.extract.extraction import extract_configs
    from npu_audit.parse import parse_module
    from npu_audit.source import read_source

    source = textwrap.dedent(source)
    for name, text in (extra or {}).items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    path = tmp_path / "script.py"
    path.write_text(source)
    module = parse_module(read_source(path, "script.py"))
    return extract_configs("script.py", path, module, source.encode(), kb, [tmp_path], text=source)


def _foreign(extraction):
    return [(f.detail, f.package, f.range.line if f.range else None, f.value.text if f.value else None)
            for f in extraction.facts if f.kind == "foreign-session"]


# -- config= given to a Session that is not TensorFlow's ---------------------------------------------

def test_requests_session_with_npu_config_is_a_foreign_session(kb, tmp_path):
    got = _extract(kb, tmp_path, """\
        import requests
        import tensorflow as tf
        from npu_bridge.npu_init import *

        def download(url):
            s = requests.Session(config=npu_config_proto())
            return s.get(url)

        with tf.compat.v1.Session(config=npu_config_proto()) as sess:
            pass
        """)
    assert _foreign(got) == [("requests.Session", "requests", 6, "npu_config_proto()")]


def test_session_imported_by_name_from_another_package(kb, tmp_path):
    got = _extract(kb, tmp_path, """\
        from requests import Session as HttpSession
        import tensorflow as tf
        from tensorflow.compat.v1 import Session

        config = tf.ConfigProto()
        op = config.graph_options.rewrite_options.custom_optimizers.add()
        op.name = "NpuOptimizer"
        a = HttpSession(config=config)
        b = Session(config=config)
        """)
    assert _foreign(got) == [("HttpSession", "requests", 8, "config")]


@pytest.mark.parametrize("source", [
    # TensorFlow's sessions, however they are imported
    "import tensorflow.compat.v1 as tf\nsess = tf.Session(config=npu_config_proto())\n",
    "import tensorflow as tf\nsess = tf.train.MonitoredTrainingSession(config=npu_config_proto())\n",
    "from tensorflow.python.client.session import Session\nsess = Session(config=npu_config_proto())\n",
    # where Session comes from is not certain: a star import, an object's attribute, a parameter
    "from tensorflow import *\nsess = Session(config=npu_config_proto())\n",
    "import requests\nclass T:\n    def run(self):\n        self.Session(config=npu_config_proto())\n",
    "def run(lib):\n    return lib.Session(config=npu_config_proto())\n",
    # not an NPU session config
    "import requests\ns = requests.Session(config={'retries': 3})\n",
])
def test_tensorflow_or_uncertain_sessions_are_not_foreign(kb, tmp_path, source):
    got = _extract(kb, tmp_path, "from npu_bridge.npu_init import *\n" + source)
    assert _foreign(got) == []


def test_a_module_of_the_tree_named_like_a_package_is_not_certainly_foreign(kb, tmp_path):
    got = _extract(kb, tmp_path, """\
        import sessions
        from npu_bridge.npu_init import *
        s = sessions.Session(config=npu_config_proto())
        """, extra={"sessions.py": "from tensorflow.compat.v1 import Session\n"})
    assert _foreign(got) == []


def test_the_packages_of_a_session_are_data(tmp_path, monkeypatch):
    """A copy of rules/ whose session entry also lists `requests` makes requests.Session a session (no code
    change); `modules` belongs to session entries only."""
    import shutil

    from npu_audit.knowledge import loader, tf_api
    from npu_audit.knowledge.validation import KnowledgeBaseError

    monkeypatch.setenv("NPU_AUDIT_NO_KB_SNAPSHOT", "1")
    rules = tmp_path / "rules"
    shutil.copytree(loader.rules_dir(), rules)
    table = rules / "tf_api.toml"
    text = table.read_text(encoding="utf-8")
    listed = 'modules = ["tensorflow", "tensorflow_core", "npu_bridge"]'
    assert text.count(listed) == 2
    table.write_text(text.replace(listed, listed[:-1] + ', "requests"]'), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    source = "import requests\nfrom npu_bridge.npu_init import *\ns = requests.Session(config=npu_config_proto())\n"
    assert len(_foreign(_extract(loader.load(), work, source))) == 1
    assert _foreign(_extract(loader.load(str(rules)), work, source)) == []
    with pytest.raises(KnowledgeBaseError, match="only a session entry"):
        tf_api.from_data({"api": [], "python": [{"kind": "dict", "names": ["dict"], "modules": ["x"], "note": "x"}]})


# -- a config built but handed to nothing ----------------------------------------------------------

_BUILD = """\
    config = tf.ConfigProto()
    op = config.graph_options.rewrite_options.custom_optimizers.add()
    op.name = "NpuOptimizer"
    op.parameter_map["use_off_line"].b = True
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    config.gpu_options.allow_growth = True
"""


def _handed_on(kb, tmp_path, tail, head="import tensorflow as tf\n"):
    got = _extract(kb, tmp_path, head + textwrap.dedent(_BUILD) + textwrap.dedent(tail))
    return [(c.bound_to, c.handed_on) for c in got.configs if c.bound_to is not None]


def test_a_config_only_written_into_goes_nowhere(kb, tmp_path):
    assert _handed_on(kb, tmp_path, """\
        config.graph_options.rewrite_options.custom_optimizers.add().name = "other"
        config.CopyFrom(tf.ConfigProto())
        sess = tf.Session()
        """) == [("config", False)]


@pytest.mark.parametrize("tail", [
    "sess = tf.Session(config=config)\n",
    "run_config = NPURunConfig(session_config=config)\n",
    "config = npu_config_proto(config_proto=config)\n",
    "def get():\n    return config\n",
    "class Holder:\n    def __init__(self):\n        self.config = config\n",
    "configs = [config]\n",
    "parts = config.graph_options\n",  # a part of it read into a variable
    "def reset():\n    global config\n    config = None\n",
    "print(config)\n",
    "sess = tf.Session(config=config if True else None)\n",
])
def test_every_other_use_may_hand_it_on(kb, tmp_path, tail):
    assert _handed_on(kb, tmp_path, tail, head="import tensorflow as tf\nfrom npu_bridge.npu_init import *\n") == [
        ("config", True)]


def test_inside_a_function_only_the_function_counts_and_a_parameter_is_not_known(kb, tmp_path):
    got = _extract(kb, tmp_path, """\
        import tensorflow as tf

        def build():
            config = tf.ConfigProto()
            config.graph_options.rewrite_options.custom_optimizers.add().name = "NpuOptimizer"
            return tf.Session()

        def other(config):
            return tf.Session(config=config)

        def patch(config):
            config.graph_options.rewrite_options.custom_optimizers.add().name = "NpuOptimizer"
        """)
    assert sorted(((c.bound_to, c.handed_on) for c in got.configs), key=repr) == [("config", False), (None, None)]
    assert [(f.detail, f.range.line) for f in got.facts if f.kind == "session-without-config"] == [("tf.Session", 6)]


# -- guards narrow flag defaults ---------------------------------------------------------------------

_FLAGS = """\
    import argparse
    import tensorflow as tf
    tf.flags.DEFINE_integer("loops", 0, "iterations per loop, 0: not set")
    tf.flags.DEFINE_string("dump_to", None, "dump folder")
    FLAGS = tf.flags.FLAGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="train")
    args = parser.parse_args()
    config = tf.ConfigProto()
    op = config.graph_options.rewrite_options.custom_optimizers.add()
    op.name = "NpuOptimizer"
"""


def _written(kb, tmp_path, body):
    got = _extract(kb, tmp_path, textwrap.dedent(_FLAGS) + textwrap.dedent(body))
    (config,) = [c for c in got.configs if c.kind == "ConfigProto"]
    return [(w.key, w.value.python if w.value.resolved else "?") for w in config.entries[0].writes]


@pytest.mark.parametrize("guard", [
    "if FLAGS.loops:", "if FLAGS.loops > 0:", "if 0 < FLAGS.loops:", "if FLAGS.loops != 0:",
    "if FLAGS.loops and FLAGS.dump_to:", "if not (not FLAGS.loops):", "if FLAGS.loops >= 1:",
])
def test_a_guard_that_excludes_the_default_hides_it(kb, tmp_path, guard):
    body = f'{guard}\n    op.parameter_map["iterations_per_loop"].i = FLAGS.loops\n'
    assert _written(kb, tmp_path, body) == [("iterations_per_loop", "?")]


def test_the_else_arm_and_derived_values_are_narrowed_too(kb, tmp_path):
    assert _written(kb, tmp_path, """\
        if not FLAGS.loops:
            pass
        else:
            op.parameter_map["iterations_per_loop"].i = FLAGS.loops * 2
        if FLAGS.dump_to is None:
            pass
        elif True:
            op.parameter_map["dump_path"].s = tf.compat.as_bytes(FLAGS.dump_to)
        if args.mode != "train":
            op.parameter_map["precision_mode"].s = tf.compat.as_bytes(args.mode)
        """) == [("iterations_per_loop", "?"), ("dump_path", "?"), ("precision_mode", "?")]


@pytest.mark.parametrize("guard", [
    "if FLAGS.loops == 0:", "if not FLAGS.loops:", "if FLAGS.loops or FLAGS.dump_to:", "if FLAGS.loops < 5:",
    "if FLAGS.dump_to is None:", "if args.mode:", "for i in range(FLAGS.loops):", "if FLAGS.loops in (1, 2):",
])
def test_a_guard_that_admits_the_default_or_says_nothing_keeps_it(kb, tmp_path, guard):
    body = f'{guard}\n    op.parameter_map["iterations_per_loop"].i = FLAGS.loops\n'
    assert _written(kb, tmp_path, body) == [("iterations_per_loop", 0)]


def test_narrowing_reaches_npurunconfig_keywords(kb, tmp_path):
    got = _extract(kb, tmp_path, textwrap.dedent(_FLAGS) + textwrap.dedent("""\
        from npu_bridge.estimator.npu.npu_config import NPURunConfig
        if FLAGS.loops:
            run_config = NPURunConfig(iterations_per_loop=FLAGS.loops)
        """))
    (run,) = [c for c in got.configs if c.kind == "NPURunConfig"]
    (w,) = [w for w in run.entries[0].writes if w.key == "iterations_per_loop"]
    assert not w.value.resolved and not w.implicit


def test_an_excluded_default_is_not_reported_but_an_admitted_one_is(tmp_path):
    """issue 12 cause 2: `if FLAGS.n:` around a write of FLAGS.n (default 0) is no out-of-range value."""
    from tests.examples import findings_of

    source = textwrap.dedent(_FLAGS) + textwrap.dedent("""\
        if FLAGS.loops:
            op.parameter_map["iterations_per_loop"].i = FLAGS.loops
        if FLAGS.loops == 0:
            op.parameter_map["iterations_per_loop"].i = FLAGS.loops
        sess = tf.Session(config=config)
        """)
    found = [(f.line, f.name) for f in findings_of(tmp_path, source) if f.option == "iterations_per_loop"]
    assert found == [(15, "out-of-range")]


# -- entries of objects npu-audit did not see being made -----------------------------------------------

def _entries(extraction):
    return [(e.kind, e.is_npu, [(w.key, w.value.python) for w in e.writes])
            for c in extraction.configs for e in c.entries]


@pytest.mark.parametrize("make", [
    "tf.GraphOptions(optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L1))",
    "rewriter_config_pb2.RewriterConfig()",
    "vendor_lib.base_config()",
    "vendor_lib.make()[0]",
])
def test_custom_optimizers_of_any_object_hold_entries(kb, tmp_path, make):
    got = _extract(kb, tmp_path, f"""\
        import tensorflow as tf
        from tensorflow.core.protobuf import rewriter_config_pb2
        import vendor_lib

        def build():
            part = {make}
            op = part.rewrite_options.custom_optimizers.add()
            op.name = "NpuOptimizer"
            op.parameter_map["precison_mode"].s = b"allow_mix_precision"
            part.rewrite_options.remapping = 1
            return part
        """)
    assert _entries(got) == [("custom_optimizer", True, [("precison_mode", b"allow_mix_precision")])]
    (config,) = [c for c in got.configs if c.entries]
    assert config.kind == "unknown" and [r.name for r in config.rewrite] == ["remapping"]


def test_an_entry_a_helper_of_another_package_returns(kb, tmp_path):
    got = _extract(kb, tmp_path, """\
        import vendor_lib
        op = vendor_lib.npu_entry()
        op.parameter_map["enable_dump"].b = True
        op.parameter_map["dump_path"].s = b"/tmp/dump"
        """)
    assert _entries(got) == [("orphan", None, [("enable_dump", True), ("dump_path", b"/tmp/dump")])]


def test_an_unknown_object_without_config_attributes_makes_nothing(kb, tmp_path):
    got = _extract(kb, tmp_path, """\
        import vendor_lib
        obj = vendor_lib.thing()
        obj.name = "NpuOptimizer"
        obj.options.value = 3
        """)
    assert got.configs == []


def test_a_companion_taken_from_an_excluded_default_is_not_a_certain_violation(tmp_path):
    """issue 12: modify_mixlist written only when the precision_mode flag is allow_mix_precision, while
    precision_mode is written from that flag (default allow_fp32_to_fp16): on that path the mode is mixed."""
    from tests.examples import findings_of

    head = ("import tensorflow as tf\nimport npu_device\n"
            "tf.compat.v1.flags.DEFINE_string('precision_mode', 'allow_fp32_to_fp16', '')\n"
            "tf.compat.v1.flags.DEFINE_boolean('use_mixlist', False, '')\n"
            "FLAGS = tf.compat.v1.flags.FLAGS\n"
            "npu_device.global_options().precision_mode = FLAGS.precision_mode\n")
    guarded = ("if FLAGS.use_mixlist and FLAGS.precision_mode == 'allow_mix_precision':\n"
               "    npu_device.global_options().modify_mixlist = 'ops_info.json'\n")
    unguarded = "if FLAGS.use_mixlist:\n    npu_device.global_options().modify_mixlist = 'ops_info.json'\n"
    tail = "npu_device.open().as_default()\n"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert [f.line for f in findings_of(tmp_path / "a", head + guarded + tail) if f.name == "missing-companion"] == []
    assert [f.line for f in findings_of(tmp_path / "b", head + unguarded + tail) if f.name == "missing-companion"] == [8]


# -- config objects checked where they are built -----------------------------------------------------

@pytest.mark.parametrize("use", [
    "",  # a helper nobody in this file calls
    "run_config = NPURunConfig(dump_config=make_dump('/tmp/d'), profiling_config=make_profiling())\n",
    "def later(dump):\n    return NPURunConfig(dump_config=dump)\nrun = later(make_dump('/tmp/d'))\n",
])
def test_a_config_object_built_in_a_helper_is_checked_there_once(tmp_path, use):
    from tests.examples import findings_of

    source = ("from npu_bridge.npu_init import *\n\n"
              "def make_dump(path):\n"
              "    return DumpConfig(enable_dump=True, dump_path=path, op_debug_level=1)\n\n"
              "def make_profiling():\n"
              "    return ProfilingConfig(enable_profiling=True, enable_options=['task_trace'])\n\n" + use)
    found = [(f.line, f.column, f.severity, f.message) for f in findings_of(tmp_path, source)
             if f.name == "runconfig-hazard"]
    assert found == [
        (4, 57, "error", "DumpConfig has no keyword 'op_debug_level': the script fails with TypeError"),
        (7, 51, "error", "ProfilingConfig has no keyword 'enable_options': the script fails with TypeError"),
    ]


def test_a_config_object_of_another_module_is_reported_in_its_own_file(kb, tmp_path):
    got = _extract(kb, tmp_path, """\
        from npu_bridge.npu_init import *
        from helpers import make_dump
        run_config = NPURunConfig(dump_config=make_dump())
        """, extra={"helpers.py": "from npu_bridge.npu_init import *\n\n"
                                  "def make_dump():\n    return DumpConfig(enable_dump=True, dump_pth='/d')\n"})
    hazards = [(h.path, h.message) for c in got.configs for e in c.entries for h in e.hazards]
    assert hazards == [("helpers.py", "DumpConfig has no keyword 'dump_pth': the script fails with TypeError; "
                                      "did you mean 'dump_path'?")]


def test_uses_the_relevance_slice_blanks_still_hand_the_config_on(tmp_path):
    """The slice blanks statements that cannot reach NPU configuration (an unknown library call, an
    estimator npu-audit does not model): the scan for uses of the config reads the original text."""
    from tests.examples import findings_of

    body = ("import tensorflow as tf\nimport mylib\n\n\ndef train(loss):\n    config = tf.ConfigProto()\n"
            "    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
            "    custom_op.name = 'NpuOptimizer'\n    custom_op.parameter_map['use_off_line'].b = True\n"
            "{use}    with tf.Session() as sess:\n        sess.run(loss)\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    passed = body.format(use="    mylib.remember(config)\n    est = tf.estimator.Estimator(config=tf.estimator."
                             "RunConfig(session_config=config))\n")
    assert [f.line for f in findings_of(tmp_path / "a", passed) if f.name == "config-never-used"] == []
    assert [f.line for f in findings_of(tmp_path / "b", body.format(use="")) if f.name == "config-never-used"] == [6]
