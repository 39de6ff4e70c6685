from npu_audit.checks.base import Expect, Invalid, Rule, describe
from npu_audit.checks.helpers import (
    comparison_place,
    edit_for,
    fixable_here,
    flag_compared_with,
    literal_subrange,
    requote,
    value_is_the_literal,
)
from npu_audit.checks.rules import FLAG_PRELUDE, PRELUDE
from npu_audit.findings import Fix


class RenamedValue(Rule):
    code = "NPU306"
    name = "renamed-value"
    severity = "info"
    summary = "A value written with its old name (legacy engine names, aliases the docs replaced)."
    what = (
        "Reports values that have a newer documented name: legacy stream_max_parallel_num engine names "
        "(DNN_VM_TF, DNN_V100 -> DNN_VM_AICPU, AIcoreEngine) and value aliases such as precision_mode "
        "allow_mix_precision (now allow_mix_precision_fp16) or force_fp32 (now cube_fp16in_fp32out). "
        "On a precision_mode write that prefer-precision-mode-v2 reports, the rename is folded into that "
        "finding as the alternative (moving to precision_mode_v2 replaces the value anyway). When the value "
        "is a flag default that the script also compares with the old name (`if FLAGS.precision_mode == "
        "\"allow_mix_precision\":`), the message says so: renaming the default alone would switch off "
        "what that `if` guards."
    )
    why = (
        "Aliases behave the same but read as different modes; legacy engine names are not the names the "
        "current runtime documents, so the parallelism setting may not be applied to any engine."
    )
    fix = "sometimes"
    fix_applicability = ("safe",)
    fix_safety = ("Safe: the rename tables (rules/migrations.toml) and value aliases are documented equivalences. "
                  "Only literals written at the option are renamed: never a flag default (which the script may "
                  "also compare with the old name) or a constant.")
    invalid = (
        Invalid(
            PRELUDE + 'custom_op.parameter_map["stream_max_parallel_num"].s = b"DNN_VM_TF:10,DNN_V100:1"\n',
            (Expect(7, 58, "legacy engine name(s) in 'stream_max_parallel_num' (DNN_VM_TF -> DNN_VM_AICPU, DNN_V100 "
                           "-> AIcoreEngine): the current release documents the new names", severity='warning'),),
            fixed=PRELUDE + 'custom_op.parameter_map["stream_max_parallel_num"].s = b"DNN_VM_AICPU:10,AIcoreEngine:1"\n',
        ),
        Invalid(  # (staying on precision_mode: alone, this is folded into prefer-precision-mode-v2)
            PRELUDE + 'custom_op.parameter_map["precision_mode"].s = b"force_fp32"  '
                      '# npu-audit: ignore[prefer-precision-mode-v2]\n',
            (Expect(7, 47, "'force_fp32' is the old name of 'cube_fp16in_fp32out' for 'precision_mode' "
                           "(cube_fp16in_fp32out is the newer, clearer name with the same effect)"),),
            fixed=PRELUDE + 'custom_op.parameter_map["precision_mode"].s = b"cube_fp16in_fp32out"  '
                            '# npu-audit: ignore[prefer-precision-mode-v2]\n',
        ),
        Invalid(
            PRELUDE + 'MODE = "force_fp32"\ncustom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(MODE)  '
                      '# npu-audit: ignore[NPU501]\n',
            (Expect(8, 47, "'force_fp32' is the old name of 'cube_fp16in_fp32out' for 'precision_mode' "
                           "(cube_fp16in_fp32out is the newer, clearer name with the same effect)"),),
        ),
        Invalid(  # a flag default the script compares with the old name: renaming the default alone breaks the `if`
            FLAG_PRELUDE + 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(args.precision_mode)  '
                           '# npu-audit: ignore[NPU501]\n'
                           'if args.precision_mode == "allow_mix_precision":\n'
                           '    custom_op.parameter_map["modify_mixlist"].s = b"ops_info.json"\n',
            (Expect(11, 47, "'allow_mix_precision' is the old name of 'allow_mix_precision_fp16' for 'precision_mode' "
                            "(allow_mix_precision_fp16 is the newer, clearer name for the same float16 mixed "
                            "precision); but it is the default of flag 'precision_mode', which line 12 compares with "
                            "'allow_mix_precision': renaming only the default turns that comparison false and "
                            "silently switches off what it guards"),),
        ),
    )
    valid = (PRELUDE + 'custom_op.parameter_map["stream_max_parallel_num"].s = b"DNN_VM_AICPU:10,AIcoreEngine:1"\n',
             '# npu-audit-test: release=legacy\n' + PRELUDE
             + 'custom_op.parameter_map["stream_max_parallel_num"].s = b"DNN_VM_TF:10,DNN_V100:1"\n',
             # folded into prefer-precision-mode-v2 (which names the newer name as the alternative)
             PRELUDE + 'custom_op.parameter_map["precision_mode"].s = b"force_fp32"\n')

    def check(self, ctx):
        if ctx.settings.release != "current":
            return
        engines = ctx.kb.migrations.get("stream_engine_names")
        for _config, _entry, w in ctx.user_writes():
            if not w.value.resolved or not isinstance(w.value.decoded(), str):
                continue
            value = w.value.decoded()
            if engines is not None and w.key == engines.from_key:
                yield from self._engines(ctx, w, value, engines)
                continue
            spec = ctx.spec(w.key)
            fact = spec.value_fact(value) if spec else None
            if fact is None or fact.preferred is None or fact.preferred == value:
                continue
            fix = None
            node = w.value.source_node
            if (fixable_here(ctx, w) and w.value.origin == "literal" and node is not None and value_is_the_literal(w)
                    and w.value.source_path == ctx.path and ctx.extraction.range_of(node)):
                new = requote(node.value, str(fact.preferred))
                if new:
                    fix = Fix("safe", f"Write {fact.preferred!r}", (edit_for(ctx.extraction.range_of(node), new),))
            message = (f"{describe(value)} is the old name of {describe(fact.preferred)} for '{w.key}'"
                       + (f" ({fact.note})" if fact.note else ""))
            hint = f"write {fact.preferred!r}"
            compared = flag_compared_with(ctx, w, value)
            if compared is not None:  # (a flag default: never fixed, the literal is not at the write)
                where = comparison_place(ctx, compared)
                message += (f"; but it is the default of flag '{w.value.flag}', which {where} compares with "
                            f"{describe(value)}: renaming only the default turns that comparison false and "
                            "silently switches off what it guards")
                hint = (f"write {fact.preferred!r} both as the flag's default and in the comparison at {where} "
                        f"(or compare with both names)")
            f = ctx.report(self, w, message, at="value", fix=fix, hint=hint)
            if f:
                yield f

    def folded_reason(self, ctx, finding, write):
        """Folded into prefer-precision-mode-v2: migrating replaces the value, so the rename is the
        alternative for a script that keeps precision_mode."""
        if write is None or not write.value.resolved:
            return None
        value = write.value.decoded()
        spec = ctx.spec(write.key)
        fact = spec.value_fact(value) if spec else None
        if fact is None or fact.preferred is None:
            return None
        return (f"if you keep {write.key}, write its newer name {describe(fact.preferred)} instead of "
                f"{describe(value)} (the same mode)")

    def _engines(self, ctx, w, value, migration):
        offset = 0
        new_items, changed, first_range = [], [], None
        for item in value.split(","):
            name, sep, rest = item.partition(":")
            row = migration.row(name.strip())
            if row is not None and row.exact and row.new:
                changed.append((name.strip(), row.new))
                first_range = first_range or literal_subrange(ctx, w, offset, offset + len(name))
                new_items.append(f"{row.new}{sep}{rest}")
            else:
                new_items.append(item)
            offset += len(item) + 1
        if not changed:
            return
        fix = None
        node = w.value.source_node
        if (fixable_here(ctx, w) and w.value.origin == "literal" and node is not None and value_is_the_literal(w)
                and w.value.source_path == ctx.path and ctx.extraction.range_of(node)):
            new = requote(node.value, ",".join(new_items))
            if new:
                fix = Fix("safe", "Use the current engine names", (edit_for(ctx.extraction.range_of(node), new),))
        names = ", ".join(f"{old} -> {new}" for old, new in changed)
        f = ctx.report(self, w, f"legacy engine name(s) in '{w.key}' ({names}): the current release documents the new names",
                       at=first_range or "value", severity="warning", fix=fix, hint="write " + repr(",".join(new_items)))
        if f:
            yield f
