"""The rule registry and the check stage.

``all_rules()`` lists every rule (one module each in ``npu_audit/checks/rules``), in code order.
``run_checks()`` runs the enabled ones over one file's extraction.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import cast

from npu_audit.checks.base import CheckContext, Rule
from npu_audit.findings import Finding


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    from npu_audit.checks import rules as package

    found = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and value.__module__ == module.__name__:
                found.append(value())
    found.sort(key=lambda r: r.code)
    codes = [r.code for r in found]
    names = [r.name for r in found]
    assert len(set(codes)) == len(codes) and len(set(names)) == len(names), "rule codes and names are unique"
    return tuple(found)


def rule_by(selector: str):
    """A rule by code ("NPU101") or name ("unknown-option"), case-insensitive for codes."""
    for rule in all_rules():
        if rule.name == selector or rule.code == selector.upper():
            return rule
    return None


def run_checks(ctx: CheckContext, enabled) -> list[Finding]:
    out: list[Finding] = []
    for rule in all_rules():
        if getattr(rule, "file_level", False) or not enabled(rule.code, rule.name):
            continue
        for finding in rule.check(ctx):
            if finding is not None:
                out.append(finding)
    return sorted(merge_repeats(ctx, merge_per_write(ctx, out)), key=Finding.sort_key)


#: A finding of the first check on a write that also has a finding of the second is one finding: the
#: write is never read (no-effect), so whether it suits the scenario is a further reason, not a
#: further thing to fix (tests/triage/recall_cases/one_write_one_finding.py); a
#: precision_mode value with a newer name needs no rename once it moves to precision_mode_v2
#: (prefer-precision-mode-v2 gives the v2 value), so the rename is only mentioned as the alternative.
#: A rule phrases what its folded finding adds with ``Rule.folded_reason`` (else "moreover, <message>").
#: Nothing is folded when an inline suppression names either finding: the two are then judged apart,
#: so suppressing one keeps the other as it would be alone, and the suppression is used.
# A finding folded into another check's finding on the same write and place (the first of these present):
# a write that has no effect, or that is deprecated, need not also be discussed for its scenario.
FOLDED_INTO = {"scenario-mismatch": ("no-effect", "deprecated-option"), "renamed-value": ("prefer-precision-mode-v2",)}


def merge_per_write(ctx: CheckContext, findings: list[Finding]) -> list[Finding]:
    """One finding per write, check and place.

    Two relations can give one write two findings of the same check at one place (shape_generalization_mode,
    ignored because of compile_dynamic_mode and because of jit_compile), and a write no-effect reports
    may also be in the wrong scenario. Those become one finding: the most severe (then the certain, then
    the first) one, the other reasons appended to its message and their related locations added."""
    groups: dict[tuple, list[Finding]] = {}
    order: list[tuple] = []
    writes = {}
    for f in findings:
        origin = ctx.origins.get(id(f))
        write = origin[4] if origin is not None and origin[0] is f and len(origin) > 4 else None
        if write is not None:
            writes[id(write)] = write
        group = (id(write), f.code, f.line, f.column) if write is not None else (id(f),)
        if group not in groups:
            order.append(group)
        groups.setdefault(group, []).append(f)
    codes = {rule.name: rule.code for rule in all_rules()}
    suppressed = ctx.suppressed
    for group in list(order):
        if len(group) == 1 or not groups[group]:
            continue
        targets = [codes.get(name) for name in FOLDED_INTO.get(groups[group][0].name, ())]
        target = next((g for into in targets for g in order
                       if len(g) > 1 and g[0] == group[0] and g[1] == into and groups[g]), None)
        if target is not None and not any(suppressed(f) for f in groups[group] + groups[target]):
            groups[target].extend(groups[group])
            groups[group] = []
    out = []
    for group in order:
        members = groups[group]
        if members:
            out.append(members[0] if len(members) == 1 else _fold(ctx, members))
    return out


def _fold(ctx: CheckContext, members: list[Finding]) -> Finding:
    from dataclasses import replace

    from npu_audit.findings import SEVERITY_ORDER

    main = members[0]  # the check the group is for (members of a folded check come after its own)
    rank = {id(f): i for i, f in enumerate(members)}
    own = [f for f in members if f.code == main.code]
    rep = max(own, key=lambda f: (SEVERITY_ORDER[f.severity], f.certainty == "always", -rank[id(f)]))
    rep = max(members, key=lambda f: (SEVERITY_ORDER[f.severity], f is rep, -rank[id(f)]))
    origin = ctx.origins.get(id(rep))
    base = origin[1] if origin is not None else rep.message
    reasons, asides, aside_fixes = [], [], []
    rules = {rule.code: rule for rule in all_rules()}
    for f in members:
        if f is rep:
            continue
        other = ctx.origins.get(id(f))
        aside = (rules[f.code].folded_reason(ctx, f, other[4] if other is not None and len(other) > 4 else None)
                 if f.code != rep.code and f.code in rules else None)
        if aside is not None:
            if aside not in asides:
                asides.append(aside)
            aside_fixes.append(f.fix)
            continue
        text = other[1] if other is not None else f.message
        if text != base and text not in reasons:
            reasons.append(text)
    if not reasons and not asides:
        return rep
    extra = "".join(f"; {a}" for a in asides) + "".join(f"; moreover, {_lower_first(r)}" for r in reasons)
    if rep.message.startswith(base):  # keep the "[may happen: ...]" suffix at the end
        message = base + extra + rep.message[len(base):]
    else:
        message = rep.message + extra
    related = list(rep.related)
    seen = {(r.path, r.line, r.column, r.message) for r in related}
    for f in members:
        for r in f.related:
            if (r.path, r.line, r.column, r.message) not in seen:
                seen.add((r.path, r.line, r.column, r.message))
                related.append(r)
    # (the fix of a folded finding phrased as an aside when the finding's own check has none: it does
    # what the aside says)
    fix = (rep.fix or next((f.fix for f in members if f.fix is not None and f.code == rep.code), None)
           or next((x for x in aside_fixes if x is not None), None))
    merged = replace(rep, message=message, related=tuple(related), fix=fix)
    if origin is not None:
        ctx.origins[id(merged)] = (merged, base + extra, *origin[2:])
    return merged


def _lower_first(text: str) -> str:
    """A message as the continuation of a sentence ("With x ..." -> "with x ...", "'key' ..." as is)."""
    return text[0].lower() + text[1:] if text[:1].isupper() and text[1:2].islower() else text


def merge_repeats(ctx: CheckContext, findings: list[Finding]) -> list[Finding]:
    """One finding per place, check and message.

    An entry shared by two configs is checked once, but relations can be reached twice: exact repeats
    are dropped. A helper called twice builds two configs, and each reports the helper's lines, the
    messages differing only by the branch they may happen on: those become one finding, the most
    severe (then the certain) one, with the calls that reach it as related locations. A helper of
    another module is reported at the call made here (``CheckContext.place``): called twice, its write
    is still one defect, shown once at the first call, the other calls as related locations (sample-2026
    id 3)."""
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        origin = ctx.origins.get(id(f))
        base = origin[1] if origin is not None and origin[0] is f else f.message
        write = origin[4] if origin is not None and origin[0] is f and len(origin) > 4 else None
        if write is not None and write.path != ctx.path:  # shown at a call: one group per write and message
            key: tuple = ("call", write.path, id(write.stmt_node), id(write.target_node), write.key, f.code, base)
        else:
            key = (f.line, f.column, f.code, base)
        members = groups.setdefault(key, [])
        if all(m.message != f.message or (m.line, m.column) != (f.line, f.column) for m in members):
            members.append(f)
    return [members[0] if len(members) == 1 else _merge(ctx, key[-1], members) for key, members in groups.items()]


def _merge(ctx: CheckContext, base: str, members: list[Finding]) -> Finding:
    from dataclasses import replace

    from npu_audit.findings import SEVERITY_ORDER, Related

    order = {id(f): i for i, f in enumerate(members)}
    rep = max(members, key=lambda f: (SEVERITY_ORDER[f.severity], f.certainty == "always", -order[id(f)]))
    message = rep.message
    if rep.certainty == "conditional":
        branches = [ctx.origins[id(f)][2] if id(f) in ctx.origins else None for f in members]
        common = _common_steps(cast("list[str]", branches)) if all(branches) else None
        callees = {ctx.origins[id(f)][3][-1].callee if id(f) in ctx.origins and ctx.origins[id(f)][3] else None
                   for f in members}
        if not common and len(callees) == 1 and None not in callees:
            common = f"when {callees.pop()}() is called"  # unconditional in the helper, called on several paths
        message = f"{base} [may happen: {common}]" if common else f"{base} [may happen on some paths]"
    # at a call made here (a helper of another module), several calls: shown at the first one
    first = min(members, key=lambda f: (f.line, f.column))
    if (first.line, first.column) != (rep.line, rep.column):
        rep = replace(rep, line=first.line, column=first.column, end_line=first.end_line, end_column=first.end_column)
    related = list(rep.related)
    seen = {(r.path, r.line, r.column) for r in related} | {(ctx.path, rep.line, rep.column)}
    for f in members:
        origin = ctx.origins.get(id(f))
        calls = origin[3] if origin is not None else ()
        if not calls or ctx.extraction is None:
            continue
        call = _call_shown_at(ctx, calls, f)
        rng = ctx.extraction.range_of(call.node)
        if rng is None or (call.path, rng.line, rng.column) in seen:
            continue
        seen.add((call.path, rng.line, rng.column))
        when = f" [may happen: {origin[2]}]" if f.certainty == "conditional" and origin is not None and origin[2] else ""
        related.append(Related(path=call.path, line=rng.line, column=rng.column,
                               message=f"also reached through this call of {call.callee}(){when}"))
    fix = rep.fix or next((f.fix for f in members if f.fix is not None), None)
    return replace(rep, message=message, related=tuple(related), fix=fix)


def _call_shown_at(ctx: CheckContext, calls, f: Finding):
    """The call a finding is shown at (the innermost call made here, for a write in a helper of another
    module), else the innermost call."""
    assert ctx.extraction is not None
    for call in reversed(calls):
        rng = ctx.extraction.range_of(call.node) if call.path == ctx.path else None
        if rng is not None and (rng.line, rng.column) == (f.line, f.column):
            return call
    return calls[-1]


def _common_steps(branches: list[str]) -> str:
    """The branch steps every branch text ends with (the conditions inside the helper itself)."""
    split = [b.split("; ") for b in branches]
    common: list[str] = []
    for steps in zip(*(reversed(s) for s in split)):
        if any(step != steps[0] for step in steps):
            break
        common.append(steps[0])
    return "; ".join(reversed(common))
