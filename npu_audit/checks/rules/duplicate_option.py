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
        "(NPURunConfig(session_config=...) appends its own entry, whose defaults overwrite yours), also when both "
        "are built under one `if`: seen from the branches of the write, the overwrite is certain."
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
                          "effect", hint="remove this write: 100, written below, replaces it"),),
            fixed=PRELUDE + 'custom_op.parameter_map["iterations_per_loop"].i = 100\n',
        ),
        # the write under the `if` is followed by the same value first: that next write is the dead one
        # (another option written before does not change which write comes next)
        Invalid(
            PRELUDE + 'custom_op.parameter_map["use_off_line"].b = True\n'
                      'if x:\n'
                      '    custom_op.parameter_map["iterations_per_loop"].i = 10\n'
                      'custom_op.parameter_map["iterations_per_loop"].i = 10\n'
                      'custom_op.parameter_map["iterations_per_loop"].i = 100\n',
            (Expect(10, 1, "'iterations_per_loop' is written again below with another value; this write (10) has "
                           "no effect"),),
            # (then the write under the `if` is dead, but removing it would empty the block: it stays)
            fixed=PRELUDE + 'custom_op.parameter_map["use_off_line"].b = True\n'
                            'if x:\n'
                            '    custom_op.parameter_map["iterations_per_loop"].i = 10\n'
                            'custom_op.parameter_map["iterations_per_loop"].i = 100\n',
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
        import npu_audit.syntax as cst  # (here: the rules are imported where libcst is not needed, a warm run)

        for _config, entry in ctx.entries():
            for key, eff in entry.effective().items():
                for first in eff.writes:
                    if first.implicit or first in eff.candidates:
                        continue
                    # (``index`` orders the writes of the whole entry, every key: not a position in eff.writes)
                    later = next((w for w in eff.writes if not w.conditional and w.index > first.index), None)
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
                                   related=related, fix=fix,
                                   hint=(f"remove this write: {describe(later.value.python)}, written below, replaces "
                                         "it") if later.value.resolved and not later.conditional else
                                        "remove this write: the writes below replace it")
                    if f:
                        yield f
        yield from self._across_entries(ctx)

    def _across_entries(self, ctx):
        for config in ctx.configs:
            entries = [e for e in config.all_entries() if e.is_npu is not False]  # named on some path
            if len(entries) < 2:
                continue
            for i, earlier in enumerate(entries[:-1]):
                for key, eff in earlier.effective().items():
                    mine = [w for w in eff.candidates if not w.implicit]
                    if not mine:
                        continue
                    w = mine[-1]
                    path = _path_of(w, earlier, entries)
                    if not _named_on(earlier, path):
                        continue
                    for later_entry in entries[i + 1:]:
                        if not _named_on(later_entry, path):
                            continue
                        last = _overwrite(later_entry, key, path)
                        if last is None or _same(w, last):
                            continue
                        lost = last.implicit
                        how = (f"NPURunConfig's own entry writes its default {describe(last.value.python)} after it, so "
                               f"this setting is silently lost") if lost else (
                               f"a later NpuOptimizer entry of the same config sets it to {describe(last.value.python)}")
                        related = [r for r in [ctx.related_write(last, "overwritten by this entry")] if r]
                        f = ctx.report(self, w, f"'{key}' has no effect: {how}",
                                       severity="error" if lost else "warning", related=related,
                                       hint=f"pass {key} to NPURunConfig(...) instead" if lost
                                       else "remove this write, or write the value you want in the later entry")
                        if f:
                            yield f
                        break



def _steps(w) -> frozenset:
    return frozenset((b.node_id, b.arm) for b in w.branches)


def _path_of(w, earlier, entries) -> frozenset:
    """The branches of ``w``, plus the same arm of every ``if`` of the entries that tests the same expression."""
    from npu_audit.checks.conditions import expand

    steps = _steps(w)
    if not steps:
        return steps
    every = {f"{n} {k}": v for n, e in enumerate(entries) for k, v in e.effective().items()}
    every.update({f"{n} .name": v for n, e in enumerate(entries) for v in _names(e)})
    return frozenset(expand(steps, every))


def _names(entry) -> list:
    from npu_audit.extract.model import EffectiveOption

    return [EffectiveOption("name", entry.name_writes, entry.name_writes, False)] if entry.name_writes else []


def _last_on(writes, path):
    """The write that certainly comes last on every run through ``path`` (None when another value may follow, or
    when nothing is certainly written there)."""
    from npu_audit.checks.conditions import compatible

    writes = [x for x in writes if compatible(x, set(path))]
    certain = [i for i, x in enumerate(writes) if _steps(x) <= path]
    if not certain:
        return None
    tail = writes[certain[-1]:]
    return tail[-1] if all(_same(x, tail[-1]) for x in tail) else None


def _named_on(entry, path) -> bool:
    """The entry is named NpuOptimizer on every run through ``path`` (an entry named under the ``if`` that also
    holds the write, say)."""
    if entry.is_npu is not None:
        return bool(entry.is_npu)
    last = _last_on(entry.name_writes, path)
    return last is not None and last.value.resolved and last.value.decoded() == "NpuOptimizer"


def _overwrite(later_entry, key, path):
    """The write of ``key`` by ``later_entry`` that certainly comes last on every run through ``path`` (the
    branches of the write it would overwrite), or None: a later entry built under the same ``if`` as the write
    (a config and its NPURunConfig under one ``if``) overwrites it on every run that makes it."""
    over = later_entry.effective().get(key)
    if over is None:
        return None
    if over.definitely_set:
        return over.last
    return _last_on(over.writes, path)
