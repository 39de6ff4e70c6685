"""The expressions the interpreter evaluates to symbolic values, the attributes it reads from them, and
the targets it assigns to. An expression is dispatched on its node type (:data:`_EXPRESSIONS`); one not
listed there (a comprehension, a lambda) is unknown."""

from __future__ import annotations

from typing import Any, Callable, Optional, cast

import npu_audit.extract.flags as flags
import npu_audit.extract.proto as proto
import npu_audit.extract.usage as usage
import npu_audit.extract.values as values
import npu_audit.syntax as cst
from npu_audit.extract.calls import Calls
from npu_audit.extract.frames import (
    Ambiguous,
    Frame,
    InterpreterBase,
    _short,
)
from npu_audit.extract.model import (
    UNRESOLVED,
)
from npu_audit.extract.symbols import (
    UNKNOWN,
    ArgsRef,
    ClassRef,
    ConfigRef,
    Const,
    EntryRef,
    FlagsRef,
    FunctionRef,
    InstanceRef,
    ListRef,
    ModuleRef,
    RunConfigRef,
    SessionRef,
    SuperRef,
    Sym,
    Unknown,
    to_python,
)
from npu_audit.extract.tf2 import OptionsRef


class Expressions(InterpreterBase):
    """The expressions part of :class:`~npu_audit.extract.interpreter.Interpreter` (see the module docstring)."""

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
        """The value of expression ``node``; unknown when reading it goes deeper than Python's recursion
        limit. Dispatches on the node type itself (as :meth:`_eval` does), so that a statement's
        expression costs no extra Python call."""
        handler = _EXPRESSIONS.get(type(node))
        if handler is None:
            return UNKNOWN
        try:
            return handler(self, node, frame)
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


# (a method of Expressions or of Calls: its self is the Interpreter, made of both)
_EXPRESSIONS: dict[type, Callable[[Any, Any, Frame], Sym]] = {
    cst.Name: Expressions._eval_name,
    cst.SimpleString: Expressions._eval_literal,
    cst.Integer: Expressions._eval_literal,
    cst.Float: Expressions._eval_literal,
    cst.Imaginary: Expressions._eval_literal,
    cst.ConcatenatedString: Expressions._eval_concatenated,
    cst.FormattedString: Expressions._fstring,
    cst.UnaryOperation: Expressions._eval_unary,
    cst.BinaryOperation: Expressions._eval_binary,
    cst.BooleanOperation: Expressions._eval_boolean,
    cst.IfExp: Expressions._eval_ifexp,
    cst.Comparison: Expressions._compare,
    cst.Attribute: Expressions._eval_attribute,
    cst.Subscript: Expressions._subscript,
    cst.Call: Calls.eval_call,
    cst.List: Expressions._eval_list,
    cst.Tuple: Expressions._eval_tuple,
    cst.Dict: Expressions._eval_dict,
    cst.NamedExpr: Expressions._eval_walrus,
    cst.Await: Expressions._eval_await,
    # comprehensions and lambdas: not evaluated (UNKNOWN, like any node not listed)
}
