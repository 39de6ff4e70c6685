"""What a caller of a module's code could change in the option values it writes: the second phase's test.

A file without NPU markers that imports an NPU name of a module of the tree is analysed in a second
phase (``second_phase.feeders``) because it may hand that module a value the module writes into a config:
a finding about such a value is shown in the file the value comes from (``checks.base.place``), so only
that file's analysis reports it. Whether any caller can do so is read off the module's own analysis:

- a value written as a literal in the write itself (``.s = tf.compat.as_bytes("fp16")``), or read from a
  literal in the body of the same function as the write (or, for a write at module level, anywhere at
  module level of the same file: module code runs once, at import, before any importer can pass anything),
  is the module's own: no caller changes it;
- a flag's or argument's default is the value of the file that defines the flag, whatever the caller;
- a literal in another file (a constant, what a function there returns, a flag defined there) is that
  file's: only that file can be the caller that supplies it;
- anything else (an unresolved value, a parameter's default, a module constant read inside a function,
  an attribute set elsewhere) may be a caller's.

:func:`caller_inputs` gives the files (real paths) whose values the module's writes take, or None when
a caller may supply one (or when it cannot be told): then every importer is analysed, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Optional

import npu_audit.syntax as cst
from npu_audit.extract.model import UNRESOLVED

__all__ = ["caller_inputs"]

_Place = tuple[int, int]  # (line, column), 1-based


def caller_inputs(extraction, exports: Optional[list[str]]) -> Optional[list[str]]:
    """The real paths of the other files whose literals or flag definitions the option writes of
    ``extraction`` (one analysed file's, before ``release``) take their values from; None when a caller
    of the file's code could supply a value (see the module docstring), or when the analysis may not have
    seen every write an importer can reach: ``exports`` (the file's NPU names, ``relevance.npu_exports``)
    is None (any name may be one), or a function of the file whose source holds an NPU marker was not read
    (defined in an ``if`` or ``try`` block, or inside another function, and called by nobody). What the
    file's importers reach of other modules through it is those modules' answer (``second_phase.feeders``)."""
    if exports is None:
        return None
    state = extraction.modules.get(extraction.display)
    if state is None or _unread_npu_function(state, extraction.functions_read):
        return None
    sources: set[str] = set()
    bodies: dict[str, list[tuple[_Place, _Place, _Place]]] = {}
    modules = extraction.modules
    for config in extraction.configs:
        for entry in config.all_entries():
            for write in entry.writes:
                if write.implicit:
                    continue
                value = write.value
                if value.python is UNRESOLVED:
                    return None
                source = value.source_path
                if value.origin == "flag-default" and source is None:
                    source = next((display for display, state in modules.items()
                                   if value.flag in state.flags or value.flag in state.arguments), None)
                    if source is None:
                        return None
                if source is not None and source != write.path:
                    defining = modules.get(source)
                    if defining is None:
                        return None
                    sources.add(str(defining.file))  # (only that file can supply its own literal)
                    continue
                if value.origin in ("literal", "flag-default"):
                    continue  # (written in the write itself, or returned by a function of the file; the file's flag)
                if value.source_node is None or source is None:
                    return None  # (computed from several values: where each comes from is not known)
                if not _same_body(write, value.source_node, bodies, modules):
                    return None
    return sorted(sources)


def _unread_npu_function(state, read: frozenset[int]) -> bool:
    """Whether a function of the module (at any depth) whose source holds an NPU marker was not read."""
    from npu_audit.prefilter import may_configure_npu

    lines: Optional[list[bytes]] = None
    for node in _functions(state.module):
        if id(node) in read:
            continue
        span = cst.range_of(node)
        if span is None:
            return True
        if lines is None:
            lines = state.raw.splitlines(True)
        if may_configure_npu(b"".join(lines[span[0] - 1:span[2]])):
            return True
    return False


def _same_body(write, literal, bodies: dict, modules: dict) -> bool:
    """Whether ``literal`` (in the file of ``write``) is in the body of the innermost function holding the
    write, or the write is at module level."""
    stmt = write.stmt_node if write.stmt_node is not None else write.target_node
    at = _start(stmt)
    lit = _start(literal)
    if at is None or lit is None:
        return False
    spans = bodies.get(write.path)
    if spans is None:
        state = modules.get(write.path)
        if state is None:
            return False
        # (a helper read in parts: its functions are in the parts read later too)
        spans = bodies[write.path] = [span for module in (state.module, *state.later_parts)
                                      for span in _function_bodies(module)]
    inner = None
    for start, body, end in spans:
        if start <= at <= end and (inner is None or start >= inner[0]):
            inner = (start, body, end)
    if inner is None:
        return True  # a write at module level (or in a class body): it runs at import
    return inner[1] <= lit <= inner[2]


def _start(node) -> Optional[_Place]:
    found = cst.range_of(node) if node is not None else None
    return (found[0], found[1]) if found is not None else None


def _end(node) -> Optional[_Place]:
    found = cst.range_of(node) if node is not None else None
    return (found[2], found[3]) if found is not None else None


def _function_bodies(module) -> list[tuple[_Place, _Place, _Place]]:
    """(where the def starts, where its body starts, where it ends) of every function of ``module``, nested
    ones too; parameter defaults lie between the first two."""
    out = []
    for node in _functions(module):
        start, end = _start(node), _end(node)
        inner = _statements(node.body)
        body = _start(inner[0]) if inner else None
        if start is not None and end is not None and body is not None:
            out.append((start, body, end))
    return out


def _functions(module) -> Iterator:
    """Every function definition of ``module``, at any depth (in blocks, classes and other functions)."""
    todo = list(module.body)
    while todo:
        node = todo.pop()
        if isinstance(node, cst.FunctionDef):
            yield node
        for block in _blocks(node):
            todo.extend(_statements(block))


def _statements(block) -> list:
    if block is None:
        return []
    if isinstance(block, (list, tuple)):
        return list(block)
    body = getattr(block, "body", None)
    return list(body) if isinstance(body, (list, tuple)) else []


def _blocks(node) -> list:
    """The blocks of statements of a compound statement (its body, else, handlers, finally)."""
    out = []
    body = getattr(node, "body", None)
    if body is not None and not isinstance(body, (list, tuple)):  # (a line's small statements are a list)
        out.append(body)
    orelse = getattr(node, "orelse", None)
    if orelse is not None:
        out.append(getattr(orelse, "body", orelse) if not isinstance(orelse, cst.If) else [orelse])
    for handler in getattr(node, "handlers", None) or ():
        out.append(handler.body)
    final = getattr(node, "finalbody", None)
    if final is not None:
        out.append(final.body)
    return out
