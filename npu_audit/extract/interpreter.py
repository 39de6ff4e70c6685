"""Read a script statement by statement and rebuild the NPU session configs it creates.

This is a small abstract interpreter over the syntax tree (:mod:`npu_audit.syntax`). It never runs user
code: it binds names to symbolic values (configs, optimizer entries, constants it can compute, unknowns),
follows helper functions by reading their bodies with the call's arguments, and records every option
write with the branches it sits under. Anything it cannot compute is "unresolved", never guessed.

:class:`Interpreter` is made of parts, one module each: this module reads modules (whole, in parts, or
their uncalled functions) and looks names up; :mod:`.statements` reads statements, :mod:`.expressions`
evaluates expressions, attributes and assignment targets, and :mod:`.calls` follows calls. What they
share (the frame, the bindings, the interpreter's state) is in :mod:`.frames`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import npu_audit.extract.api as api
import npu_audit.extract.values as values
import npu_audit.syntax as cst
from npu_audit.extract.calls import Calls
from npu_audit.extract.expressions import Expressions
from npu_audit.extract.frames import FIELDS, MAX_CALL_DEPTH, MAX_UNROLL, Ambiguous, Binding, Frame, LazyName
from npu_audit.extract.model import (
    CodeFact,
    SessionConfig,
)
from npu_audit.extract.project import ModuleState, Project
from npu_audit.extract.recorder import PositionRecorder
from npu_audit.extract.statements import Statements
from npu_audit.extract.symbols import (
    ConfigObjectRef,
    Const,
    FlagsRef,
    FunctionRef,
    InstanceRef,
    ModuleRef,
    Sym,
    Unknown,
)
from npu_audit.extract.tf2 import Tf2Extractor
from npu_audit.knowledge.model import KnowledgeBase
from npu_audit.text import source_lines

__all__ = ["FIELDS", "MAX_CALL_DEPTH", "MAX_UNROLL", "Ambiguous", "Binding", "Frame", "Interpreter", "LazyName"]


def _first_line(stmt) -> int:
    """The line a top-level statement starts on (0 when not known)."""
    found = cst.range_of(stmt)
    return found[0] if found is not None else 0


class Interpreter(Statements, Expressions, Calls):
    """Reads modules statement by statement (see the module docstring); the parts it is made of are the
    classes it derives from, one module each."""

    def __init__(self, project: Project, kb: KnowledgeBase, positions: Optional[PositionRecorder] = None):
        self.project = project
        self.kb = kb
        # the analysed file (extract_configs): the one module whose ``if __name__ == "__main__":`` block runs
        self.script: Optional[ModuleState] = None
        self.configs: list[SessionConfig] = []
        self.loose_facts: list[CodeFact] = []
        self.config_objects: list[ConfigObjectRef] = []  # DumpConfig(...) & co., wherever they are built
        # calls of an adapter API whose name npu-audit cannot trace to an import (path, call node, name)
        self.unseen_calls: list[tuple[str, Any, str]] = []
        self.api = api.Registry(kb)  # the TF/NPU calls it knows (rules/tf_api.toml)
        self.tf2 = Tf2Extractor(self)  # TF2: npu_device.global_options() and open() (extract/tf2.py)
        self._active: list[int] = []  # ids of function nodes being read (recursion guard)
        self._inlined: set[int] = set()
        self.functions_read: set[int] = set()  # ids of the function nodes whose body was read (called or standalone)
        # where each function is defined (the statements around it: a call reads its body in that place)
        self.positions = positions if positions is not None else PositionRecorder()
        # per-run state: modules read or being read
        self._executed: set[int] = set()
        self._executing: set[int] = set()
        # a module read in parts that is running (and only such): the first line of the top-level statement it runs
        self._running_at: dict[int, int] = {}
        # (id of a function or module, name) -> whether a config bound to that name may be handed on
        self._kept: dict[tuple[int, str], bool] = {}
        # (id of an if test, arm) -> the flags whose default that arm rules out
        self._guards: dict[tuple[int, int], frozenset[str]] = {}
        # per object, per attribute: the read (Frame.root) that set its current value
        self._set_in: dict[InstanceRef, dict[str, object]] = {}
        # per object, per attribute: the last session or config it was set to
        self._linked: dict[InstanceRef, dict[str, Sym]] = {}
        # id of a class statement -> attribute -> the methods that set it (usage.attributes_set_by_methods)
        self._setters: dict[int, dict[str, frozenset[str]]] = {}

    # ---------------------------------------------------------------------------------------
    # modules

    def run_module(self, state: ModuleState) -> None:
        key = id(state)
        if key in self._executed or key in self._executing:
            return
        self._executing.add(key)
        frame = Frame(module=state, locals=None)
        imported = self.script is not None and state is not self.script
        for stmt in state.module.body:
            if frame.returned:
                break
            if imported and type(stmt) is cst.If and stmt.orelse is None and self._is_main_guard(stmt.test):
                continue  # (an imported module's ``__name__`` is its own name: its main block does not run)
            frame.top = stmt
            frame.stmts = ()
            if state.more is not None:
                self._running_at[key] = _first_line(stmt)
            self.exec_stmt(stmt, frame)
        self._executing.discard(key)
        self._running_at.pop(key, None)
        self._executed.add(key)

    def run_standalone(self, state: ModuleState, text: Optional[str] = None, tree: Any = None,
                       dropped: frozenset[int] = frozenset()) -> None:
        """Read functions nobody called (library helpers), with parameters bound to their defaults.

        With the module's ``text``, functions and classes whose source (and whose callees' source)
        cannot touch NPU configuration are skipped: reading them could not produce anything.
        """
        relevant = _npu_relevant_definitions(state.module, text, tree, dropped) if text is not None else None

        def worth(node) -> bool:
            return relevant is None or id(node) in relevant

        for cls in list(state.classes):
            methods = [f for f in state.functions if f.owner is cls]
            if all(id(m.node) in self._inlined for m in methods) or not worth(cls.node):
                continue
            instance = InstanceRef(cls=cls)
            state.attr_holders.append(instance)
            ordered = sorted(methods, key=lambda m: 0 if m.node.name.value == "__init__" else 1)
            for method in ordered:
                if id(method.node) in self._inlined:
                    continue
                bound = FunctionRef(method.node, method.module, owner=cls, bound_self=instance, qualname=method.qualname)
                self.call_function(bound, [], {}, None, Frame(module=state, locals=None), standalone=True)
        for fn in list(state.functions):
            if fn.owner is None and id(fn.node) not in self._inlined and worth(fn.node):
                self.call_function(fn, [], {}, None, Frame(module=state, locals=None), standalone=True)

    def load_module(self, ref: ModuleRef, importer: ModuleState, name: Optional[str] = None) -> Optional[ModuleState]:
        """The module ``ref`` names, read (once) when ``importer`` first looks a name up in it; ``name``:
        the name looked up (a helper is parsed in parts: the definitions of a name not read so far
        are parsed and run when it is asked for)."""
        state = ref.state
        if state is None:
            if ref.file is None:
                return None
            state = self.project.load(Path(ref.file), importer.file)
            if state is None:
                return None
            ref.state = state
            self.run_module(state)
        if name is not None:
            self._read_definitions(state, name)
        return state

    def _read_definitions(self, state: ModuleState, name: str) -> None:
        """Run the definitions of ``name`` that a module read in parts left out so far, if it has such
        (npu_audit.extract.demand). In a module still running, only those above the statement it runs (a
        circular import): it has not bound its later definitions yet, and read whole they would not be
        there either."""
        if state.more is None or name in state.globals:
            return
        part = state.more(name, self._running_at.get(id(state)))  # (a line while the module runs, else None)
        if part is not None:
            state.later_parts.append(part)
            frame = Frame(module=state, locals=None)
            for stmt in part.body:
                frame.top = stmt
                frame.stmts = ()
                self.exec_stmt(stmt, frame)

    # ---------------------------------------------------------------------------------------
    # names

    def bind(self, name: str, sym: Sym, frame: Frame) -> None:
        scope = frame.module.globals if name in frame.global_names else frame.scope
        scope[name] = Binding(sym, frame.branch_key())

    def lookup(self, name: str, frame: Frame) -> Sym:
        if frame.module.more is not None and name not in frame.module.globals and (
                frame.locals is None or name not in frame.locals):
            self._read_definitions(frame.module, name)  # (a definition of a module read in parts, not read yet)
        for scope in (frame.locals, frame.module.globals):
            if scope is None or name not in scope:
                continue
            binding = scope[name]
            sym = binding.sym  # an imported name stays lazy until its value is used
            path = binding.path
            if path and isinstance(sym, Const) and frame.branch_key()[: len(path)] != path:
                # assigned in a branch we are not in: one of several values
                return Unknown(name=None, why="assigned in a branch")
            # a value read through a name was resolved (the literal is elsewhere)
            return values.read_through_name(sym)
        for ref in frame.module.star_modules:
            state = self.load_module(ref, frame.module, name)
            if state is not None and name in state.globals:
                return self._resolve_lazy(state.globals[name].sym, frame)
        if name in ("True", "False", "None"):
            return Const({"True": True, "False": False, "None": None}[name])
        if name == "FLAGS":
            return FlagsRef()
        return Unknown(name=name)

    def force(self, sym: Sym, frame: Frame) -> Sym:
        """The value of a symbol, loading the module an imported name comes from if needed."""
        if not isinstance(sym, LazyName):
            return sym
        # a constant of another module: resolved (its literal is elsewhere)
        return values.read_through_name(self._resolve_lazy(sym, frame))

    def _resolve_lazy(self, sym: Sym, frame: Frame) -> Sym:
        """What an imported name is bound to, following re-exports (``from a import x`` where ``a`` has
        ``from b import x``); a chain that comes back to a name already followed is unknown (two modules
        importing a name from each other: Python raises ImportError)."""
        seen: set[int] = set()
        importer = frame.module
        while isinstance(sym, LazyName):
            if id(sym) in seen:
                return Unknown(name=sym.name)
            seen.add(id(sym))
            state = self.load_module(sym.module, importer, sym.name)
            if state is None:
                return Unknown(name=sym.name)
            if sym.name not in state.globals:
                sub = self.project.resolve(sym.name, 1, state.file) if state.file.name == "__init__.py" else None
                if sub is not None:
                    return ModuleRef(name=sym.name, file=str(sub))
                return Unknown(name=sym.name)
            sym, importer = state.globals[sym.name].sym, state
        return sym

    def module_attr(self, ref: ModuleRef, name: str, frame: Frame) -> Sym:
        state = self.load_module(ref, frame.module, name)
        if state is None:
            if name == "FLAGS":
                return FlagsRef()
            if ref.file is None:
                return ModuleRef(name=f"{ref.name}.{name}", file=None)
            return Unknown(name=None)
        if name in state.globals:
            return values.read_through_name(self._resolve_lazy(state.globals[name].sym, Frame(module=state, locals=None)))
        if name == "FLAGS":
            return FlagsRef()
        if state.file.name == "__init__.py":
            sub = self.project.resolve(name, 1, state.file)
            if sub is not None:
                return ModuleRef(name=f"{ref.name}.{name}", file=str(sub))
        return Unknown(name=None)


def _npu_relevant_definitions(module: cst.Module, text: str, whole: Any = None,
                              dropped: frozenset[int] = frozenset()) -> Optional[set]:
    """ids of the module-level def/class statements whose source mentions NPU configuration, directly
    or through the module-level functions they call by name. None when that cannot be decided
    (then every definition is read). ``text`` is what the module was built from (a relevance slice:
    ``whole``, CPython's ast of the file, without the statements ``dropped``; parsed here when not given)."""
    import ast as pyast

    from npu_audit.extract.positions import python_ast
    from npu_audit.prefilter import may_configure_npu
    from npu_audit.relevance import statement_source

    tree = whole if whole is not None else python_ast(text)
    if tree is None:
        return None
    ast_defs = [n for n in tree.body if isinstance(n, (pyast.FunctionDef, pyast.AsyncFunctionDef, pyast.ClassDef))
                and id(n) not in dropped]
    cst_defs = [s for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))]
    if len(ast_defs) != len(cst_defs) or any(a.name != c.name.value for a, c in zip(ast_defs, cst_defs)):
        return None
    lines = source_lines(text)
    relevant = set()
    for a in ast_defs:
        if may_configure_npu(statement_source(lines, a).encode("utf-8", "surrogatepass")):
            relevant.add(a.name)
    if relevant:
        calls = {a.name: _names_read(a, dropped) for a in ast_defs if a.name not in relevant}
        changed = True
        while changed:
            changed = False
            for name, used in calls.items():
                if name not in relevant and used & relevant:
                    relevant.add(name)
                    changed = True
    return {id(c) for a, c in zip(ast_defs, cst_defs) if a.name in relevant}


def _names_read(node: Any, dropped: frozenset[int]) -> set[str]:
    """The names (``ast.Name``) inside ``node``, leaving out the statements ``dropped``."""
    import ast as pyast

    out = set()
    todo = [node]
    while todo:
        current = todo.pop()
        if type(current) is pyast.Name:
            out.add(current.id)
        todo.extend(child for child in cst.python_children(current) if id(child) not in dropped)
    return out
