"""A session-config option that the older adapters' NPUEstimator overwrites with its own default."""

from npu_audit.checks.base import Expect, Invalid, Rule, describe
from npu_audit.checks.rules import PRELUDE
from npu_audit.findings import Related

LEGACY = "# npu-audit-test: release=legacy\n"
_CODE = PRELUDE + 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n'


class EstimatorOverrides(Rule):
    code = "NPU308"
    name = "estimator-overrides"
    severity = "error"
    tags = ("unnecessary",)
    summary = "An option of NPURunConfig's session_config that the release's NPUEstimator overwrites with its default."
    what = (
        "Reports an option written in the session config handed to `NPURunConfig(session_config=...)` that the "
        "NpuOptimizer entry NPUEstimator appends overwrites, in the release checked, because the NPURunConfig keyword "
        "for it is left unset: in the legacy adapters (late 2020 to early 2023) that entry wrote `precision_mode` "
        "(allow_fp32_to_fp16 for training, force_fp16 for online inference), and until early 2023 `op_debug_level` "
        "(0) and `variable_format_optimize` (True). The facts, per release and with the commits that show them, "
        "are rules/estimator_entry.toml. Defaults the current NPURunConfig writes are duplicate-option's (NPU305). "
        "Nothing is reported when NPURunConfig is given positional or `**` arguments (the keywords are not known) "
        "or when the value is not known."
    )
    why = (
        "The adapter reads every NpuOptimizer entry in order and a later one overwrites an earlier one key by key: "
        "the estimator's default replaces the value of your session config, with no message. A precision_mode of "
        "allow_mix_precision then runs without mixed precision (slower, and the config's modify_mixlist is not "
        "applied); a debug level or format setting is silently not applied."
    )
    invalid = (
        Invalid(
            LEGACY + _CODE + "run_config = NPURunConfig(session_config=config, iterations_per_loop=10)\n",
            (Expect(8, 1, "precision_mode 'allow_mix_precision' has no effect with the legacy adapter: NPUEstimator "
                          "appends its own NpuOptimizer entry after this config's, and when NPURunConfig(...) is not "
                          "given precision_mode= that entry writes precision_mode = 'allow_fp32_to_fp16' (adapter "
                          "branches r1.1.1 to r1.12.0 and r3.1.0, late 2020 to early 2023); the graph is compiled "
                          "with that precision mode instead of yours (with allow_mix_precision set here, it runs "
                          "without mixed precision: slower, and a modify_mixlist of this config is not applied)",
                    hint="pass precision_mode='allow_mix_precision' to NPURunConfig(...) instead: the estimator's "
                         "entry then writes your value", option="precision_mode"),),
        ),
        Invalid(  # online inference: the default is force_fp16; a format switch is overwritten too
            LEGACY + PRELUDE
            + 'custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"\n'
              'custom_op.parameter_map["variable_format_optimize"].b = False\n'
              "run_config = NPURunConfig(session_config=config, graph_run_mode=0)\n",
            (Expect(8, 1, "precision_mode 'allow_mix_precision' has no effect with the legacy adapter: NPUEstimator "
                          "appends its own NpuOptimizer entry after this config's, and when NPURunConfig(...) is not "
                          "given precision_mode= that entry writes precision_mode = 'force_fp16' (adapter branches "
                          "r1.1.1 to r1.12.0 and r3.1.0, late 2020 to early 2023); the graph is compiled with that "
                          "precision mode instead of yours (with allow_mix_precision set here, it runs without mixed "
                          "precision: slower, and a modify_mixlist of this config is not applied)"),
             Expect(9, 1, "variable_format_optimize False has no effect with the legacy adapter: NPUEstimator appends "
                          "its own NpuOptimizer entry after this config's, and when NPURunConfig(...) is not given "
                          "variable_format_optimize= that entry writes variable_format_optimize = True (adapter "
                          "branches r1.1.1 to r1.11.0, until early 2023); variable format optimization stays on, "
                          "whatever this config says", severity="warning",
                    hint="pass variable_format_optimize=False to NPURunConfig(...) instead: the estimator's entry "
                         "then writes your value")),
        ),
        Invalid(  # the scenario comes from a flag: either default replaces the value
            LEGACY + _CODE + "run_config = NPURunConfig(session_config=config, graph_run_mode=FLAGS.mode)\n",
            (Expect(8, 1, "precision_mode 'allow_mix_precision' has no effect with the legacy adapter: NPUEstimator "
                          "appends its own NpuOptimizer entry after this config's, and when NPURunConfig(...) is not "
                          "given precision_mode= that entry writes precision_mode = 'allow_fp32_to_fp16' or "
                          "'force_fp16' (adapter branches r1.1.1 to r1.12.0 and r3.1.0, late 2020 to early 2023); the "
                          "graph is compiled with that precision mode instead of yours (with allow_mix_precision set "
                          "here, it runs without mixed precision: slower, and a modify_mixlist of this config is not "
                          "applied)"),),
        ),
        Invalid(  # a config and its NPURunConfig built under one `if`: the entry is named on that path
            LEGACY + "import os\nimport tensorflow as tf\nfrom npu_bridge.npu_init import *\n\n"
            'if os.environ["USE_NPU"] == "1":\n'
            "    config = tf.ConfigProto()\n"
            "    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
            '    custom_op.name = "NpuOptimizer"\n'
            '    custom_op.parameter_map["op_debug_level"].i = 2\n'
            "    run_config = NPURunConfig(session_config=config)\n",
            (Expect(10, 5, "op_debug_level 2 has no effect with the legacy adapter: NPUEstimator appends its own "
                           "NpuOptimizer entry after this config's, and when NPURunConfig(...) is not given "
                           "op_debug_level= that entry writes op_debug_level = 0 (adapter branches r1.1.1 to r1.11.0, "
                           "until early 2023); the operators are compiled without the debug level set here "
                           '[may happen: if os.environ["USE_NPU"] == "1"]', severity="warning",
                    hint="pass op_debug_level=2 to NPURunConfig(...) instead: the estimator's entry then writes your "
                         "value"),),
        ),
    )
    valid = (
        LEGACY + PRELUDE + 'run_config = NPURunConfig(session_config=config, precision_mode="allow_mix_precision")\n',
        # the current adapter writes precision_mode only when NPURunConfig is given it
        _CODE + "run_config = NPURunConfig(session_config=config)\n",
        # the value the estimator writes anyway (training): nothing is lost
        LEGACY + PRELUDE + 'custom_op.parameter_map["precision_mode"].s = b"allow_fp32_to_fp16"\n'
                           "run_config = NPURunConfig(session_config=config)\n",
        # the keywords are not known: precision_mode may be among them
        LEGACY + _CODE + "run_config = NPURunConfig(session_config=config, **params)\n",
    )

    def check(self, ctx):
        model = getattr(ctx.kb, "estimator", None)
        rows = model.for_release(ctx.settings.release) if model is not None else ()
        if not rows:
            return
        seen = set()
        for config in ctx.configs:
            if not config.wraps:
                continue
            for entry in config.entries:
                if entry.kind != "npurunconfig" or not _keywords_known(entry.node):
                    continue
                own = entry.effective()
                inner = [e for wrapped in config.wraps for e in wrapped.all_entries() if e.is_npu is not False]
                for row in rows:
                    if row.key in own:  # given as a keyword, or written by default (npurunconfig.toml)
                        continue
                    written = _written(row, own)
                    if not written:
                        continue
                    for earlier in inner:
                        eff = earlier.effective().get(row.key)
                        mine = [w for w in eff.candidates if not w.implicit] if eff is not None else []
                        if not mine or (id(mine[-1]), row.key) in seen:
                            continue
                        w = mine[-1]
                        if not w.value.resolved or _same(w.value.decoded(), written) or not _named_npu(earlier, w):
                            continue
                        seen.add((id(w), row.key))
                        finding = self._report(ctx, row, w, written, entry)
                        if finding:
                            yield finding

    def _report(self, ctx, row, w, written, entry):
        value = w.value.decoded()
        ours = " or ".join(describe(v) for v in written)  # (values the entry may write, each unlike the config's)
        message = (f"{row.key} {describe(value)} has no effect with the {ctx.settings.release} adapter: NPUEstimator "
                   f"appends its own NpuOptimizer entry after this config's, and when NPURunConfig(...) is not given "
                   f"{row.kwarg}= that entry writes {row.key} = {ours} ({row.adapter_releases}); {row.effect}")
        related = []
        if entry.range is not None:
            related.append(Related(path=entry.path, line=entry.range.line, column=entry.range.column,
                                   message="NPUEstimator appends its entry for this NPURunConfig, after the config's"))
        return ctx.report(self, w, message, severity=row.severity, related=related, option=row.key,
                          hint=f"pass {row.kwarg}={describe(value)} to NPURunConfig(...) instead: the estimator's "
                               "entry then writes your value")


