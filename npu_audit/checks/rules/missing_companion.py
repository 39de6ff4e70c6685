from npu_audit.checks.base import Expect, Invalid, Rule
from npu_audit.checks.field_requirements import field_requirement_findings
from npu_audit.checks.rules import PRELUDE
from npu_audit.checks.rules._relation_rule import relation_findings


class MissingCompanion(Rule):
    code = "NPU201"
    name = "missing-companion"
    severity = "error"
    summary = "An option that needs another option, which is absent or has the wrong value."
    what = (
        "Checks the `requires` and `together` relations of the knowledge base on each NPU entry: "
        "enable_dump needs dump_path, input_shape/dynamic_dims/dynamic_node_type go together, "
        "modify_mixlist needs a mixed-precision mode, optypelist_for_implmode needs op_select_implmode, "
        "compile_hybrid_mode=1 needs dynamic_node_type=1, and more (`npu-audit --list-rules --format json`). "
        "In a training run (--scenario, else graph_run_mode) that profiles, profiling_options needs "
        "training_trace (and task_trace) on; this is information when graph_run_mode is left at its default "
        "(training), since the script may only evaluate, and nothing when the scenario is not known. Config "
        "objects are checked by their keywords, on their own when their NPURunConfig is not seen (relations "
        "among the keys the object writes)."
    )
    why = (
        "The adapter checks several of these pairs when the session starts and fails or aborts the process; "
        "others are only documented, and the lone option then silently does nothing."
    )
    fix_safety = "No automatic fix: the missing value (a path, a mode) is yours to choose."
    invalid = (
        Invalid(
            PRELUDE + 'custom_op.parameter_map["enable_dump"].b = True\n',
            (Expect(7, 25, "Data dump writes its files to dump_path; with enable_dump=True and no dump_path the "
                           "adapter refuses the options and the session fails to start"),),
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["input_shape"].s = b"data:1,-1"\ncustom_op.parameter_map["dynamic_dims"].s = b"1;2"\n',
            (Expect(7, 25, "input_shape, dynamic_dims and dynamic_node_type form one dynamic-dimension profile "
                           "configuration. If only some of the three keys are written, the adapter stops the whole "
                           "process with a fatal log while reading the session options (missing: dynamic_node_type)"),),
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["modify_mixlist"].s = b"/home/ops.json"\n'
                      'custom_op.parameter_map["precision_mode_v2"].s = b"origin"\n',
            (Expect(7, 25, "modify_mixlist edits the block/trust lists of automatic mixed precision, so it needs a "
                           "mixed-precision mode. The adapter rejects it unless precision_mode is "
                           "allow_mix_precision(_fp16/_bf16), or, when precision_mode is absent, precision_mode_v2 "
                           "is mixed_float16/mixed_bfloat16/mixed_hif8; it also rejects it when neither option is "
                           "written"),),
        ),
        Invalid(  # a DumpConfig on its own: the relation among its own keys holds wherever it goes
            "from npu_bridge.npu_init import *\n\n\ndef dump_settings():\n    return DumpConfig(enable_dump=True, dump_step='0|5')\n",
            (Expect(5, 23, "Data dump writes its files to dump_path; with enable_dump=True and no dump_path the adapter "
                           "refuses the options and the session fails to start",
                    hint="add dump_path pointing to an existing directory the training user can read and write",
                    option="enable_dump"),),
        ),
        Invalid(  # profiling a training run without the iteration trace
            PRELUDE + 'custom_op.parameter_map["graph_run_mode"].i = 1\n'
                      'custom_op.parameter_map["profiling_mode"].b = True\n'
                      'custom_op.parameter_map["profiling_options"].s = b\'{"output": "/tmp/p", "task_trace": "on"}\'\n',
            (Expect(9, 50, "profiling_options has no training_trace in a training run (graph_run_mode = 1): profiling "
                           "training data needs training_trace and task_trace on; without training_trace the profile "
                           "has no iteration trace (forward/backward propagation, gradient update) and the training "
                           "step cannot be analysed as a whole", severity="warning"),),
        ),
    )
    valid = (
        PRELUDE + 'custom_op.parameter_map["enable_dump"].b = True\ncustom_op.parameter_map["dump_path"].s = b"/tmp"\n',
        PRELUDE + 'custom_op.parameter_map["graph_run_mode"].i = 1\ncustom_op.parameter_map["profiling_mode"].b = True\n'
                  'custom_op.parameter_map["profiling_options"].s = b\'{"output": "/tmp/p", "training_trace": "on"}\'\n',
        PRELUDE + 'custom_op.parameter_map["modify_mixlist"].s = b"/home/ops.json"\n'
                  'custom_op.parameter_map["precision_mode_v2"].s = b"mixed_float16"\n',
        # dump_path from a flag whose default is None: the real run passes it, nothing claims it is absent
        "import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
        "tf.flags.DEFINE_string('dump_dir', None, 'where to dump')\nFLAGS = tf.flags.FLAGS\n"
        "dump = DumpConfig(enable_dump=True, dump_path=FLAGS.dump_dir)\n",
    )

    def check(self, ctx):
        yield from relation_findings(self, ctx)
        yield from field_requirement_findings(self, ctx)
