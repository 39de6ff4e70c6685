from npu_audit.checks import tf2
from npu_audit.checks.base import REACTION_TEXT, Expect, Invalid, Rule, severity_for_reaction
from npu_audit.checks.helpers import literal_subrange, overwritten, reaction, switched_off
from npu_audit.checks.rules import PRELUDE
from npu_audit.checks.rules.invalid_value import flag_note

MAX_PROBLEMS = 3


class MalformedValue(Rule):
    code = "NPU106"
    name = "malformed-value"
    severity = "error"
    summary = "A string option that does not follow its format (dump_step, input_shape, profiling_options JSON, ...)."
    what = (
        "Parses string options that have a grammar — dump_step (`0|3-5|10`), input_shape, dynamic_dims, "
        "dynamic_inputs_shape_range, profiling_options (JSON and the domain of each field), "
        "stream_max_parallel_num, aicore_num, experimental_accelerate_train_mode, local_device_list, lists — "
        "and points at the part that is wrong."
    )
    why = (
        "The adapter checks some formats when the session starts (dump_step, local_device_list), aborts on "
        "others (input_shape, dynamic_dims), and hands the rest to the runtime, where a malformed value fails "
        "after minutes of graph building or is silently ignored."
    )
    fix_safety = "No automatic fix."
    invalid = (
        Invalid(
            PRELUDE + 'custom_op.parameter_map["dump_step"].s = tf.compat.as_bytes("0|5-3|10")\n',
            (Expect(7, 64, "'dump_step' is malformed at '5-3': range 5-3 must go upwards (N < M); not read while its "
                           "switch is off, but once it is on the adapter rejects it and the session fails to start", severity='warning'),),
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["profiling_options"].s = tf.compat.as_bytes(\'{"training_trace": "yes"}\')\n',
            (Expect(7, 90, "'profiling_options' is malformed at 'yes': training_trace value 'yes' is not one of "
                           "'on', 'off'; not read while its switch is off, but once it is on the adapter passes it "
                           "on unchecked, so it is not applied as documented", severity='warning'),),
        ),
        Invalid(  # ProfilingConfig on its own
            "from npu_bridge.npu_init import *\n\n\ndef profiling_settings():\n"
            "    return ProfilingConfig(enable_profiling=True, profiling_options='{\"output\": \"/tmp/prof\", "
            "\"task_trace\": \"on\"')\n",
            (Expect(5, 112, "'profiling_options' is malformed: invalid JSON: missing '}' at the end of the object; the "
                            "adapter passes it on unchecked, so it is not applied as documented", severity="warning",
                    hint='expected JSON object of profiling fields, e.g. {"output":"/tmp/profiling","training_trace":"on"}',
                    option="profiling_options"),),
        ),
        Invalid(  # DynamicInputConfig on its own
            "from npu_bridge.npu_init import *\n\n\ndef dynamic_settings():\n    return DynamicInputConfig(input_shape='data:-1,224', "
            "dynamic_dims='1;2;x', dynamic_node_type=1, compile_hybrid_mode=0)\n",
            (Expect(5, 76, "'dynamic_dims' is malformed at 'x': size 'x' is not an integer; the adapter aborts the whole "
                           "process (LOG(FATAL))",
                    hint="expected profiles joined by ';', each comma-separated non-negative integers",
                    option="dynamic_dims"),),
        ),
        Invalid(  # ExperimentalConfig on its own
            "from npu_bridge.npu_init import *\n\n\ndef experimental_settings():\n    return ExperimentalConfig(accelerate_train_mode='slow|step|0.9')\n",
            (Expect(5, 54, "'experimental_accelerate_train_mode' is malformed at 'slow': acceleration type 'slow' is not "
                           "'fast' or 'fast1'; it fails when the graph is built or run on the device",
                    hint="expected type|trigger|ratio: fast or fast1, step (ratio 0.2-0.9, default 0.9) or loss "
                         "(ratio 1.01-1.5, default 1.05); ratio optional",
                    option="experimental_accelerate_train_mode"),),
        ),
    )
    valid = (PRELUDE + 'custom_op.parameter_map["dump_step"].s = tf.compat.as_bytes("0|3-5|10")\n',)

    def check(self, ctx):
        from npu_audit.knowledge import grammars

        for _config, _entry, w in ctx.user_writes():
            view = ctx.release_view(w.key)
            if view is None or view.domain.kind != "grammar" or not w.value.resolved:
                continue
            text = w.value.decoded()
            if not isinstance(text, str) or (w.via != tf2.KIND and overwritten(_entry, w)):
                continue  # a dead write is never read (duplicate-option reports it)
            spec = ctx.spec(w.key)
            try:
                problems = grammars.check(view.domain.grammar, text, ctx.settings.product)
            except KeyError:
                continue
            severity = severity_for_reaction(spec.on_invalid)
            latent = switched_off(ctx, _entry, w.key)
            if latent:
                severity = "warning"
            for problem in problems[:MAX_PROBLEMS]:
                part = text[problem.start:problem.end]
                shown = f" at {part!r}" if part and len(part) <= 40 else ""
                note = flag_note(w) if _from_flag(ctx, w, text, problem.start, problem.end) else ""
                message = (f"'{w.key}' is malformed{shown}: {problem.message}; "
                           f"{reaction(tf2.reaction(w, REACTION_TEXT.get(spec.on_invalid, '')), latent)}{note}")
                hint = f"expected {grammars.GRAMMARS[view.domain.grammar].summary}"
                f = ctx.report(self, w, message, at=literal_subrange(ctx, w, problem.start, problem.end) or "value",
                               severity=severity, hint=hint)
                if f:
                    yield f


def _from_flag(ctx, w, text: str, start: int, end: int) -> bool:
    """Whether the malformed part [start, end) of ``text`` may come from the flag default the value is
    built from (so that the real run may differ): the flag's default overlaps it wherever it occurs in
    ``text``, or cannot be found there (computed from it: may be). A literal around a flag
    (``'{"output":"' + FLAGS.path + '", "L2": "on"}'``) is malformed whatever the flag says (sample-2026 id 60)."""
    if w.value.origin != "flag-default" or not w.value.flag:
        return False
    defaults = _flag_defaults(ctx, w.value.flag)
    spans = [(i, i + len(d)) for d in defaults if d for i in _occurrences(text, d)]
    if not spans:
        return True
    end = max(end, start + 1)
    return any(a < end and start < b for a, b in spans)


def _flag_defaults(ctx, flag: str) -> list[str]:
    """The string defaults declared for flag or argparse destination ``flag`` in the modules analysed."""
    found = []
    for state in (ctx.extraction.modules.values() if ctx.extraction is not None else ()):
        for table in (getattr(state, "flags", None) or {}, getattr(state, "arguments", None) or {}):
            declared = table.get(flag)
            value = getattr(declared[0], "value", None) if declared else None
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            if isinstance(value, str):
                found.append(value)
    return found


def _occurrences(text: str, part: str):
    at = text.find(part)
    while at >= 0:
        yield at
        at = text.find(part, at + 1)
