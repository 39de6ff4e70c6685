from npu_audit.checks.base import Expect, Invalid, Rule, describe
from npu_audit.checks.rules import PRELUDE


class ProductUnsupported(Rule):
    code = "NPU304"
    name = "product-unsupported"
    severity = "warning"
    summary = "An option or value limited to products that exclude the target product (--product)."
    what = (
        "With `--product` (or `product` in [tool.npu-audit]), reports options and values the docs limit to "
        "other products: bfloat16 modes (allow_mix_precision_bf16, mixed_bfloat16) and aicore_num outside "
        "Atlas A2/A3, variable_use_1g_huge_page, AOE on inference products, ... Without a target product "
        "nothing is assumed."
    )
    why = "On an unsupported product the option is rejected or silently ignored by the runtime."
    fix_safety = "No automatic fix."
    invalid = (
        Invalid(
            '# npu-audit-test: product=atlas-training\n' + PRELUDE
           + 'custom_op.parameter_map["precision_mode_v2"].s = b"mixed_bfloat16"\n',
            (Expect(8, 50, "'mixed_bfloat16' for 'precision_mode_v2' is not supported on Atlas training products "
                           "(only on Atlas A2 training products / Atlas A2 inference products; Atlas A3 training "
                           "products / Atlas A3 inference products)"),),
        ),
    )
    valid = (PRELUDE + 'custom_op.parameter_map["precision_mode_v2"].s = b"mixed_bfloat16"\n',
             '# npu-audit-test: product=atlas-a2\n' + PRELUDE
             + 'custom_op.parameter_map["precision_mode_v2"].s = b"mixed_bfloat16"\n')

    def check(self, ctx):
        product = ctx.settings.product
        if not product:
            return
        name = ctx.kb.products[product].name
        for _config, _entry, w in ctx.user_writes():
            spec = ctx.spec(w.key)
            if spec is None:
                continue
            if spec.products and product not in spec.products:
                supported = "; ".join(ctx.kb.products[p].name for p in spec.products)
                f = ctx.report(self, w, f"'{w.key}' is not supported on {name} (only on {supported})", at="key",
                               hint=f"remove this setting when the job runs on {name}")
                if f:
                    yield f
                continue
            if not w.value.resolved:
                continue
            fact = spec.value_fact(w.value.decoded())
            if fact is not None and fact.products and product not in fact.products:
                supported = "; ".join(ctx.kb.products[p].name for p in fact.products)
                f = ctx.report(self, w,
                               f"{describe(w.value.decoded())} for '{w.key}' is not supported on {name} (only on {supported})",
                               at="value", hint=f"choose a value of '{w.key}' that {name} supports "
                                                f"(`npu-audit --explain {w.key}` lists them)")
                if f:
                    yield f
