from npu_audit.checks.base import Expect, Invalid, Rule
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
        "compile_hybrid_mode=1 needs dynamic_node_type=1, and more (`npu-audit --list-rules --format json`)."
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
    )
    valid = (
        PRELUDE + 'custom_op.parameter_map["enable_dump"].b = True\ncustom_op.parameter_map["dump_path"].s = b"/tmp"\n',
        PRELUDE + 'custom_op.parameter_map["modify_mixlist"].s = b"/home/ops.json"\n'
                  'custom_op.parameter_map["precision_mode_v2"].s = b"mixed_float16"\n',
        # dump_path from a flag whose default is None: the real run passes it, nothing claims it is absent
        "import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"
        "tf.flags.DEFINE_string('dump_dir', None, 'where to dump')\nFLAGS = tf.flags.FLAGS\n"
        "dump = DumpConfig(enable_dump=True, dump_path=FLAGS.dump_dir)\n",
    )

    def check(self, ctx):
        return relation_findings(self, ctx)
