from npu_audit.checks.base import Rule
from npu_audit.checks.rules import PRELUDE
from npu_audit.checks.rules._relation_rule import relation_findings


class ConflictingOptions(Rule):
    code = "NPU202"
    name = "conflicting-options"
    severity = "error"
    summary = "Options that exclude each other are set together."
    what = (
        "Checks the `excludes` relations on each NPU entry: precision_mode with precision_mode_v2, "
        "enable_dump with enable_dump_debug, compile_dynamic_mode with dynamic_input or the dynamic-dims "
        "options, stream_sync_timeout not above hccl_timeout, enable_compress_weight with "
        "compress_weight_conf, and more."
    )
    why = (
        "Some combinations make the adapter refuse the session or abort the process (precision_mode with "
        "precision_mode_v2, compress-weight options); others are documented as unsupported and fail or "
        "time out on the device."
    )
    example_bad = ('custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n'
                   'custom_op.parameter_map["precision_mode_v2"].s = tf.compat.as_bytes("mixed_float16")')
    example_good = 'custom_op.parameter_map["precision_mode_v2"].s = tf.compat.as_bytes("mixed_float16")'
    fix_safety = "No automatic fix: which of the two options you meant is a decision only you can make."
    invalid = (
        PRELUDE + 'custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"\n'
                  'custom_op.parameter_map["precision_mode_v2"].s = b"mixed_float16"\n',
        PRELUDE + 'custom_op.parameter_map["stream_sync_timeout"].i = 600\n'
                  'custom_op.parameter_map["hccl_timeout"].i = 1800\n',
    )
    valid = (PRELUDE + 'custom_op.parameter_map["precision_mode_v2"].s = b"mixed_float16"\n',)

    def check(self, ctx):
        return relation_findings(self, ctx)
