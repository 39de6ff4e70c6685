"""The TF1 session config as the script builds it: a ``ConfigProto``, its rewrite options, its custom
optimizer entries and their ``parameter_map``.

The interpreter hands this module what a script does to such an object: an attribute read
(:func:`get_attr`: ``config.graph_options`` ..., ``op.parameter_map``, ``parameter_map["key"]`` is read
by the interpreter's subscript), an attribute write (:func:`assign`: ``op.name = ...``,
``parameter_map["key"].s = ...``, ``rewrite_options.remapping = ...``), a method call
(:func:`method_call`: ``custom_optimizers.add()``), and an object it never saw being made but that is
used like one (:func:`make_implicit`: a parameter ``config`` whose ``graph_options`` are read). Each write
becomes an :class:`~npu_audit.extract.model.OptionWrite` with the branches and calls it sits under.
"""

from __future__ import annotations

from typing import Any, Optional, Protocol

import npu_audit.syntax as cst
from npu_audit.extract.model import (
    UNRESOLVED,
    BranchStep,
    CallSite,
    Entry,
    OptionWrite,
    RewriteWrite,
    SessionConfig,
)
from npu_audit.extract.project import ModuleState
from npu_audit.extract.symbols import UNKNOWN, ConfigRef, Const, EntryRef, Sym, make_value, to_python

# attribute -> the path of the ConfigProto it is read from, for objects used like a config part
_IMPLICIT_PATHS = {"graph_options": (), "rewrite_options": ("graph_options",),
                   "custom_optimizers": ("graph_options", "rewrite_options")}
#: the attributes that make an object npu-audit could not follow a config part or an entry
IMPLICIT_ATTRS = frozenset(_IMPLICIT_PATHS) | {"parameter_map"}


class Frame(Protocol):
    """What this module reads of the interpreter's frame (``extract.interpreter.Frame``)."""

    module: ModuleState
    branches: list[BranchStep]
    calls: tuple[CallSite, ...]


class Interpreter(Protocol):
    """What this module asks of the interpreter (``extract.interpreter.Interpreter``)."""

    def force(self, sym: Sym, frame: Any) -> Sym: ...
    def code(self, node: Any, frame: Any) -> str: ...
    def short(self, node: Any, frame: Any, limit: int = 60) -> str: ...
    def evaluate(self, node: Any, frame: Any) -> Sym: ...
    def new_config(self, kind: str, node: Any, frame: Any, variable: Optional[str] = None) -> SessionConfig: ...
    def narrow(self, value: Sym, frame: Any) -> Sym: ...
    def excluded_flags(self, frame: Any) -> frozenset[str]: ...


def get_attr(base: Sym, attr: str) -> Optional[Sym]:
    """``base.attr`` for a config or an entry (None when ``base`` is neither)."""
    if isinstance(base, ConfigRef):
        return ConfigRef(config=base.config, path=base.path + (attr,))
    if isinstance(base, EntryRef):
        if base.part == "" and attr == "parameter_map":
            return EntryRef(entry=base.entry, part="parameter_map")
        if base.part == "" and attr == "name" and base.entry.name is not None and base.entry.name.resolved:
            return Const(base.entry.name.python, origin="resolved")
        return UNKNOWN
    return None


def item(base: EntryRef, index: Sym, index_node: cst.CSTNode) -> EntryRef:
    """``parameter_map[index]``: one item, keyed by the decoded key (None when it is not known)."""
    key = to_python(index)
    if isinstance(key, bytes):
        key = key.decode("utf-8", "replace")
    if not isinstance(key, str):
        return EntryRef(entry=base.entry, part="item", key=None, key_node=index_node)
    return EntryRef(entry=base.entry, part="item", key=key, key_node=index_node)


def method_call(base: Sym, method: str, call: cst.Call, frame: Frame) -> Optional[Sym]:
    """``custom_optimizers.add()``: a new entry (None for any other call)."""
    if isinstance(base, ConfigRef) and method == "add" and base.path[-1:] == ("custom_optimizers",):
        entry = Entry(kind="custom_optimizer", path=frame.module.display, node=call, calls=frame.calls)
        base.config.entries.append(entry)
        return EntryRef(entry=entry)
    return None


