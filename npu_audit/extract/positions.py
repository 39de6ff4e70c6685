"""Positions for a chosen few libcst nodes, without resolving metadata for the whole tree.

libcst's PositionProvider deep-copies the module and records a range for every node, which costs
several times the parse itself. npu-audit only needs positions for the handful of expressions it
reports, so this module runs one code-generation pass that tracks line/column and records ranges
for the requested nodes only. Ranges match libcst's PositionProvider (syntactic positions): 1-based
lines, 0-based columns in characters, end exclusive.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Optional, Union

import libcst as cst
from libcst._nodes.internal import CodegenState

from npu_audit.extract.ranges import Range
from npu_audit.text import line_starts


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


@lru_cache(maxsize=4)
def python_ast(text: str):
    """CPython's ast of ``text`` (shared by the steps that need line numbers: one parse per text), or
    None. The tree is shared: callers must not change it."""
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _blocks(node) -> list:
    """(libcst statements, ast field path) pairs of the statement blocks directly inside a compound
    statement, in document order. Blocks written on one line (``if x: y``) are not statement lists."""
    out = []

    def block(suite, field):
        if isinstance(suite, cst.IndentedBlock):
            out.append((list(suite.body), field))

    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.With)):
        block(node.body, ("body",))
    elif isinstance(node, cst.If):
        block(node.body, ("body",))
        if isinstance(node.orelse, cst.If):
            out.append(([node.orelse], ("orelse",)))
        elif node.orelse is not None:
            block(node.orelse.body, ("orelse",))
    elif isinstance(node, (cst.For, cst.While)):
        block(node.body, ("body",))
        if node.orelse is not None:
            block(node.orelse.body, ("orelse",))
    elif isinstance(node, (cst.Try, cst.TryStar)):
        block(node.body, ("body",))
        handlers: Sequence[Union[cst.ExceptHandler, cst.ExceptStarHandler]] = node.handlers
        for i, handler in enumerate(handlers):
            block(handler.body, ("handlers", i, "body"))
        if node.orelse is not None:
            block(node.orelse.body, ("orelse",))
        if node.finalbody is not None:
            block(node.finalbody.body, ("finalbody",))
    return out


def _ast_field(node, field):
    for part in field:
        node = node[part] if isinstance(part, int) else getattr(node, part, None)
        if node is None:
            return None
    return node


def _ast_index(stmts: list, i: int) -> int:
    """Index in the ast statement list of libcst statement ``i`` (``a; b`` is one libcst line, two ast statements)."""
    j = 0
    for stmt in stmts[:i]:
        j += len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
    return j


def _locate(path: tuple, module: cst.Module, tree) -> Optional[ast.stmt]:
    """The ast statement for the innermost libcst statement of ``path`` (outermost first)."""
    stmts, ast_stmts = list(module.body), tree.body
    node = None
    for depth, stmt in enumerate(path):
        try:
            i = next(k for k, s in enumerate(stmts) if s is stmt)
        except StopIteration:
            return None
        j = _ast_index(stmts, i)
        if j >= len(ast_stmts):
            return None
        node = ast_stmts[j]
        if depth + 1 == len(path):
            return node
        nxt = path[depth + 1]
        found = None
        for block, field in _blocks(stmt):
            if any(s is nxt for s in block):
                found = (block, _ast_field(node, field))
                break
        if found is None or found[1] is None:
            return None
        stmts, ast_stmts = found
    return node


def statement_ranges(module: cst.Module, text: Optional[str], nodes: Iterable[cst.CSTNode], tops: dict) -> dict[int, Range]:
    """Like :func:`node_ranges`, but code-generates only the innermost statements that contain the
    nodes (``tops`` maps id(node) -> its enclosing statements, outermost first), placed at the line and
    indentation CPython's ``ast`` gives them. Every generated statement is compared with the source
    text; on any doubt the whole module is code-generated instead."""
    nodes = [n for n in nodes if n is not None]
    if not nodes:
        return {}
    if text is None:
        return node_ranges(module, nodes)
    groups: dict[int, tuple] = {}
    members: dict[int, list] = {}
    for n in nodes:
        path = tops.get(id(n))
        if not path:
            return node_ranges(module, nodes)
        groups[id(path[-1])] = path
        members.setdefault(id(path[-1]), []).append(n)
    tree = python_ast(text)
    if tree is None:
        return node_ranges(module, nodes)
    line_offsets = line_starts(text)
    out: dict[int, Range] = {}
    for key, path in groups.items():
        stmt = path[-1]
        node = _locate(path, module, tree)
        if node is None:
            return node_ranges(module, nodes)
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
        if first - 1 >= len(line_offsets):
            return node_ranges(module, nodes)
        line_start = line_offsets[first - 1]
        line_text = text[line_start: line_offsets[first] if first < len(line_offsets) else len(text)]
        indent = line_text[: len(line_text) - len(line_text.lstrip(" \t\f"))]
        start_line = first - len(getattr(stmt, "leading_lines", ()))
        state = _TrackingState(module, {id(n) for n in members[key]})
        state.line = start_line
        state.indent_tokens = [indent] if indent else []
        stmt._codegen(state)
        generated = "".join(state.tokens)
        if start_line < 1 or not text.startswith(generated, line_offsets[start_line - 1]):
            return node_ranges(module, nodes)
        for n in members[key]:
            found = state.found.get(id(n))
            if found is not None:
                out[id(n)] = Range(found[0], found[1] + 1, found[2], found[3] + 1)
    return out
