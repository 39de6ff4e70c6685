from npu_audit.checks.base import Expect, Invalid, Rule, describe
from npu_audit.checks.helpers import fixable_here
from npu_audit.checks.rules import PRELUDE
from npu_audit.findings import Edit, Fix


def _same(a, b) -> bool:
    if not (a.value.resolved and b.value.resolved):
        return False
    return a.value.decoded() == b.value.decoded() and type(a.value.decoded()) is type(b.value.decoded())


class DuplicateOption(Rule):
    code = "NPU305"
    name = "duplicate-option"
    severity = "warning"
    tags = ("unnecessary",)
    summary = "The same option written twice for one entry with different values: the first write is dead."
    what = (
        "Reports an option written again, unconditionally and with another value, later on the same optimizer "
        "entry; and an option of an NpuOptimizer entry that a later entry of the same session config overwrites "
        "(NPURunConfig(session_config=...) appends its own entry, whose defaults overwrite yours)."
    )
    why = (
        "Only the last write reaches the device. The earlier value reads as if it mattered; when NPURunConfig's "
        "own default overwrites your explicit setting, the setting is silently lost (an error)."
    )
    fix = "sometimes"
    fix_applicability = ("safe",)
    fix_safety = (
        "Removing the dead first write is safe when its value is a plain literal (no side effects): the "
        "program keeps the same final value."
    )
    invalid = (
        Invalid(
            PRELUDE + 'custom_op.parameter_map["iterations_per_loop"].i = 10\n'
                      'custom_op.parameter_map["iterations_per_loop"].i = 100\n',
            (Expect(7, 1, "'iterations_per_loop' is written again below with another value; this write (10) has no "
                          "effect"),),
            fixed=PRELUDE + 'custom_op.parameter_map["iterations_per_loop"].i = 100\n',
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["hcom_parallel"].b = False\nrun_config = NPURunConfig(session_config=config)\n',
            (Expect(7, 1, "'hcom_parallel' has no effect: NPURunConfig's own entry writes its default True after "
                          "it, so this setting is silently lost", severity='error'),),
        ),
    )
    valid = (PRELUDE + 'custom_op.parameter_map["iterations_per_loop"].i = 100\n',
             PRELUDE + 'custom_op.parameter_map["iterations_per_loop"].i = 10\nif x:\n'
                       '    custom_op.parameter_map["iterations_per_loop"].i = 100\n')

    def check(self, ctx):
        import libcst as cst  # (here: the rules are imported where libcst is not needed, a warm run)

        for _config, entry in ctx.entries():
            for key, eff in entry.effective().items():
                for first in eff.writes:
                    if first.implicit or first in eff.candidates:
                        continue
                    later = next((w for w in eff.writes[first.index + 1:] if not w.conditional and w.index > first.index), None)
                    later = later or next((w for w in eff.candidates if w.index > first.index), None)
                    if later is None or _same(first, later) or not first.value.resolved:
                        continue
                    related = [r for r in [ctx.related_write(later, f"overwritten here with {describe(later.value.python)}")] if r]
                    fix = None
                    plain = first.value.source_node is first.value_node or (
                        isinstance(first.value_node, cst.Name) and first.value_node.value in ("True", "False", "None"))
                    if (fixable_here(ctx, first) and plain
                            and first.stmt_node is not None and len(getattr(first.stmt_node, "body", ())) == 1):
                        rng = ctx.extraction.range_of(first.stmt_node)
                        if rng is not None:
                            fix = Fix("safe", "Remove the dead first write", (Edit(rng.line, 1, rng.end_line + 1, 1, ""),))
                    f = ctx.report(self, first, f"'{key}' is written again below with another value; "
                                   f"this write ({describe(first.value.python)}) has no effect",
                                   related=related, fix=fix)
                    if f:
                        yield f
        yield from self._across_entries(ctx)

    def _across_entries(self, ctx):
        for config in ctx.configs:
            entries = [e for e in config.all_entries() if e.is_npu]
            if len(entries) < 2:
                continue
            for i, earlier in enumerate(entries[:-1]):
                for key, eff in earlier.effective().items():
                    mine = [w for w in eff.candidates if not w.implicit]
                    if not mine:
                        continue
                    for later_entry in entries[i + 1:]:
                        over = later_entry.effective().get(key)
                        if over is None or not over.definitely_set:
                            continue
                        last = over.last
                        w = mine[-1]
                        if _same(w, last):
                            continue
                        lost = last.implicit
                        how = (f"NPURunConfig's own entry writes its default {describe(last.value.python)} after it, so "
                               f"this setting is silently lost") if lost else (
                               f"a later NpuOptimizer entry of the same config sets it to {describe(last.value.python)}")
                        related = [r for r in [ctx.related_write(last, "overwritten by this entry")] if r]
                        f = ctx.report(self, w, f"'{key}' has no effect: {how}",
                                       severity="error" if lost else "warning", related=related,
                                       hint=f"pass {key} to NPURunConfig(...) instead" if lost else None)
                        if f:
                            yield f
                        break
