"""A name of the adapter's API is the adapter's only when it comes from the adapter (rules/tf_api.toml,
``[adapter]``): an import from npu_bridge or npu_device, directly, through a star import, or through a
module of the tree that re-exports it. The same name bound anywhere else (another package, a class or
function of the script, a parameter, a plain dict) gets no finding; a name npu-audit cannot trace to any
binding keeps its findings at warning at most, saying why."""

from __future__ import annotations

import pytest

from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings


def findings_of(tmp_path, script: str, files: dict[str, str] | None = None) -> list[tuple[str, str, int]]:
    for name, text in (files or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "train.py").write_text(script, encoding="utf-8")
    report = analyze_file(Job(file=str(tmp_path / "train.py"), display="train.py", roots=(str(tmp_path),),
                              settings=Settings()))
    assert not report.internal_error, [f.message for f in report.findings]
    return sorted((f.code, f.severity, f.line) for f in report.findings)


# Each look-alike would give an error if its name were taken for the adapter's.
LOOK_ALIKES = {
    "a pydantic model named DumpConfig": (
        "from pydantic import BaseModel\n\n\nclass DumpConfig(BaseModel):\n    op_debug_level: int = 0\n\n\n"
        "dump = DumpConfig(enable_dump_debug=True, op_debug_level=2)\n"),
    "DumpConfig and ProfilingConfig of a profiling package": (
        "from profiler_kit.config import DumpConfig, ProfilingConfig\n"
        "dump = DumpConfig(op_debug_level=2, dump_step='every')\n"
        "prof = ProfilingConfig(enable_profiling=True, profiling_options='not json', sample_rate=10)\n"),
    "DynamicInputConfig of another package reached through its module": (
        "import shape_tools as st\n"
        "dyn = st.DynamicInputConfig(input_shape='x:1,-1', dynamic_dims='1;2', dynamic_node_type=1)\n"),
    "a local def npu_config_proto": (
        "import tensorflow as tf\n\n\ndef npu_config_proto(config_proto=None):\n"
        "    return config_proto or tf.ConfigProto()\n\n\n"
        "with tf.Session(config=npu_config_proto()) as sess:\n    pass\n"),
    "a local NPURunConfig class": (
        "class NPURunConfig:\n    def __init__(self, **kwargs):\n        self.kwargs = kwargs\n\n\n"
        "run_config = NPURunConfig(auto_tune_mode='GA', precision_mode='fast')\n"),
    "NPURunConfig as a parameter": (
        "def build(NPURunConfig):\n    return NPURunConfig(auto_tune_mode='GA', precision_mode='fast')\n"),
    "an NPURunConfig of another package": (
        "from cluster_runner import NPURunConfig\nrun_config = NPURunConfig(precision_mode='fast')\n"),
    "a dict called parameter_map": (
        "parameter_map = {}\nparameter_map['precison_mode'] = 'fast'\n\n\nclass Op:\n"
        "    def __init__(self):\n        self.parameter_map = {}\n\n\nop = Op()\n"
        "op.parameter_map['enable_dumpp'] = True\n"),
    "a global_options() of another package": (
        "from device_settings import global_options\nopts = global_options()\n"
        "opts.precision_mode = 'fast'\nopts.not_an_option = 3\n"),
    "MemoryConfig and ExperimentalConfig of another package": (
        "from cluster_tools import ExperimentalConfig, MemoryConfig\n\n\ndef settings():\n"
        "    return MemoryConfig(variable_use_1g_huge_page=9), ExperimentalConfig(accelerate_train_mode='slow')\n"),
    "set_iteration_per_loop and NPUOptimizer of another package": (
        "import tensorflow as tf\nfrom loop_tools import NPUOptimizer, set_iteration_per_loop\n\n"
        "config = tf.ConfigProto()\ncustom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        "custom_op.name = 'NpuOptimizer'\ncustom_op.parameter_map['iterations_per_loop'].i = 10\n"
        "custom_op.parameter_map['is_tailing_optimization'].b = False\n"
        "opt = NPUOptimizer(tf.train.GradientDescentOptimizer(0.1), is_tailing_optimization=True)\n"
        "sess = tf.Session(config=config)\ntrain_op = set_iteration_per_loop(sess, None, 5)\n"),
    "global_options() of a parameter named npu_device": (
        "def configure(npu_device):\n    opts = npu_device.global_options()\n    opts.precision_mode = 'fast'\n"),
    "npu_device used but never imported": (
        "opts = npu_device.global_options()\nopts.precision_mode = 'fast'\nnpu_device.open().as_default()\n"),
    "set_keras_session_npu_config of the script": (
        "def set_keras_session_npu_config(config=None):\n    return config\n\n\n"
        "sess = set_keras_session_npu_config(config={'precision_mode': 'fast'})\n"),
}


@pytest.mark.parametrize("case", sorted(LOOK_ALIKES))
def test_a_look_alike_of_the_adapters_api_gets_no_finding(tmp_path, case):
    assert findings_of(tmp_path, LOOK_ALIKES[case]) == []


BAD_DUMP = "DumpConfig(enable_dump=True, dump_path='/tmp/d', op_debug_level=2)"

