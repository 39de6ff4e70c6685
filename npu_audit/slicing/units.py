"""The units of the relevance slice: one per statement, built in one walk of CPython's ast with the
scopes they sit in and what each statement reads, binds, mutates and uses (:class:`_Builder`).

The fixed point (:mod:`npu_audit.slicing.fixpoint`) then decides which units are kept from these facts
alone, without walking the tree again.
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from typing import Callable, Optional, Union

from npu_audit.slicing.reach import HelperUse, StarUse, _carries_npu
from npu_audit.slicing.seeds import (
    _ATTRIBUTE,
    _BUILTINS,
    _CALL,
    _COMPOUND,
    _CONSTANT,
    _DEFS,
    _FUNCS,
    _NAME,
    _NAMED_EXPR,
    CONSUMERS,
    DEFINITION_CALLS,
    HANDLED_METHODS,
    _callee_name,
    _dotted_root,
    _marker_lines,
    _statements,
)
from npu_audit.syntax import python_children, python_walk
from npu_audit.text import IDENTIFIER_WORD, continues_below, statement_end

_DEF_TYPES = frozenset(_DEFS)
_CLASS = ast.ClassDef

#: The kinds of question that wake a definition asleep (:meth:`_Builder.wake`): which statements bind or
#: change a name or an attribute (``x = ...``, ``x.attr = ...``, ``x.append(...)``, a class attribute);
#: which definitions have a name; which statements mention a word at all.
WRITES, DEFINES, MENTIONS = 0, 1, 2


def _written_and_defined(node: ast.stmt, def_names: set[str]) -> tuple[set[str], Counter[str]]:
    """(every name and attribute a statement of ``node`` (at any depth) may bind, store into or change, or
    define in a class body; the names of the definitions in it, its own included, with how many there are
    of each): a superset of what
    :class:`_Builder` indexes a unit of it under as a binding, a change, a stored or changed attribute, a
    class attribute or a definition. Statements only, and of them only targets and the receivers of calls:
    far less than reading the expressions."""
    written: set[str] = set()
    defined: Counter[str] = Counter()
    todo: list[tuple[ast.stmt, bool]] = [(node, False)]  # (statement, directly in a class body)
    while todo:
        stmt, in_class = todo.pop()
        kind = type(stmt)
        targets: list[ast.AST] = []
        if kind in _DEF_TYPES:
            defined[stmt.name] += 1  # type: ignore[attr-defined]
            written.add(stmt.name)  # type: ignore[attr-defined]
        elif kind is ast.Assign:
            targets = stmt.targets  # type: ignore[attr-defined]
        elif kind is ast.AugAssign or kind is ast.AnnAssign or kind is ast.For or kind is ast.AsyncFor:
            targets = [stmt.target]  # type: ignore[attr-defined]
        elif kind is ast.With or kind is ast.AsyncWith:
            targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]  # type: ignore[attr-defined]
        elif kind is ast.Expr and type(stmt.value) is _CALL:  # type: ignore[attr-defined]
            # (the changes _Builder._simple reads: ``x.append(...)``, ``x.helper(...)``, ``x.attr.append(...)``)
            func = stmt.value.func  # type: ignore[attr-defined]
            if type(func) is _ATTRIBUTE:
                receiver = func.value  # type: ignore[attr-defined]
                method = func.attr  # type: ignore[attr-defined]
                if type(receiver) is _NAME and (method in HANDLED_METHODS or method in def_names):
                    written.add(receiver.id)  # type: ignore[attr-defined]
                elif type(receiver) is _ATTRIBUTE and type(receiver.value) is _NAME and method in HANDLED_METHODS:  # type: ignore[attr-defined]
                    written.update((receiver.value.id, receiver.attr))  # type: ignore[attr-defined]
        elif kind is ast.Import or kind is ast.ImportFrom:
            written.update((a.asname or a.name).partition(".")[0] for a in stmt.names)  # type: ignore[attr-defined]
        if in_class and kind not in _DEF_TYPES:  # (a class attribute: whatever it binds, a walrus or a case too)
            targets = [stmt]
        for target in targets:
            for n in python_walk(target):
                if type(n) is _NAME:
                    written.add(n.id)  # type: ignore[attr-defined]
                elif type(n) is _ATTRIBUTE:
                    written.add(n.attr)  # type: ignore[attr-defined]
        inner = kind is _CLASS or (in_class and kind not in _DEF_TYPES)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if block and isinstance(block, list):
                todo.extend((s, inner) for s in block)
        for handler in getattr(stmt, "handlers", ()):
            if handler.name:
                written.add(handler.name)
            todo.extend((s, inner) for s in handler.body)
        for case in getattr(stmt, "cases", ()):
            todo.extend((s, inner) for s in case.body)
    return written, defined


class _Scope:
    __slots__ = ("kind", "parent", "unit", "bound", "globals", "params", "kwonly", "vararg", "kwarg", "returns",
                 "declarations", "methods", "npu_base")

    def __init__(self, kind: str, parent: Optional[_Scope], unit: Optional[_Unit]):
        self.kind = kind  # "module", "function", "class"
        self.parent = parent
        self.unit = unit  # the def/class statement that opens it
        self.bound: set[str] = set()
        self.globals: set[str] = set()
        self.params: list[str] = []  # positional parameters, in order
        self.kwonly: list[str] = []
        self.vararg: Optional[str] = None
        self.kwarg: Optional[str] = None
        self.returns: list[_Unit] = []
        self.declarations: list[_Unit] = []  # global/nonlocal statements
        self.methods: frozenset[str] = frozenset()  # a class: the methods it defines itself
        self.npu_base = False  # a class: one of its bases is an NPU name of another module of the tree


#: What an argument reads, collected apart (a helper call's, or a call's through an import from outside the
#: tree): the names it reads whole, the attributes it reads, and (name, attribute) for each ``name.attr`` read.
_Part = tuple[set[str], set[str], set[tuple[str, str]]]


class _Unit:
    """One statement (for a compound statement: its header and clause lines)."""

    __slots__ = ("node", "parent", "scope", "first", "last", "blocks", "level", "reads", "attr_reads", "pending",
                 "calls", "mentions", "binds", "attr_stores", "mutated", "seed", "uses", "attr_uses", "body_scope",
                 "glue", "is_method", "tainting", "star_calls", "receivers", "passes_self", "base_reads", "attr_mutated",
                 "inert_attrs", "attr_changes", "name_calls", "alias_of",
                 "helper_call", "helper_consumer", "sessions", "external", "external_args", "rooted", "loose_attrs")

    def __init__(self, node: ast.stmt, parent: Optional[_Unit], scope: _Scope):
        self.node = node
        self.parent = parent
        self.scope = scope
        decorators = getattr(node, "decorator_list", None)
        self.first = min([node.lineno] + [d.lineno for d in decorators]) if decorators else node.lineno
        self.last = node.end_lineno or node.lineno
        self.blocks: list[list[_Unit]] = []
        self.level = -1  # -1 dropped; 0 kept for control flow; 1 reads needed; 2 value needed too
        self.reads: set[str] = set()
        # (name, attr) of each ``name.attr`` read: the name is read only for that attribute (unless in ``reads``)
        self.base_reads: set[tuple[str, str]] = set()
        self.attr_reads: set[str] = set()
        # (callee, slot, and what the argument reads: ``_Part``)
        self.pending: list[tuple[str, tuple, set[str], set[str], set[tuple[str, str]]]] = []
        self.calls: set[str] = set()  # callees that are functions/classes of the file
        self.mentions: set[str] = set()
        self.binds: set[str] = set()
        self.attr_stores: set[str] = set()  # attributes stored as ``name.attr = ...``
        self.mutated: set[str] = set()
        # names changed through one of their attributes: ``name.attr = ...`` (the store: ``attr_stores``), or
        # ``name.attr[k] = ...``, ``name.attr.x = ...`` (what ``name.attr`` holds changes: ``attr_changes``)
        self.attr_mutated: set[str] = set()
        self.attr_changes: set[str] = set()
        self.name_calls: set[str] = set()  # names it calls (``f()``)
        self.alias_of: Optional[str] = None  # ``f = self.setup``: the last name of what it binds (not a call)
        self.seed: Optional[str] = None  # "config", "definition", "control"
        self.uses: set[str] = set()  # names used in a way the interpreter follows
        self.attr_uses: set[str] = set()  # attributes of ``name.attr`` used that way
        self.body_scope: Optional[_Scope] = None
        self.glue: list[_Unit] = []
        self.is_method = False
        self.tainting = False
        self.star_calls: set[str] = set()  # callees that may come from a `from m import *`
        self.receivers: set[str] = set()  # names whose methods it calls (methods the interpreter may not model)
        self.passes_self = False  # passes `self` to a callee not of this file (which may call its methods back)
        self.helper_call = False  # calls into a module of the tree that can reach NPU code
        self.helper_consumer = False  # calls a name of such a module that is not one of its exports
        self.sessions: Optional[set[str]] = None  # names it binds to a session it opens (``sess = tf.Session(...)``)
        # attributes it stores a session (``self.sess = tf.Session()``) or a constant (``op.name = "x"``) in:
        # not followed forward
        self.inert_attrs: Optional[set[str]] = None
        self.external: Optional[set[str]] = None  # an import: the names it binds to modules outside the tree
        # arguments of calls into such a module that the interpreter does not model: (the name the callee is
        # reached through, names, attributes), needed only if that name is not such an import after all
        self.external_args: Optional[list[tuple[str, set[str], set[str], set[tuple[str, str]]]]] = None
        # of ``attr_reads``: (root name, attribute) of an attribute read deeper in a dotted name or called as a
        # method (``tf.train.Saver``: ``Saver``; ``np.mean(x)``: ``mean``; ``name.attr`` is in ``base_reads``),
        # and the attributes read on what is no dotted name (``f().attr``, ``x[0].attr``)
        self.rooted: Optional[set[tuple[str, str]]] = None
        self.loose_attrs: Optional[set[str]] = None


class _Builder:
    """Walks the ast once: units, scopes and what each statement reads, binds and uses.

    A module-level ``def`` or ``class`` that holds no seed is not read at first: it gets a unit without
    blocks (asleep), listed under the words a unit of it could be indexed under, and is read whole when the
    fixed point asks for the statements indexed under one of those words (:meth:`wake`): until then no
    question the fixed point asks has an answer inside it, and a definition nothing asks about stays a
    dropped statement that was never read (most of a training script's model code). It is listed three
    ways (:data:`WRITES`, :data:`DEFINES`, :data:`MENTIONS`), so that a question about what binds or
    changes a name (``tf``, read by every kept statement) does not wake every definition that merely
    reads it. Definitions that could change the module's scope otherwise than by their own name (a
    ``global`` statement in them) or that a ``from m import *`` of an NPU module could make a seed are
    read at once. ``lazy=False`` reads every statement at once."""

    def __init__(self, tree: ast.Module, lines: list[str], identifiers: frozenset[str],
                 helpers: Optional[dict[str, HelperUse]] = None, star_helpers: StarUse = False,
                 in_tree: Optional[Callable[[str, int], bool]] = None, modelled: frozenset[str] = frozenset(),
                 sessions: frozenset[str] = frozenset(), lazy: bool = True):
        self.lines = lines
        # whether an import names a file of the analysed tree (None: not known, every import may)
        self.in_tree = in_tree
        self.modelled = modelled  # names of the calls the interpreter models (their arguments count)
        self.sessions = sessions  # names of the calls that open a session (see _opens_session)
        self.identifiers = identifiers
        # local names imported from modules of the tree that can reach NPU code, with what of them does
        self.helpers: dict[str, HelperUse] = helpers or {}
        self.marker_lines = _marker_lines(lines)  # sorted numbers of the lines holding an NPU marker
        self.star_helpers = star_helpers  # what `from m import *` of such modules binds that can (StarUse)
        self.star_in_tree = False  # a `from m import *` of any module of the tree (it may bind any name)
        self.def_names: set[str] = set()
        self.statement_count = 0  # statements of the file at any depth, read or not
        for node in _statements(tree.body):
            self.statement_count += 1
            if isinstance(node, _DEFS):
                self.def_names.add(node.name)
        self.units: list[_Unit] = []
        self.module = _Scope("module", None, None)
        # the definitions asleep, by kind of question (WRITES, DEFINES, MENTIONS) and word; the words that
        # make a definition read at once
        self.asleep: tuple[dict[str, list[_Unit]], ...] = ({}, {}, {})
        self._sleeping: dict[int, _Unit] = {}
        self._waking_words: Optional[frozenset[str]] = None
        if lazy and not star_helpers:
            self._waking_words = identifiers | DEFINITION_CALLS | frozenset(self.helpers) | {"app", "global"}
        self.top = self.block(tree.body, None, self.module)

    # -- definitions read on demand ---------------------------------------------------------------

    def _asleep(self, stmt: ast.stmt, before: Optional[_Unit]) -> Optional[_Unit]:
        """A unit without blocks for the module-level definition ``stmt`` when it can wait until
        :meth:`wake` (else None: it is read now)."""
        unit = _Unit(stmt, None, self.module)
        unit.last = statement_end(self.lines, unit.last)
        if before is not None and (before.last >= unit.first or self._continued(before.last)):
            return None  # (one logical line with the statement before it)
        if self._continued(unit.last):
            return None  # (nor with the one after it)
        at = bisect_left(self.marker_lines, unit.first)
        if at < len(self.marker_lines) and self.marker_lines[at] <= unit.last:
            return None
        counts = Counter(IDENTIFIER_WORD.findall("".join(self.lines[unit.first - 1:unit.last])))
        assert self._waking_words is not None
        if not self._waking_words.isdisjoint(counts):
            return None
        self.module.bound.add(stmt.name)  # type: ignore[attr-defined]
        self._sleeping[id(unit)] = unit
        written, defined = _written_and_defined(stmt, self.def_names)
        # (a definition's own name is no mention of it: a word met only as the names of definitions, every
        # ``def __init__``, is mentioned by none of its statements)
        mentioned = [word for word, n in counts.items() if word not in defined.keys() or n > defined[word]]
        for table, keys in zip(self.asleep, (written, defined, mentioned)):
            for word in keys:
                if word in table:
                    table[word].append(unit)
                else:
                    table[word] = [unit]
        return unit

    def wake(self, word: str, kind: int) -> list[_Unit]:
        """Read the definitions asleep listed under ``word`` for the ``kind`` of question (:data:`WRITES`,
        :data:`DEFINES`, :data:`MENTIONS`); their units, in the order read."""
        shells = self.asleep[kind].pop(word, None)
        if not shells:
            return []
        start = len(self.units)
        for shell in shells:
            if self._sleeping.pop(id(shell), None) is not None:
                self.statement(shell.node, None, self.module, shell)
        return self.units[start:]

    def sleeping(self) -> list[_Unit]:
        """The definitions still asleep (never read: dropped)."""
        return list(self._sleeping.values())

    # -- statements ------------------------------------------------------------------------------

    def block(self, stmts: list[ast.stmt], parent: Optional[_Unit], scope: _Scope) -> list[_Unit]:
        out: list[_Unit] = []
        lazy = parent is None and self._waking_words is not None
        for stmt in stmts:
            unit = None
            if lazy and type(stmt) in _DEF_TYPES:
                unit = self._asleep(stmt, out[-1] if out else None)
            if unit is None:
                unit = self.statement(stmt, parent, scope)
            if out and (out[-1].last >= unit.first or self._continued(out[-1].last)):
                # `a; b` (or `a; \` + `b`): one logical line, kept or dropped together
                unit.glue.append(out[-1])
                out[-1].glue.append(unit)
            elif not out and parent is not None and self._shares_line(unit):  # `if x: y`
                unit.glue.append(parent)
                parent.glue.append(unit)
            out.append(unit)
        return out

    def _continued(self, line: int) -> bool:
        """Whether physical line ``line`` ends with a backslash (the logical line goes on below)."""
        return 0 < line <= len(self.lines) and continues_below(self.lines[line - 1])

    def _shares_line(self, unit: _Unit) -> bool:
        line = self.lines[unit.first - 1] if unit.first - 1 < len(self.lines) else ""
        node = unit.node
        col = min([node.col_offset] + [d.col_offset - 1 for d in getattr(node, "decorator_list", ())])
        head = line.encode("utf-8", "surrogatepass")[:max(col, 0)]
        return bool(head.strip())

    def statement(self, stmt: ast.stmt, parent: Optional[_Unit], scope: _Scope,
                  unit: Optional[_Unit] = None) -> _Unit:
        """The unit of ``stmt`` (or ``unit``, a definition woken up), its blocks' units read too."""
        if unit is None:
            unit = _Unit(stmt, parent, scope)
            unit.last = statement_end(self.lines, unit.last)
        self.units.append(unit)
        header: list[ast.AST] = []
        if type(stmt) not in _COMPOUND:
            self._simple(stmt, unit)
        elif isinstance(stmt, _FUNCS):
            header = list(stmt.decorator_list) + list(stmt.args.defaults) + [d for d in stmt.args.kw_defaults if d]
            unit.binds.add(stmt.name)
            inner = _Scope("function", scope, unit)
            args = stmt.args
            inner.params = [a.arg for a in list(getattr(args, "posonlyargs", [])) + list(args.args)]
            inner.kwonly = [a.arg for a in args.kwonlyargs]
            inner.vararg = args.vararg.arg if args.vararg else None
            inner.kwarg = args.kwarg.arg if args.kwarg else None
            inner.bound.update(inner.params + inner.kwonly + [n for n in (inner.vararg, inner.kwarg) if n])
            unit.body_scope = inner
            unit.is_method = scope.kind == "class" and not any(
                isinstance(d, ast.Name) and d.id == "staticmethod" for d in stmt.decorator_list)
            self._walk(header, unit)
            unit.blocks = [self.block(stmt.body, unit, inner)]
        elif isinstance(stmt, ast.ClassDef):
            header = list(stmt.decorator_list) + list(stmt.bases) + [k.value for k in stmt.keywords]
            unit.binds.add(stmt.name)
            inner = _Scope("class", scope, unit)
            inner.methods = frozenset(s.name for s in stmt.body if isinstance(s, _FUNCS))
            inner.npu_base = any(self._npu_name(base) for base in stmt.bases)
            unit.body_scope = inner
            self._walk(header, unit)
            unit.blocks = [self.block(stmt.body, unit, inner)]
        elif isinstance(stmt, (ast.If, ast.While)):
            self._walk([stmt.test], unit)
            unit.blocks = [self.block(stmt.body, unit, scope)]
            if stmt.orelse:
                orelse = self.block(stmt.orelse, unit, scope)
                first = stmt.orelse[0]
                if isinstance(stmt, ast.If) and len(stmt.orelse) == 1 and isinstance(first, ast.If):
                    line = self.lines[first.lineno - 1].encode("utf-8", "surrogatepass")
                    if line[first.col_offset:].startswith(b"elif"):  # an elif: part of this statement
                        orelse[0].glue.append(unit)
                        unit.glue.append(orelse[0])
                unit.blocks.append(orelse)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self._walk([stmt.iter], unit)
            self._targets(stmt.target, unit)
            unit.blocks = [self.block(stmt.body, unit, scope)]
            if stmt.orelse:
                unit.blocks.append(self.block(stmt.orelse, unit, scope))
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            self._walk([item.context_expr for item in stmt.items], unit)
            for item in stmt.items:
                if item.optional_vars is not None:
                    self._targets(item.optional_vars, unit)
                    if type(item.optional_vars) is _NAME and self._opens_session(item.context_expr):
                        unit.sessions = (unit.sessions or set()) | {item.optional_vars.id}
            unit.blocks = [self.block(stmt.body, unit, scope)]
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self._walk([h.type for h in stmt.handlers if h.type is not None], unit)
            unit.binds.update(h.name for h in stmt.handlers if h.name)
            unit.blocks = [self.block(stmt.body, unit, scope)]
            unit.blocks += [self.block(h.body, unit, scope) for h in stmt.handlers]
            if stmt.orelse:
                unit.blocks.append(self.block(stmt.orelse, unit, scope))
            if stmt.finalbody:
                unit.blocks.append(self.block(stmt.finalbody, unit, scope))
        elif hasattr(ast, "Match") and isinstance(stmt, ast.Match):
            self._walk([stmt.subject] + [c.guard for c in stmt.cases if c.guard is not None], unit)
            for case in stmt.cases:
                for node in ast.walk(case.pattern):
                    for name in (getattr(node, "name", None), getattr(node, "rest", None)):
                        if isinstance(name, str):
                            unit.binds.add(name)
            unit.blocks = [self.block(c.body, unit, scope) for c in stmt.cases]
        else:
            self._simple(stmt, unit)
        # seeds: NPU markers in the statement's own lines (a compound statement: its header)
        end = unit.last
        if unit.blocks and unit.blocks[0]:
            end = max(unit.first, unit.blocks[0][0].first - 1)
        at = bisect_left(self.marker_lines, unit.first)
        if (at < len(self.marker_lines) and self.marker_lines[at] <= end) or (
                unit.mentions & self.identifiers and unit.seed is None):
            unit.seed = "config"
        for name in unit.binds:
            target = scope.globals and name in scope.globals and self.module or scope
            target.bound.add(name)
        return unit

    def _simple(self, stmt: ast.stmt, unit: _Unit) -> None:
        scope = unit.scope
        kind = type(stmt)
        if kind is ast.Assign:
            for target in stmt.targets:  # type: ignore[attr-defined]
                self._targets(target, unit)
            self._expr(stmt.value, unit, False, None)  # type: ignore[attr-defined]
            value = stmt.value  # type: ignore[attr-defined]
            if type(value) is _NAME or type(value) is _ATTRIBUTE:
                unit.alias_of = value.id if type(value) is _NAME else value.attr  # type: ignore[attr-defined]
            if self._opens_session(stmt.value):  # type: ignore[attr-defined]
                if all(type(t) is _NAME for t in stmt.targets):  # type: ignore[attr-defined]
                    unit.sessions = {t.id for t in stmt.targets}  # type: ignore[attr-defined]
                elif all(type(t) is _ATTRIBUTE and type(t.value) is _NAME for t in stmt.targets):  # type: ignore[attr-defined]
                    unit.inert_attrs = {t.attr for t in stmt.targets}  # type: ignore[attr-defined]
            elif type(stmt.value) is _CONSTANT:  # type: ignore[attr-defined]
                unit.inert_attrs = {t.attr for t in stmt.targets if type(t) is _ATTRIBUTE}  # type: ignore[attr-defined]
        elif kind is ast.Expr and type(stmt.value) is not _CALL:  # type: ignore[attr-defined]
            self._expr(stmt.value, unit, False, None)  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.AugAssign):
            self._targets(stmt.target, unit)
            self._walk([stmt.target, stmt.value], unit)
        elif isinstance(stmt, ast.AnnAssign):
            self._targets(stmt.target, unit)
            if stmt.value is not None:
                self._walk([stmt.value], unit)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                if alias.name != "*":
                    unit.binds.add(alias.asname or alias.name.split(".")[0])
            if self.in_tree is not None:
                unit.external = self._external_imports(stmt)
                if isinstance(stmt, ast.ImportFrom) and any(alias.name == "*" for alias in stmt.names) and (
                        stmt.level or self.in_tree(stmt.module or "", 0)):
                    self.star_in_tree = True
        elif isinstance(stmt, ast.Global):
            scope.globals.update(stmt.names)
            scope.declarations.append(unit)
        elif isinstance(stmt, ast.Nonlocal):
            scope.declarations.append(unit)
        elif isinstance(stmt, ast.Return):
            fn = scope
            if fn.kind == "function":
                fn.returns.append(unit)
            if stmt.value is not None:
                self._walk([stmt.value], unit)
        else:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                func = stmt.value.func
                if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                        and (func.attr in HANDLED_METHODS or func.attr in self.def_names)):
                    unit.mutated.add(func.value.id)  # x.append(...): a change the interpreter follows
                elif (isinstance(func, ast.Attribute) and type(func.value) is _ATTRIBUTE
                      and type(func.value.value) is _NAME and func.attr in HANDLED_METHODS):  # type: ignore[attr-defined]
                    unit.attr_mutated.add(func.value.value.id)  # type: ignore[attr-defined]
                    unit.attr_changes.add(func.value.attr)  # type: ignore[attr-defined]  # self.modes.append(...)
            self._walk([n for n in python_children(stmt) if isinstance(n, ast.expr)], unit)

    def _opens_session(self, value: ast.expr) -> bool:
        """Whether ``value`` is a call that opens a session (``tf.compat.v1.Session(config=c)``): a name
        bound to it is not followed forward (see :mod:`npu_audit.slicing`)."""
        return type(value) is _CALL and _callee_name(value.func) in self.sessions  # type: ignore[attr-defined]

    def _external_imports(self, stmt: Union[ast.Import, ast.ImportFrom]) -> set[str]:
        """The names ``stmt`` binds to a module that is no file of the analysed tree (``import tensorflow
        as tf``, ``from numpy import mean``): the interpreter reads no code behind them."""
        in_tree = self.in_tree
        assert in_tree is not None
        out: set[str] = set()
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                module = alias.name if alias.asname else alias.name.split(".")[0]
                if not in_tree(module, 0):
                    out.add(alias.asname or module)
        elif stmt.level == 0 and stmt.module and not in_tree(stmt.module, 0):
            for alias in stmt.names:
                if alias.name != "*" and not in_tree(f"{stmt.module}.{alias.name}", 0):
                    out.add(alias.asname or alias.name)
        return out

    def _targets(self, target: ast.AST, unit: _Unit) -> None:
        if isinstance(target, ast.Name):
            unit.binds.add(target.id)
            unit.mentions.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._targets(element, unit)
        elif isinstance(target, ast.Starred):
            self._targets(target.value, unit)
        elif isinstance(target, ast.Attribute) and type(target.value) is _NAME:
            # ``name.attr = ...``: it matters to what reads ``attr`` (``attr_stores``) or ``name`` whole
            base = target.value.id  # type: ignore[attr-defined]
            unit.attr_mutated.add(base)
            unit.attr_stores.add(target.attr)
            unit.mentions.update((target.attr, base))
            unit.base_reads.add((base, target.attr))
            unit.uses.add(base)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            first, root = target, target.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                first, root = root, root.value
            if isinstance(root, ast.Name):
                if type(first) is _ATTRIBUTE:
                    unit.attr_mutated.add(root.id)
                    unit.attr_changes.add(first.attr)  # type: ignore[attr-defined]
                else:
                    unit.mutated.add(root.id)
            if isinstance(target, ast.Attribute):
                unit.mentions.add(target.attr)
            # the target's base and subscripts are read
            self._walk([target.value] + ([target.slice] if isinstance(target, ast.Subscript) else []), unit)

    # -- expressions -----------------------------------------------------------------------------

    def _walk(self, exprs: Iterable[Optional[ast.AST]], unit: _Unit) -> None:
        for expr in exprs:
            if expr is not None:
                self._expr(expr, unit, False, None)

    def _expr(self, node: ast.AST, unit: _Unit, sink: bool, into: Optional[_Part]) -> None:
        """Record what ``node`` reads. ``sink``: an occurrence here is not a use the interpreter follows
        (a pure ``name``/``name.attr`` chain under it passes nothing on). ``into``: what an argument reads
        (:data:`_Part`), collected apart (needed only if the callee reads it)."""
        todo: list[tuple[ast.AST, bool, Optional[_Part]]] = [(node, sink, into)]
        mentions = unit.mentions
        pop, push = todo.pop, todo.append
        while todo:
            node, sink, into = pop()
            kind = type(node)
            if kind is _NAME:
                name = node.id  # type: ignore[attr-defined]
                mentions.add(name)
                if into is not None:
                    into[0].add(name)
                else:
                    unit.reads.add(name)
                if not sink:
                    unit.uses.add(name)
            elif kind is _ATTRIBUTE:
                attr = node.attr  # type: ignore[attr-defined]
                mentions.add(attr)
                if into is not None:
                    into[1].add(attr)
                else:
                    unit.attr_reads.add(attr)
                value = node.value  # type: ignore[attr-defined]
                of = type(value)
                if of is _NAME:
                    if not sink:
                        unit.attr_uses.add(attr)
                    if attr != "__dict__":  # (``x.__dict__``: every attribute of x)
                        name = value.id  # type: ignore[attr-defined]
                        mentions.add(name)
                        (unit.base_reads if into is None else into[2]).add((name, attr))
                        if not sink:
                            unit.uses.add(name)
                        continue
                elif into is None:
                    _record_root(unit, _dotted_root(value), attr)
                push((value, sink and (of is _NAME or of is _ATTRIBUTE), into))
            elif kind is _CALL:
                self._call(node, unit, into, todo)  # type: ignore[arg-type]
            elif kind is _CONSTANT:
                continue
            elif kind is _NAMED_EXPR:
                unit.binds.add(node.target.id)  # type: ignore[attr-defined]
                push((node.value, False, into))  # type: ignore[attr-defined]
            else:
                for child in python_children(node):
                    push((child, False, into))

    def _call(self, node: ast.Call, unit: _Unit, into, todo: list) -> None:
        func = node.func
        by_attribute = type(func) is _ATTRIBUTE
        name = _callee_name(func)
        if name in DEFINITION_CALLS:
            unit.seed = unit.seed or "definition"
        elif name == "run" and isinstance(func, ast.Attribute) and (
                (isinstance(func.value, ast.Attribute) and func.value.attr == "app")
                or (isinstance(func.value, ast.Name) and func.value.id == "app")):
            unit.seed = unit.seed or "control"  # tf.app.run(main): the interpreter calls main from here
        helper = name in self.def_names
        if helper:
            unit.calls.add(name)
        if type(func) is _NAME:
            unit.name_calls.add(name)
        if type(func) is _NAME and name == "super" and not node.args and unit.scope.params:
            # ``super()`` in a method reads its first parameter whole: the method reached may read any attribute
            (unit.reads if into is None else into[0]).add(unit.scope.params[0])
            unit.uses.add(unit.scope.params[0])
        if by_attribute and self._inherited_from_npu_base(unit.scope, func.value, name):  # type: ignore[attr-defined]
            unit.seed = "config"  # ``self.configure()`` of a base class of another module that can reach NPU code
            unit.helper_call = True
        root = _dotted_root(func)
        consumer = False
        if type(root) is _NAME:
            if root.id in self.helpers:
                if _carries_npu(self.helpers[root.id], func, root):
                    unit.seed = "config"  # a helper of another module of the tree: it may build or fill a config
                    unit.helper_call = True
                else:  # not one of its exports: it matters only through what it is handed (a config)
                    consumer = unit.helper_consumer = True
            elif self.star_helpers and not helper and root.id not in _BUILTINS and (
                    self.star_helpers is True or root.id in self.star_helpers):
                unit.star_calls.add(root.id)
        if by_attribute:
            opaque = name not in HANDLED_METHODS and not helper
            if opaque and root is not func and type(root) is _NAME:
                unit.receivers.add(root.id)
            unit.mentions.add(name)
            if into is not None:
                into[1].add(name)
            else:
                unit.attr_reads.add(name)
                _record_root(unit, root, name)
            base = func.value  # type: ignore[attr-defined]
            if helper and into is None and type(base) is _NAME and self._own_method_call(unit.scope, base.id, name):  # type: ignore[attr-defined]
                # ``self.build()`` in a method of the class that defines ``build``: the receiver is an argument
                # for the method's first parameter, needed as the method reads that parameter (whole, or only
                # its attributes)
                part: _Part = (set(), set(), set())
                unit.pending.append((name, ("receiver", 0, True), *part))
                todo.append((base, False, part))
            else:
                # (the receiver of another method is read whole: it may hand ``self`` on, and what the callee
                # then reads of it is not seen here)
                todo.append((base, opaque and (type(base) is _NAME or type(base) is _ATTRIBUTE), into))
        else:
            todo.append((func, False, into))
        args_sink = not helper and not consumer and name not in CONSUMERS
        # a call through an import whose module is outside the tree (tf.layers.dense(x, units)), of nothing
        # the interpreter models: it gives an unknown value whatever its arguments, so what an argument that
        # calls and binds nothing reads is needed only if the name turns out to be bound otherwise as well
        # (see _Slicer._external)
        outside = (into is None and self.in_tree is not None and type(root) is _NAME and not helper and not consumer
                   and name not in self.modelled and root.id not in self.helpers)
        for i, arg in enumerate(node.args):
            if not helper and type(arg) is ast.Name and arg.id == "self":
                unit.passes_self = True
            if outside and _call_free(arg):
                self._apart(unit, root.id, arg, todo)  # type: ignore[attr-defined]
            elif helper and into is None and not isinstance(arg, ast.Starred):
                part: _Part = (set(), set(), set())
                unit.pending.append((name, ("pos", i, by_attribute), *part))
                todo.append((arg, False, part))
            else:
                todo.append((arg, args_sink and isinstance(arg, (ast.Name, ast.Attribute)), into))
        for kw in node.keywords:
            if not helper and type(kw.value) is ast.Name and kw.value.id == "self":
                unit.passes_self = True
            if outside and _call_free(kw.value):
                self._apart(unit, root.id, kw.value, todo)  # type: ignore[attr-defined]
            elif helper and into is None and kw.arg is not None:
                part = (set(), set(), set())
                unit.pending.append((name, ("kw", kw.arg, by_attribute), *part))
                todo.append((kw.value, False, part))
            else:
                todo.append((kw.value, args_sink and isinstance(kw.value, (ast.Name, ast.Attribute)), into))

    def _npu_name(self, node: ast.expr) -> bool:
        """Whether ``node`` (a base class) is reached through a name imported from a module of the tree that
        can reach NPU code, and may be one of its NPU names."""
        root = _dotted_root(node)
        return type(root) is _NAME and root.id in self.helpers and _carries_npu(  # type: ignore[attr-defined]
            self.helpers[root.id], node, root)  # type: ignore[arg-type,attr-defined]

    @staticmethod
    def _inherited_from_npu_base(scope: _Scope, receiver: ast.expr, method: str) -> bool:
        """Whether ``receiver.method(...)``, read in a method of a class of the file, calls a method the
        class does not define itself and may inherit from a base that is an NPU name of another module:
        ``self.configure_npu()`` or ``super().configure_npu()``."""
        owner = scope.parent if scope.kind == "function" else None
        if owner is None or owner.kind != "class" or not owner.npu_base or method in owner.methods:
            return False
        if type(receiver) is _NAME:
            return bool(scope.params) and scope.params[0] == receiver.id  # type: ignore[attr-defined]
        return (type(receiver) is _CALL and type(receiver.func) is _NAME  # type: ignore[attr-defined]
                and receiver.func.id == "super")  # type: ignore[attr-defined]

    @staticmethod
    def _own_method_call(scope: _Scope, receiver: str, method: str) -> bool:
        """Whether ``receiver.method(...)``, read in ``scope``, calls a method of the class whose method
        ``scope`` is, on that method's own first parameter (``self.build()`` in a method of a class that
        defines ``build``). Any other receiver of a call of a name the file defines is read whole: it may be
        an object of another module's class, whose method of the same name may read any of its attributes."""
        owner = scope.parent if scope.kind == "function" else None
        return (owner is not None and owner.kind == "class" and method in owner.methods
                and bool(scope.params) and scope.params[0] == receiver)

    @staticmethod
    def _apart(unit: _Unit, through: str, arg: ast.expr, todo: list) -> None:
        """Walk ``arg`` (an argument of a call through ``through``, an import from outside the tree) with
        what it reads collected apart, and as no use of what it names."""
        part: _Part = (set(), set(), set())
        if unit.external_args is None:
            unit.external_args = []
        unit.external_args.append((through, *part))
        todo.append((arg, True, part))


def _record_root(unit: _Unit, root: ast.AST, attr: str) -> None:
    """Note how ``attr`` is reached, ``root`` being what the dotted name it is read on starts with
    (:func:`_dotted_root`): from a name (``_Unit.rooted``), or from something else (``_Unit.loose_attrs``)."""
    if type(root) is _NAME:
        if unit.rooted is None:
            unit.rooted = set()
        unit.rooted.add((root.id, attr))  # type: ignore[attr-defined]
    else:
        if unit.loose_attrs is None:
            unit.loose_attrs = set()
        unit.loose_attrs.add(attr)


def _call_free(node: ast.AST) -> bool:
    """Whether evaluating ``node`` calls nothing and binds nothing (``(n := steps)`` binds ``n`` for later
    statements): its reads have no effect but its value."""
    kind = type(node)
    while kind is _ATTRIBUTE:  # (most arguments are a name, a constant or a dotted name: no walk)
        node = node.value  # type: ignore[attr-defined]
        kind = type(node)
    if kind is _NAME or kind is _CONSTANT:
        return True
    return not any(type(n) is _CALL or type(n) is _NAMED_EXPR for n in python_walk(node))