def make_implicit(interp: Interpreter, attr: str, node, frame: Frame, variable: Optional[str]):
    """(object, ``object.attr``) for an object never seen being made that is used like a config part
    (``graph_options``, ``rewrite_options``, ``custom_optimizers``) or an entry (``parameter_map``), or None."""
    if attr in _IMPLICIT_PATHS:
        config = interp.new_config("unknown", node, frame, variable=variable)
        path = _IMPLICIT_PATHS[attr]
        obj: Sym = ConfigRef(config=config, path=path)
        return obj, ConfigRef(config=config, path=path + (attr,))
    if attr == "parameter_map":
        config = interp.new_config("unknown", node, frame, variable=None)
        entry = Entry(kind="orphan", path=frame.module.display, node=node, calls=frame.calls)
        config.entries.append(entry)
        obj = EntryRef(entry=entry)
        return obj, EntryRef(entry=entry, part="parameter_map")
    return None


def assign(interp: Interpreter, base: Sym, attr: str, value: Sym, frame: Frame, stmt, target: cst.Attribute,
           value_node) -> bool:
    """``base.attr = value`` for an entry, a parameter_map item or rewrite options; False when ``base``
    is none of them."""
    if isinstance(base, EntryRef) and base.part == "item":
        record_write(interp, base, attr, value, frame, stmt, target, value_node)
    elif isinstance(base, EntryRef) and base.part == "" and attr == "name":
        value = interp.force(value, frame)
        entry = base.entry
        entry.name = make_value(value, interp.code(value_node, frame))
        entry.name_node = value_node
        entry.name_writes.append(OptionWrite(
            key="name", field=None, value=entry.name, path=frame.module.display, stmt_node=stmt,
            target_node=target, key_node=None, value_node=value_node, branches=tuple(frame.branches),
            calls=frame.calls, index=len(entry.name_writes)))
    elif isinstance(base, ConfigRef) and base.path[-1:] == ("rewrite_options",):
        base.config.rewrite.append(
            RewriteWrite(name=attr, value_text=interp.code(value_node, frame), path=frame.module.display, node=stmt)
        )
    else:
        return False
    return True


def record_write(interp: Interpreter, item: EntryRef, field_name: str, value: Sym, frame: Frame, stmt, target,
                 value_node) -> None:
    """``parameter_map["key"].<field> = value``."""
    if item.key is None:
        return
    value = interp.narrow(interp.force(value, frame), frame)
    if to_python(value) is UNRESOLVED and _record_alternatives(interp, item, field_name, frame, stmt, target, value_node):
        return
    _record_one(interp, item, field_name, value, frame, stmt, target, value_node, tuple(frame.branches))


def _record_alternatives(interp: Interpreter, item, field_name, frame, stmt, target, value_node) -> bool:
    """``x if cond else y`` (possibly inside as_bytes(...)/.encode()) whose condition the run decides:
    record one conditional write per arm, so both values are checked."""
    ifexp, node = None, value_node
    while node is not None and ifexp is None:
        if isinstance(node, cst.IfExp):
            ifexp = node
        elif isinstance(node, cst.Call) and len(node.args) >= 1 and not isinstance(node.func, cst.Attribute):
            node = node.args[0].value
        elif (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "encode"):
            node = node.func.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and len(node.args) >= 1:
            node = node.args[0].value
        else:
            node = None
    if ifexp is None:
        return False
    test = interp.short(ifexp.test, frame)
    for arm, branch_node, text in ((0, ifexp.body, f"if {test}"), (1, ifexp.orelse, f"not ({test})")):
        expr = value_node.deep_replace(ifexp, branch_node) if value_node is not ifexp else branch_node
        sym = interp.force(interp.evaluate(expr, frame), frame)
        if to_python(sym) is UNRESOLVED:
            return False
        step = BranchStep(node_id=id(ifexp), arm=arm, kind="if", has_else=True, description=text, node=ifexp.test)
        _record_one(interp, item, field_name, sym, frame, stmt, target, value_node, tuple(frame.branches) + (step,))
    return True


def _record_one(interp: Interpreter, item, field_name, value, frame, stmt, target, value_node, branches) -> None:
    item.entry.add_write(OptionWrite(
        key=item.key,
        field=field_name,
        value=make_value(value, interp.code(value_node, frame)),
        path=frame.module.display,
        stmt_node=stmt,
        target_node=target,
        key_node=item.key_node,
        value_node=value_node,
        field_node=target.attr,
        branches=branches,
        calls=frame.calls,
        via="parameter_map",
        excluded_flags=interp.excluded_flags(frame),
    ))
