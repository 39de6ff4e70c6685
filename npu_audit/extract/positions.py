"""Positions for a chosen few libcst nodes, without resolving metadata for the whole tree.

libcst's PositionProvider deep-copies the module and records a range for every node, which costs
several times the parse itself. npu-audit only needs positions for the handful of expressions it
reports, so this module runs one code-generation pass that tracks line/column and records ranges
for the requested nodes only. Ranges match libcst's PositionProvider (syntactic positions): 1-based
lines, 0-based columns in characters, end exclusive.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

import libcst as cst
from libcst._nodes.internal import CodegenState


@dataclass(frozen=True)
class Range:
    line: int  # 1-based
    column: int  # 1-based, in characters
    end_line: int
    end_column: int  # 1-based, exclusive

    def as_dict(self) -> dict:
        return {"line": self.line, "column": self.column, "end_line": self.end_line, "end_column": self.end_column}


class _TrackingState(CodegenState):
    def __init__(self, module: cst.Module, wanted: set[int]):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.line = 1
        self.column = 0
        self.wanted = wanted
        self.found: dict[int, tuple[int, int, int, int]] = {}
        self._stack: list[tuple[int, int]] = []

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self._advance(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self._advance(value)

    def _advance(self, value: str) -> None:
        if "\n" not in value and "\r" not in value:
            self.column += len(value)
            return
        text = value.replace("\r\n", "\n").replace("\r", "\n")
        self.line += text.count("\n")
        self.column = len(text) - text.rfind("\n") - 1

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._stack.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._stack.pop()
        key = id(node)
        if key in self.wanted and key not in self.found:
            self.found[key] = (start[0], start[1], self.line, self.column)

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> Iterator[None]:
        start = (self.line, self.column)
        try:
            yield
        finally:
            key = id(node)
            if key in self.wanted:
                end = (self.line, self.column)
                if start_node is not None and id(start_node) in self.found:
                    s = self.found[id(start_node)]
                    start = (s[0], s[1])
                if end_node is not None and id(end_node) in self.found:
                    e = self.found[id(end_node)]
                    end = (e[2], e[3])
                self.found[key] = (start[0], start[1], end[0], end[1])


def node_ranges(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, Range]:
    """Ranges of ``nodes`` (keyed by ``id(node)``) in one pass over ``module``.

    Nodes used as ``start_node``/``end_node`` by libcst (e.g. the parts of a statement) are
    tracked too, so syntactic positions are right.
    """
    wanted = {id(n) for n in nodes}
    if not wanted:
        return {}
    # (libcst hoists the start/end of a few compound statements from their children; for the
    # expressions and simple statements npu-audit reports, the node's own range is the syntactic one.)
    state = _TrackingState(module, wanted)
    module._codegen(state)
    out = {}
    for n in nodes:
        found = state.found.get(id(n))
        if found is not None:
            out[id(n)] = Range(found[0], found[1] + 1, found[2], found[3] + 1)
    return out


def _statement_starts(text: str, module: cst.Module) -> Optional[list[int]]:
    """First line of each module-level statement as libcst generates it (its leading blank and
    comment lines included), from CPython's fast ``ast`` parser. None when the two parsers disagree."""
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    starts: list[int] = []
    last_end = 0
    for node in tree.body:
        first = node.lineno
        for deco in getattr(node, "decorator_list", ()):
            first = min(first, deco.lineno)
        if first == last_end and starts:
            last_end = node.end_lineno or first  # `a = 1; b = 2`: one libcst statement line
            continue
        starts.append(first)
        last_end = node.end_lineno or first
    if len(starts) != len(module.body):
        return None
    return [first - len(getattr(stmt, "leading_lines", ())) for first, stmt in zip(starts, module.body)]


def statement_ranges(module: cst.Module, text: Optional[str], nodes: Iterable[cst.CSTNode], tops: dict) -> dict[int, Range]:
    """Like :func:`node_ranges`, but code-generates only the module-level statements that contain the
    nodes (``tops`` maps id(node) -> its module-level statement). Falls back to the whole module when a
    node's statement is unknown or the ast/libcst statement lines disagree."""
    nodes = [n for n in nodes if n is not None]
    if not nodes:
        return {}
    if text is None:
        return node_ranges(module, nodes)
    by_top: dict[int, list] = {}
    for n in nodes:
        top = tops.get(id(n))
        if top is None:
            return node_ranges(module, nodes)
        by_top.setdefault(id(top), []).append(n)
    starts = _statement_starts(text, module)
    if starts is None:
        return node_ranges(module, nodes)
    index = {id(stmt): i for i, stmt in enumerate(module.body)}
    import re

    line_offsets = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    out: dict[int, Range] = {}
    for top_id, group in by_top.items():
        i = index.get(top_id)
        if i is None:
            return node_ranges(module, nodes)
        stmt = module.body[i]
        state = _TrackingState(module, {id(n) for n in group})
        state.line = starts[i]
        stmt._codegen(state)
        generated = "".join(state.tokens)
        start_line = starts[i]
        if start_line - 1 >= len(line_offsets) or not text.startswith(generated, line_offsets[start_line - 1]):
            return node_ranges(module, nodes)
        for n in group:
            found = state.found.get(id(n))
            if found is not None:
                out[id(n)] = Range(found[0], found[1] + 1, found[2], found[3] + 1)
    return out
