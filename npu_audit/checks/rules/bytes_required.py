from npu_audit.checks.base import Rule
from npu_audit.checks.helpers import fixable_here
from npu_audit.checks.rules import PRELUDE
from npu_audit.checks.rules.wrong_field import _tf_alias
from npu_audit.findings import Edit, Fix


class BytesRequired(Rule):
    code = "NPU103"
    name = "bytes-required"
    severity = "error"
    summary = "`.s` given a Python str: TypeError when the script starts."
    what = "Reports `parameter_map[key].s = <str>`: the `s` field of AttrValue is a bytes field."
    why = (
        "Under Python 3, protobuf refuses a str for a bytes field (`TypeError: expected bytes, str found`), "
        "so the script dies while it builds the session config, before anything runs on the device."
    )
    example_bad = 'custom_op.parameter_map["precision_mode"].s = "allow_mix_precision"'
    example_good = 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")'
    fix_safety = (
        "Safe: wrapping the value in `tf.compat.as_bytes(...)` (or writing a bytes literal when TensorFlow "
        "is not imported under a known name) stores exactly the UTF-8 bytes the docs show."
    )
    invalid = (PRELUDE + 'custom_op.parameter_map["precision_mode"].s = "allow_mix_precision"\n',)
    valid = (
        PRELUDE + 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n',
        PRELUDE + 'custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"\n',
        PRELUDE + 'custom_op.parameter_map["precision_mode"].s = "allow_mix_precision".encode()\n',
    )

    def check(self, ctx):
        for _config, _entry, w in ctx.user_writes():
            if w.field != "s" or w.via != "parameter_map" or not w.value.resolved or not isinstance(w.value.python, str):
                continue
            fix = None
            if fixable_here(ctx, w) and w.value_range is not None and w.value_node is not None:
                r = w.value_range
                alias = _tf_alias(ctx, w)
                text = getattr(w.value_node, "value", "")
                if alias:
                    # insert around the value: its own text (parentheses, comments) stays as it is
                    fix = Fix("safe", f"Wrap in {alias}.compat.as_bytes(...)",
                              (Edit(r.line, r.column, r.line, r.column, f"{alias}.compat.as_bytes("),
                               Edit(r.end_line, r.end_column, r.end_line, r.end_column, ")")))
                elif (w.value.source_node is w.value_node and isinstance(text, str) and text[:1] in "'\""
                      and w.value.python.isascii()):
                    fix = Fix("safe", "Use a bytes literal", (Edit(r.line, r.column, r.line, r.column, "b"),))
            f = ctx.finding(self, w.path, w.value_range or w.range,
                            f"'{w.key}' is a bytes field: assigning a str raises TypeError when the script builds the config",
                            calls=w.calls, write=w, option=w.key, fix=fix, certainty=w.certainty, branch=w.branch_text(),
                            hint="wrap the value in tf.compat.as_bytes(...)")
            if f:
                yield f
