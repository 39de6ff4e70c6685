from npu_audit.checks import tf2
from npu_audit.checks.base import Expect, Invalid, Rule
from npu_audit.checks.tf2 import PRELUDE


class OptionAfterOpen(Rule):
    code = "NPU307"
    name = "option-after-open"
    severity = "error"
    summary = "A TensorFlow 2 option set on npu_device.global_options() after npu_device.open(): it has no effect."
    what = (
        "Follows the order in which a TF2 script runs (helpers, branches, the main guard) and reports every "
        "write to `npu_device.global_options()` made after the `npu_device.open()` call that opens the device. "
        "A write after an open() in one branch only is reported as 'may happen'. A write that raises when it "
        "runs (an option the release's option object does not have, such as the removed `auto_tune_mode`, or "
        "a value the option rejects) is not reported here: it sets nothing, and unknown-option or "
        "invalid-value already reports the exception on that line."
    )
    why = (
        "The TF2 adapter reads the whole option object once, when open() creates the device, and never again: "
        "later assignments succeed without any message but are not applied, so the job runs with the value "
        "the option had at open() (e.g. no dump, another precision mode)."
    )
    fix_safety = "No automatic fix: moving the line before open() may change what the lines in between compute."
    invalid = (
        Invalid(
            PRELUDE + 'npu.open().as_default()\nnpu.global_options().precision_mode_v2 = "mixed_float16"\n',
            (Expect(4, 22, "global_options().precision_mode_v2 is set after npu_device.open() at line 3: the adapter "
                           "read the options when it opened the device, so this setting has no effect"),),
        ),
        Invalid(
            PRELUDE + 'def configure():\n    npu.global_options().dump_config.enable_dump = True\n\n'
                      'npu.open().as_default()\nconfigure()\n',
            (Expect(4, 38, "global_options().dump_config.enable_dump is set after npu_device.open() at line 6: the "
                           "adapter read the options when it opened the device, so this setting has no effect"),),
        ),
    )
    valid = (
        PRELUDE + 'npu.global_options().precision_mode_v2 = "mixed_float16"\nnpu.open().as_default()\n',
        PRELUDE + 'def configure():\n    npu.global_options().dump_config.enable_dump = True\n'
                  '    npu.global_options().dump_config.dump_path = "/tmp/dump"\n\n'
                  'configure()\nnpu.open().as_default()\n',
        # the assignment raises ValueError (a removed option: unknown-option), so nothing is set after open()
        PRELUDE + 'npu.open().as_default()\nif tune:\n    npu.global_options().auto_tune_mode = "RL,GA"\n',
        # the assignment raises ValueError (a value the option rejects: invalid-value)
        PRELUDE + 'npu.open().as_default()\nnpu.global_options().precision_mode = "mixed_fp16"\n',
    )

    def check(self, ctx):
        return tf2.late_writes(self, ctx)
