from npu_audit.checks.base import REACTION_TEXT, Expect, Invalid, Rule, severity_for_reaction
from npu_audit.checks.helpers import overwritten, reaction, switched_off
from npu_audit.checks.rules import PRELUDE
from npu_audit.checks.rules.invalid_value import flag_note, python_type_problem


def as_number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, (str, bytes)):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        try:
            return int(text.strip())
        except ValueError:
            return None
    return None


class OutOfRange(Rule):
    code = "NPU105"
    name = "out-of-range"
    severity = "error"
    summary = "A number outside the option's documented range."
    what = (
        "Reports numeric option values outside their documented range, e.g. local_rank_id outside 0..7, "
        "graph_max_parallel_model_num below 1, input_fusion_size above 32 MB, session_device_id below 0."
    )
    why = (
        "Out-of-range numbers are rejected when the session starts, abort the process, are clamped, or "
        "are passed on unchecked and misbehave on the device, depending on the option."
    )
    fix_safety = "No automatic fix."
    invalid = (
        Invalid(
            PRELUDE + 'custom_op.parameter_map["local_rank_id"].i = 8\n',
            (Expect(7, 46, "8 is outside the range of 'local_rank_id' (integer in [0, 7]): the adapter rejects it "
                           "and the session fails to start"),),
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["graph_max_parallel_model_num"].i = 0\n',
            (Expect(7, 61, "0 is outside the range of 'graph_max_parallel_model_num' (integer in [1, 2147483647]): "
                           "the adapter rejects it and the session fails to start"),),
        ),
    )
    valid = (PRELUDE + 'custom_op.parameter_map["local_rank_id"].i = 7\n',)

    def check(self, ctx):
        for _config, _entry, w in ctx.user_writes():
            view = ctx.release_view(w.key)
            if view is None or not w.value.resolved or view.domain.kind != "int-range" or python_type_problem(w):
                continue
            if w.via == "global_options":
                continue  # the TF2 adapter checks only its own value lists (invalid-value)
            if w.via == "parameter_map" and w.field != view.field:
                continue
            if overwritten(_entry, w):
                continue  # the session never reads this value: duplicate-option reports the dead write
            number = as_number(w.value.python)
            if number is None:
                continue
            d = view.domain
            low_bad = d.min is not None and (number <= d.min if d.min_exclusive else number < d.min)
            high_bad = d.max is not None and number > d.max
            if not (low_bad or high_bad):
                continue
            spec = ctx.spec(w.key)
            latent = switched_off(ctx, _entry, w.key)
            message = (f"{number} is outside the range of '{w.key}' ({d.describe()}): "
                       f"{reaction(REACTION_TEXT.get(spec.on_invalid, ''), latent)}{flag_note(w)}")
            f = ctx.report(self, w, message, at="value",
                           severity="warning" if latent else severity_for_reaction(spec.on_invalid),
                           hint=f"write an {d.describe()}")
            if f:
                yield f
