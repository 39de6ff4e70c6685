"""Statement-level relevance slice: the statements of a file that can reach NPU configuration.

libcst parsing and the interpreter are the expensive steps of an analysis, and in a training script
most statements (the model, the input pipeline, logging) cannot change what the script configures on
the NPU. :func:`slice_text` finds, with CPython's ``ast`` (about a tenth of a libcst parse), the
statements that can, at any depth (inside function bodies too), and returns the text with every other
statement's lines blanked: libcst parses that text and the interpreter reads it. Lines keep their
numbers and kept statements their columns, so every position is exact; fixes and suppressions work on
the original text (``pipeline._analyze``). ``NPU_AUDIT_NO_SLICE=1`` turns the slice off.

What is kept (when in doubt, a statement is kept: a missing statement loses findings, an extra one
only costs time):

- **seeds**: a statement whose text holds an NPU marker (``npu_audit.prefilter``), or that names an
  API the interpreter models (``ConfigProto``, sessions, ``graph_options``/``rewrite_options``,
  ``init_resource``, the TF2 device module); flag and argparse definitions (``DEFINE_*``,
  ``add_argument``: defaults written into options are read through them); ``app.run(main)``; a call of
  one of the NPU names of a module of the tree (:meth:`TreeReach.exports`: a name whose code can reach
  NPU configuration; the module's other names are called to load data or build models);
- **forward**: a statement that uses an object built by a seed (a config, a session, a run config) in
  a way the interpreter follows: writes into it, aliases, returns or stores it, passes it to a helper
  of the file, to another name of a module of the tree that can reach NPU code (what it returns may
  hold the config: its methods are uses), or to an API that takes a config. Passing it as the
  receiver of an unmodelled method (``sess.run(train_op)``) or to an unmodelled function is not such a
  use (the interpreter ignores those calls). A name bound to a session a statement opens
  (``with tf.Session(config=c) as sess``, or an attribute it is stored in: ``self.sess = tf.Session(...)``)
  is not followed forward at all: the session's NPU options were
  fixed when it opened, so handing it to a helper that runs the model (with the data that helper is
  given) changes nothing; a call that uses it for NPU code (``set_iteration_per_loop(sess, ...)``) is a
  seed and keeps it. A constant stored in an attribute of such an object (``custom_op.name =
  "NpuOptimizer"``) makes no other ``x.name`` a use: whoever reads the attribute of the object reads the
  object too. A helper of the file called with it gets the parameter tainted; a helper returning
  it taints its call sites' targets;
- **backward**: every statement that binds or mutates a name a kept statement reads (all of them in
  the name's scope, before or after: loops), attribute stores and class attributes of an attribute
  a kept statement reads (``self.mode``), and the statements that change what such an attribute holds
  (``self.opts["mode"] = ...``); of a name whose data attributes alone a kept statement reads
  (``self.mode``), a statement that only stores another attribute into it (``self.model = ...``) is not
  needed for that read, since the attributes read are needed on their own (a read of the whole object,
  ``getattr(self, name)``, ``self.__dict__``, ``helper(self)``, ``self.build()`` or ``run = self.build``,
  whose method may hand ``self`` on, needs every such store); the return statements of a helper whose value a kept
  statement uses, and the arguments of a kept call of a helper for the parameters the helper's kept
  statements read; not what is read only by an argument, calling nothing itself, of a call through a
  name that only imports from outside the tree bind (``tf.layers.dense(features, units)``,
  ``np.mean(losses)``) when the interpreter models no call of that name: it reads no code behind such
  a call, whose value is unknown whatever its arguments;
- **context**: the headers of the compound statements around a kept statement (their tests, loops
  and ``with`` items, with their dependencies: guards matter), every clause of a kept ``if``/``try``
  (so "has an else" stays true; an emptied block gets a ``pass``), the call sites of a function or
  class that has kept statements (reading it from its caller gives the caller's arguments and
  branches, not a standalone reading), its ``return`` statements (control flow) and ``global``
  declarations, every import at module level, and statements sharing a line with a kept one.
"""

from __future__ import annotations

import ast
import os
import re
from bisect import bisect_left
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Callable, Optional, Union

from npu_audit.prefilter import NPU_MARKERS, may_configure_npu
from npu_audit.source import DEFAULT_MAX_BYTES
from npu_audit.syntax import python_children, python_walk
from npu_audit.text import IDENTIFIER_WORD, continues_below, source_lines, statement_end

__all__ = ["ENV_OFF", "SliceResult", "enabled", "slice_text"]

#: Set to a non-empty value other than "0" to analyse whole files (for comparisons).
ENV_OFF = "NPU_AUDIT_NO_SLICE"

