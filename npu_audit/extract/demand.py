"""Which top-level definitions of a helper module a script's reads need: the helper's demand slice.

A script reads a helper module for the names it looks up in it (``from utils import build_config``,
``utils.PRECISION``), and the interpreter loads the module only then (``extract/project.py``). Most of
such a module is usually definitions the script never reaches (the model, the input pipeline), and
building and reading them would be the larger part of reading helpers. So a helper is read in parts:

- first, the part the module runs: every top-level statement that is not a ``def`` or ``class``
  (imports, constants, flag definitions, module-level calls, ``if``/``try`` blocks, whatever defines
  them), every ``class`` whose body does more than define methods or whose bases are not just
  ``object``, every definition of a name defined twice, plus, transitively, the top-level definitions of
  every name those statements read or bind (a function called while the module runs finds what it
  calls);
- then the definitions of a name when a name is looked up in the module and not found there: by the
  script (``utils.build_config``), or by code of the module itself (``build_config`` calling
  ``_defaults``), each definition as a part of its own.

A part is built from the module's ast with the other top-level statements left out
(``npu_audit.syntax.parse_module(keep=...)``), so every position in it is the file's own.
Leaving out a definition changes nothing the interpreter sees: a ``def`` (or a ``class`` that only
defines methods and has no base to look up) has no effect until its name is read, and a definition
nobody looks up is never read. While the module still runs (a circular import looks a name up in it),
only a definition above the statement it runs is read: a definition further down is not bound yet,
whole or in parts. Computed on CPython's ``ast``, once per file content per process.

Reading a definition only when its name is looked up gives the same effective configs as reading the
module whole (tests/test_helper_parts.py compares the two on generated helper projects), while building
only the parts that some script reaches.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Optional

from npu_audit.syntax import python_walk
from npu_audit.text import IDENTIFIER_WORD, source_lines, statement_end

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _names_of(stmt: ast.stmt) -> frozenset[str]:
    """Every name a statement reads or binds (imports, nested definitions and ``global`` declarations
    included): a superset of the top-level names whose definitions it can reach or rebind."""
    out: set[str] = set()
    for node in python_walk(stmt):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.alias):
            out.add((node.asname or node.name).partition(".")[0])
        elif isinstance(node, _DEFINITIONS):
            out.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
    return frozenset(out)


def _deferrable(stmt: ast.stmt) -> bool:
    """Whether reading a top-level definition later than where it stands changes nothing the interpreter
    sees: a ``def`` (its body runs when called; the interpreter reads default values at the call), or a
    ``class`` whose body only defines (a class body runs where it stands: ``x = CONSTANT`` in it reads
    the constant's value at that point, a ``global`` in it rebinds a module name) and whose bases, its
    nested classes' too, are ``object`` or none (bases are looked up where the class stands: read later,
    ``class Model(Base)`` could find a ``Base`` bound again further down, by a ``global`` in a function,
    or not bound yet in a circular import)."""
    if not isinstance(stmt, ast.ClassDef):
        return True
    if stmt.keywords or any(type(base) is not ast.Name or base.id != "object" for base in stmt.bases):
        return False
    for item in stmt.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Pass)):
            continue
        if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str):
            continue  # a docstring
        if isinstance(item, ast.ClassDef) and _deferrable(item):
            continue
        return False
    return True


class HelperText:
    """A helper module's text cut at its top-level statements (``tree``: CPython's ast of ``text``)."""

    def __init__(self, text: str, tree: ast.Module):
        self.lines = source_lines(text)
        self.spans: list[tuple[int, int]] = []  # per top-level statement: first and last line (1-based)
        self.definitions: dict[str, list[int]] = {}  # name -> the top-level def/class statements binding it
        self.base: list[int] = []  # the other top-level statements
        self.tree = tree
        self._statements = tree.body
        self._reads: dict[int, frozenset[str]] = {}
        self._first: Optional[frozenset[int]] = None
        for i, stmt in enumerate(tree.body):
            first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
            self.spans.append((first, statement_end(self.lines, stmt.end_lineno or stmt.lineno)))
            if isinstance(stmt, _DEFINITIONS) and _deferrable(stmt):
                self.definitions.setdefault(stmt.name, []).append(i)
            else:
                self.base.append(i)
        # (a name defined twice at the top is read in place: which definition holds it depends on where the
        # module is, a circular import's reading while it runs included)
        for name, found in list(self.definitions.items()):
            if len(found) > 1:
                self.base.extend(found)
                del self.definitions[name]
        self.base.sort()

    def reads(self, i: int) -> frozenset[str]:
        """The names statement ``i`` reads or binds, or more: every identifier-like word of its source
        (names in its strings and comments too; more definitions read in their place is what reading the
        module whole does). A regular expression over the text is several times faster than walking the
        ast; text with non-ASCII characters is walked (CPython normalises identifiers)."""
        found = self._reads.get(i)
        if found is None:
            first, last = self.spans[i]
            segment = "".join(self.lines[first - 1: last])
            if segment.isascii():
                found = frozenset(IDENTIFIER_WORD.findall(segment))
            else:
                found = _names_of(self._statements[i])
            self._reads[i] = found
        return found

    def first_part(self) -> set[int]:
        """The statements of the part the module runs: the base, and the definitions of every name the
        base or a kept definition reads or binds (a definition that a module-level statement rebinds, or
        that rebinds a name the base binds, is read in its place). The same whatever name the module is
        first read for: one part per module, built once."""
        found = self._first
        if found is None:
            names: set[str] = set()
            for i in self.base:
                names |= self.reads(i)
            found = self._first = frozenset(self.base) | self._reached(names, set(self.base))
        return set(found)

    def definitions_of(self, name: str, have: set[int], before: Optional[int] = None) -> set[int]:
        """The top-level definitions binding ``name`` that are not in ``have`` (what they name is read when
        it is looked up); with ``before``, only those that start above that line."""
        return {i for i in self.definitions.get(name, ())
                if i not in have and (before is None or self.spans[i][0] < before)}

    def _reached(self, names: Iterable[str], have: set[int]) -> set[int]:
        """The definitions (not in ``have``) binding ``names``, and transitively those their own
        statements name."""
        out: set[int] = set()
        todo = list(names)
        seen: set[str] = set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for i in self.definitions.get(name, ()):
                if i not in have and i not in out:
                    out.add(i)
                    todo.extend(self.reads(i))
        return out
