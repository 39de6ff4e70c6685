"""The statements the interpreter reads: blocks, branches (with the guards that narrow a flag's default),
loops, definitions, assignments, returns and imports. A statement is dispatched on its node type
(:data:`_STATEMENTS`, :data:`_SMALL_STATEMENTS`); a statement not listed there is skipped."""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Optional

import npu_audit.extract.usage as usage
import npu_audit.extract.values as values
import npu_audit.syntax as cst
from npu_audit.extract.frames import (
    MAX_UNROLL,
    Binding,
    Frame,
    InterpreterBase,
    LazyName,
    _short,
)
from npu_audit.extract.model import (
    UNRESOLVED,
    BranchStep,
    SessionConfig,
)
from npu_audit.extract.symbols import (
    UNKNOWN,
    ClassRef,
    ConfigObjectRef,
    ConfigRef,
    Const,
    EntryRef,
    FunctionRef,
    InstanceRef,
    ModuleRef,
    RunConfigRef,
    Sym,
    Unknown,
    to_python,
)


class _Arm:
    """``with _Arm(frame, step):`` reads its body as one arm of a branch: ``step`` is the last of
    ``frame.branches`` while the body is read and is taken off when it ends, also by an exception, and
    ``frame.returned`` is then as it was before (a return inside a branch does not end the enclosing
    block). The body runs in the caller's Python frame, so an arm adds nothing to the stack."""

    __slots__ = ("frame", "step", "returned")

    def __init__(self, frame: Frame, step: BranchStep) -> None:
        self.frame = frame
        self.step = step
        self.returned = False

    def __enter__(self) -> None:
        frame = self.frame
        frame.branches.append(self.step)
        self.returned = frame.returned

    def __exit__(self, *exc: object) -> None:
        frame = self.frame
        frame.branches.pop()
        frame.returned = self.returned


