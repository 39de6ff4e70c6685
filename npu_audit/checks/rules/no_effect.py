from npu_audit.checks import tf2
from npu_audit.checks.base import Expect, Invalid, Rule
from npu_audit.checks.helpers import fixable_here
from npu_audit.checks.rules import PRELUDE
from npu_audit.checks.rules._relation_rule import relation_findings
from npu_audit.findings import Edit, Fix


class NoEffect(Rule):
    code = "NPU302"
    name = "no-effect"
    severity = "warning"
    tags = ("unnecessary",)
    summary = "An option that does nothing here: ineffective in the release, overridden, or switched off."
    what = (
        "Reports options documented as having no effect (or not supported) in the target release, options "
        "overridden by another option that is set (op_precision_mode over op_select_implmode), and options "
        "only read when a switch is on that is off (dump_path without enable_dump, profiling_options without "
        "profiling_mode, work_path without aoe_mode, ...). A write gets one finding: further reasons (another "
        "relation, or the scenario-mismatch of a write that is not read anyway) are appended to its message "
        "and their locations added as related information. A config object (DumpConfig, ProfilingConfig, "
        "...) whose NPURunConfig is not seen (built in a helper and returned, handed to another package) is "
        "checked on its own: for relations among the keys that object writes (DumpConfig writes enable_dump, "
        "False unless given), the finding on its keyword."
    )
    why = "The job runs, but not as written: the setting you rely on is silently not applied on the device."
    fix = "sometimes"
    fix_applicability = ("unsafe",)
    fix_safety = (
        "For options documented as ineffective in the release, an unsafe fix removes the statement "
        "(unsafe because it also removes any side effect of the expression)."
    )
    invalid = (
        Invalid(
            PRELUDE + 'custom_op.parameter_map["graph_memory_max_size"].s = tf.compat.as_bytes(str(26*1024*1024*1024))\n',
            (Expect(7, 25, "'graph_memory_max_size' has no effect in the current release (GE sizes memory from what "
                           "the network really uses and ignores the value; the docs also list the option as going "
                           "away): the value is not applied on the device, so the setting can be removed",
                    hint="remove this setting"),),
            fixed=PRELUDE,
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["profiling_options"].s = b\'{"output": "/tmp/p"}\'\n',
            (Expect(7, 25, "profiling_options is only read when profiling_mode is True; otherwise the options are "
                           "silently dropped (the PROFILING_MODE environment variable does not make the adapter read "
                           "this key)"),),
        ),
        Invalid(  # one write ignored for two reasons: one finding naming both
            PRELUDE + 'custom_op.parameter_map["compile_dynamic_mode"].b = True\n'
                      'custom_op.parameter_map["jit_compile"].s = b"false"\n'
                      'custom_op.parameter_map["shape_generalization_mode"].s = b"ADAPTIVE"\n',
            (Expect(9, 25, 'shape_generalization_mode only steers online operator compilation (jit_compile "true"); '
                           'with jit_compile "auto" (the default) or "false" the FULL/ADAPTIVE generalization is not '
                           "applied; moreover, with compile_dynamic_mode=True every input shape is generalized to -1 "
                           "from the first iteration on, so the FULL/ADAPTIVE choice of shape_generalization_mode has "
                           "nothing left to do"),),
        ),
        Invalid(  # never read, and in the wrong scenario too: one finding (scenario-mismatch folded in)
            PRELUDE + 'custom_op.parameter_map["graph_run_mode"].i = 0\n'
                      'custom_op.parameter_map["work_path"].s = b"./tuning"\n',
            (Expect(8, 25, "work_path is the AOE working directory and is only read when tuning is on (aoe_mode, or "
                           "the AOE_MODE environment variable); otherwise it is silently unused; moreover, "
                           "'work_path' is documented for training only, but this config is for online inference "
                           "(graph_run_mode)"),),
        ),
        Invalid(  # in the legacy release's table as not supported: the current release is named as the way out
            "# npu-audit-test: release=legacy\n" + PRELUDE + 'custom_op.parameter_map["aoe_mode"].s = b"2"\n',
            (Expect(8, 25, "'aoe_mode' is not supported in the legacy release (that release's option table says so): "
                           "do not count on the value being applied on the device; remove the setting, or check the "
                           "script with --release current if the job runs on the current release"),),
        ),
        Invalid(  # a DumpConfig no NPURunConfig npu-audit reads takes: checked where it is built
            "from npu_bridge.npu_init import *\n\n\ndef dump_settings():\n"
            "    return DumpConfig(enable_dump_debug=True, dump_path='/tmp/overflow', dump_step='0|5')\n",
            (Expect(5, 74, "dump_step selects the iterations of a data dump and is only read when enable_dump is True; "
                           "otherwise it is silently unused",
                    hint="set enable_dump to True (with dump_path), or remove dump_step", option="dump_step"),),
        ),
        Invalid(  # a keyword of a config object given to NPURunConfig
            "from npu_bridge.npu_init import *\n\n\ndef run_config():\n"
            "    return NPURunConfig(dump_config=DumpConfig(dump_step='0|5'), model_dir='/tmp/model')\n",
            (Expect(5, 48, "dump_step selects the iterations of a data dump and is only read when enable_dump is True; "
                           "otherwise it is silently unused",
                    hint="set enable_dump to True (with dump_path), or remove dump_step", option="dump_step"),),
        ),
    )
    valid = (PRELUDE + 'custom_op.parameter_map["profiling_mode"].b = True\n'
                       'custom_op.parameter_map["profiling_options"].s = b\'{"output": "/tmp/p"}\'\n',
             '# npu-audit-test: release=legacy\n' + PRELUDE + 'custom_op.parameter_map["graph_memory_max_size"].s = b"1024"\n',
             # keywords spelled out with DumpConfig's own defaults: NPUEstimator writes them anyway
             "from npu_bridge.npu_init import *\n\n\ndef placeholder():\n"
             "    return DumpConfig(enable_dump=False, dump_mode='output', enable_dump_debug=False, dump_debug_mode='all')\n")

    def check(self, ctx):
        yield from relation_findings(self, ctx)
        yield from tf2.no_effect(self, ctx)
        release = ctx.settings.release
        for _config, _entry, w in ctx.user_writes():
            spec = ctx.spec(w.key)
            if spec is None:
                continue
            life = spec.lifecycle[release]
            if life.status not in ("no-effect", "not-supported"):
                continue
            what = "has no effect" if life.status == "no-effect" else "is not supported"
            message = f"'{w.key}' {what} in the {release} release"
            if life.note:
                message += f" ({life.note.rstrip('.')})"
            if life.status == "no-effect":
                message += ": the value is not applied on the device, so the setting can be removed"
            else:
                message += ": do not count on the value being applied on the device; remove the setting"
                if release != "current" and spec.lifecycle["current"].status not in ("no-effect", "not-supported"):
                    message += ", or check the script with --release current if the job runs on the current release"
            fix = None
            if life.status == "no-effect" and fixable_here(ctx, w) and w.stmt_node is not None and w.via == "parameter_map":
                stmt_range = ctx.extraction.range_of(w.stmt_node)
                if stmt_range is not None and len(getattr(w.stmt_node, "body", ())) == 1:
                    fix = Fix("unsafe", f"Remove the '{w.key}' line",
                              (Edit(stmt_range.line, 1, stmt_range.end_line + 1, 1, ""),))
            f = ctx.report(self, w, message, at="key", fix=fix, hint="remove this setting")
            if f:
                yield f
