from npu_audit.checks.base import Rule
from npu_audit.checks.helpers import delete_statement
from npu_audit.checks.rules import PRELUDE
from npu_audit.checks.rules._relation_rule import relation_findings
from npu_audit.findings import Fix


class _NoOption:
    candidates: list = []


_NONE = _NoOption()


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
    fix_safety = (
        "For precision_mode together with precision_mode_v2, an unsafe fix removes the precision_mode line "
        "(the docs recommend precision_mode_v2): unsafe because only you know which of the two you meant. "
        "Other conflicts have no automatic fix."
    )
    invalid = (
        PRELUDE + 'custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"\n'
                  'custom_op.parameter_map["precision_mode_v2"].s = b"mixed_float16"\n',
        PRELUDE + 'custom_op.parameter_map["stream_sync_timeout"].i = 600\n'
                  'custom_op.parameter_map["hccl_timeout"].i = 1800\n',
    )
    valid = (PRELUDE + 'custom_op.parameter_map["precision_mode_v2"].s = b"mixed_float16"\n',)

    def check(self, ctx):
        yield from relation_findings(self, ctx, fix_for=self._fix)
        yield from self._precision_across_entries(ctx)

    def _precision_across_entries(self, ctx):
        """precision_mode on one NpuOptimizer entry and precision_mode_v2 on another of the same config
        (NPURunConfig(session_config=cfg, precision_mode_v2=...)): the adapter's exclusion check runs per
        entry, so both reach the compiler although the docs forbid using them together."""
        for config in ctx.configs:
            entries = [e for e in config.all_entries() if e.is_npu]
            if len(entries) < 2:
                continue
            v1 = [(e, w) for e in entries for w in e.effective().get("precision_mode", _NONE).candidates if not w.implicit]
            v2 = [(e, w) for e in entries for w in e.effective().get("precision_mode_v2", _NONE).candidates if not w.implicit]
            for e1, w1 in v1:
                for e2, w2 in v2:
                    if e1 is e2:
                        continue  # the per-entry relation reports it
                    related = [r for r in [ctx.related_write(w2, "precision_mode_v2 is set on another entry here")] if r]
                    f = ctx.finding(self, w1.path, w1.key_range or w1.range,
                                    "precision_mode and precision_mode_v2 are set on two NpuOptimizer entries of one "
                                    "session config: the adapter checks their exclusion per entry, so both reach the "
                                    "compiler although they must not be used together",
                                    calls=w1.calls, write=w1, severity="warning", option="precision_mode",
                                    related=related, hint="keep only precision_mode_v2",
                                    certainty="conditional" if (w1.conditional or w2.conditional) else "always",
                                    branch=w1.branch_text() or w2.branch_text())
                    if f:
                        yield f

    @staticmethod
    def _fix(ctx, hit):
        if hit.relation.id != "precision-mode-excludes-precision-mode-v2" or hit.anchor.key != "precision_mode":
            return None
        if hit.anchor.conditional or hit.anchor.via != "parameter_map":
            return None
        edit = delete_statement(ctx, hit.anchor)
        if edit is None:
            return None
        return Fix("unsafe", "Remove precision_mode and keep precision_mode_v2 (recommended by the docs)", (edit,))
