"""Which names of a module can carry NPU configuration to the code that imports them.

A script without NPU markers reaches NPU configuration only through what it imports: a helper that
builds or fills a config, a config object, a value written into one. :func:`npu_exports` lists the
top-level names of a module that can do that, computed from CPython's ``ast`` (no libcst):

- a top-level statement whose source holds an NPU marker (``npu_audit.prefilter``) makes relevant the
  names it binds and the module-level names it reads (``cfg.graph_options...custom_optimizers`` makes
  ``cfg`` relevant);
- then, until nothing changes, a statement that reads a relevant name makes the names it binds
  relevant (``def main(): ... build_config()`` makes ``main`` relevant).

Names bound by imports are not exports (the module they come from is judged on its own). The
pipeline uses this to parse only the files that import such a name (``second_phase.feeders``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from typing import Callable, Optional

from npu_audit.prefilter import may_configure_npu
from npu_audit.syntax import python_children
from npu_audit.text import IDENTIFIER_WORD, source_lines

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_ANY: frozenset[str] = frozenset({"(any)"})  # (a statement whose words cannot be trusted: walk it)


def bound_names(stmt: ast.stmt) -> set[str]:
    """Names a top-level statement binds (not looking inside function or class bodies)."""
    if isinstance(stmt, _DEFINITIONS):
        return {stmt.name}
    out: set[str] = set()
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is ast.Store:  # type: ignore[attr-defined]
                out.add(node.id)  # type: ignore[attr-defined]
            continue
        if kind is ast.Constant:
            continue
        if isinstance(node, _DEFINITIONS):
            out.add(node.name)
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        todo.extend(python_children(node))
    return out


def _read(stmt: ast.stmt) -> set[str]:
    out: set[str] = set()
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Store:  # type: ignore[attr-defined]
                out.add(node.id)  # type: ignore[attr-defined]
            continue
        if kind is not ast.Constant:
            todo.extend(python_children(node))
    return out


def statement_source(lines: Sequence[str], stmt: ast.stmt) -> str:
    """The source lines of a statement (``lines``: the text's, with their line breaks), decorators included."""
    first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
    return "".join(lines[first - 1: stmt.end_lineno or stmt.lineno])


def carrying_names(tree: ast.Module, text: str, is_seed: Callable[[str], bool], exact: bool = True,
                   given: Iterable[str] = ()) -> set[str]:
    """The top-level names of a module through which NPU configuration can be reached: the names bound by
    a statement whose source ``is_seed`` says yes to, and the module-level names it reads; the names
    ``given``; then, until nothing changes, the names bound by a statement that reads one of those.

    ``exact``: what a statement reads is the names its ast reads; else every identifier-like word of its
    source (strings and comments too: more names count, none is missed). Either way a statement's words
    are looked at first, and the ast walked only for one whose words name a relevant name."""
    lines = source_lines(text)
    statements = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    segments = [statement_source(lines, s) for s in statements]
    bound = [bound_names(s) for s in statements]
    defined = set().union(*bound) if bound else set()
    words: list[Optional[frozenset[str]]] = [None] * len(statements)

    def words_of(i: int) -> frozenset[str]:  # (_ANY: words that cannot be trusted, non-ASCII text)
        found = words[i]
        if found is None:
            segment = segments[i]
            found = words[i] = frozenset(IDENTIFIER_WORD.findall(segment)) if segment.isascii() else _ANY
        return found

    def reads(i: int) -> set[str]:
        found = words_of(i)
        if exact or found is _ANY:
            read = _read(statements[i])
            return read if exact else read | set(IDENTIFIER_WORD.findall(segments[i]))
        return set(found)

    read: list[Optional[set[str]]] = [None] * len(statements)
    relevant: set[str] = set(given)
    for i, segment in enumerate(segments):
        if is_seed(segment):
            read[i] = reads(i)
            relevant |= bound[i] | (read[i] & defined)
    changed = bool(relevant)
    while changed:
        changed = False
        for i in range(len(statements)):
            if bound[i] <= relevant:
                continue
            if read[i] is None:
                found = words_of(i)
                if found is not _ANY and not found & relevant:
                    continue
                read[i] = reads(i)
            if read[i] & relevant:
                relevant |= bound[i]
                changed = True
    return relevant


def npu_exports(tree: Optional[ast.Module], text: str) -> Optional[list[str]]:
    """Sorted top-level names of the module that can carry NPU configuration; ``None`` when that
    cannot be told (no ``ast`` of the text), meaning: any name may."""
    if tree is None:
        return None
    return sorted(carrying_names(tree, text, lambda segment: may_configure_npu(segment.encode("utf-8", "surrogatepass"))))
