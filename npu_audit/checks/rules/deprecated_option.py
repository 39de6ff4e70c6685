from npu_audit.checks.base import Rule
from npu_audit.checks.rules import PRELUDE


class DeprecatedOption(Rule):
    code = "NPU301"
    name = "deprecated-option"
    severity = "warning"
    tags = ("deprecated",)
    summary = "An option deprecated in the target release; the message names its replacement."
    what = "Reports options the target release documents as deprecated (and whose use the adapter logs as deprecated)."
    why = (
        "Deprecated options still work for now but are on their way out; some already behave differently "
        "from their replacement. Migrating now avoids a broken job after the next CANN upgrade."
    )
    example_bad = 'custom_op.parameter_map["op_debug_level"].i = 1'
    example_good = 'custom_op.parameter_map["op_debug_config"].s = tf.compat.as_bytes("/home/test/op_debug.cfg")'
    fix_safety = "Migrations with an exact equivalent are offered by their own rules (e.g. prefer-precision-mode-v2)."
    invalid = (PRELUDE + 'custom_op.parameter_map["op_debug_level"].i = 1\n',
               PRELUDE + 'custom_op.parameter_map["op_select_implmode"].s = b"high_precision"\n')
    valid = (PRELUDE + 'custom_op.parameter_map["op_debug_config"].s = b"/home/test/op_debug.cfg"\n',
             "from npu_bridge.npu_init import *\nrun_config = NPURunConfig(iterations_per_loop=10)\n")

    def check(self, ctx):
        for _config, _entry, w in ctx.user_writes():
            spec = ctx.spec(w.key)
            if spec is None:
                continue
            life = spec.lifecycle[ctx.settings.release]
            if life.status != "deprecated":
                continue
            instead = f"; use '{life.replacement}' instead" if life.replacement else "; stop setting it"
            message = f"'{w.key}' is deprecated in the {ctx.settings.release} release{instead}"
            if life.note:
                message += f" ({life.note.rstrip('.')})"
            f = ctx.finding(self, w.path, w.key_range or w.range, message, calls=w.calls, write=w, option=w.key,
                            hint=f"migrate to '{life.replacement}'" if life.replacement else None,
                            certainty=w.certainty, branch=w.branch_text())
            if f:
                yield f
