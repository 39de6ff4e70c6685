import os

from npu_audit.checks.base import Expect, Invalid, Rule
from npu_audit.checks.helpers import delete_statement, edit_for, fixable_here, requote
from npu_audit.checks.rules import PRELUDE
from npu_audit.checks.rules.wrong_field import _tf_alias
from npu_audit.findings import Fix

INI_MODES = ("high_precision", "high_performance")


# what to do about an option the docs will deprecate when they name nothing to use instead
_NO_REPLACEMENT = ("remove it if the job runs as well without it; nothing is named to replace it yet, so check the "
                   "release notes before moving to a newer release")


class DeprecatedOption(Rule):
    code = "NPU301"
    name = "deprecated-option"
    severity = "warning"
    tags = ("deprecated",)
    summary = "An option deprecated in the target release; the message names its replacement."
    what = ("Reports options the target release documents as deprecated or as going to be deprecated in later "
            "versions (the docs' list, which advises against using them), and whose use the adapter logs as deprecated.")
    why = (
        "Deprecated options still work for now but are on their way out; some already behave differently "
        "from their replacement. Migrating now avoids a broken job after the next CANN upgrade."
    )
    fix = "sometimes"
    fix_applicability = ("unsafe",)
    fix_safety = (
        "op_select_implmode with optypelist_for_implmode (literal values, high_precision or high_performance) "
        "gets an unsafe fix: it writes <script>_op_precision.ini next to the script with one "
        "`OpType=mode` line per listed operator type, points op_precision_mode at it and removes both "
        "deprecated lines. Unsafe because the ini takes effect through a file the job must ship; an existing "
        "file is never overwritten (then no fix is offered). Other migrations with an exact equivalent are "
        "offered by their own rules (prefer-precision-mode-v2)."
    )
    invalid = (
        Invalid(
            PRELUDE + 'custom_op.parameter_map["op_debug_level"].i = 1\n',
            (Expect(7, 25, "'op_debug_level' will be deprecated in a later version: the current release's docs advise "
                           "against using it; use 'op_debug_config' instead (the adapter logs a deprecation warning "
                           "naming op_debug_config)"),),
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["op_select_implmode"].s = b"high_precision"\n',
            (Expect(7, 25, "'op_select_implmode' will be deprecated in a later version: the current release's docs "
                           "advise against using it; use 'op_precision_mode' instead (the adapter logs a deprecation "
                           "warning naming op_precision_mode)"),),
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["op_select_implmode"].s = tf.compat.as_bytes("high_performance")\n'
                      'custom_op.parameter_map["optypelist_for_implmode"].s = tf.compat.as_bytes("Pooling,SoftmaxV2")\n',
            (Expect(7, 25, "'op_select_implmode' will be deprecated in a later version: the current release's docs "
                           "advise against using it; use 'op_precision_mode' instead (the adapter logs a deprecation "
                           "warning naming op_precision_mode)"),
             Expect(8, 25, "'optypelist_for_implmode' will be deprecated in a later version: the current release's "
                           "docs advise against using it; use 'op_precision_mode' instead (the adapter logs a "
                           "deprecation warning naming op_precision_mode)")),
            fixed=PRELUDE + 'custom_op.parameter_map["op_precision_mode"].s = tf.compat.as_bytes("example_op_precision.ini")\n',
            new_files=(('example_op_precision.ini', "# Written by npu-audit from op_select_implmode='high_performance' and optypelist_for_implmode='Pooling,SoftmaxV2'\n# (op_precision_mode ini format: docs/session-options op_precision_mode).\n[ByOpType]\nPooling=high_performance\nSoftmaxV2=high_performance\n"),),
        ),
        Invalid(  # nothing replaces it yet: the hint says what to do meanwhile
            PRELUDE + 'custom_op.parameter_map["enable_data_pre_proc"].b = True\n',
            (Expect(7, 25, "'enable_data_pre_proc' will be deprecated in a later version: the current release's docs "
                           "advise against using it (no replacement is named yet)", hint=_NO_REPLACEMENT),),
        ),
        Invalid(  # no replacement key, but the docs say what to do instead
            PRELUDE + 'custom_op.parameter_map["dynamic_input"].b = True\n'
                      'custom_op.parameter_map["dynamic_inputs_shape_range"].s = b"data:[3~6],[3~5]"\n',
            (Expect(7, 25, "'dynamic_input' will be deprecated in a later version: the current release's docs advise "
                           "against using it (no replacement is named yet)"),
             Expect(8, 25, "'dynamic_inputs_shape_range' will be deprecated in a later version: the current "
                           "release's docs advise against using it (the docs suggest set_graph_exec_config for graphs "
                           "with differing input shapes)",
                    hint="for subgraphs whose input shapes differ, configure dynamic inputs with "
                         "set_graph_exec_config, as the docs recommend; this option applies to a single graph only")),
        ),
    )
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
            if w.option_path is not None and ctx.kb.tf2 is not None:
                option = ctx.kb.tf2.options.get(w.option_path)
                if option is not None and not option.exists_in(ctx.settings.release):
                    continue  # the TF2 object rejects the assignment (ValueError): unknown-option says so
            if w.kwarg and w.via == "NPURunConfig":
                spec_kw = ctx.kb.runconfig.kwargs.get(w.kwarg)
                if spec_kw is not None and w.value.resolved and w.value.python == spec_kw.default:
                    continue  # NPURunConfig writes this value anyway: removing the keyword changes nothing
                if spec_kw is not None and spec_kw.written == "always":
                    # NPUEstimator writes the key on every run whatever the keyword says: the deprecated key
                    # is not the user's to drop, and dropping the keyword only flips it to the default
                    continue
            instead = (f"; use '{life.replacement}' instead" if life.replacement
                       else "" if life.instead else " (no replacement is named yet)")
            if life.scheduled:  # the docs' words: "will be deprecated in later versions"
                message = (f"'{w.key}' will be deprecated in a later version: the {ctx.settings.release} release's "
                           f"docs advise against using it{instead}")
            else:
                message = f"'{w.key}' is deprecated in the {ctx.settings.release} release{instead}"
            if life.note:
                message += f" ({life.note.rstrip('.')})"
            fix = self._implmode_fix(ctx, _entry, w) if w.key == "op_select_implmode" else None
            f = ctx.report(self, w, message, at="key", fix=fix,
                           hint=(f"migrate to '{life.replacement}'" if life.replacement
                                 else life.instead or _NO_REPLACEMENT))
            if f:
                yield f

    @staticmethod
    def _implmode_fix(ctx, entry, w):
        """op_select_implmode + optypelist_for_implmode -> an op_precision_mode ini next to the script."""
        eff = entry.effective()
        types_eff = eff.get("optypelist_for_implmode")
        if types_eff is None or eff.get("op_precision_mode") is not None:
            return None
        types_w = types_eff.last
        if any(x.conditional or x.via != "parameter_map" or not fixable_here(ctx, x) or x.value.origin != "literal"
               for x in (w, types_w)) or len(eff["op_select_implmode"].writes) != 1 or len(types_eff.writes) != 1:
            return None
        mode, types = w.value.decoded(), types_w.value.decoded()
        if mode not in INI_MODES or not isinstance(types, str):
            return None
        op_types = [t.strip() for t in types.split(",") if t.strip()]
        if not op_types or any(not t.replace("_", "").isalnum() for t in op_types):
            return None
        stem = os.path.splitext(os.path.basename(ctx.path))[0]
        ini_name = f"{stem}_op_precision.ini"
        if ctx.extraction.file_exists(os.path.join(os.path.dirname(ctx.path), ini_name)):
            return None  # never overwrite an existing file
        content = (f"# Written by npu-audit from op_select_implmode={mode!r} and optypelist_for_implmode={types!r}\n"
                   "# (op_precision_mode ini format: docs/session-options op_precision_mode).\n"
                   "[ByOpType]\n" + "".join(f"{t}={mode}\n" for t in op_types))
        module = ctx.extraction.modules.get(w.path)
        has_os = module is not None and module.aliases.get("os") == "os"
        path_expr = (f'os.path.join(os.path.dirname(os.path.abspath(__file__)), "{ini_name}")' if has_os
                     else f'"{ini_name}"')
        alias = _tf_alias(ctx, w)
        value = f"{alias}.compat.as_bytes({path_expr})" if alias else (f"{path_expr}.encode()" if has_os else f'b"{ini_name}"')
        new_key = requote(getattr(w.key_node, "value", ""), "op_precision_mode") if w.key_node is not None else None
        remove = delete_statement(ctx, types_w)
        if new_key is None or w.key_range is None or w.value_range is None or remove is None:
            return None
        where = "next to the script" if has_os else "in the working directory the job runs from"
        return Fix("unsafe", f"Write {ini_name} and use op_precision_mode (the ini must be {where})",
                   (edit_for(w.key_range, new_key), edit_for(w.value_range, value), remove),
                   new_files=((ini_name, content),))
