from npu_audit.checks.base import Expect, Invalid, Rule, describe
from npu_audit.checks.helpers import edit_for, requote
from npu_audit.findings import Fix
from npu_audit.text import similar

EXPECTED = "NpuOptimizer"
_SHOWN = 3  # options named in a message; the others are counted


class NpuOptimizerName(Rule):
    code = "NPU401"
    name = "npu-optimizer-name"
    severity = "error"
    summary = "A custom optimizer meant as the NPU one whose name is not exactly \"NpuOptimizer\"."
    what = (
        "Reports a custom optimizer entry that has NPU options but whose `.name` is not exactly "
        "\"NpuOptimizer\" (case and spelling matter), or that is never named. An error when the entry sets "
        "options that would take effect (a value other than the documented default, of an option the target "
        "release applies); a warning when nothing it sets would take effect anyway (`use_off_line = True`, the "
        "default; options documented as having no effect, such as graph_memory_max_size): then only the "
        "NPU itself is at stake, when no other entry of the config is named NpuOptimizer."
    )
    why = (
        "The adapter only processes entries named exactly NpuOptimizer (a case-sensitive compare) and skips the "
        "others without a word, so every option of the entry is lost. When no entry of the config has that "
        "name, the adapter's passes are off and the whole graph silently runs through plain TensorFlow on the "
        "host CPU."
    )
    fix = "sometimes"
    fix_applicability = ("unsafe",)
    fix_safety = "Unsafe: renaming makes every option of the entry take effect at once."
    _head = "import tensorflow as tf\nconfig = tf.ConfigProto()\ncustom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
    invalid = (
        Invalid(
            _head + 'custom_op.name = "NPUOptimizer"\ncustom_op.parameter_map["precision_mode_v2"].s = b"mixed_float16"\n',
            (Expect(4, 18, 'optimizer name \'NPUOptimizer\' is not "NpuOptimizer": the adapter only processes an entry '
                           "named exactly that, so it skips this one and precision_mode_v2 = 'mixed_float16' is never "
                           "applied; with no entry named NpuOptimizer in this config the adapter's passes stay off "
                           "and the graph runs through plain TensorFlow on the host"),),
            fixed=_head + 'custom_op.name = "NpuOptimizer"\ncustom_op.parameter_map["precision_mode_v2"].s = b"mixed_float16"\n',
        ),
        Invalid(
            _head + 'custom_op.parameter_map["iterations_per_loop"].i = 10\n',
            (Expect(3, 13, "this custom optimizer sets NPU options but is never named: the adapter only processes an "
                           "entry named exactly \"NpuOptimizer\", so it skips this one and iterations_per_loop = 10 is "
                           "never applied; with no entry named NpuOptimizer in this config the adapter's passes stay "
                           "off and the graph runs through plain TensorFlow on the host"),),
        ),
        Invalid(  # nothing the entry sets would take effect: only the NPU itself is at stake
            _head + 'custom_op.parameter_map["use_off_line"].b = True\n',
            (Expect(3, 13, "this custom optimizer sets NPU options but is never named: the adapter only processes an "
                           "entry named exactly \"NpuOptimizer\", so it skips this one; nothing it sets would take "
                           "effect anyway (use_off_line = True is the default), so no setting is lost, but with no "
                           "entry named NpuOptimizer in this config the adapter's passes stay off and the graph runs "
                           "through plain TensorFlow on the host", severity="warning"),),
        ),
        Invalid(
            _head + 'custom_op.name = "NpuOptimizer1"\ncustom_op.parameter_map["graph_memory_max_size"].s = b"1024"\n',
            (Expect(4, 18, 'optimizer name \'NpuOptimizer1\' is not "NpuOptimizer": the adapter only processes an entry '
                           "named exactly that, so it skips this one; nothing it sets would take effect anyway "
                           "(graph_memory_max_size is without effect in the current release), so no setting is lost, but "
                           "with no entry named NpuOptimizer in this config the adapter's passes stay off and the "
                           "graph runs through plain TensorFlow on the host", severity="warning"),),
            fixed=_head + 'custom_op.name = "NpuOptimizer"\ncustom_op.parameter_map["graph_memory_max_size"].s = b"1024"\n',
        ),
        Invalid(  # named like the NPU entry, sets no option: the name alone decides where the graph runs
            _head + 'custom_op.name = "Npuoptimizer"\n',
            (Expect(4, 18, 'optimizer name \'Npuoptimizer\' is not "NpuOptimizer": the adapter only processes an entry '
                           "named exactly that, so it skips this one; it sets no NPU option, so no setting is lost, "
                           "but with no entry named NpuOptimizer in this config the adapter's passes stay off and the "
                           "graph runs through plain TensorFlow on the host", severity="warning"),),
            fixed=_head + 'custom_op.name = "NpuOptimizer"\n',
        ),
    )
    valid = (_head + 'custom_op.name = "NpuOptimizer"\ncustom_op.parameter_map["use_off_line"].b = True\n',
             _head + 'custom_op.name = "my_grappler_pass"\ncustom_op.parameter_map["threshold"].i = 3\n')

    def check(self, ctx):
        for config, entry in ctx.entries(npu_only=False):
            if entry.kind != "custom_optimizer":
                continue
            has_npu_options = any(w.key in ctx.kb.options for w in entry.writes)
            if entry.name is None:
                if has_npu_options:
                    tail, severity, hint = _consequence(ctx, config, entry, "add custom_op.name = \"NpuOptimizer\"")
                    f = ctx.report(self, entry,
                                   "this custom optimizer sets NPU options but is never named: the adapter only "
                                   f"processes an entry named exactly \"{EXPECTED}\", so it skips this one" + tail,
                                   hint=hint, severity=severity)
                    if f:
                        yield f
                continue
            candidates = entry.name_candidates() or []
            several = len(candidates) > 1
            for w in candidates:
                if not w.value.resolved:
                    continue
                name = w.value.decoded()
                if not isinstance(name, str) or name == EXPECTED:
                    continue
                looks_meant = (name.lower().replace("_", "") == EXPECTED.lower()
                               or similar(name.lower(), EXPECTED.lower())
                               or ("npu" in name.lower() and has_npu_options))
                if not looks_meant:
                    continue
                fix = None
                node = w.value.source_node
                if (w.path == ctx.path and w.value.origin == "literal" and node is not None
                        and ctx.extraction.range_of(node) is not None):
                    new = requote(node.value, EXPECTED)
                    if new:
                        fix = Fix("unsafe", f'Name it "{EXPECTED}"', (edit_for(ctx.extraction.range_of(node), new),))
                certainty = "conditional" if (w.conditional or several) else "always"
                tail, severity, hint = _consequence(ctx, config, entry, f'write custom_op.name = "{EXPECTED}"')
                f = ctx.report(self, w,
                               f"optimizer name {describe(name)} is not \"{EXPECTED}\": the adapter only processes an "
                               "entry named exactly that, so it skips this one" + tail,
                               at="value", option=None, hint=hint, fix=fix, certainty=certainty, severity=severity)
                if f:
                    yield f


