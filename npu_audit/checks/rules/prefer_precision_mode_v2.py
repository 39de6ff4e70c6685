from npu_audit.checks.base import Expect, Invalid, Rule, describe
from npu_audit.checks.helpers import (
    comparison_place,
    edit_for,
    fixable_here,
    flag_compared_with,
    requote,
    value_is_the_literal,
)
from npu_audit.checks.rules import FLAG_PRELUDE, PRELUDE
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
        "no exact v2 equivalent. A value with a newer precision_mode name (renamed-value) gets one finding: this "
        "one, naming the newer name as the alternative for a script that keeps precision_mode. When the value is "
        "a flag default that the script also compares with (`if FLAGS.precision_mode == \"allow_mix_precision\":`), "
        "the message says that the comparison must change with it."
    )
    why = (
        "The docs recommend precision_mode_v2 and forbid setting both on one entry; migrating while the mapping "
        "is exact keeps the numerics unchanged."
    )
    fix = "sometimes"
    fix_applicability = ("safe",)
    fix_safety = (
        "Safe for the rows the migration table marks exact (the docs describe identical behaviour), when key and "
        "value are literals written at the option. Values from constants or flag defaults are not rewritten. "
        "Every precision_mode write of the session (all its NpuOptimizer entries, NPURunConfig's keyword included) "
        "moves in one fix; when one of them cannot move, or precision_mode_v2 is already set, no fix is offered: "
        "moving some writes only would leave both keys in the session, or let another entry's value win."
    )
    invalid = (
        Invalid(
            PRELUDE + 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n',
            (Expect(7, 25, "precision_mode is superseded by precision_mode_v2: write precision_mode_v2 = "
                           "'mixed_float16'; if you keep precision_mode, write its newer name "
                           "'allow_mix_precision_fp16' instead of 'allow_mix_precision' (the same mode)"),),
            fixed=PRELUDE + 'custom_op.parameter_map["precision_mode_v2"].s = tf.compat.as_bytes("mixed_float16")\n',
        ),
        Invalid(
            "from npu_bridge.npu_init import *\nrun_config = NPURunConfig(precision_mode=\"must_keep_origin_dtype\")\n",
            (Expect(2, 27, "precision_mode is superseded by precision_mode_v2: write precision_mode_v2 = 'origin'"),),
            fixed='from npu_bridge.npu_init import *\nrun_config = NPURunConfig(precision_mode_v2="origin")\n',
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_fp32_to_fp16")\n',
            (Expect(7, 25, "precision_mode is superseded by precision_mode_v2, but 'allow_fp32_to_fp16' has no exact "
                           "precision_mode_v2 equivalent: keep it, or choose a precision_mode_v2 value after checking "
                           "accuracy"),),
        ),
        Invalid(  # a flag default the script compares with: migrating the default alone breaks the `if`
            FLAG_PRELUDE + 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(args.precision_mode)\n'
                           'if args.precision_mode == "allow_mix_precision":\n'
                           '    custom_op.parameter_map["modify_mixlist"].s = b"ops_info.json"\n',
            (Expect(11, 25, "precision_mode is superseded by precision_mode_v2: write precision_mode_v2 = "
                            "'mixed_float16'; the value is the default of flag 'precision_mode', which line 12 "
                            "compares with 'allow_mix_precision': change that comparison together with the default, "
                            "or what it guards is silently switched off; if you keep precision_mode, write its "
                            "newer name 'allow_mix_precision_fp16' instead of 'allow_mix_precision' (the same "
                            "mode)"),),
        ),
    )
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
                fix = self._fix_together(ctx, entry, w, migration) if fixable_here(ctx, w) else None
                hint = f"precision_mode_v2 = {row.new!r} behaves the same"
                if isinstance(fix, str):
                    hint += f"; no automatic fix: {fix}"
                    fix = None
            else:  # (why not: the migration row's note, shown by --explain precision_mode and hovers)
                message = (f"precision_mode is superseded by precision_mode_v2, but {describe(value)} has no exact "
                           "precision_mode_v2 equivalent: keep it, or choose a precision_mode_v2 value after checking "
                           "accuracy")
                hint = f"`npu-audit --explain precision_mode` says how each precision_mode_v2 value differs from {value}"
            compared = flag_compared_with(ctx, w, value)
            if compared is not None:  # (a flag default: never fixed, the literal is not at the write)
                where = comparison_place(ctx, compared)
                message += (f"; the value is the default of flag '{w.value.flag}', which {where} compares with "
                            f"{describe(value)}: change that comparison together with the default, or what it "
                            "guards is silently switched off")
                hint += f"; change the comparison at {where} as well"
            f = ctx.report(self, w, message, at="key", fix=fix, hint=hint)
            if f:
                yield f

    def _fix_together(self, ctx, entry, w, migration):
        """One fix moving every precision_mode write of the entries the adapter merges with ``entry``
        (every config holding it); None, or why not when another write blocks it: migrating one write
        alone would leave precision_mode and precision_mode_v2 together, or let another entry's
        precision_mode decide."""
        entries = {id(e): e for c in ctx.configs if any(x is entry for x in c.all_entries())
                   for e in c.npu_entries()}
        entries.setdefault(id(entry), entry)
        edits, values = [], []
        for e in entries.values():
            for x in e.writes:
                if x.key == migration.to_key:
                    return None
                if x.key != migration.from_key:
                    continue
                row = migration.row(x.value.decoded()) if x.value.resolved and not x.implicit else None
                one = self._fix(ctx, x, migration.to_key, row.new) if row is not None and row.exact else None
                if one is None:
                    if x is w or x.range is None:
                        return None
                    where = f"line {x.range.line}" if x.path == ctx.path else f"{x.path}:{x.range.line}"
                    return (f"precision_mode is also written at {where} with a value that cannot move with it "
                            "(every write must move together, or the session would get both keys or another value)")
                edits.extend(ed for ed in one if ed not in edits)
                values.append(row.new)
        if not edits:
            return None
        if len(values) == 1:
            return Fix("safe", f"Migrate to {migration.to_key} = {values[0]!r}", tuple(edits))
        return Fix("safe", f"Migrate the {len(values)} precision_mode writes of this session to {migration.to_key} "
                   f"({', '.join(repr(v) for v in dict.fromkeys(values))})", tuple(edits))

    def _fix(self, ctx, w, to_key, new_value):
        if not fixable_here(ctx, w):
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
        return (edit_for(w.key_range, new_key), edit_for(node_range, new_literal))
