from npu_audit.checks import tf2
from npu_audit.checks.base import REACTION_TEXT, Expect, Invalid, Rule, describe, severity_for_reaction
from npu_audit.checks.helpers import overwritten, reaction, switched_off
from npu_audit.checks.rules import PRELUDE
from npu_audit.text import did_you_mean


def flag_note(w) -> str:
    return f" (this is the default of flag '{w.value.flag}'; the real run may override it)" if w.value.origin == "flag-default" else ""


_INT64 = ".i holds a 64-bit integer"
_INT64_HINT = "write an integer from -2**63 to 2**63 - 1"


def python_type_problem(w):
    """TypeError raised by protobuf when the script assigns this value, or None."""
    v = w.value.python
    if v is None and w.value.origin == "flag-default":
        return None  # a flag whose default is None means "not given"; the real value comes from the run
    if w.via != "parameter_map":
        if w.key == "jit_compile" and not isinstance(v, str):
            return "NPURunConfig requires a str for jit_compile (TypeError: Expected str)"
        return None
    if w.field == "i":
        if isinstance(v, bool):
            # protobuf 7.36 (with TensorFlow 2.21) raises; 6.33.6 takes a bool as an int (both checked with real
            # protobuf: tests/test_differential_tf.py), as 3.x's pure-Python checker does (type_checkers.py,
            # IntValueChecker: isinstance(value, numbers.Integral))
            return (f".i given a bool: protobuf 7.36 (as installed with TensorFlow 2.21) raises TypeError (expected an "
                    f"int, got a boolean), protobuf 6.33 and older store it as {int(v)}")
        if not isinstance(v, int):
            return f".i takes an int, not {type(v).__name__} (TypeError)"
        if not -2**63 <= v < 2**63:
            return f"{_INT64}, and {v} is out of its range (ValueError: Value out of range)"
    elif w.field == "f":
        if not isinstance(v, (int, float)):
            return f".f takes a number, not {type(v).__name__} (TypeError)"
    elif w.field == "b":
        if not isinstance(v, (bool, int)):
            return f".b takes a bool, not {type(v).__name__} (TypeError)"
    elif w.field == "s":
        if not isinstance(v, (str, bytes)):
            return f".s takes bytes, not {type(v).__name__} (TypeError)"
    return None


# what to write instead of a value of the wrong Python type (python_type_problem): by the field of a parameter_map
# write, and for NPURunConfig's jit_compile keyword
_TYPE_HINTS = {"i": "write an int", "f": "write a number", "b": "write True or False",
               "s": 'write bytes: b"..." or tf.compat.as_bytes(...)', "jit_compile": 'write "true", "false" or "auto"'}


