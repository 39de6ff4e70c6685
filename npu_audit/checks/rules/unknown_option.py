from npu_audit.checks import tf2
from npu_audit.checks.base import Expect, Invalid, Rule
from npu_audit.checks.helpers import edit_for, fixable_here, requote
from npu_audit.checks.rules import PRELUDE
from npu_audit.findings import Fix
from npu_audit.text import did_you_mean


class UnknownOption(Rule):
    code = "NPU101"
    name = "unknown-option"
    severity = "error"
    summary = "A parameter_map key that no adapter reads: the setting is silently ignored."
    what = (
        "Reports `parameter_map[\"<key>\"]` writes whose key the Ascend adapter never reads: typos, "
        "profiling_options fields written as keys, and keys that were removed or never existed. In TensorFlow 2 "
        "scripts, attributes set on `npu_device.global_options()` that its group does not define: typos, options "
        "in the wrong group (`global_options().enable_dump` for `global_options().dump_config.enable_dump`), "
        "TF1-only options and options of older adapter releases (auto_tune_mode). A key that no adapter version "
        "reads (rules/unread_keys.toml) is an error when the script means it to act (`enable_auto_mix_precision = "
        "True` with no mixed-precision mode set) and a warning when it is a harmless leftover (`min_group_size`, "
        "`master_slave_mode`, a value that asks for nothing, or what it asks for is on through the options the "
        "adapter does read)."
    )
    why = (
        "The adapter only looks up the keys it knows and never warns about others, so a misspelt key "
        "is dropped without a trace and the device runs with the default instead of your setting. The TF2 "
        "option object refuses unknown attributes with ValueError, so the script stops at that line."
    )
    fix = "sometimes"
    fix_applicability = ("unsafe",)
    fix_safety = (
        "When exactly one real key is close to the typo, an unsafe fix renames it: you may have meant "
        "another key, and renaming turns a setting that was ignored into one that takes effect. For "
        "`global_options()` the same unsafe fix renames the attribute, or inserts the missing group "
        "(`.enable_dump` -> `.dump_config.enable_dump`)."
    )
    invalid = (
        Invalid(
            PRELUDE + 'custom_op.parameter_map["precison_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n',
            (Expect(7, 25, "unknown option 'precison_mode': the adapter ignores keys it does not read, so this "
                           "setting has no effect"),),
            fixed=PRELUDE + 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n',
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["training_trace"].s = b"on"\n',
            (Expect(7, 25, "'training_trace' is a field of the profiling_options JSON, not a session option: the "
                           "adapter ignores it here"),),
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["profiling_options"].s = b\'{"output": "/tmp/p", "task_trace": "on"}\'\n'
                      'custom_op.parameter_map["fp_point"].s = b"resnet/conv1"\n',
            (Expect(8, 25, "'fp_point' is a field of the profiling_options JSON, not a session option: the adapter "
                           "ignores it here; the entry's profiling_options do not turn training_trace on, so nothing "
                           "is lost today", "warning"),),
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["profiling_options"].s = b\'{"output": "/tmp/p", "training_trace": "on"}\'\n'
                      'custom_op.parameter_map["fp_point"].s = b"resnet/conv1"\n',
            (Expect(8, 25, "'fp_point' is a field of the profiling_options JSON, not a session option: the adapter "
                           "ignores it here"),),
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["enable_auto_mix_precision"].b = True\n',
            (Expect(7, 25, "'enable_auto_mix_precision' has no effect, the adapter does not read it: the line turns "
                           "mixed precision neither on nor off (the name follows TensorFlow's auto mixed precision "
                           "switches, not the adapter). On the NPU, mixed precision is selected with precision_mode_v2 "
                           '= "mixed_float16" (or "mixed_bfloat16" on Atlas A2/A3), or the older precision_mode. The '
                           "script expects mixed precision from this line, but nothing in this config turns it on."),),
        ),
        Invalid(
            tf2.PRELUDE + 'npu.global_options().precison_mode = "allow_mix_precision"\n',
            (Expect(3, 22, "unknown option 'precison_mode' of global_options(): assigning it raises ValueError "
                           "(NpuConfig has no option precison_mode), so the script stops here"),),
            fixed=tf2.PRELUDE + 'npu.global_options().precision_mode = "allow_mix_precision"\n',
        ),
        Invalid(
            tf2.PRELUDE + 'npu.global_options().enable_dump = True\n',
            (Expect(3, 22, "'enable_dump' is not an option of global_options(): it belongs to "
                           "global_options().dump_config, and assigning it here raises ValueError (NpuConfig has no "
                           "option enable_dump), so the script stops here"),),
            fixed=tf2.PRELUDE + 'npu.global_options().dump_config.enable_dump = True\n',
        ),
        Invalid(
            tf2.PRELUDE + 'npu.global_options().auto_tune_mode = "RL,GA"\n',
            (Expect(3, 22, "'auto_tune_mode' is not an option of global_options() in the current TF2 adapter: "
                           "assigning it raises ValueError (NpuConfig has no option auto_tune_mode), so the script "
                           "stops here"),),
        ),
    )
    valid = (PRELUDE + 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n',
             tf2.PRELUDE + 'npu.global_options().dump_config.enable_dump = True\n'
                           'npu.global_options().dump_config.dump_path = "/tmp/dump"\n',
             '# npu-audit-test: release=legacy\n' + tf2.PRELUDE + 'npu.global_options().auto_tune_mode = "RL,GA"\n')

    def check(self, ctx):
        from npu_audit.knowledge.grammars import PROFILING_FIELDS

        for config, _entry, w in ctx.user_writes():
            if w.key in ctx.kb.options or w.via != "parameter_map":
                continue
            fix = None
            severity = None
            unread = ctx.kb.unread_keys.get(w.key)
            if unread is not None:
                message, severity, leftover = unread_message(ctx, config, w, unread)
                hint = f"use '{unread.suggestion}' instead" if unread.suggestion and not leftover else "remove this line"
            elif w.key in PROFILING_FIELDS:
                message = (f"'{w.key}' is a field of the profiling_options JSON, not a session option: "
                           "the adapter ignores it here")
                hint = f"put \"{w.key}\" inside profiling_options and set profiling_mode to True"
                if w.key in TRACE_POINTS and _training_trace_off(_entry):
                    # (the points only place the iteration trace, which this entry does not collect)
                    severity = "warning"
                    message += "; the entry's profiling_options do not turn training_trace on, so nothing is lost today"
            else:
                guess = did_you_mean(w.key, ctx.kb.options)
                message = f"unknown option '{w.key}': the adapter ignores keys it does not read, so this setting has no effect"
                hint = f"did you mean '{guess}'?" if guess else "check the key against `npu-audit --list-rules`"
                if guess and fixable_here(ctx, w) and w.key_range is not None and w.key_node is not None:
                    new = requote(getattr(w.key_node, "value", ""), guess)
                    if new:
                        fix = Fix("unsafe", f"Rename '{w.key}' to '{guess}'", (edit_for(w.key_range, new),))
            f = ctx.report(self, w, message, at="key", hint=hint, fix=fix, severity=severity)
            if f:
                yield f
        yield from tf2.unknown_options(self, ctx)