# Names of APIs the interpreter models (extract/interpreter.py, extract/tf2.py) that are not NPU markers.
SEED_IDENTIFIERS = frozenset({
    "ConfigProto", "Session", "InteractiveSession", "MonitoredTrainingSession", "SingularMonitoredSession",
    "graph_options", "rewrite_options", "init_resource", "npu_device", "global_options",
})
# Flag/argument definitions: their defaults are the values of FLAGS.x / args.x.
DEFINITION_CALLS = frozenset({
    "DEFINE_string", "DEFINE_integer", "DEFINE_int", "DEFINE_float", "DEFINE_bool", "DEFINE_boolean",
    "DEFINE_enum", "DEFINE_list", "DEFINE_multi_string", "DEFINE_multi_integer", "add_argument",
})
# Callees that take a config object and whose result the interpreter models.
CONSUMERS = frozenset({
    "Session", "InteractiveSession", "MonitoredTrainingSession", "SingularMonitoredSession",
    "NPURunConfig", "NPUEstimator", "npu_config_proto", "npu_run_config_init", "set_keras_session_npu_config",
    "init_resource", "set_iteration_per_loop", "setattr", "ConfigProto",
})
# Methods the interpreter follows on the objects it models (a receiver of one of these is a real use).
HANDLED_METHODS = frozenset({
    "add", "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "add_argument",
    "parse_args", "parse_known_args", "get", "items", "keys", "values", "lower", "upper", "strip", "lstrip",
    "rstrip", "replace", "format", "join", "encode", "decode", "title", "capitalize",
})

MARKER_TEXT_RE = re.compile("|".join(re.escape(m.decode("ascii")) for m in sorted(NPU_MARKERS, key=len, reverse=True)))
_BUILTINS = frozenset(dir(__import__("builtins")))
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# statements with blocks of statements (the others are read by _Builder._simple)
_COMPOUND = frozenset(_DEFS + (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try)
                      + tuple(getattr(ast, n) for n in ("TryStar", "Match") if hasattr(ast, n)))
_NAME, _ATTRIBUTE, _CALL, _CONSTANT, _NAMED_EXPR = ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.NamedExpr


def _statements(body: list[ast.stmt]):
    """Every statement of ``body``, nested ones too (statements only sit in statement lists)."""
    todo = list(reversed(body))
    while todo:
        stmt = todo.pop()
        yield stmt
        for name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if block and isinstance(block, list):
                todo.extend(reversed(block))
        for handler in getattr(stmt, "handlers", ()):
            todo.extend(reversed(handler.body))
        for case in getattr(stmt, "cases", ()):
            todo.extend(reversed(case.body))


def _callee_name(func: ast.expr) -> str:
    """The last name of a call's callee (``tf.compat.v1.Session`` -> ``Session``), or ""."""
    return func.attr if type(func) is _ATTRIBUTE else func.id if type(func) is _NAME else ""  # type: ignore[attr-defined]


def _marker_lines(lines: list[str]) -> list[int]:
    """Numbers of the lines holding an NPU marker (``prefilter.NPU_MARKERS``: one identifier each, never
    split over lines), from one search of the whole text."""
    text = "".join(lines)
    found = [m.start() for m in MARKER_TEXT_RE.finditer(text)]
    if not found:
        return []
    out: list[int] = []
    offset, number, i = 0, 0, 0
    for line in lines:
        number += 1
        offset += len(line)
        while i < len(found) and found[i] < offset:
            if not out or out[-1] != number:
                out.append(number)
            i += 1
        if i == len(found):
            break
    return out


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
    dropped: frozenset[int] = frozenset()  # id() of the dropped statements of the ast (npu_audit.syntax builds without them)


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
                 "helper_call", "helper_consumer", "sessions", "external", "external_args")

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


