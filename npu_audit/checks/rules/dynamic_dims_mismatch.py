from npu_audit.checks.base import Expect, Invalid, Rule
from npu_audit.checks.helpers import literal_subrange
from npu_audit.checks.rules import PRELUDE

MIN_PROFILES, MAX_PROFILES = 2, 100


class DynamicDimsMismatch(Rule):
    code = "NPU203"
    name = "dynamic-dims-mismatch"
    severity = "error"
    summary = "dynamic_dims profiles that do not match the -1 dimensions of input_shape, or too few/many profiles."
    what = (
        "Counts the `-1` (dynamic) dimensions in input_shape and checks that every dynamic_dims profile gives "
        "exactly that many sizes, and that there are between 2 and 100 profiles."
    )
    why = (
        "Each profile fills the dynamic dimensions in order. The docs warn that a mismatch leads to an error "
        "and exit of the process after graph building; the adapter itself does not compare them."
    )
    fix_safety = "No automatic fix."
    _head = PRELUDE + 'custom_op.parameter_map["dynamic_node_type"].i = 1\n'
    invalid = (
        Invalid(
            _head + 'custom_op.parameter_map["input_shape"].s = b"data:1,-1,-1"\ncustom_op.parameter_map["dynamic_dims"].s = b"224;448"\n',
            (Expect(9, 45, "dynamic_dims profiles 1 ('224') and 2 ('448') have 1 size(s) each, but input_shape has "
                           "2 dynamic (-1) dimension(s)", option="dynamic_dims"),),
        ),
        Invalid(  # one bad profile among good ones: pointed at where it stands
            _head + 'custom_op.parameter_map["input_shape"].s = b"data:1,-1,-1"\ncustom_op.parameter_map["dynamic_dims"].s = b"1,2;3;4,5"\n',
            (Expect(9, 51, "dynamic_dims profile 2 ('3') has 1 size(s) but input_shape has 2 dynamic (-1) dimension(s)",
                    hint="give 2 comma-separated sizes per profile"),),
        ),
        Invalid(
            _head + 'custom_op.parameter_map["input_shape"].s = b"data:1,-1"\ncustom_op.parameter_map["dynamic_dims"].s = b"224"\n',
            (Expect(9, 45, "dynamic_dims has 1 profile(s); between 2 and 100 are supported"),),
        ),
    )
    valid = (_head + 'custom_op.parameter_map["input_shape"].s = b"data:1,-1,-1"\n'
                     'custom_op.parameter_map["dynamic_dims"].s = b"224,224;448,448"\n',)

    def check(self, ctx):
        from npu_audit.knowledge.grammars import parse_dynamic_dims, parse_input_shape

        for _config, entry in ctx.entries():
            eff = entry.effective()
            shape, dims = eff.get("input_shape"), eff.get("dynamic_dims")
            if shape is None or dims is None:
                continue
            for ws in shape.candidates:
                for wd in dims.candidates:
                    if not (ws.value.resolved and wd.value.resolved) or wd.implicit:
                        continue
                    shape_text, dims_text = ws.value.decoded(), wd.value.decoded()
                    if not isinstance(shape_text, str) or not isinstance(dims_text, str):
                        continue
                    parsed_shape, profiles = parse_input_shape(shape_text), parse_dynamic_dims(dims_text)
                    if parsed_shape is None or profiles is None:
                        continue  # malformed-value reports it
                    wanted = sum(1 for _name, shape_dims in parsed_shape for d in shape_dims if d == -1)
                    certainty = "always" if not (ws.conditional or wd.conditional) else "conditional"
                    related = [r for r in [ctx.related_write(ws, f"input_shape has {wanted} dynamic dimension(s) here")] if r]
                    if not MIN_PROFILES <= len(profiles) <= MAX_PROFILES:
                        f = ctx.report(self, wd,
                                       f"dynamic_dims has {len(profiles)} profile(s); between {MIN_PROFILES} and {MAX_PROFILES} are supported",
                                       at="value", related=related, certainty=certainty,
                                       hint="give at least two ';'-separated profiles")
                        if f:
                            yield f
                    bad, offset = [], 0
                    for i, (profile, raw) in enumerate(zip(profiles, dims_text.split(";"))):
                        if len(profile) != wanted:
                            bad.append((i + 1, raw, len(profile), offset))
                        offset += len(raw) + 1
                    if not bad:
                        continue
                    hint = f"give {wanted} comma-separated sizes per profile"
                    if len(bad) == 1:
                        number, raw, size, start = bad[0]
                        message = (f"dynamic_dims profile {number} ({raw!r}) has {size} size(s) but input_shape "
                                   f"has {wanted} dynamic (-1) dimension(s)")
                        at = literal_subrange(ctx, wd, start, start + len(raw)) or "value"
                    else:
                        sizes = {size for _n, _r, size, _s in bad}
                        listed = ", ".join(f"{n} ({r!r})" for n, r, _size, _s in bad[:-1]) + \
                            f" and {bad[-1][0]} ({bad[-1][1]!r})"
                        have = (f"have {sizes.pop()} size(s) each" if len(sizes) == 1
                                else "have " + ", ".join(str(size) for _n, _r, size, _s in bad) + " size(s)")
                        message = (f"dynamic_dims profiles {listed} {have}, but input_shape has {wanted} dynamic "
                                   f"(-1) dimension(s)")
                        at = "value"
                    f = ctx.report(self, wd, message, at=at, related=related, certainty=certainty, hint=hint)
                    if f:
                        yield f
