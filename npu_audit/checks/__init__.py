"""The rule registry and the check stage.

``all_rules()`` lists every rule (one module each in ``npu_audit/checks/rules``), in code order.
``run_checks()`` runs the enabled ones over one file's extraction.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

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
    # one finding per place and message (an entry shared by two configs is checked once, but
    # relations can be reached twice)
    unique = {}
    for f in out:
        unique.setdefault((f.line, f.column, f.code, f.message), f)
    return sorted(unique.values(), key=Finding.sort_key)