class _Builder:
    """Walks the ast once: units, scopes and what each statement reads, binds and uses."""

    def __init__(self, tree: ast.Module, lines: list[str], identifiers: frozenset[str],
                 helpers: Optional[dict[str, HelperUse]] = None, star_helpers: bool = False,
                 in_tree: Optional[Callable[[str, int], bool]] = None, modelled: frozenset[str] = frozenset(),
                 sessions: frozenset[str] = frozenset()):
        self.lines = lines
        # whether an import names a file of the analysed tree (None: not known, every import may)
        self.in_tree = in_tree
        self.modelled = modelled  # names of the calls the interpreter models (their arguments count)
        self.sessions = sessions  # names of the calls that open a session (see _opens_session)
        self.identifiers = identifiers
        # local names imported from modules of the tree that can reach NPU code, with what of them does
        self.helpers: dict[str, HelperUse] = helpers or {}
        self.marker_lines = _marker_lines(lines)  # sorted numbers of the lines holding an NPU marker
        self.star_helpers = star_helpers  # a `from m import *` of such a module
        self.def_names = {n.name for n in _statements(tree.body) if isinstance(n, _DEFS)}
        self.units: list[_Unit] = []
        self.module = _Scope("module", None, None)
        self.top = self.block(tree.body, None, self.module)

    # -- statements ------------------------------------------------------------------------------

    def block(self, stmts: list[ast.stmt], parent: Optional[_Unit], scope: _Scope) -> list[_Unit]:
        out: list[_Unit] = []
        for stmt in stmts:
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

    def statement(self, stmt: ast.stmt, parent: Optional[_Unit], scope: _Scope) -> _Unit:
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
        bound to it is not followed forward (see the module docstring)."""
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
        root = func
        while type(root) is _ATTRIBUTE:
            root = root.value  # type: ignore[attr-defined]
        consumer = False
        if type(root) is _NAME:
            if root.id in self.helpers:
                if _carries_npu(self.helpers[root.id], func, root):
                    unit.seed = "config"  # a helper of another module of the tree: it may build or fill a config
                    unit.helper_call = True
                else:  # not one of its exports: it matters only through what it is handed (a config)
                    consumer = unit.helper_consumer = True
            elif self.star_helpers and not helper and root.id not in _BUILTINS:
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
            base = func.value  # type: ignore[attr-defined]
            # (the receiver of a method is read whole: ``self.build()`` may hand ``self`` on, and what the
            # callee then reads of it is not seen here)
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
        root = node
        while type(root) is _ATTRIBUTE:
            root = root.value  # type: ignore[attr-defined]
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
    def _apart(unit: _Unit, through: str, arg: ast.expr, todo: list) -> None:
        """Walk ``arg`` (an argument of a call through ``through``, an import from outside the tree) with
        what it reads collected apart, and as no use of what it names."""
        part: _Part = (set(), set(), set())
        if unit.external_args is None:
            unit.external_args = []
        unit.external_args.append((through, *part))
        todo.append((arg, True, part))


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


class _Slicer:
    """The fixed point over the units (see the module docstring)."""

    def __init__(self, b: _Builder):
        self.b = b
        self.module = b.module
        self.tasks: deque[tuple[Callable, tuple]] = deque()
        self.binders: dict[tuple[int, str], list[_Unit]] = {}
        self.mutators: dict[tuple[int, str], list[_Unit]] = {}
        self.attr_mutators: dict[tuple[int, str], list[_Unit]] = {}  # ``name.attr = ...``, by resolved name
        self.readers: dict[tuple[int, str], list[_Unit]] = {}  # taint uses, by resolved name
        self.attr_readers: dict[str, list[_Unit]] = {}
        self.attr_stores: dict[str, list[_Unit]] = {}
        self.attr_changers: dict[str, list[_Unit]] = {}  # ``x.attr[k] = ...``, ``x.attr.y = ...``, by attribute
        self.class_binders: dict[str, list[_Unit]] = {}
        # the statements that give an attribute its data, by attribute: ``x.attr = ...``, ``x.attr[k] = ...``
        # (and ``x.attr.y = ...``, ``x.attr.append(...)``), ``attr = ...`` in a class body
        self.attr_definers = (self.attr_stores, self.attr_changers, self.class_binders)
        self.class_methods: set[str] = set()  # the names of the methods of the file's classes
        self.mention_sites: dict[str, list[_Unit]] = {}
        self.call_sites: dict[str, list[_Unit]] = {}
        self.name_call_sites: dict[str, list[_Unit]] = {}  # statements calling a name, by the name
        self.defs: dict[str, list[_Unit]] = {}
        self.needed: set[tuple[int, str]] = set()
        self.needed_as_base: set[tuple[int, str]] = set()  # (only its attributes are read: ``need_base``)
        self.needed_attrs: set[str] = set()
        self.tainted: set[tuple[int, str]] = set()
        self.tainted_attrs: set[str] = set()
        self.relevant: set[int] = set()
        self.returns_needed: set[int] = set()
        self.returns_taint: set[int] = set()
        self.waiting: dict[tuple[int, str], list[tuple[_Unit, set[str], set[str], set[tuple[str, str]]]]] = {}
        self.receiver_readers: dict[tuple[int, str], list[_Unit]] = {}
        self.instances: set[tuple[int, str]] = set()  # names bound to what a helper of another module returned
        self.self_passers: dict[int, list[_Unit]] = {}  # class statement -> its methods' statements passing self
        self._scopes: dict[int, _Scope] = {id(self.module): self.module}
        self._index()

    # -- indices ---------------------------------------------------------------------------------

    def resolve(self, scope: _Scope, name: str) -> Optional[_Scope]:
        if scope.kind == "function" and name in scope.globals:
            return self.module
        s: Optional[_Scope] = scope
        first = True
        while s is not None:
            if (first or s.kind != "class") and name in s.bound:
                return s
            first = False
            s = s.parent
        return None

    def _external(self, scope: _Scope, name: str) -> bool:
        """Whether ``name``, read in ``scope``, is a module-level name that only imports from outside the
        tree bind."""
        if self.resolve(scope, name) is not self.module:
            return False
        binders = self.binders.get((id(self.module), name))
        return bool(binders) and all(b.external is not None and name in b.external for b in binders)

    def _bind_scope(self, unit: _Unit, name: str) -> _Scope:
        return self.module if name in unit.scope.globals else unit.scope

    def _index(self) -> None:
        # (locals and one resolution per scope and name: this loop visits every statement of the file)
        resolved: dict[tuple[int, str], Optional[_Scope]] = {}
        resolve = self.resolve
        binders, mutators, readers = self.binders, self.mutators, self.readers
        attr_readers, receiver_readers, attr_stores = self.attr_readers, self.receiver_readers, self.attr_stores
        mention_sites, call_sites, class_binders = self.mention_sites, self.call_sites, self.class_binders
        def_names = self.b.def_names
        module = self.module
        for u in self.b.units:
            scope = u.scope
            sid = id(scope)
            if u.body_scope is not None:
                self._scopes[id(u.body_scope)] = u.body_scope
                self.defs.setdefault(u.node.name, []).append(u)  # type: ignore[attr-defined]
            if u.binds:
                in_class = scope.kind == "class"
                for name in u.binds:
                    binders.setdefault((id(module if name in scope.globals else scope), name), []).append(u)
                    if in_class:
                        class_binders.setdefault(name, []).append(u)
                        if isinstance(u.node, _FUNCS):
                            self.class_methods.add(name)
            for table, names in ((mutators, u.mutated), (self.attr_mutators, u.attr_mutated), (readers, u.uses),
                                 (receiver_readers, u.receivers)):
                for name in names:
                    key = (sid, name)
                    if key in resolved:
                        s = resolved[key]
                    else:
                        s = resolved[key] = resolve(scope, name)
                    if s is not None:
                        table.setdefault((id(s), name), []).append(u)
            for _callee, _slot, names, _attrs, bases in u.pending:
                for name in names.union(base for base, _attr in bases):
                    s = resolve(scope, name)
                    if s is not None:
                        readers.setdefault((id(s), name), []).append(u)
            for attr in u.attr_uses:
                attr_readers.setdefault(attr, []).append(u)
            if u.passes_self and scope.kind == "function" and scope.parent is not None \
                    and scope.parent.kind == "class" and scope.parent.unit is not None:
                self.self_passers.setdefault(id(scope.parent.unit), []).append(u)
            for attr in u.attr_stores:
                attr_stores.setdefault(attr, []).append(u)
            for attr in u.attr_changes:
                self.attr_changers.setdefault(attr, []).append(u)
            if def_names:
                for name in u.mentions & def_names:
                    mention_sites.setdefault(name, []).append(u)
            for name in u.calls:
                call_sites.setdefault(name, []).append(u)
            for name in u.name_calls:
                self.name_call_sites.setdefault(name, []).append(u)

    # -- the fixed point -------------------------------------------------------------------------

    def run(self) -> None:
        push = self.tasks.append
        for u in self.b.units:
            if u.star_calls and u.seed is None and any(self.resolve(u.scope, n) is None for n in u.star_calls):
                u.seed = "config"
            if isinstance(u.node, (ast.Import, ast.ImportFrom)) and u.scope is self.module:
                push((self.keep, (u, 0)))
            if u.seed is not None:
                push((self.keep, (u, 2)))
                if u.seed == "config":
                    push((self.taint_use, (u,)))
                if u.helper_call:
                    for name in u.binds:
                        push((self.instance, (self._bind_scope(u, name), name)))
        while self.tasks:
            fn, args = self.tasks.popleft()
            fn(*args)

    def keep(self, u: _Unit, level: int) -> None:
        old = u.level
        if level <= old:
            return
        u.level = level
        push = self.tasks.append
        if old < 0:
            for g in u.glue:
                push((self.keep, (g, 2)))
            if u.parent is not None:
                push((self.keep, (u.parent, 2)))
            owner = u.scope.unit
            if owner is not None and id(owner) not in self.relevant:
                push((self.make_relevant, (owner,)))
        if level >= 1 > old:
            for name in u.reads:
                push((self.need, (u.scope, name)))
            self._need_bases(u, u.reads, u.base_reads)
            for attr in u.attr_reads:
                push((self.need_attr, (attr,)))
            for callee, slot, names, attrs, bases in u.pending:
                self._pending(u, callee, slot, names, attrs, bases)
            for through, names, attrs, bases in u.external_args or ():
                if not self._external(u.scope, through):
                    self._need_part(u, names, attrs, bases)
        if level >= 2 > old:
            for name in u.calls:
                push((self.need_returns, (name,)))

    def make_relevant(self, d: _Unit) -> None:
        """``d`` (a def or class) has kept statements: keep it, its call sites, returns and declarations."""
        if id(d) in self.relevant:
            return
        self.relevant.add(id(d))
        push = self.tasks.append
        push((self.keep, (d, 2)))
        name = d.node.name  # type: ignore[attr-defined]
        for site in self.mention_sites.get(name, ()):
            if site is not d:
                push((self.keep, (site, 1)))
                if site.alias_of == name:  # ``f = self.setup``: the calls of ``f`` call it too
                    for alias in site.binds:
                        for call in self.name_call_sites.get(alias, ()):
                            push((self.keep, (call, 1)))
        scope = d.body_scope
        assert scope is not None
        for r in scope.returns:
            push((self.keep, (r, 0)))
        for g in scope.declarations:
            push((self.keep, (g, 0)))
        for u in self.self_passers.get(id(d), ()):
            push((self.keep, (u, 2)))  # `callbacks.set_trainer(self)`: the callee may call its methods back

    def need(self, scope: _Scope, name: str) -> None:
        """A kept statement reads ``name`` whole: every statement that binds or changes it is needed."""
        target = self.resolve(scope, name)
        if target is None:
            return
        key = (id(target), name)
        if key in self.needed:
            return
        self.needed.add(key)
        if key not in self.needed_as_base:
            self._need_binding(key)
        for u in self.attr_mutators.get(key, ()):
            self.tasks.append((self.keep, (u, 2)))

    def need_base(self, scope: _Scope, name: str) -> None:
        """A kept statement reads only attributes of ``name`` (``self.sess``): the statements that bind it
        or change it otherwise are needed; one that stores another attribute (``self.model = ...``) is
        needed only if that attribute is read (:meth:`need_attr`) or the name read whole."""
        target = self.resolve(scope, name)
        if target is None:
            return
        key = (id(target), name)
        if key in self.needed or key in self.needed_as_base:
            return
        self.needed_as_base.add(key)
        self._need_binding(key)

    def _need_binding(self, key: tuple[int, str]) -> None:
        push = self.tasks.append
        for u in self.binders.get(key, ()):
            push((self.keep, (u, 2)))
        for u in self.mutators.get(key, ()):
            push((self.keep, (u, 2)))
        for entry in self.waiting.pop(key, ()):
            self._need_part(*entry)

    def need_attr(self, attr: str) -> None:
        if attr in self.needed_attrs:
            return
        self.needed_attrs.add(attr)
        for table in self.attr_definers:
            for u in table.get(attr, ()):
                self.tasks.append((self.keep, (u, 2)))

    def need_returns(self, name: str) -> None:
        for d in self.defs.get(name, ()):
            if id(d) in self.returns_needed or d.body_scope is None or d.body_scope.kind != "function":
                continue
            self.returns_needed.add(id(d))
            for r in d.body_scope.returns:
                self.tasks.append((self.keep, (r, 2)))

    def _params_for(self, d: _Unit, slot: tuple) -> Optional[str]:
        """The parameter of def/class ``d`` an argument in ``slot`` binds (None: cannot tell)."""
        scope = d.body_scope
        assert scope is not None
        if scope.kind == "class":
            init = next((u for u in self.defs.get("__init__", ()) if u.scope is scope), None)
            if init is None:
                return None
            d, by_attribute, scope = init, True, init.body_scope  # C(...) calls __init__(self, ...)
            assert scope is not None
        kind, where, by_attribute = slot
        if kind == "kw":
            if where in scope.params or where in scope.kwonly:
                return str(where)
            return scope.kwarg
        index = int(where) + (1 if d.is_method and by_attribute else 0)
        if index < len(scope.params):
            return scope.params[index]
        return scope.vararg

    def _pending(self, u: _Unit, callee: str, slot: tuple, names: set[str], attrs: set[str],
                 bases: set[tuple[str, str]]) -> None:
        """Arguments of a kept call of helper ``callee``: needed when the helper reads the parameter."""
        for d in self.defs.get(callee, ()):
            param = self._params_for(d, slot)
            target = d.body_scope
            if target is not None and target.kind == "class":
                init = next((x for x in self.defs.get("__init__", ()) if x.scope is target), None)
                target = init.body_scope if init is not None else None
            if param is None or target is None:
                self._need_part(u, names, attrs, bases)
                continue
            key = (id(target), param)
            if key in self.needed or key in self.needed_as_base:
                self._need_part(u, names, attrs, bases)
            else:
                self.waiting.setdefault(key, []).append((u, names, attrs, bases))

    def _need_part(self, u: _Unit, names: set[str], attrs: set[str], bases: set[tuple[str, str]]) -> None:
        push = self.tasks.append
        for name in names:
            push((self.need, (u.scope, name)))
        self._need_bases(u, names, bases)
        for attr in attrs:
            push((self.need_attr, (attr,)))

    def _need_bases(self, u: _Unit, whole: set[str], bases: set[tuple[str, str]]) -> None:
        """The names of ``u`` read as the base of an attribute (``bases``: (name, attribute)) and not
        ``whole``: only their attributes are needed (:meth:`need_base`) when each of those is data the file
        stores (``x.attr = ...``, ``x.attr[k] = ...``) or a class attribute of the file that is no method.
        A method read without being called (``run = self.configure``, ``callbacks=[self.on_step]``) takes
        the object with it, and may hand it on; an attribute the file does not define may be a method of a
        class of another module, which may read any attribute of the object: the name is needed whole."""
        if not bases:
            return
        methods = self.class_methods
        known = self.attr_definers
        partly: dict[str, bool] = {}
        for name, attr in bases:
            if name not in whole:
                partly[name] = partly.get(name, True) and attr not in methods and any(
                    attr in table for table in known)
        push = self.tasks.append
        for name, only_attributes in partly.items():
            push((self.need_base if only_attributes else self.need, (u.scope, name)))

    # -- taint: objects built by seeds -------------------------------------------------------------

    def _spread(self, marked: set, key, readers: dict) -> None:
        """Mark ``key`` once; the statements that read it (``readers[key]``) then use a tainted object."""
        if key in marked:
            return
        marked.add(key)
        for u in readers.get(key, ()):
            self.tasks.append((self.taint_use, (u,)))

    def taint(self, scope: _Scope, name: str) -> None:
        self._spread(self.tainted, (id(scope), name), self.readers)

    def instance(self, scope: _Scope, name: str) -> None:
        """``name`` holds what a helper of another module returned (an object of a class the
        interpreter reads): calling its methods is a use (``trainer.build_graph()``)."""
        self._spread(self.instances, (id(scope), name), self.receiver_readers)

    def taint_attr(self, attr: str) -> None:
        self._spread(self.tainted_attrs, attr, self.attr_readers)

    def taint_use(self, u: _Unit) -> None:
        """``u`` uses an object built by a seed (or is a seed): keep it, pass the taint on."""
        push = self.tasks.append
        self.keep(u, 2)
        for name in u.binds:
            if u.sessions is not None and name in u.sessions:
                continue  # a session: its NPU options were fixed when it opened (_Builder._opens_session)
            push((self.taint, (self._bind_scope(u, name), name)))
        for attr in u.attr_stores:
            if u.inert_attrs is not None and attr in u.inert_attrs:
                # a session (as for a name above), or a constant: what ``x.attr`` gives elsewhere is no object
                # a seed built (a statement that reads the attribute of such an object reads the object too)
                continue
            push((self.taint_attr, (attr,)))
        if u.helper_consumer:  # a config handed to another module's class or function: what it returns
            for name in u.binds:  # may hold it (``trainer = Trainer(config)``: its methods are uses)
                push((self.instance, (self._bind_scope(u, name), name)))
        for callee, slot, names, attrs, bases in u.pending:
            if not self._carries(u, names.union(base for base, _attr in bases), attrs):
                continue
            for d in self.defs.get(callee, ()):
                param = self._params_for(d, slot)
                target = d.body_scope
                if target is not None and target.kind == "class":
                    init = next((x for x in self.defs.get("__init__", ()) if x.scope is target), None)
                    target = init.body_scope if init is not None else None
                if target is None:
                    continue
                for p in [param] if param is not None else target.params + target.kwonly:
                    push((self.taint, (target, p)))
        if isinstance(u.node, ast.Return) and u.scope.unit is not None and id(u.scope.unit) not in self.returns_taint:
            owner = u.scope.unit
            self.returns_taint.add(id(owner))
            for site in self.call_sites.get(owner.node.name, ()):  # type: ignore[attr-defined]
                push((self.taint_use, (site,)))

    def _carries(self, u: _Unit, names: set[str], attrs: set[str]) -> bool:
        if attrs & self.tainted_attrs:
            return True
        for name in names:
            s = self.resolve(u.scope, name)
            if s is not None and (id(s), name) in self.tainted:
                return True
        return u.seed == "config"


Reaches = Callable[[str, int], bool]
#: ``exports(dotted, level)``: the top-level names of a module of the tree (one ``reaches`` says yes for)
#: through which calls can reach NPU code; None when that is not known (any name can).
Exports = Callable[[str, int], Optional[frozenset[str]]]

#: What the slice knows of a local name imported from a module of the tree that can reach NPU code:
#: None, any call through it may build or fill a config (the module's exports are not known); True or
#: False, a name imported from such a module that is or is not one of its exports; a frozenset, the name
#: is such a module and these are its exports (``name.export(...)`` is a call that may).
HelperUse = Optional[Union[bool, frozenset]]


def _carries_npu(use: HelperUse, func: ast.expr, root: ast.Name) -> bool:
    """Whether calling ``func`` (reached through the imported name ``root``) may build or fill a config."""
    if use is None or isinstance(use, bool):
        return use is None or use
    if isinstance(func, ast.Attribute) and func.value is root:
        return func.attr in use
    return True  # (a submodule of it, or the module called: not known)


def _merged(old: HelperUse, new: HelperUse, first: bool) -> HelperUse:
    """What a name imported twice (in two branches, two functions) can do: either."""
    if first:
        return new
    if old is None or new is None or isinstance(old, bool) != isinstance(new, bool):
        return None
    if isinstance(old, bool):
        return old or bool(new)
    return old | new  # type: ignore[operator]


def _imports(tree: ast.Module, modules: frozenset[str], reaches: Optional[Reaches],
             exports: Optional[Exports] = None) -> tuple[frozenset[str], dict[str, HelperUse], bool]:
    """Local names bound by importing a seed module or from one (``import npu_device as npu``: ``npu``);
    local names imported from a module of the tree that can reach NPU code (``reaches(dotted, level)``),
    with what of them can (``exports``; without it, anything); whether such a module is star-imported."""
    seeds, star = set(), False
    helpers: dict[str, HelperUse] = {}

    def note(local: str, use: HelperUse) -> None:
        helpers[local] = _merged(helpers.get(local), use, local not in helpers)

    def module_use(dotted: str, level: int) -> HelperUse:
        return exports(dotted, level) if exports is not None else None

    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                if modules.intersection(alias.name.split(".")):
                    seeds.add(local)
                imported = alias.name if alias.asname else local
                if reaches is not None and reaches(imported, 0):
                    note(local, module_use(imported, 0))
        elif isinstance(node, ast.ImportFrom):
            dotted = node.module or ""
            parts = set(dotted.split("."))
            for alias in node.names:
                local = alias.asname or alias.name
                if parts & modules or alias.name in modules:
                    seeds.add(local)
                if reaches is None:
                    continue
                if alias.name == "*":
                    star = star or reaches(dotted, node.level)
                    continue
                submodule = f"{dotted}.{alias.name}" if dotted else alias.name
                if reaches(submodule, node.level):
                    note(local, module_use(submodule, node.level))
                elif reaches(dotted, node.level):
                    use = module_use(dotted, node.level)
                    note(local, None if use is None else alias.name in use)
    return frozenset(seeds), helpers, star


def stand_in(out: list[str], first: int, last: int) -> int:
    """Replace lines ``first``..``last`` (1-based) of ``out`` (lines with their line breaks) by one
    statement that does nothing and spans the same lines, at the indentation of the first: ``pass`` for
    one line, else an empty triple-quoted string whose line breaks are those of the lines it replaces.
    Every later position is unchanged, and libcst builds a node or two instead of one per blank line
    (a blank line costs it about a third of a line of code). Returns the number of lines replaced."""
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
               modelled: Optional[Iterable[str]] = None, sessions: Iterable[str] = ()) -> Optional[SliceResult]:
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
    name bound to what they give is not followed forward."""
    if tree is None:
        return None
    lines = source_lines(text)
    names = SEED_IDENTIFIERS | frozenset(identifiers)
    aliases, helpers, star = _imports(tree, names, reaches, exports)
    in_tree = getattr(reaches, "in_tree", None) if modelled is not None else None
    known = frozenset(modelled or ()) | HANDLED_METHODS | CONSUMERS | DEFINITION_CALLS | names
    builder = _Builder(tree, lines, names | aliases, helpers, star, in_tree, known, frozenset(sessions))
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
    dropped = frozenset(id(u.node) for u in builder.units if u.level < 0)
    for u in builder.units:  # (units and scopes point at each other: unlinked, they are freed at once
        u.parent = u.scope = u.body_scope = None  # rather than left to the cycle collector)
        u.blocks = u.glue = []
    return SliceResult(text="".join(out), lines=len(lines), blanked=blanked, statements=len(builder.units),
                       kept=len(kept), kept_besides_imports=besides, dropped=dropped)