class InvalidValue(Rule):
    code = "NPU104"
    name = "invalid-value"
    severity = "error"
    summary = "A value outside the option's documented values, or of a type the field cannot hold."
    what = (
        "Reports values that are not among an option's documented values (enumerations such as "
        "precision_mode or dump_mode) and values whose Python type the AttrValue field rejects "
        "(`.i = True`, `.i = \"1\"`, `.s = 5`). In TensorFlow 2 scripts, values that an option of "
        "`npu_device.global_options()` does not accept: outside its list, or of another type than its default "
        "(`dump_config.enable_dump = \"True\"`, `aoe_config.aoe_mode = 2`)."
    )
    why = (
        "Depending on the option the adapter rejects the value when the session starts, aborts the "
        "process after graph building, or passes it to the runtime unchecked where it is ignored or "
        "fails later. Type mistakes raise TypeError as soon as the script builds its config; the TF2 option "
        "object raises TypeError or ValueError at the assignment itself."
    )
    fix = "sometimes"
    fix_applicability = ("unsafe",)
    fix_safety = (
        "No automatic fix for parameter_map: only you know which valid value you meant (the hint suggests the "
        "closest). For `global_options()`, a literal that obviously stands for an accepted value of another type "
        "(\"True\" for True, \"1\" for 1, 2 for \"2\", b\"x\" for \"x\") gets an unsafe fix that writes that value."
    )
    invalid = (
        Invalid(
            PRELUDE + 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("mix_precision")\n',
            (Expect(7, 47, "'mix_precision' is not a valid value for 'precision_mode' (one of 'force_fp32', "
                           "'allow_fp32_to_fp16', 'force_fp16', 'must_keep_origin_dtype', 'allow_mix_precision', "
                           "'cube_fp16in_fp32out', 'allow_mix_precision_fp16', 'allow_mix_precision_bf16', "
                           "'allow_fp32_to_bf16'): the adapter rejects it and the session fails to start"),),
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["iterations_per_loop"].i = True\n',
            (Expect(7, 52, "'iterations_per_loop': .i given a bool: protobuf 7.36 (as installed with TensorFlow "
                           "2.21) raises TypeError (expected an int, got a boolean), protobuf 6.33 and older store it "
                           "as 1", hint="write an int"),),
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["dump_mode"].s = b"everything"\n',
            (Expect(7, 42, "'everything' is not a valid value for 'dump_mode' (one of 'input', 'output', 'all'): not "
                           "read while its switch is off, but once it is on the adapter aborts the whole process "
                           "(LOG(FATAL))", severity='warning', hint="write one of 'input', 'output', 'all'"),),
        ),
        Invalid(
            tf2.PRELUDE + 'npu.global_options().dump_config.enable_dump = "True"\n',
            (Expect(3, 48, "'True' is not accepted by global_options().dump_config.enable_dump, which takes one of "
                           "True, False: assigning it raises TypeError (Expected bool, got str), so the script stops "
                           "here"),),
            fixed=tf2.PRELUDE + 'npu.global_options().dump_config.enable_dump = True\n',
        ),
        Invalid(
            tf2.PRELUDE + 'npu.global_options().precision_mode = "mix_precision"\n',
            (Expect(3, 39, "'mix_precision' is not accepted by global_options().precision_mode, which takes one of "
                           "'force_fp32', 'allow_fp32_to_fp16', 'force_fp16', 'must_keep_origin_dtype', "
                           "'allow_mix_precision', 'cube_fp16in_fp32out', 'allow_mix_precision_fp16', "
                           "'allow_mix_precision_bf16', 'allow_fp32_to_bf16': assigning it raises ValueError "
                           "('mix_precision' not in optional list), so the script stops here"),),
        ),
        Invalid(  # MemoryConfig on its own
            "from npu_bridge.npu_init import *\n\n\ndef memory_settings():\n    return MemoryConfig(variable_use_1g_huge_page=9)\n",
            (Expect(5, 51, "9 is not a valid value for 'variable_use_1g_huge_page' (one of 0, 1, 2): the adapter rejects "
                           "it and the session fails to start",
                    hint="write one of 0, 1, 2", option="variable_use_1g_huge_page"),),
        ),
    )
    valid = (
        PRELUDE + 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n',
        PRELUDE + 'import os\ncustom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(os.getenv("PM"))\n',
        tf2.PRELUDE + 'npu.global_options().dump_config.enable_dump = 1\n'
                      'npu.global_options().precision_mode = "allow_mix_precision"\n',
    )

    def check(self, ctx):
        yield from tf2.invalid_values(self, ctx)
        for _config, _entry, w in ctx.user_writes():
            if not w.value.resolved or w.via == tf2.KIND:
                continue  # global_options() values: tf2.invalid_values
            # protobuf checks the Python type of every AttrValue write, whatever the key (an unknown one too)
            problem = python_type_problem(w)
            if problem:
                hint = (_INT64_HINT if problem.startswith(_INT64) else
                        _TYPE_HINTS.get(w.field if w.via == "parameter_map" else w.key))
                f = ctx.report(self, w, f"'{w.key}': {problem}", at="value", hint=hint)
                if f:
                    yield f
                continue
            view = ctx.release_view(w.key)
            if view is None:
                continue
            spec = ctx.spec(w.key)
            if w.field is not None and w.via == "parameter_map" and w.field != view.field:
                continue  # wrong-field reports it
            if overwritten(_entry, w):
                continue  # the session never reads this value: duplicate-option reports the dead write
            domain = view.domain
            if domain.kind != "enum":
                continue
            value = w.value.decoded()
            if isinstance(value, bool) and view.field == "b":
                continue
            allowed = domain.values
            ok = value in allowed and not (isinstance(value, bool) and not any(isinstance(a, bool) for a in allowed))
            if not ok and not domain.case_sensitive and isinstance(value, str):
                ok = value.lower() in {str(a).lower() for a in allowed}
            if ok:
                continue
            severity = severity_for_reaction(spec.on_invalid)
            latent = switched_off(ctx, _entry, w.key)
            if latent:
                severity = "warning"
            shown = ", ".join(describe(a) if isinstance(a, str) else str(a) for a in allowed)
            message = (f"{describe(value)} is not a valid value for '{w.key}' (one of {shown}): "
                       f"{reaction(REACTION_TEXT.get(spec.on_invalid, ''), latent)}{flag_note(w)}")
            guess = did_you_mean(str(value), [str(a) for a in allowed])
            hint = f"did you mean {guess!r}?" if guess else f"write one of {shown}"
            f = ctx.report(self, w, message, at="value", severity=severity, hint=hint)
            if f:
                yield f
