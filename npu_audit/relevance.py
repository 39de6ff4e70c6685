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
pipeline uses this to parse only the files that import such a name (``pipeline._feeders``).
"""

from __future__ import annotations

import ast
import re
from typing import Optional

from npu_audit.prefilter import may_configure_npu
from npu_audit.syntax import python_children
from npu_audit.text import split_lines_keepends

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# An identifier (CPython reads non-ASCII ones normalised (NFKC): such a name may be spelled otherwise in
# the source, so a word test is only a shortcut where both are ASCII)
_WORD = re.compile(r"[^\W\d]\w*")
_ANY: frozenset[str] = frozenset({"(any)"})  # (a statement whose words cannot be trusted: walk it)


def bound_names(stmt: ast.stmt) -> set[str]:
    """Names a top-level statement binds (not looking inside function or class bodies)."""
    if isinstance(stmt, _DEFINITIONS):
        return {stmt.name}
    out: set[str] = set()
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, _DEFINITIONS):
            out.add(node.name)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        todo.extend(python_children(node))
    return out


def _read(stmt: ast.stmt) -> set[str]:
    out: set[str] = set()
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if type(node) is ast.Name:
            if type(node.ctx) is not ast.Store:
                out.add(node.id)
            continue
        todo.extend(python_children(node))
    return out


def npu_exports(tree: Optional[ast.Module], text: str) -> Optional[list[str]]:
    """Sorted top-level names of the module that can carry NPU configuration; ``None`` when that
    cannot be told (no ``ast`` of the text), meaning: any name may."""
    if tree is None:
        return None
    lines = split_lines_keepends(text)
    statements = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    bound = [bound_names(s) for s in statements]
    defined = set().union(*bound) if bound else set()
    read: list[Optional[set[str]]] = [None] * len(statements)
    relevant: set[str] = set()
    for i, stmt in enumerate(statements):
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        segment = "".join(lines[first - 1: stmt.end_lineno or stmt.lineno])
        if may_configure_npu(segment.encode("utf-8", "surrogatepass")):
            read[i] = _read(stmt)
            relevant |= bound[i] | (read[i] & defined)
    changed = bool(relevant)
    words: list[Optional[frozenset[str]]] = [None] * len(statements)
    while changed:
        changed = False
        for i, stmt in enumerate(statements):
            if bound[i] <= relevant:
                continue
            if read[i] is None:
                # (the names a statement reads are among the words of its source: the ast is walked only
                # for a statement whose words hold a relevant name, a few in a module)
                found = words[i]
                if found is None:
                    first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
                    segment = "".join(lines[first - 1: stmt.end_lineno or stmt.lineno])
                    found = words[i] = frozenset(_WORD.findall(segment)) if segment.isascii() else _ANY
                if found is not _ANY and not found & relevant:
                    continue
                read[i] = _read(stmt)
            if read[i] & relevant:
                relevant |= bound[i]
                changed = True
    return sorted(relevant)