# Fields of profiling_options that only mark where an iteration starts and ends for the iteration trace
# (training_trace): written as session keys next to a profiling_options that does not collect that trace,
# they lose nothing (docs: session-options.en.txt, profiling_options; census of the errors, id 8).
TRACE_POINTS = frozenset({"fp_point", "bp_point"})


def _training_trace_off(entry) -> bool:
    """Whether every value profiling_options can have in ``entry`` is known JSON without training_trace "on"."""
    import json

    eff = entry.effective().get("profiling_options") if entry is not None else None
    if eff is None or not eff.candidates:
        return False
    for w in eff.candidates:
        text = w.value.decoded() if w.value.resolved else None
        if not isinstance(text, str):
            return False
        try:
            options = json.loads(text)
        except ValueError:
            return False
        if not isinstance(options, dict) or str(options.get("training_trace", "")).lower() == "on":
            return False
    return True


def unread_message(ctx, config, w, unread) -> tuple[str, str, bool]:
    """Message, severity and whether the line is a harmless leftover, for a key no adapter reads.

    An error when the script meant the key to do something (any value, or one of its `active` values in
    rules/unread_keys.toml) and what it wants is not on anyway; a warning for a leftover: a value that asks
    for nothing, a key with no active value, or an entry that turns on what the key wants through the
    options the adapter does read (`provided_by`)."""
    from npu_audit.checks.conditions import OptionView, T, U, evaluate, expand, normalise, same_value

    message = f"'{w.key}' has no effect, the adapter does not read it: {unread.reason}"
    if unread.active is None:
        return message, "error", False
    if not unread.active:
        return message, "warning", True
    if w.value.resolved and not any(same_value(normalise(w.value.python), a) for a in unread.active):
        return message + " This value asks for nothing, so the line is a harmless leftover.", "warning", True
    if unread.provided_by is None or unread.wants is None:
        return message, "error", False
    merged: dict = {}
    for entry in config.npu_entries():  # what the adapter merges, key by key (an entry not named on every path too)
        merged.update(entry.effective())
    release = ctx.settings.release
    fields = {key: spec.for_release(release).field for key, spec in ctx.kb.options.items()}
    path = {(b.node_id, b.arm) for b in w.branches}  # seen from this line: writes of its branch are certain
    result = evaluate(unread.provided_by, OptionView(merged, expand(path, merged) if path else None, fields))
    by = " or ".join(sorted(unread.provided_by.keys()))
    wants = unread.wants
    if result == {T}:
        through = " and ".join(k for k in sorted(unread.provided_by.keys()) if k in merged) or by
        return (message + f" {wants[:1].upper()}{wants[1:]} is on here anyway, through {through}: this line is a leftover.",
                "warning", True)
    if T in result or U in result:
        return (message + f" Whether {wants} is on is decided by {by} alone, not by this line.", "warning", False)
    return (message + f" The script expects {wants} from this line, but nothing in this config turns it on.",
            "error", False)
