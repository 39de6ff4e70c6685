"""Validation of the rules files: where a value is, and the checks every loader of a rules file uses.

Each rules file is read by one builder (:mod:`npu_audit.knowledge.loader`, and
:mod:`npu_audit.knowledge.tf2` for tf2_options.toml); both report a mistake as one
:class:`KnowledgeBaseError` naming the file, the table and the problem.
"""

from __future__ import annotations

from typing import Any, Optional


class KnowledgeBaseError(Exception):
    """A rules file does not follow the schema in rules/README.md."""


class Location:
    """Location of the value being validated, for error messages."""

    def __init__(self, file: str, path: str = ""):
        self.file, self.path = file, path

    def at(self, part: str) -> Location:
        return Location(self.file, f"{self.path}.{part}" if self.path else part)

    def fail(self, message: str) -> KnowledgeBaseError:
        where = f"{self.file}: [{self.path}]" if self.path else self.file
        return KnowledgeBaseError(f"{where}: {message}")


def expect(ctx: Location, table: Any, required: set[str], optional: set[str]) -> dict:
    if not isinstance(table, dict):
        raise ctx.fail(f"expected a table, got {type(table).__name__}")
    missing = required - table.keys()
    if missing:
        raise ctx.fail(f"missing {', '.join(sorted(missing))}")
    unknown = table.keys() - required - optional
    if unknown:
        raise ctx.fail(f"unknown field(s) {', '.join(sorted(unknown))}")
    return table


def string(ctx: Location, value: Any, allowed: Optional[tuple] = None) -> str:
    if not isinstance(value, str):
        raise ctx.fail(f"expected a string, got {value!r}")
    if allowed is not None and value not in allowed:
        raise ctx.fail(f"{value!r} is not one of {', '.join(allowed)}")
    return value


def strings(ctx: Location, value: Any, allowed: Optional[tuple] = None) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ctx.fail(f"expected a list of strings, got {value!r}")
    return tuple(string(ctx, v, allowed) for v in value)


def scalar(ctx: Location, value: Any):
    if not isinstance(value, (str, int, bool, float)):
        raise ctx.fail(f"expected a string, integer, boolean or float, got {value!r}")
    return value