# The same defect (a keyword DumpConfig does not take: TypeError) through each way the adapter's name arrives.
FROM_THE_ADAPTER = {
    "a star import of npu_init": ("from npu_bridge.npu_init import *\ndump = " + BAD_DUMP + "\n", {}),
    "an import of the defining module": (
        "from npu_bridge.estimator.npu.npu_config import DumpConfig\ndump = " + BAD_DUMP + "\n", {}),
    "an attribute of an imported adapter module": (
        "import npu_bridge.estimator.npu.npu_config as npu_config\ndump = npu_config." + BAD_DUMP + "\n", {}),
    "a module of the tree that star-imports the adapter, star-imported": (
        "from helpers.npu_common import *\ndump = " + BAD_DUMP + "\n",
        {"helpers/__init__.py": "", "helpers/npu_common.py": "from npu_bridge.npu_init import *\n"}),
    "a module of the tree that star-imports the adapter, as a module": (
        "import helpers.npu_common as common\ndump = common." + BAD_DUMP + "\n",
        {"helpers/__init__.py": "", "helpers/npu_common.py": "from npu_bridge.npu_init import *\n"}),
    "a name a module of the tree gets from a star import, imported by name": (
        "from helpers import DumpConfig\ndump = " + BAD_DUMP + "\n",
        {"helpers/__init__.py": "from npu_bridge.npu_init import *\n"}),
    "a name passed on by two modules of the tree": (
        "from outer import DumpConfig\ndump = " + BAD_DUMP + "\n",
        {"outer.py": "from inner import *\n", "inner.py": "from npu_bridge.npu_init import *\n"}),
    "an import tried with a fallback for machines without the adapter": (
        "try:\n    from npu_bridge.estimator.npu.npu_config import DumpConfig\nexcept ImportError:\n"
        "    DumpConfig = None\ndump = " + BAD_DUMP + "\n", {}),
    "a module of the tree that re-exports the name": (
        "from helpers import DumpConfig\ndump = " + BAD_DUMP + "\n",
        {"helpers/__init__.py": "from npu_bridge.estimator.npu.npu_config import DumpConfig\n"}),
}


@pytest.mark.parametrize("case", sorted(FROM_THE_ADAPTER))
def test_the_adapters_api_is_checked_however_its_name_is_imported(tmp_path, case):
    script, files = FROM_THE_ADAPTER[case]
    line = next(i for i, text in enumerate(script.splitlines(), 1) if text.startswith("dump = "))
    assert ("NPU403", "error", line) in findings_of(tmp_path, script, files)


BAD_TF2 = "npu.global_options().precision_mode = 'fast'\n"  # not a precision_mode value: invalid-value (error)

# TF2's option object through each way the npu_device module (or global_options itself) arrives.
TF2_FROM_THE_ADAPTER = {
    "import npu_device as npu": ("import npu_device as npu\n" + BAD_TF2, {}),
    "npu from a star import of a module of the tree": (
        "from common import *\n" + BAD_TF2, {"common.py": "import npu_device as npu\n"}),
    "global_options imported by name from a module of the tree": (
        "from common import *\nglobal_options().precision_mode = 'fast'\n",
        {"common.py": "from npu_device import global_options\n"}),
}


@pytest.mark.parametrize("case", sorted(TF2_FROM_THE_ADAPTER))
def test_the_tf2_option_object_is_checked_however_npu_device_is_imported(tmp_path, case):
    script, files = TF2_FROM_THE_ADAPTER[case]
    assert ("NPU104", "error", 2) in findings_of(tmp_path, script, files)


def test_an_attribute_of_a_module_the_star_import_supplies_is_the_adapters(tmp_path):
    # npu_init star-exports the util module: util.set_iteration_per_loop is the adapter's
    script = (
        "import tensorflow as tf\nfrom npu_bridge.npu_init import *\n\n"
        "config = tf.ConfigProto()\ncustom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        "custom_op.name = 'NpuOptimizer'\ncustom_op.parameter_map['iterations_per_loop'].i = 10\n"
        "sess = tf.Session(config=config)\ntrain_op = util.set_iteration_per_loop(sess, None, 5)\n")
    # inconsistent-with-code: the loop count given to util.set_iteration_per_loop differs from the option
    assert [code for code, _severity, _line in findings_of(tmp_path, script)] == ["NPU402"]
    # the same call through a util module of another package is not the adapter's
    other = script.replace("from npu_bridge.npu_init import *", "from npu_bridge.npu_init import *\nimport util")
    assert findings_of(tmp_path, other) == []


def test_a_name_no_import_binds_says_less(tmp_path):
    script = "dump = " + BAD_DUMP + "\n"
    assert findings_of(tmp_path, script) == [("NPU403", "warning", 1)]


def test_the_adapters_packages_are_data_and_checked():
    from npu_audit.knowledge import tf_api
    from npu_audit.knowledge.validation import KnowledgeBaseError

    cite = [{"adapter": "tf_adapter/python/npu_bridge/npu_init.py:99"}]
    entry = {"kind": "npurunconfig", "names": ["NPURunConfig"], "adapter": True, "cite": cite}
    model = tf_api.from_data({"api": [entry], "adapter": {"packages": ["npu_bridge"], "cite": cite}})
    assert model.adapter_packages == ("npu_bridge",) and model.entries[0].adapter
    with pytest.raises(KnowledgeBaseError, match=r"need the \[adapter\] table"):
        tf_api.from_data({"api": [entry]})
    with pytest.raises(KnowledgeBaseError, match="top-level package"):
        tf_api.from_data({"api": [entry], "adapter": {"packages": ["npu_bridge.npu_init"], "cite": cite}})