def _consequence(ctx, config, entry, rename: str) -> tuple[str, str, str]:
    """What skipping the entry costs (the end of the message), the severity that follows, and the hint.

    An error when an option of the entry would take effect if it were processed; a warning when nothing
    it sets would (defaults, options without effect in the release): then only the NPU itself is at
    stake, and only when no other entry of the config is named NpuOptimizer."""
    lost, inert = _options_of(ctx, entry)
    others = [e.is_npu for e in config.all_entries() if e is not entry]
    if True in others:
        host = ""  # another entry is processed: the graph still reaches the NPU
    elif None in others:
        host = ("; unless the config's other entry is named NpuOptimizer on this run, the adapter's passes stay off "
                "and the graph runs through plain TensorFlow on the host")
    else:
        host = ("; with no entry named NpuOptimizer in this config the adapter's passes stay off and the graph runs "
                "through plain TensorFlow on the host")
    if lost:
        shown = " and ".join(lost[:_SHOWN]) if len(lost) <= _SHOWN else ", ".join(lost[:_SHOWN]) + f" and {len(lost) - _SHOWN} more"
        verb = "is" if len(lost) == 1 else "are"
        return f" and {shown} {verb} never applied{host}", "error", rename
    # (an entry that sets no NPU option at all: only its name says it is meant as the NPU one)
    inert_part = f"nothing it sets would take effect anyway ({'; '.join(inert)})" if inert else "it sets no NPU option"
    if host:
        return (f"; {inert_part}, so no setting is lost, but{host[1:]}", "warning",
                f"{rename} if this session is meant to run on the NPU, otherwise remove the entry")
    return (f"; {inert_part}, so nothing is lost", "warning",
            "remove this entry: the config's entry named NpuOptimizer is the one the adapter reads")


def _options_of(ctx, entry) -> tuple[list[str], list[str]]:
    """The entry's NPU options whose value would take effect (as `key = value`), and why the others would not."""
    from npu_audit.checks.conditions import normalise, same_value

    release = ctx.settings.release
    lost: list[str] = []
    defaults: list[str] = []
    no_effect: list[str] = []
    unsupported: list[str] = []
    for key, eff in entry.effective().items():
        spec = ctx.spec(key)
        writes = [w for w in eff.candidates if not w.implicit]
        if spec is None or not writes:
            continue  # a key no adapter reads is lost anyway (unknown-option)
        view = spec.for_release(release)
        if view.lifecycle.status in ("no-effect", "not-supported"):
            (no_effect if view.lifecycle.status == "no-effect" else unsupported).append(key)
            continue
        default = _default(spec, view)
        if default is not None and all(w.value.resolved and same_value(normalise(w.value.python), default)
                                       for w in writes):
            defaults.append(f"{key} = {describe(writes[-1].value.python)}")
            continue
        last = writes[-1]
        lost.append(f"{key} = {describe(last.value.python)}" if last.value.resolved else key)
    inert = []
    for keys, what in ((defaults, "the default"), (no_effect, f"without effect in the {release} release"),
                       (unsupported, f"not supported in the {release} release")):
        if keys:
            inert.append(" and ".join(keys) + (" is " if len(keys) == 1 else " are ") + what)
    return lost, inert


def _default(spec, view):
    """The option's documented default when it is one value whatever the scenario and product, else None."""
    from npu_audit.checks.conditions import same_value

    values = [d.value for d in spec.defaults]
    if view.default is not None:
        values.append(view.default)
    if not values or any(not same_value(v, values[0]) for v in values[1:]):
        return None
    return values[0]
