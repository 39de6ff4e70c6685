"""The relevance slice of one text (:func:`slice_text`): build the units, run the fixed point, and blank
the lines of every dropped statement, keeping every other position where it is (:func:`stand_in`).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Optional

from npu_audit.slicing.fixpoint import _Slicer
from npu_audit.slicing.reach import Exports, Reaches, _imports
from npu_audit.slicing.seeds import CONSUMERS, DEFINITION_CALLS, HANDLED_METHODS, SEED_IDENTIFIERS
from npu_audit.slicing.units import _Builder, _Unit
from npu_audit.text import source_lines

#: Set to a non-empty value other than "0" to analyse whole files (for comparisons).
ENV_OFF = "NPU_AUDIT_NO_SLICE"


def enabled() -> bool:
    """Whether the slice is on (``NPU_AUDIT_NO_SLICE`` unset, empty or "0")."""
    return os.environ.get(ENV_OFF, "") in ("", "0")


@dataclass(frozen=True)
class SliceResult:
    """The relevance slice of a file (:func:`slice_text`): the text that is parsed and read, and what it kept and
    blanked."""

    text: str  # the sliced text: the same lines, dropped statements blanked
    lines: int  # lines of the file
    blanked: int  # lines blanked (or holding an inserted ``pass``)
    statements: int  # statements (at any depth)
    kept: int  # statements kept
    kept_besides_imports: int = 0  # statements kept other than imports: 0 when nothing can reach NPU code
    read: int = 0  # statements read (units built): a module-level definition nothing asks about is not read
    dropped: frozenset[int] = frozenset()  # id() of the dropped statements of the ast (npu_audit.syntax builds without them)


def stand_in(out: list[str], first: int, last: int) -> int:
    """Replace lines ``first``..``last`` (1-based) of ``out`` (lines with their line breaks) by one
    statement that does nothing and spans the same lines, at the indentation of the first: ``pass`` for
    one line, else an empty triple-quoted string whose line breaks are those of the lines it replaces.
    Every later position is unchanged, and a parser of the text builds a node or two instead of one per
    blank line. Returns the number of lines replaced."""
    last = min(last, len(out))
    if last < first:
        return 0
    line = out[first - 1]
    indent = line[: len(line) - len(line.lstrip(" \t\f"))]

    def ending(n: int) -> str:
        text = out[n - 1]
        return text[len(text.rstrip("\r\n")):]

    if first == last:
        out[first - 1] = indent + "pass" + ending(first)
        return 1
    out[first - 1] = indent + '"""' + ending(first)
    for n in range(first + 1, last):
        # (after a line ending in "\r", a line that is only "\n" would make the two breaks one: "\r\n")
        out[n - 1] = " " + ending(n) if out[n - 2].endswith("\r") and ending(n) == "\n" else ending(n)
    out[last - 1] = '"""' + ending(last)
    return last - first + 1


def slice_text(text: str, tree: Optional[ast.Module], identifiers: Iterable[str] = (),
               reaches: Optional[Reaches] = None, exports: Optional[Exports] = None,
               modelled: Optional[Iterable[str]] = None, sessions: Iterable[str] = (),
               lazy: bool = True) -> Optional[SliceResult]:
    """The slice of ``text`` (whose CPython ``ast`` is ``tree``), or None when there is no ``ast``
    (the whole text is analysed then). ``identifiers``: more API names that make a statement a seed.
    ``reaches(dotted, level)``: whether the module an import names is a file of the analysed tree
    that can reach NPU code (calls into it are kept); None: no module of the tree does.
    ``exports(dotted, level)``: which names of such a module can (calls of the others are kept only when
    they are handed a config); None: any can. ``modelled``: the names of the calls the interpreter models
    (rules/tf_api.toml and the str methods it evaluates); with it and a ``reaches`` that can tell whether an
    import names a file of the tree (:meth:`TreeReach.in_tree`), the call-free arguments of other calls
    through imports from outside the tree are not needed (they cannot change the unknown value such a call
    gives). ``sessions``: the names of the calls that open a session (rules/tf_api.toml, kind "session"): a
    name bound to what they give is not followed forward. ``lazy``: a module-level definition is read only
    when the fixed point asks about a word it holds (:class:`~npu_audit.slicing.units._Builder`); False reads
    every statement first (the same slice, for comparisons)."""
    if tree is None:
        return None
    lines = source_lines(text)
    names = SEED_IDENTIFIERS | frozenset(identifiers)
    aliases, helpers, star = _imports(tree, names, reaches, exports)
    in_tree = getattr(reaches, "in_tree", None) if modelled is not None else None
    known = frozenset(modelled or ()) | HANDLED_METHODS | CONSUMERS | DEFINITION_CALLS | names
    builder = _Builder(tree, lines, names | aliases, helpers, star, in_tree, known, frozenset(sessions), lazy)
    slicer = _Slicer(builder)
    slicer.run()
    out = list(lines)
    blanked = 0
    todo: list[list[_Unit]] = [builder.top]
    while todo:
        block = todo.pop()
        run: list[_Unit] = []  # consecutive dropped statements of the block
        for u in block + [None]:  # type: ignore[operator]
            if u is not None and u.level < 0:
                run.append(u)
                continue
            if run:
                blanked += stand_in(out, run[0].first, run[-1].last)
                run = []
            if u is not None:
                todo.extend(u.blocks)
    kept = [u for u in builder.units if u.level >= 0]
    besides = sum(1 for u in kept if not isinstance(u.node, (ast.Import, ast.ImportFrom)))
    asleep = builder.sleeping()  # (definitions never read: dropped whole)
    dropped = frozenset([id(u.node) for u in builder.units if u.level < 0] + [id(u.node) for u in asleep])
    for u in builder.units + asleep:  # (units and scopes point at each other: unlinked, they are freed at once
        u.parent = u.scope = u.body_scope = None  # rather than left to the cycle collector)
        u.blocks = u.glue = []
    return SliceResult(text="".join(out), lines=len(lines), blanked=blanked, statements=builder.statement_count,
                       kept=len(kept), kept_besides_imports=besides, read=len(builder.units), dropped=dropped)
