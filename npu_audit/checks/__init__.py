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
    return sorted(merge_repeats(ctx, out), key=Finding.sort_key)


def merge_repeats(ctx: CheckContext, findings: list[Finding]) -> list[Finding]:
    """One finding per place, check and message.

    An entry shared by two configs is checked once, but relations can be reached twice: exact repeats
    are dropped. A helper called twice builds two configs, and each reports the helper's lines, the
    messages differing only by the branch they may happen on: those become one finding, the most
    severe (then the certain) one, with the calls that reach it as related locations."""
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        origin = ctx.origins.get(id(f))
        base = origin[1] if origin is not None and origin[0] is f else f.message
        members = groups.setdefault((f.line, f.column, f.code, base), [])
        if all(m.message != f.message for m in members):
            members.append(f)
    return [members[0] if len(members) == 1 else _merge(ctx, base, members)
            for (_line, _column, _code, base), members in groups.items()]


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
    related = list(rep.related)
    seen = {(r.path, r.line, r.column) for r in related}
    for f in members:
        origin = ctx.origins.get(id(f))
        calls = origin[3] if origin is not None else ()
        if not calls or ctx.extraction is None:
            continue
        call = calls[-1]
        rng = ctx.extraction.range_of(call.node)
        if rng is None or (call.path, rng.line, rng.column) in seen:
            continue
        seen.add((call.path, rng.line, rng.column))
        when = f" [may happen: {origin[2]}]" if f.certainty == "conditional" and origin is not None and origin[2] else ""
        related.append(Related(path=call.path, line=rng.line, column=rng.column,
                               message=f"also reached through this call of {call.callee}(){when}"))
    fix = rep.fix or next((f.fix for f in members if f.fix is not None), None)
    return replace(rep, message=message, related=tuple(related), fix=fix)


def _common_steps(branches: list[str]) -> str:
    """The branch steps every branch text ends with (the conditions inside the helper itself)."""
    split = [b.split("; ") for b in branches]
    common: list[str] = []
    for steps in zip(*(reversed(s) for s in split)):
        if any(step != steps[0] for step in steps):
            break
        common.append(steps[0])
    return "; ".join(reversed(common))
