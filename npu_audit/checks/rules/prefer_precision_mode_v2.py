from npu_audit.checks.base import Rule, describe
from npu_audit.checks.helpers import edit_for, fixable_here, requote, value_is_the_literal
from npu_audit.checks.rules import PRELUDE
from npu_audit.findings import Fix


def _inside(inner, outer) -> bool:
    if inner is None or outer is None:
        return False
    return (inner.line, inner.column) >= (outer.line, outer.column) and (inner.end_line, inner.end_column) <= (
        outer.end_line, outer.end_column)


class PreferPrecisionModeV2(Rule):
    code = "NPU501"
    name = "prefer-precision-mode-v2"
    severity = "info"
    summary = "precision_mode where the current release recommends precision_mode_v2 (with the value mapping)."
    what = (
        "Reports precision_mode (parameter_map, NPURunConfig keyword or TF2 `global_options()` attribute) in the current release and gives the "
        "precision_mode_v2 value with the same documented behaviour: allow_mix_precision(_fp16) -> mixed_float16, "
        "allow_mix_precision_bf16 -> mixed_bfloat16, must_keep_origin_dtype -> origin, force_fp16 -> fp16, "
        "force_fp32/cube_fp16in_fp32out -> cube_fp16in_fp32out. allow_fp32_to_fp16 and allow_fp32_to_bf16 have "
        "no exact v2 equivalent."
    )
    why = (
        "The docs recommend precision_mode_v2 and forbid setting both on one entry; migrating while the mapping "
        "is exact keeps the numerics unchanged."
    )
    example_bad = 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")'
    example_good = 'custom_op.parameter_map["precision_mode_v2"].s = tf.compat.as_bytes("mixed_float16")'
    fix_safety = (
        "Safe for the rows the migration table marks exact (the docs describe identical behaviour), when key and "
        "value are literals written at the option. Values from constants or flag defaults are not rewritten."
    )
    invalid = (PRELUDE + 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n',
               "from npu_bridge.npu_init import *\nrun_config = NPURunConfig(precision_mode=\"must_keep_origin_dtype\")\n")
    valid = (PRELUDE + 'custom_op.parameter_map["precision_mode_v2"].s = tf.compat.as_bytes("mixed_float16")\n',
             '# npu-audit-test: release=legacy\n' + PRELUDE
             + 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n')

    def check(self, ctx):
        if ctx.settings.release != "current":
            return
        migration = ctx.kb.migrations.get("precision_mode_v2")
        if migration is None:
            return
        for _config, entry, w in ctx.user_writes():
            if w.key != migration.from_key or not w.value.resolved:
                continue
            value = w.value.decoded()
            row = migration.row(value)
            if row is None:
                continue
            fix = None
            if row.exact:
                message = f"precision_mode is superseded by precision_mode_v2: write precision_mode_v2 = {describe(row.new)}"
                fix = self._fix(ctx, entry, w, migration.to_key, row.new)
                hint = f"precision_mode_v2 = {row.new!r} behaves the same"
            else:
                why = f": {row.note.rstrip('.')}" if row.note else ""
                message = f"precision_mode {describe(value)} has no exact precision_mode_v2 equivalent{why}"
                hint = "keep precision_mode, or choose a precision_mode_v2 value after checking accuracy"
            f = ctx.finding(self, w.path, w.key_range or w.range, message, calls=w.calls, write=w, option=w.key, fix=fix,
                            hint=hint, certainty=w.certainty, branch=w.branch_text())
            if f:
                yield f

    def _fix(self, ctx, entry, w, to_key, new_value):
        if not fixable_here(ctx, w) or "precision_mode_v2" in entry.effective():
            return None
        node = w.value.source_node
        node_range = ctx.extraction.range_of(node) if node is not None and w.value.source_path == ctx.path else None
        if (node_range is None or not _inside(node_range, w.value_range) or w.value.origin != "literal"
                or not value_is_the_literal(w)):
            return None
        new_literal = requote(node.value, str(new_value))
        if new_literal is None or w.key_range is None or w.key_node is None:
            return None
        if w.via == "parameter_map":
            new_key = requote(getattr(w.key_node, "value", ""), to_key)
        else:
            new_key = to_key  # NPURunConfig keyword
        if not new_key:
            return None
        return Fix("safe", f"Migrate to {to_key} = {new_value!r}",
                   (edit_for(w.key_range, new_key), edit_for(node_range, new_literal)))