class TreeReach:
    """``reaches(dotted, level)`` for the files of one folder: whether an import leads to a file below
    ``roots`` that holds an NPU marker or imports (transitively) one that does. What a file holds (a
    marker, the files its imports lead to) is read once per process (keyed by path, size and
    modification time); past ``budget`` files visited for one question the answer is yes (when in
    doubt, keep)."""

    _facts: dict[tuple[str, int, int], tuple[bool, tuple[str, ...]]] = {}
    # (path, size, mtime, seed words) -> the file's exports (:meth:`exports`)
    _exported: dict[tuple[str, int, int, frozenset[str]], Optional[frozenset[str]]] = {}
    # (the generation of imports, roots, budget) and the answers of __call__ made under it, by file
    _reached: tuple[Optional[tuple], dict[str, bool]] = (None, {})

    def __init__(self, folder: str, roots: tuple[str, ...], budget: int = 64,
                 identifiers: Iterable[str] = ()):
        self.folder = folder
        self.roots = roots
        self.budget = budget
        self.identifiers = SEED_IDENTIFIERS | DEFINITION_CALLS | frozenset(identifiers)

    def _resolve(self, dotted: str, level: int, folder: str) -> Optional[str]:
        from npu_audit.imports import resolve_in_tree

        return resolve_in_tree(dotted, level, folder, self.roots)

    def in_tree(self, dotted: str, level: int) -> bool:
        """Whether the module an import names is a file of the analysed tree (else the interpreter reads
        none of its code: an unmodelled call into it has an unknown value)."""
        return self._resolve(dotted, level, self.folder) is not None

    def __call__(self, dotted: str, level: int) -> bool:
        found = self._resolve(dotted, level, self.folder)
        if found is None:
            return False
        from npu_audit.imports import generation

        # (one answer per file and process, until imports.forget(): the tree may have changed then)
        shared = TreeReach._reached
        if shared[0] != (generation(), self.roots, self.budget):
            # (replaced whole, never emptied in place: the language server's threads may share it)
            shared = TreeReach._reached = ((generation(), self.roots, self.budget), {})
        answers = shared[1]
        known = answers.get(found)
        if known is None:
            known = answers[found] = self._reaches(found)
        return known

    def _file(self, path: str) -> Optional[tuple[bool, tuple[str, ...]]]:
        from npu_audit.imports import split_relative
        from npu_audit.prefilter import imported_module_names

        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (path, st.st_size, st.st_mtime_ns)
        facts = self._facts.get(key)
        if facts is None:
            try:
                with open(path, "rb") as handle:
                    raw = handle.read(DEFAULT_MAX_BYTES)
            except OSError:
                return None
            folder = os.path.dirname(path)
            if may_configure_npu(raw):
                facts = (True, ())
            else:
                targets = (self._resolve(*split_relative(name), folder) for name in imported_module_names(raw))
                facts = (False, tuple(sorted({t for t in targets if t is not None})))
            if len(self._facts) > 50_000:
                self._facts.clear()
            self._facts[key] = facts
        return facts

    def _reaches(self, start: str) -> bool:
        seen = {start}
        todo = [start]
        while todo:
            if len(seen) > self.budget:
                return True
            facts = self._file(todo.pop())
            if facts is None:
                continue
            if facts[0]:
                return True
            for target in facts[1]:
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return False

    def exports(self, dotted: str, level: int) -> Optional[frozenset[str]]:
        """The top-level names of the module an import names (a file of the tree that can reach NPU
        code) through which a call can reach it, or None when that cannot be told. A name counts when its
        statement holds an NPU marker, names an API the interpreter models or a flag definition, or
        reads a name imported from a module of the tree that can reach NPU code (or a name imported so,
        re-exported), or, until nothing changes, reads a name that counts. Words of the source are
        read, strings and comments too (more names count than could: what counts is kept)."""
        found = self._resolve(dotted, level, self.folder)
        if found is None:
            return None
        try:
            st = os.stat(found)
        except OSError:
            return None
        key = (found, st.st_size, st.st_mtime_ns, self.identifiers)
        if key not in self._exported:
            if len(self._exported) > 10_000:
                self._exported.clear()
            self._exported[key] = self._exports_of(found)
        return self._exported[key]

    def _exports_of(self, path: str) -> Optional[frozenset[str]]:
        from npu_audit.relevance import carrying_names
        from npu_audit.source import ReadProblem, read_source
        from npu_audit.syntax import python_tree

        source = read_source(path, path, DEFAULT_MAX_BYTES, lenient=True)
        if isinstance(source, ReadProblem):
            return None
        tree = python_tree(source.text)
        if tree is None:
            return None
        there = TreeReach(os.path.dirname(path), self.roots, self.budget)
        _seeds, helpers, star = _imports(tree, frozenset(), there)
        if star:
            return None  # (a star import of such a module: any name may be one of its)
        carriers = frozenset(helpers)
        wanted = self.identifiers | carriers

        def is_seed(segment: str) -> bool:
            return bool(wanted.intersection(IDENTIFIER_WORD.findall(segment))) or bool(MARKER_TEXT_RE.search(segment))

        return frozenset(carrying_names(tree, source.text, is_seed, exact=False, given=carriers))