def _named_npu(entry, w) -> bool:
    """The entry is named NpuOptimizer on every run that makes the write ``w`` (a config built under an
    ``if``, its name written under the same ``if`` as the option)."""
    from npu_audit.checks.conditions import compatible

    if entry.is_npu is not None:
        return bool(entry.is_npu)
    path = {(b.node_id, b.arm) for b in w.branches}
    names = [x for x in entry.name_writes if compatible(x, path)]
    certain = [i for i, x in enumerate(names) if {(b.node_id, b.arm) for b in x.branches} <= path]
    return bool(certain) and all(x.value.resolved and x.value.decoded() == "NpuOptimizer"
                                 for x in names[certain[-1]:])


def _keywords_known(call) -> bool:
    """Whether every argument of the NPURunConfig call is a plain keyword (no positional, ``*`` or ``**``
    argument that could carry the keyword)."""
    args = getattr(call, "args", None)
    if args is None:
        return False
    return all(getattr(a, "keyword", None) is not None and not getattr(a, "star", "") for a in args)


def _written(row, own) -> tuple:
    """The values the appended entry may write for ``row``, given the entry's own writes ``own``: a value
    whose condition cannot be decided (its key unresolved or not written) is kept as possible."""
    out = []
    for v in row.values:
        cond = own.get(v.when_key) if v.when_key is not None else None
        if cond is not None and all(w.value.resolved for w in cond.candidates) and not any(
                bool(w.value.decoded()) == v.when_truthy for w in cond.candidates):
            continue
        out.append(v.value)
    return tuple(dict.fromkeys(out))


def _same(value, written) -> bool:
    return any(value == v and type(value) is type(v) or (isinstance(value, (bool, int)) and isinstance(v, (bool, int))
                                                          and int(value) == int(v)) for v in written)
