"""Read a script statement by statement and rebuild the NPU session configs it creates.

This is a small abstract interpreter over the libcst tree. It never runs user code: it binds names
to symbolic values (configs, optimizer entries, constants it can compute, unknowns), follows helper
functions by reading their bodies with the call's arguments, and records every option write with the
branches it sits under. Anything it cannot compute is "unresolved", never guessed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, cast

import npu_audit.extract.api as api
import npu_audit.extract.flags as flags
import npu_audit.extract.proto as proto
import npu_audit.extract.usage as usage
import npu_audit.extract.values as values
import npu_audit.syntax as cst
from npu_audit.extract.model import (
    UNRESOLVED,
    BranchStep,
    CallSite,
    CodeFact,
    SessionConfig,
)
from npu_audit.extract.project import ModuleState, Project
from npu_audit.extract.recorder import PositionRecorder
from npu_audit.extract.symbols import (
    UNKNOWN,
    ArgsRef,
    ClassRef,
    ConfigObjectRef,
    ConfigRef,
    Const,
    EntryRef,
    FlagsRef,
    FunctionRef,
    InstanceRef,
    ListRef,
    ModuleRef,
    ParserRef,
    RunConfigRef,
    SessionRef,
    SuperRef,
    Sym,
    Unknown,
    to_python,
)
from npu_audit.extract.tf2 import OptionsRef, Tf2Extractor
from npu_audit.knowledge.model import KnowledgeBase
from npu_audit.text import source_lines

MAX_CALL_DEPTH = 12
MAX_UNROLL = 64
FIELDS = {"b", "i", "s", "f", "list", "func", "placeholder", "shape", "tensor", "type"}


@dataclass
class Binding:
    """What a name is bound to, and the branches it was bound under: a constant bound in a branch is not known when
    it is read outside that branch."""

    sym: Sym
    path: tuple[tuple[int, int], ...]  # (branch node id, arm) path where the binding was made


@dataclass(eq=False)
class LazyName(Sym):
    """``from tree_module import name``: resolved when first looked up."""

    module: ModuleRef
    name: str


@dataclass(eq=False)
class Ambiguous(Unknown):
    """An object attribute whose value depends on which of several methods that set it ran last
    (``self.sess`` opened in two methods, read in a third read on its own): not one object."""


@dataclass
class Frame:
    """Where the interpreter is reading: a module level or a function call, its names, and the branches and helper
    calls the code read sits under."""

    module: ModuleState
    locals: Optional[dict[str, Binding]]  # None: module level (globals)
    branches: list[BranchStep] = field(default_factory=list)
    calls: tuple[CallSite, ...] = ()
    returns: list[Sym] = field(default_factory=list)
    returned: bool = False
    function: Optional[FunctionRef] = None
    global_names: set[str] = field(default_factory=set)
    base_depth: int = 0  # len(branches) when the function started (caller's branches)
    top: Optional[cst.CSTNode] = None  # the module-level statement that lexically contains the code read
    stmts: tuple = ()  # the statements lexically enclosing the code read, outermost first
    standalone: bool = False  # reading a function nobody called: its parameter defaults are only guesses
    # one read from its start: a module run, or a function nobody called read on its own, with everything it
    # calls (a method read on its own does not know which other methods ran before it)
    root: object = field(default_factory=object)

    @property
    def scope(self) -> dict[str, Binding]:
        return self.locals if self.locals is not None else self.module.globals

    def branch_key(self) -> tuple[tuple[int, int], ...]:
        branches = self.branches
        return tuple([b.place for b in branches]) if branches else ()


def _first_line(stmt) -> int:
    """The line a top-level statement starts on (0 when not known)."""
    found = cst.range_of(stmt)
    return found[0] if found is not None else 0


class Interpreter:
    def __init__(self, project: Project, kb: KnowledgeBase, positions: Optional[PositionRecorder] = None):
        self.project = project
        self.kb = kb
        self.configs: list[SessionConfig] = []
        self.loose_facts: list[CodeFact] = []
        self.config_objects: list[ConfigObjectRef] = []  # DumpConfig(...) & co., wherever they are built
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
        for stmt in state.module.body:
            if frame.returned:
                break
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
    # statements

    def exec_block(self, body, frame: Frame) -> None:
        for stmt in body:
            if frame.returned:
                return
            self.exec_stmt(stmt, frame)

    def _suite(self, suite) -> list:
        if isinstance(suite, cst.IndentedBlock):
            return list(suite.body)
        if isinstance(suite, cst.SimpleStatementSuite):
            return [cst.SimpleStatementLine(body=suite.body)]
        return []

    def exec_stmt(self, stmt: cst.CSTNode, frame: Frame) -> None:
        outer = frame.stmts
        frame.stmts = outer + (stmt,)
        try:
            self._exec_stmt(stmt, frame)
        finally:
            frame.stmts = outer

    def _exec_stmt(self, stmt: cst.CSTNode, frame: Frame) -> None:
        handler = _STATEMENTS.get(type(stmt))
        if handler is not None:
            handler(self, stmt, frame)

    def _exec_line(self, stmt: cst.SimpleStatementLine, frame: Frame) -> None:
        for small in stmt.body:
            handler = _SMALL_STATEMENTS.get(type(small))
            if handler is not None:
                handler(self, small, stmt, frame)
            if frame.returned:
                return

    def _exec_while(self, stmt: cst.While, frame: Frame) -> None:
        module = frame.module  # (not the frame: a binding's branch steps, kept in the frame, hold the description)
        self._branch(frame, stmt, 0, "loop", False, lambda: f"while {_short(module, stmt.test)}", stmt.test,
                     lambda: self.exec_block(self._suite(stmt.body), frame))
        if stmt.orelse is not None:
            orelse = stmt.orelse
            self._branch(frame, stmt, 1, "loop", False, "else of while", None,
                         lambda: self.exec_block(self._suite(orelse.body), frame))

    def _exec_try(self, stmt, frame: Frame) -> None:
        self._branch(frame, stmt, 0, "try", False, "inside try", None,
                     lambda: self.exec_block(self._suite(stmt.body), frame))
        for i, handler in enumerate(stmt.handlers):
            def run_handler(h=handler):
                if h.name is not None and isinstance(h.name.name, cst.Name):
                    self.bind(h.name.name.value, UNKNOWN, frame)
                self.exec_block(self._suite(h.body), frame)
            self._branch(frame, stmt, i + 1, "except", False, "in except handler", None, run_handler)
        if stmt.orelse is not None:
            self._branch(frame, stmt, 1000, "try", False, "in else of try", None,
                         lambda: self.exec_block(self._suite(stmt.orelse.body), frame))
        if stmt.finalbody is not None:
            self.exec_block(self._suite(stmt.finalbody.body), frame)

    def _exec_with(self, stmt: cst.With, frame: Frame) -> None:
        for item in stmt.items:
            value = self.eval(item.item, frame)
            if item.asname is not None:
                self.assign(item.asname.name, value, frame)
        self.exec_block(self._suite(stmt.body), frame)

    def _exec_def(self, stmt: cst.FunctionDef, frame: Frame) -> None:
        fn = FunctionRef(stmt, frame.module, qualname=stmt.name.value)
        self.positions.defined(stmt, frame.top, frame.stmts)
        self.bind(stmt.name.value, fn, frame)
        if frame.locals is None:
            frame.module.functions.append(fn)

    def _exec_match(self, stmt, frame: Frame) -> None:
        for i, case in enumerate(stmt.cases):
            self._branch(frame, stmt, i, "if", False, "in match case", None,
                         lambda c=case: self.exec_block(self._suite(c.body), frame))

    def exec_class(self, stmt: cst.ClassDef, frame: Frame) -> None:
        cls = ClassRef(node=stmt, module=frame.module, qualname=stmt.name.value)
        for base in stmt.bases:
            found = self.force(self.eval(base.value, frame), frame)
            if isinstance(found, ClassRef):
                cls.bases.append(found)
        self.bind(stmt.name.value, cls, frame)
        if frame.locals is None:
            frame.module.classes.append(cls)
        else:
            frame.module.attr_holders.append(cls)
        class_locals: dict[str, Binding] = {}
        class_frame = Frame(module=frame.module, locals=class_locals, branches=list(frame.branches),
                            calls=frame.calls, top=frame.top, stmts=frame.stmts, root=frame.root)
        for item in self._suite(stmt.body):
            if isinstance(item, cst.FunctionDef):
                fn = FunctionRef(item, frame.module, owner=cls, qualname=f"{stmt.name.value}.{item.name.value}")
                self.positions.defined(item, frame.top, frame.stmts + (item,))
                cls.attrs[item.name.value] = fn
                if frame.locals is None:
                    frame.module.functions.append(fn)
            else:
                self.exec_stmt(item, class_frame)
        for name, binding in class_locals.items():
            cls.attrs.setdefault(name, binding.sym)

    def _branch(self, frame, node, arm, kind, has_else, description, test, run) -> None:
        step = BranchStep(node_id=id(node), arm=arm, kind=kind, has_else=has_else, description=description, node=test)
        frame.branches.append(step)
        saved_returned = frame.returned
        try:
            run()
        finally:
            frame.branches.pop()
            # a return inside a branch does not end the enclosing block
            frame.returned = saved_returned

    def exec_if(self, stmt: cst.If, frame: Frame) -> None:
        if self._is_main_guard(stmt.test):
            self.exec_block(self._suite(stmt.body), frame)
            return
        verdict = self._static_truth(stmt.test, frame)
        module = frame.module  # (the branch descriptions are written only when a message shows them)
        has_else = stmt.orelse is not None
        if verdict is True:
            self.exec_block(self._suite(stmt.body), frame)
            return
        if verdict is not False:
            self._branch(frame, stmt, 0, "if", has_else, lambda: f"if {_short(module, stmt.test)}", stmt.test,
                         lambda: self.exec_block(self._suite(stmt.body), frame))
        orelse = stmt.orelse
        if orelse is None:
            return
        if isinstance(orelse, cst.If):
            run = lambda: self.exec_if(orelse, frame)  # noqa: E731
        else:
            run = lambda: self.exec_block(self._suite(orelse.body), frame)  # noqa: E731
        if verdict is False:
            run()
        else:
            self._branch(frame, stmt, 1, "if", has_else, lambda: f"not ({_short(module, stmt.test)})", stmt.test, run)

    def _static_truth(self, test, frame) -> Optional[bool]:
        """The test's truth when the script decides it by itself: literals (``if True:``) and values
        computed from literals, constants and arguments (``if mixed:`` inside a helper called with
        ``mixed=False``). Tests that depend on a flag default, the environment or anything unresolved
        stay open (both arms are read). Reading the test also reads the calls in it."""
        if isinstance(test, cst.Name) and test.value in ("True", "False"):
            return test.value == "True"
        if isinstance(test, cst.Integer):
            try:
                return bool(int(test.value, 0))
            except ValueError:
                return None
        value = self.force(self.eval(test, frame), frame)
        if frame.standalone:
            return None  # parameter defaults of an uncalled helper do not decide its branches
        if isinstance(value, Const) and value.origin != "flag-default":
            try:
                return bool(value.value)
            except Exception:  # noqa: BLE001 - an object whose truth cannot be computed
                return None
        if isinstance(value, (ConfigRef, EntryRef, RunConfigRef, FunctionRef, ClassRef, InstanceRef)):
            return True
        return None

    def narrow(self, value: Sym, frame: Frame) -> Sym:
        """``value`` as the guards on the path allow it: a value computed from a flag default that an
        enclosing ``if`` excludes (``if FLAGS.n:`` around a write of ``FLAGS.n``, default 0) is not the value
        written there, so it becomes unknown instead of being judged. Guards are read for truthiness,
        ``not``, ``and``/``or`` and one comparison of the flag with a constant (==, !=, <, >, <=, >=, is None,
        is not None)."""
        if not isinstance(value, Const) or value.origin != "flag-default" or not value.flag or not frame.branches:
            return value
        if value.flag in self.excluded_flags(frame):
            return Unknown(why=f"the guards on the path exclude the default of flag {value.flag}")
        return value

    def excluded_flags(self, frame: Frame) -> frozenset[str]:
        """The flags whose default the ``if`` guards enclosing the code read in ``frame`` rule out."""
        out: set[str] = set()
        for step in frame.branches:
            if step.kind != "if" or step.node is None or step.arm not in (0, 1):
                continue
            key = (id(step.node), step.arm)
            if key not in self._guards:
                holds = step.arm == 0
                self._guards[key] = frozenset(flag for flag in self._guard_flags(step.node, frame)
                                              if self._guard_excludes(step.node, holds, flag, frame))
            out.update(self._guards[key])
        return frozenset(out)

    def _guard_flags(self, test, frame: Frame) -> set[str]:
        """The flags a guard reads plainly (``FLAGS.x``, ``args.x``), in the shapes narrowing understands."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self._guard_flags(test.expression, frame)
        if isinstance(test, cst.BooleanOperation):
            return self._guard_flags(test.left, frame) | self._guard_flags(test.right, frame)
        sides = [test.left, test.comparisons[0].comparator] if (
            isinstance(test, cst.Comparison) and len(test.comparisons) == 1) else [test]
        found = set()
        for side in sides:
            if isinstance(side, (cst.Name, cst.Attribute)) and self._dotted(side) is not None:
                sym = self.force(self.eval(side, frame), frame)
                if isinstance(sym, Const) and sym.origin == "flag-default" and sym.flag:
                    found.add(sym.flag)
        return found

    def _guard_excludes(self, test, holds: bool, flag: str, frame: Frame) -> bool:
        """Whether ``test`` being ``holds`` rules out flag ``flag`` being at its default."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self._guard_excludes(test.expression, not holds, flag, frame)
        if isinstance(test, cst.BooleanOperation):
            # `a and b` true: both hold; `a or b` false: neither holds
            if isinstance(test.operator, cst.And) == holds:
                return any(self._guard_excludes(side, holds, flag, frame) for side in (test.left, test.right))
            return False
        subject = test
        check: Callable[[Any], Any] = bool
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            link = test.comparisons[0]
            op = type(link.operator).__name__
            left, right = test.left, link.comparator
            if self._flag_default(right, flag, frame) is not None and self._flag_default(left, flag, frame) is None:
                left, right, op = right, left, _MIRRORED.get(op, "")
            if op not in values.GUARD_COMPARISONS:
                return False
            other = self._guard_constant(right, frame)
            if other is UNRESOLVED:
                return False
            subject = left
            check = functools.partial(_compare_with, op, other)
        default = self._flag_default(subject, flag, frame)
        if default is None:
            return False
        verdict = check(default.value)
        return verdict is not UNRESOLVED and bool(verdict) != holds

    def _flag_default(self, node, flag: str, frame: Frame) -> Optional[Const]:
        """The value of ``node`` when it is a plain read of flag ``flag`` (``FLAGS.x``, ``args.x``, a name)."""
        if not isinstance(node, (cst.Name, cst.Attribute)) or self._dotted(node) is None:
            return None
        sym = self.force(self.eval(node, frame), frame)
        if isinstance(sym, Const) and sym.origin == "flag-default" and sym.flag == flag:
            return sym
        return None

    def _guard_constant(self, node, frame: Frame) -> Any:
        """The constant a guard compares with (a literal or a constant name), else UNRESOLVED."""
        if not isinstance(node, (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.SimpleString,
                                 cst.UnaryOperation)):
            return UNRESOLVED
        sym = self.force(self.eval(node, frame), frame)
        if not isinstance(sym, Const) or sym.origin == "flag-default":
            return UNRESOLVED
        return sym.value

    def _is_main_guard(self, test) -> bool:
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return False
        left, comp = test.left, test.comparisons[0]
        if not isinstance(comp.operator, cst.Equal):
            return False
        sides = [left, comp.comparator]
        names = [s for s in sides if isinstance(s, cst.Name) and s.value == "__name__"]
        strings = [s for s in sides if isinstance(s, cst.SimpleString) and "__main__" in s.value]
        return bool(names and strings)

    def exec_for(self, stmt: cst.For, frame: Frame) -> None:
        iterable = self.force(self.eval(stmt.iter, frame), frame)
        items = to_python(iterable)
        if isinstance(items, dict):
            items = list(items)
        if isinstance(items, (list, tuple)) and 0 < len(items) <= MAX_UNROLL:
            for item in items:
                self.assign(stmt.target, Const(item, origin="resolved"), frame)
                self.exec_block(self._suite(stmt.body), frame)
            return
        module = frame.module

        def desc() -> str:
            return f"for {_short(module, stmt.target)} in {_short(module, stmt.iter)}"

        def body():
            self.assign(stmt.target, UNKNOWN, frame)
            self.exec_block(self._suite(stmt.body), frame)

        self._branch(frame, stmt, 0, "loop", False, desc, stmt.iter, body)
        if stmt.orelse is not None:
            self._branch(frame, stmt, 1, "loop", False, "else of for", None,
                         lambda: self.exec_block(self._suite(stmt.orelse.body), frame))

    def _exec_assign(self, small: cst.Assign, line: cst.SimpleStatementLine, frame: Frame) -> None:
        value = self.eval(small.value, frame)
        for target in small.targets:
            self.assign(target.target, value, frame, stmt=line, value_node=small.value)
        if isinstance(value, ConfigRef) and not value.path and value.config.node is small.value:
            self._note_binding(value.config, small, frame)

    def _note_binding(self, config: SessionConfig, small: cst.Assign, frame: Frame) -> None:
        """``name = tf.ConfigProto(...)``: the name, and whether the object certainly goes nowhere (every use
        of the name in its function, or in its module at module level, only writes into it)."""
        if len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name) or config.kind != "ConfigProto":
            return
        name = small.targets[0].target.value
        if frame.locals is not None and (frame.function is None or name in frame.global_names):
            return  # a class body, or a name a function declares global
        # the original text: a sliced module's blanked statements may use the name
        scope = frame.module.source_ast()
        if scope is not None and frame.locals is not None and frame.function is not None:
            scope = usage.function_named(scope, frame.function.node.name.value) or scope
        key = (id(scope), name)
        if key not in self._kept:
            self._kept[key] = scope is None or not usage.only_written_into(scope, name)
        config.bound_to = name
        config.handed_on = self._kept[key]

    def _exec_ann_assign(self, small: cst.AnnAssign, line: cst.SimpleStatementLine, frame: Frame) -> None:
        if small.value is not None:
            value = self.eval(small.value, frame)
            self.assign(small.target, value, frame, stmt=line, value_node=small.value)

    def _exec_aug_assign(self, small: cst.AugAssign, line: cst.SimpleStatementLine, frame: Frame) -> None:
        if isinstance(small.target, cst.Name):
            current = self.force(self.lookup(small.target.value, frame), frame)
            rhs = self.force(self.eval(small.value, frame), frame)
            op = type(small.operator).__name__.replace("Assign", "")
            self.bind(small.target.value, values.binop(op, current, rhs), frame)
        else:
            self.eval(small.value, frame)

    def _exec_expr(self, small: cst.Expr, line: cst.SimpleStatementLine, frame: Frame) -> None:
        self.eval(small.value, frame)

    def _exec_return(self, small: cst.Return, line: cst.SimpleStatementLine, frame: Frame) -> None:
        frame.returns.append(self.eval(small.value, frame) if small.value is not None else Const(None))
        if len(frame.branches) == frame.base_depth:
            frame.returned = True

    def _exec_global(self, small, line: cst.SimpleStatementLine, frame: Frame) -> None:
        for item in small.names:
            frame.global_names.add(item.name.value)

    # ---------------------------------------------------------------------------------------
    # imports

    def _dotted(self, node) -> Optional[str]:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            base = self._dotted(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def _module_ref(self, dotted: str, level: int, frame: Frame) -> ModuleRef:
        file = self.project.resolve(dotted, level, frame.module.file)
        name = "." * level + dotted
        return ModuleRef(name=name, file=str(file) if file else None)

    def exec_import(self, small: cst.Import, line, frame: Frame) -> None:
        for alias in small.names:
            dotted = self._dotted(alias.name)
            if not dotted:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
                frame.module.aliases[local] = dotted
                self.bind(local, self._module_ref(dotted, 0, frame), frame)
            else:
                top = dotted.split(".")[0]
                frame.module.aliases.setdefault(top, top)
                self.bind(top, self._module_ref(top, 0, frame), frame)

    def exec_import_from(self, small: cst.ImportFrom, line, frame: Frame) -> None:
        level = len(small.relative)
        dotted = self._dotted(small.module) if small.module is not None else ""
        ref = self._module_ref(dotted or "", level, frame) if (dotted or level) else None
        if ref is None:
            return
        if isinstance(small.names, cst.ImportStar):
            if ref.file is not None:
                frame.module.star_modules.append(ref)
            return
        for alias in small.names:
            name = self._dotted(alias.name)
            if not name:
                continue
            local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
            frame.module.aliases[local] = f"{'.' * level}{dotted}.{name}" if dotted else f"{'.' * level}{name}"
            if ref.file is not None and ref.file != str(frame.module.file):
                self.bind(local, LazyName(module=ref, name=name), frame)
                continue
            # a package importing from itself (``from . import files`` in its __init__): what it bound under
            # that name so far (a lazy name would name itself), else, as for a module not read, the submodule
            if ref.file is not None:
                self._read_definitions(frame.module, name)  # (a function importing from its own module)
            here = frame.module.globals.get(name) if ref.file is not None else None
            if here is not None:
                self.bind(local, here.sym, frame)
                continue
            sub = self._module_ref(f"{dotted}.{name}" if dotted else name, level, frame)
            self.bind(local, sub if sub.file else Unknown(name=local, why="imported"), frame)

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

    # ---------------------------------------------------------------------------------------
    # assignment

    def assign(self, target, value: Sym, frame: Frame, stmt=None, value_node=None) -> None:
        if isinstance(target, cst.Name):
            self.bind(target.value, value, frame)
        elif isinstance(target, (cst.Tuple, cst.List)):
            value = self.force(value, frame)
            parts = None
            py = to_python(value)
            if isinstance(value, ListRef):
                parts = list(value.items)
            elif isinstance(py, (list, tuple)):
                parts = [Const(v, origin="resolved") for v in py]
            elements = [e.value for e in target.elements]
            if parts is None or len(parts) != len(elements) or any(isinstance(e, cst.StarredElement) for e in target.elements):
                parts = [UNKNOWN] * len(elements)
            for element, part in zip(elements, parts):
                self.assign(element, part, frame)
        elif isinstance(target, cst.Attribute):
            self.assign_attribute(target, value, frame, stmt, value_node)
        elif isinstance(target, cst.Subscript):
            self.eval(target.value, frame)

    def assign_attribute(self, target: cst.Attribute, value: Sym, frame: Frame, stmt, value_node) -> None:
        attr = target.attr.value
        base = self.eval(target.value, frame)
        if proto.assign(self, base, attr, value, frame, stmt, target, value_node):
            return
        if isinstance(base, OptionsRef):
            self.tf2.assign(base, attr, value, frame, stmt, target, value_node)
        elif isinstance(base, (InstanceRef, ClassRef)):
            base.attrs[attr] = value
            if isinstance(base, InstanceRef):
                self._set_in.setdefault(base, {})[attr] = frame.root
                if isinstance(value, (SessionRef, ConfigRef, RunConfigRef)):
                    self._linked.setdefault(base, {})[attr] = value

    # ---------------------------------------------------------------------------------------
    # expressions

    def code(self, node, frame: Frame) -> str:
        """The source of ``node`` (in the module ``frame`` reads), stripped."""
        return frame.module.code(node)

    def short(self, node, frame: Frame, limit: int = 60) -> str:
        """The source of ``node`` on one line, cut to ``limit`` characters (for branch descriptions)."""
        return _short(frame.module, node, limit)

    def evaluate(self, node, frame: Frame) -> Sym:
        """The value of expression ``node`` (RecursionError is left to the caller)."""
        return self._eval(node, frame)

    def eval(self, node, frame: Frame) -> Sym:
        try:
            return self._eval(node, frame)
        except RecursionError:
            return UNKNOWN

    def _eval(self, node, frame: Frame) -> Sym:
        handler = _EXPRESSIONS.get(type(node))
        return handler(self, node, frame) if handler is not None else UNKNOWN

    def _eval_name(self, node: cst.Name, frame: Frame) -> Sym:
        return self.lookup(node.value, frame)

    def _eval_literal(self, node, frame: Frame) -> Sym:
        return values.literal(node, frame.module.display)

    def _eval_concatenated(self, node: cst.ConcatenatedString, frame: Frame) -> Sym:
        left, right = self.force(self._eval(node.left, frame), frame), self.force(self._eval(node.right, frame), frame)
        return values.concat(left, right)

    def _eval_unary(self, node: cst.UnaryOperation, frame: Frame) -> Sym:
        operand = self.force(self._eval(node.expression, frame), frame)
        return values.unary(node.operator, operand, node, frame.module.display)

    def _eval_binary(self, node: cst.BinaryOperation, frame: Frame) -> Sym:
        left = self.force(self._eval(node.left, frame), frame)
        right = self.force(self._eval(node.right, frame), frame)
        return values.binop(type(node.operator).__name__, left, right)

    def _eval_boolean(self, node: cst.BooleanOperation, frame: Frame) -> Sym:
        left = self.force(self._eval(node.left, frame), frame)
        lv = to_python(left)
        if lv is UNRESOLVED or values.derived(left) == "flag-default":
            # which side wins depends on a value the run may change: not one value
            self._eval(node.right, frame)
            return UNKNOWN
        if isinstance(node.operator, cst.Or):
            return left if lv else self._eval(node.right, frame)
        return self._eval(node.right, frame) if lv else left

    def _eval_ifexp(self, node: cst.IfExp, frame: Frame) -> Sym:
        test_sym = self.force(self._eval(node.test, frame), frame)
        test = to_python(test_sym)
        body, orelse = self.force(self._eval(node.body, frame), frame), self.force(self._eval(node.orelse, frame), frame)
        if test is not UNRESOLVED and values.derived(test_sym) != "flag-default":
            return body if test else orelse
        return values.if_both_same(body, orelse)

    def _eval_attribute(self, node: cst.Attribute, frame: Frame) -> Sym:
        base = self.force(self._eval(node.value, frame), frame)
        return self.get_attr(base, node.attr.value, node, frame)

    def _eval_list(self, node: cst.List, frame: Frame) -> Sym:
        return ListRef(items=[self._element(e, frame) for e in node.elements],
                       exact=not any(isinstance(e, cst.StarredElement) for e in node.elements))

    def _eval_tuple(self, node: cst.Tuple, frame: Frame) -> Sym:
        items = [self._element(e, frame) for e in node.elements]
        return values.tuple_of(items, any(isinstance(e, cst.StarredElement) for e in node.elements))

    def _eval_dict(self, node: cst.Dict, frame: Frame) -> Sym:
        pairs = []
        for element in node.elements:
            if not isinstance(element, cst.DictElement):
                return UNKNOWN
            k, v = self.force(self._eval(element.key, frame), frame), self.force(self._eval(element.value, frame), frame)
            kp, vp = to_python(k), to_python(v)
            if kp is UNRESOLVED or vp is UNRESOLVED:
                return UNKNOWN
            try:
                hash(kp)
            except TypeError:
                return UNKNOWN  # (as building the dict would)
            pairs.append((k, v))
        return values.dict_of(pairs)

    def _eval_walrus(self, node: cst.NamedExpr, frame: Frame) -> Sym:
        value = self._eval(node.value, frame)
        self.assign(node.target, value, frame)
        return value

    def _eval_await(self, node: cst.Await, frame: Frame) -> Sym:
        self._eval(node.expression, frame)
        return UNKNOWN

    def _element(self, element, frame: Frame) -> Sym:
        if isinstance(element, cst.StarredElement):
            self._eval(element.value, frame)
            return UNKNOWN
        return self.force(self._eval(element.value, frame), frame)

    def _fstring(self, node: cst.FormattedString, frame: Frame) -> Sym:
        pieces, syms = [], []
        for item in node.parts:
            if isinstance(item, cst.FormattedStringText):
                pieces.append(item.value)
                continue
            part = cast(cst.FormattedStringExpression, item)  # (the only other kind of part)
            sym = self.force(self._eval(part.expression, frame), frame)
            value = to_python(sym)
            if value is UNRESOLVED:
                return UNKNOWN
            syms.append(sym)
            spec = ""
            for spec_part in part.format_spec or ():
                if not isinstance(spec_part, cst.FormattedStringText):
                    return UNKNOWN
                spec += spec_part.value
            text = values.format_field(value, part.conversion, spec)
            if text is UNRESOLVED:
                return UNKNOWN
            pieces.append(text)
        return values.fstring(pieces, syms, node.prefix)

    def _compare(self, node: cst.Comparison, frame: Frame) -> Sym:
        left_sym = self.force(self._eval(node.left, frame), frame)
        left = to_python(left_sym)
        syms = [left_sym]
        result = True
        for comparison in node.comparisons:
            right_sym = self.force(self._eval(comparison.comparator, frame), frame)
            syms.append(right_sym)
            right = to_python(right_sym)
            if left is UNRESOLVED or right is UNRESOLVED:
                return UNKNOWN
            ok = values.compare(type(comparison.operator).__name__, left, right)
            if ok is UNRESOLVED:
                return UNKNOWN
            result = result and ok
            left = right
        return values.comparison_result(result, syms)

    def _subscript(self, node: cst.Subscript, frame: Frame) -> Sym:
        base = self.force(self._eval(node.value, frame), frame)
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return UNKNOWN
        index_node = node.slice[0].slice.value
        index = self.force(self._eval(index_node, frame), frame)
        if isinstance(base, EntryRef) and base.part == "parameter_map":
            return proto.item(base, index, index_node)
        if isinstance(base, ListRef):
            i = to_python(index)
            if isinstance(i, int) and -len(base.items) <= i < len(base.items):
                return base.items[i]
            return UNKNOWN
        return values.subscript(base, index)

    # ---------------------------------------------------------------------------------------
    # attributes

    def get_attr(self, base: Sym, attr: str, node: cst.Attribute, frame: Frame) -> Sym:
        base = self.force(base, frame)
        if isinstance(base, OptionsRef):
            return base.child(attr)
        if isinstance(base, (ConfigRef, EntryRef)):
            return cast(Sym, proto.get_attr(base, attr))
        if isinstance(base, ModuleRef):
            return self.module_attr(base, attr, frame)
        if isinstance(base, FlagsRef):
            return flags.declared_default(self._modules_for_flags(frame), "flags", attr, "flag")
        if isinstance(base, ArgsRef):
            return flags.declared_default(self._modules_for_flags(frame), "arguments", attr, "argument")
        if isinstance(base, SuperRef):
            for parent in base.cls.bases:
                found = parent.lookup(attr)
                if isinstance(found, FunctionRef):
                    return FunctionRef(found.node, found.module, owner=found.owner, bound_self=base.instance,
                                       qualname=found.qualname)
                if found is not None:
                    return found
            return UNKNOWN
        if isinstance(base, InstanceRef):
            if self._ambiguous(base, attr, frame):
                return Ambiguous(why=f"set by several methods of {base.cls.qualname}: "
                                     f"{', '.join(sorted(self._methods_setting(base.cls, attr)))}")
            if attr in base.attrs:
                return self._only_link(base, attr, frame) or base.attrs[attr]
            found = base.cls.lookup(attr)
            if isinstance(found, FunctionRef):
                return FunctionRef(found.node, found.module, owner=found.owner, bound_self=base, qualname=found.qualname)
            if found is not None:
                return found
            return Unknown(name=None, why="attribute never assigned", owner=base, attr=attr)
        if isinstance(base, ClassRef):
            found = base.lookup(attr)
            return found if found is not None else UNKNOWN
        if isinstance(base, Unknown) and base.name is not None:
            # an object we did not see being created (a parameter, an unknown global):
            # if it is used like a ConfigProto or an optimizer entry, treat it as one.
            return self._implicit_from_name(base.name, attr, node, frame)
        if isinstance(base, Unknown) and base.owner is not None and base.attr is not None:
            # the same for `self.config` when the class never assigns it in the code read
            made = proto.make_implicit(self, attr, node, frame, variable=f"self.{base.attr}")
            if made is not None:
                base.owner.attrs[base.attr] = made[0]
                return made[1]
        if isinstance(base, Unknown) and attr == "FLAGS":
            return FlagsRef()
        if isinstance(base, Unknown) and attr in proto.IMPLICIT_ATTRS:
            # any other object npu-audit cannot follow (tf.GraphOptions(...), a RewriterConfig, what a helper
            # of another package returns) used like a config part or an entry: its entries are still entries
            name = node.value.value if isinstance(node.value, cst.Name) else None
            made = proto.make_implicit(self, attr, node, frame, variable=name)
            if made is not None:
                if name is not None:
                    self.bind(name, made[0], frame)
                return made[1]
        return UNKNOWN

    def _ambiguous(self, instance: InstanceRef, attr: str, frame: Frame) -> bool:
        """Whether ``instance.attr`` read in ``frame`` is a session or a config that more than one method sets
        and that was not set earlier in this same read (a method read on its own, after another method read on
        its own set it): which object it holds depends on calls npu-audit does not see in order."""
        current = instance.attrs.get(attr)
        if current is not None and not isinstance(current, (SessionRef, ConfigRef, RunConfigRef)):
            return False
        if current is not None and self._set_in.get(instance, {}).get(attr) is frame.root:
            return False
        return len(self._methods_setting(instance.cls, attr)) > 1

    def _only_link(self, instance: InstanceRef, attr: str, frame: Frame) -> Optional[Sym]:
        """The session or config ``instance.attr`` holds in ``frame`` when another read left a literal there
        (``close()`` sets ``self.sess = None``) but one method only sets it to something else: the object
        that method set, the one a session can run with (None would fail there)."""
        current = instance.attrs.get(attr)
        linked = self._linked.get(instance, {}).get(attr)
        if (linked is None or current is linked or not isinstance(current, Const)
                or self._set_in.get(instance, {}).get(attr) is frame.root):
            return None
        return linked if len(self._methods_setting(instance.cls, attr)) == 1 else None

    def _methods_setting(self, cls: ClassRef, attr: str) -> set[str]:
        """The methods of ``cls`` and of its bases npu-audit follows that set ``self.<attr>`` to something
        other than a literal."""
        out: set[str] = set()
        seen: set[int] = set()
        todo = [cls]
        while todo:
            current = todo.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            key = id(current.node)
            if key not in self._setters:
                self._setters[key] = usage.attributes_set_by_methods(current.node)
            out.update(f"{current.qualname}.{m}" for m in self._setters[key].get(attr, ()))
            todo.extend(current.bases)
        return out

    def _implicit_from_name(self, name: str, attr: str, node: cst.Attribute, frame: Frame) -> Sym:
        made = proto.make_implicit(self, attr, node, frame, variable=name)
        if made is None:
            if attr == "FLAGS":
                return FlagsRef()
            return UNKNOWN
        obj, result = made
        self.bind(name, obj, frame)
        return result

    def _modules_for_flags(self, frame: Frame):
        """The modules whose flag declarations a read in ``frame`` sees: its own first."""
        yield frame.module
        for state in list(self.project.modules.values()):
            if state is not frame.module:
                yield state

    # ---------------------------------------------------------------------------------------
    # calls

    def _callee_name(self, func, frame: Frame) -> str:
        """Dotted name of the callee with import aliases expanded ("tf.ConfigProto" -> "tensorflow.ConfigProto")."""
        dotted = self._dotted(func)
        if not dotted:
            return ""
        first, _, rest = dotted.partition(".")
        full = frame.module.aliases.get(first, first)
        return f"{full}.{rest}" if rest else full

    def import_root(self, func, frame: Frame) -> Optional[str]:
        """The top-level package a callee's dotted name is imported from (``requests`` for
        ``requests.Session`` after ``import requests``, or for ``Session`` after ``from requests import
        Session``), when that import leads outside the analysed tree; None when the callee is not reached
        through such an import (a local name, an attribute of an object, a module of the tree, a star import)."""
        dotted = self._dotted(func)
        if not dotted:
            return None
        first = dotted.split(".", 1)[0]
        imported = frame.module.aliases.get(first)
        if imported is None or imported.startswith("."):
            return None
        sym = self.lookup(first, frame)
        external = (isinstance(sym, ModuleRef) and sym.file is None) or (
            isinstance(sym, Unknown) and sym.why == "imported")
        return imported.split(".", 1)[0] if external else None

    def arguments(self, call: cst.Call, frame: Frame, force: bool = True):
        """Evaluate a call's arguments. ``force``: the values are consumed here (imported names are
        loaded); user functions get them lazily, unknown functions never need them."""
        positional, keywords = [], {}
        for arg in call.args:
            if arg.star:
                self._eval(arg.value, frame)
                continue
            value = self._eval(arg.value, frame)
            if force:
                value = self.force(value, frame)
            if arg.keyword is not None:
                keywords[arg.keyword.value] = (value, arg.value, arg)
            else:
                positional.append((value, arg.value, arg))
        return positional, keywords

    def eval_call(self, call: cst.Call, frame: Frame) -> Sym:
        func = call.func
        full = self._callee_name(func, frame)
        last = full.rsplit(".", 1)[-1] if full else ""
        # method calls on symbolic objects
        if isinstance(func, cst.Attribute):
            base = self.force(self._eval(func.value, frame), frame)
            method = func.attr.value
            handled = self._method_call(base, method, call, frame)
            if handled is not None:
                return handled
            callee = self.get_attr(base, method, func, frame)
        else:
            callee = self.force(self._eval(func, frame), frame)
        if isinstance(callee, FunctionRef):
            positional, keywords = self.arguments(call, frame, force=False)
            return self.call_function(callee, [p[0] for p in positional], {k: v[0] for k, v in keywords.items()}, call, frame)
        if isinstance(callee, ClassRef):
            positional, keywords = self.arguments(call, frame, force=False)
            return self.instantiate(callee, [p[0] for p in positional], {k: v[0] for k, v in keywords.items()}, call, frame)
        return self._api_call(last, full, call, frame)

    def _method_call(self, base: Sym, method: str, call: cst.Call, frame: Frame) -> Optional[Sym]:
        made = proto.method_call(base, method, call, frame)
        if made is not None:
            return made
        if isinstance(base, ListRef):
            if method == "append" and len(call.args) == 1:
                base.items.append(self.force(self._eval(call.args[0].value, frame), frame))
                return Const(None)
            if method == "extend" and len(call.args) == 1:
                other = self.force(self._eval(call.args[0].value, frame), frame)
                if isinstance(other, ListRef):
                    base.items.extend(other.items)
                elif isinstance(to_python(other), (list, tuple)):
                    base.items.extend(Const(v, origin="resolved") for v in to_python(other))
                else:
                    base.exact = False
                return Const(None)
            if method in ("insert", "pop", "remove", "clear", "sort", "reverse"):
                self.arguments(call, frame)
                base.exact = False
                return UNKNOWN
        if isinstance(base, Const):
            return self._const_method(base, method, call, frame)
        if isinstance(base, ParserRef) or (isinstance(base, Unknown) and method == "add_argument"):
            if method == "add_argument":
                positional, keywords = self.arguments(call, frame)
                flags.record_argument(frame.module, positional, keywords, call)
                return UNKNOWN
            if method == "parse_args":
                self.arguments(call, frame)
                return ArgsRef()
            if method == "parse_known_args":
                self.arguments(call, frame)
                return ListRef(items=[ArgsRef(), UNKNOWN], exact=False)
        if isinstance(base, Unknown) and method in ("parse_args",) and base.name is not None:
            return ArgsRef()
        return None

    def _const_method(self, base: Const, method: str, call: cst.Call, frame: Frame) -> Optional[Sym]:
        positional, keywords = self.arguments(call, frame)
        return values.const_method(base, method, [p[0] for p in positional], {k: v[0] for k, v in keywords.items()})

    def call_function(self, fn: FunctionRef, args: list[Sym], kwargs: dict[str, Sym], call, frame: Frame,
                      standalone: bool = False) -> Sym:
        node = fn.node
        if id(node) in self._active or len(self._active) >= MAX_CALL_DEPTH:
            return UNKNOWN
        if not standalone:
            self._inlined.add(id(node))
            self.project.add_call_edge(str(frame.module.file), str(fn.module.file))
        calls = frame.calls + ((CallSite(frame.module.display, call, fn.qualname),) if call is not None else ())
        defined_in = self.positions.definition(node)
        inner_locals: dict[str, Binding] = {}
        inner = Frame(
            module=fn.module,
            locals=inner_locals,
            branches=list(frame.branches) if not standalone else [],
            calls=calls if not standalone else (),
            function=fn,
            standalone=standalone or frame.standalone,
            top=defined_in[0],
            stmts=defined_in[1],
            root=frame.root if not standalone else object(),
        )
        inner.base_depth = len(inner.branches)
        params = node.params
        ordered = list(params.posonly_params) + list(params.params)
        given = list(args)
        if fn.bound_self is not None:
            given = [fn.bound_self] + given
        default_frame = Frame(module=fn.module, locals=None, top=defined_in[0], stmts=defined_in[1])
        for i, param in enumerate(ordered):
            name = param.name.value
            if i < len(given):
                sym = given[i]
            elif name in kwargs:
                sym = kwargs[name]
            elif param.default is not None:
                sym = self._eval(param.default, default_frame)
                if isinstance(sym, Const) and sym.origin == "literal":
                    sym = Const(sym.value, origin="resolved", node=sym.node, path=sym.path)
                if standalone and isinstance(sym, Const) and sym.value is None:
                    sym = Unknown(name=name)  # `param=None` in a helper nobody calls: "optional", not None
            else:
                sym = Unknown(name=name)
            inner_locals[name] = Binding(sym, inner.branch_key())
        for param in params.kwonly_params:
            name = param.name.value
            if name in kwargs:
                sym = kwargs[name]
            elif param.default is not None:
                sym = self._eval(param.default, default_frame)
            else:
                sym = Unknown(name=name)
            inner_locals[name] = Binding(sym, inner.branch_key())
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                inner_locals[star.name.value] = Binding(UNKNOWN, inner.branch_key())
        self._active.append(id(node))
        self.functions_read.add(id(node))
        try:
            self.exec_block(self._suite(node.body), inner)
        except RecursionError:
            pass
        finally:
            self._active.pop()
        return values.merge_returns(inner.returns)

    def instantiate(self, cls: ClassRef, args, kwargs, call, frame: Frame) -> Sym:
        instance = InstanceRef(cls=cls)
        frame.module.attr_holders.append(instance)
        init = cls.lookup("__init__")
        if isinstance(init, FunctionRef):
            bound = FunctionRef(init.node, init.module, owner=cls, bound_self=instance, qualname=init.qualname)
            self.call_function(bound, args, kwargs, call, frame)
        return instance

    # ---------------------------------------------------------------------------------------
    # known APIs

    def new_config(self, kind: str, node, frame: Frame, variable: Optional[str] = None) -> SessionConfig:
        config = SessionConfig(kind=kind, path=frame.module.display, node=node, variable=variable, calls=frame.calls)
        self.configs.append(config)
        return config

    def _api_call(self, last: str, full: str, call: cst.Call, frame: Frame) -> Sym:
        tf2 = self.tf2.call(last, full, call, frame)
        if tf2 is not None:
            return tf2
        return api.call(self, self.api, last, full, call, frame)

    def attach_fact(self, sess: Optional[Sym], fact: CodeFact) -> None:
        """Attach a code fact about a session (set_iteration_per_loop) to the config it runs with."""
        if isinstance(sess, SessionRef) and isinstance(sess.config, (ConfigRef, RunConfigRef)):
            sess.config.config.facts.append(fact)
        elif isinstance(sess, Ambiguous):
            return  # one of several sessions: where the calls are followed in order, the fact has its own
        elif not isinstance(sess, SessionRef):
            self.loose_facts.append(fact)  # the session is unknown: checks may pair it with the file's config
        # else: a session whose config npu-audit cannot see; do not pair it with another config


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


# -- per-node dispatch: node type of npu_audit.syntax -> handler (nodes not listed are skipped / unknown) --

def _short(module: ModuleState, node, limit: int = 60) -> str:
    """The source of ``node`` (of ``module``) on one line, cut to ``limit`` characters."""
    text = " ".join(module.code(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _compare_with(op: str, other: Any, value: Any) -> Any:
    return values.compare(op, value, other)


#: a comparison read from the other side (``0 < FLAGS.n`` is ``FLAGS.n > 0``)
_MIRRORED = {"Equal": "Equal", "NotEqual": "NotEqual", "LessThan": "GreaterThan", "GreaterThan": "LessThan",
             "LessThanEqual": "GreaterThanEqual", "GreaterThanEqual": "LessThanEqual", "Is": "Is", "IsNot": "IsNot"}

_STATEMENTS: dict[type, Callable[[Interpreter, Any, Frame], None]] = {
    cst.SimpleStatementLine: Interpreter._exec_line,
    cst.If: Interpreter.exec_if,
    cst.For: Interpreter.exec_for,
    cst.While: Interpreter._exec_while,
    cst.Try: Interpreter._exec_try,
    cst.TryStar: Interpreter._exec_try,
    cst.With: Interpreter._exec_with,
    cst.FunctionDef: Interpreter._exec_def,
    cst.ClassDef: Interpreter.exec_class,
    cst.Match: Interpreter._exec_match,
}

_SMALL_STATEMENTS: dict[type, Callable[[Interpreter, Any, cst.SimpleStatementLine, Frame], None]] = {
    cst.Assign: Interpreter._exec_assign,
    cst.AnnAssign: Interpreter._exec_ann_assign,
    cst.AugAssign: Interpreter._exec_aug_assign,
    cst.Expr: Interpreter._exec_expr,
    cst.Return: Interpreter._exec_return,
    cst.Import: Interpreter.exec_import,
    cst.ImportFrom: Interpreter.exec_import_from,
    cst.Global: Interpreter._exec_global,
    cst.Nonlocal: Interpreter._exec_global,
}

_EXPRESSIONS: dict[type, Callable[[Interpreter, Any, Frame], Sym]] = {
    cst.Name: Interpreter._eval_name,
    cst.SimpleString: Interpreter._eval_literal,
    cst.Integer: Interpreter._eval_literal,
    cst.Float: Interpreter._eval_literal,
    cst.Imaginary: Interpreter._eval_literal,
    cst.ConcatenatedString: Interpreter._eval_concatenated,
    cst.FormattedString: Interpreter._fstring,
    cst.UnaryOperation: Interpreter._eval_unary,
    cst.BinaryOperation: Interpreter._eval_binary,
    cst.BooleanOperation: Interpreter._eval_boolean,
    cst.IfExp: Interpreter._eval_ifexp,
    cst.Comparison: Interpreter._compare,
    cst.Attribute: Interpreter._eval_attribute,
    cst.Subscript: Interpreter._subscript,
    cst.Call: Interpreter.eval_call,
    cst.List: Interpreter._eval_list,
    cst.Tuple: Interpreter._eval_tuple,
    cst.Dict: Interpreter._eval_dict,
    cst.NamedExpr: Interpreter._eval_walrus,
    cst.Await: Interpreter._eval_await,
    # comprehensions and lambdas: not evaluated (UNKNOWN, like any node not listed)
}