class Statements(InterpreterBase):
    """The statements part of :class:`~npu_audit.extract.interpreter.Interpreter` (see the module docstring)."""

    # ---------------------------------------------------------------------------------------
    # statements

    def exec_block(self, body, frame: Frame) -> None:
        """Read the statements ``body`` in ``frame`` until one returns. Each statement is read with
        ``frame.stmts`` extended by it; ``frame.stmts`` is as it was when the block started once the
        block ends, also when a statement raises. The dispatch of a statement and of a simple
        statement line is written out here, so that reading a statement costs one Python call (its
        handler) and deep reads keep the stack short."""
        outer = frame.stmts
        try:
            for stmt in body:
                if frame.returned:
                    return
                frame.stmts = outer + (stmt,)
                if type(stmt) is cst.SimpleStatementLine:
                    for small in stmt.body:
                        small_handler = _SMALL_STATEMENTS.get(type(small))
                        if small_handler is not None:
                            small_handler(self, small, stmt, frame)
                        if frame.returned:
                            break
                else:
                    handler = _STATEMENTS.get(type(stmt))
                    if handler is not None:
                        handler(self, stmt, frame)
        finally:
            frame.stmts = outer

    def _suite(self, suite) -> list:
        if isinstance(suite, cst.IndentedBlock):
            return list(suite.body)
        if isinstance(suite, cst.SimpleStatementSuite):
            return [cst.SimpleStatementLine(body=suite.body)]
        return []

    def exec_stmt(self, stmt: cst.CSTNode, frame: Frame) -> None:
        """Read one statement in ``frame`` (a module's or a class body's, which never returns), with
        ``frame.stmts`` extended by it while it is read: :meth:`exec_block` of that one statement."""
        self.exec_block((stmt,), frame)

    def _exec_while(self, stmt: cst.While, frame: Frame) -> None:
        module = frame.module  # (not the frame: a binding's branch steps, kept in the frame, hold the description)
        with _Arm(frame, BranchStep(id(stmt), 0, "loop", False, lambda: f"while {_short(module, stmt.test)}",
                                    stmt.test)):
            self.exec_block(self._suite(stmt.body), frame)
        if stmt.orelse is not None:
            with _Arm(frame, BranchStep(id(stmt), 1, "loop", False, "else of while", None)):
                self.exec_block(self._suite(stmt.orelse.body), frame)

    def _exec_try(self, stmt, frame: Frame) -> None:
        with _Arm(frame, BranchStep(id(stmt), 0, "try", False, "inside try", None)):
            self.exec_block(self._suite(stmt.body), frame)
        for i, handler in enumerate(stmt.handlers):
            with _Arm(frame, BranchStep(id(stmt), i + 1, "except", False, "in except handler", None)):
                if handler.name is not None and isinstance(handler.name.name, cst.Name):
                    self.bind(handler.name.name.value, UNKNOWN, frame)
                self.exec_block(self._suite(handler.body), frame)
        if stmt.orelse is not None:
            with _Arm(frame, BranchStep(id(stmt), 1000, "try", False, "in else of try", None)):
                self.exec_block(self._suite(stmt.orelse.body), frame)
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
            with _Arm(frame, BranchStep(id(stmt), i, "if", False, "in match case", None)):
                self.exec_block(self._suite(case.body), frame)

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
            with _Arm(frame, BranchStep(id(stmt), 0, "if", has_else, lambda: f"if {_short(module, stmt.test)}",
                                        stmt.test)):
                self.exec_block(self._suite(stmt.body), frame)
        orelse = stmt.orelse
        if orelse is None:
            return
        # the else arm: a branch of its own, unless the test is known false (then it is the only way on)
        with (contextlib.nullcontext() if verdict is False else
              _Arm(frame, BranchStep(id(stmt), 1, "if", has_else, lambda: f"not ({_short(module, stmt.test)})",
                                     stmt.test))):
            if isinstance(orelse, cst.If):
                self.exec_if(orelse, frame)
            else:
                self.exec_block(self._suite(orelse.body), frame)

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

        with _Arm(frame, BranchStep(id(stmt), 0, "loop", False, desc, stmt.iter)):
            self.assign(stmt.target, UNKNOWN, frame)
            self.exec_block(self._suite(stmt.body), frame)
        if stmt.orelse is not None:
            with _Arm(frame, BranchStep(id(stmt), 1, "loop", False, "else of for", None)):
                self.exec_block(self._suite(stmt.orelse.body), frame)

    def _exec_assign(self, small: cst.Assign, line: cst.SimpleStatementLine, frame: Frame) -> None:
        value = self.eval(small.value, frame)
        for target in small.targets:
            self.assign(target.target, value, frame, stmt=line, value_node=small.value)
        if isinstance(value, ConfigRef) and not value.path and value.config.node is small.value:
            self._note_binding(value.config, small, frame)
        elif isinstance(value, ConfigObjectRef) and value.node is small.value:
            self._note_object_binding(value, small, frame)

    def _note_object_binding(self, obj: ConfigObjectRef, small: cst.Assign, frame: Frame) -> None:
        """``name = DumpConfig(...)`` in a function: whether anything can read the object. Only inside a
        function: a module-level name may be imported by another module."""
        if (len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name) or frame.function is None
                or frame.locals is None):
            return
        name = small.targets[0].target.value
        if name in frame.global_names:
            return
        tree = frame.module.source_ast()
        if tree is None:
            return
        function = frame.function.node
        scope = usage.function_named(tree, function.name.value)
        if scope is None:  # (a method name several classes of the module define)
            where = cst.range_of(function)
            scope = usage.function_at(tree, function.name.value, where[0]) if where is not None else None
        if scope is None:
            return
        key = (id(scope), name)
        if key not in self._kept:
            self._kept[key] = not usage.only_written_into(scope, name)
        obj.bound_to = name
        obj.handed_on = self._kept[key]

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
            else:
                frame.module.foreign_stars.append(dotted or "" if not level else "")
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
            source = f"{dotted}.{name}" if dotted and not level else None
            self.bind(local, sub if sub.file else Unknown(name=local, why="imported", source=source), frame)


def _compare_with(op: str, other: Any, value: Any) -> Any:
    return values.compare(op, value, other)


#: a comparison read from the other side (``0 < FLAGS.n`` is ``FLAGS.n > 0``)
_MIRRORED = {"Equal": "Equal", "NotEqual": "NotEqual", "LessThan": "GreaterThan", "GreaterThan": "LessThan",
             "LessThanEqual": "GreaterThanEqual", "GreaterThanEqual": "LessThanEqual", "Is": "Is", "IsNot": "IsNot"}

_STATEMENTS: dict[type, Callable[[Statements, Any, Frame], None]] = {
    cst.If: Statements.exec_if,
    cst.For: Statements.exec_for,
    cst.While: Statements._exec_while,
    cst.Try: Statements._exec_try,
    cst.TryStar: Statements._exec_try,
    cst.With: Statements._exec_with,
    cst.FunctionDef: Statements._exec_def,
    cst.ClassDef: Statements.exec_class,
    cst.Match: Statements._exec_match,
}

_SMALL_STATEMENTS: dict[type, Callable[[Statements, Any, cst.SimpleStatementLine, Frame], None]] = {
    cst.Assign: Statements._exec_assign,
    cst.AnnAssign: Statements._exec_ann_assign,
    cst.AugAssign: Statements._exec_aug_assign,
    cst.Expr: Statements._exec_expr,
    cst.Return: Statements._exec_return,
    cst.Import: Statements.exec_import,
    cst.ImportFrom: Statements.exec_import_from,
    cst.Global: Statements._exec_global,
    cst.Nonlocal: Statements._exec_global,
}
