"""TensorFlow 2: the option object ``npu_device.global_options()`` and the ``npu_device.open()`` calls.

The interpreter (``extract/interpreter.py``) hands three events to :class:`Tf2Extractor` and otherwise
knows nothing about TF2:

- a call it has no model for (``call``): ``global_options()``, under any spelling whose name comes from
  an import of npu_device, gives an :class:`OptionsRef` to the process-wide option object; ``open()`` is recorded as a
  :class:`~npu_audit.extract.model.DeviceOpen`; ``setattr(options, "name", value)`` is a write;
- an attribute read on an :class:`OptionsRef` (``get_attr``): a group, or an option, further down;
- an attribute assignment on an :class:`OptionsRef` (``assign``): a write of one option.

Which calls these are (module and function names) is data: the ``[api]`` table of
``rules/tf2_options.toml``. One process has one option object, so one interpreter run gives at most one
``global_options`` config, holding one entry whose writes are keyed by the TF1 parameter_map key each
option is passed on as (``dump_config.dump_path`` -> ``dump_path``), so relations of the knowledge base
see TF2 scripts exactly as TF1 ones; ``OptionWrite.option_path`` keeps the TF2 path. A write recorded
after an ``open()`` it certainly or possibly follows is attached to that open (``DeviceOpen.late``): the
adapter has read the options already, so the write has no effect.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import npu_audit.syntax as cst
from npu_audit.extract.model import TF2_OPTIONS_KIND, DeviceOpen, Entry, OptionWrite, SessionConfig
from npu_audit.extract.symbols import ADAPTER, UNKNOWN, Sym, make_value, to_python

KIND = TF2_OPTIONS_KIND  # SessionConfig.kind and Entry.kind of the TF2 option object
UNKNOWN_PREFIX = "global_options()."  # key of a write to a path the adapter does not define


@dataclass(eq=False)
class OptionsRef(Sym):
    """``npu_device.global_options()`` or one of its groups/options (``path`` below the object)."""

    config: SessionConfig
    path: tuple[str, ...] = ()

    def child(self, attr: str) -> OptionsRef:
        return OptionsRef(config=self.config, path=self.path + (attr,))


class Tf2Extractor:
    """The TF2 part of one interpreter run (one process): its option object and open() calls."""

    def __init__(self, interp):
        self.interp = interp
        table = getattr(interp.kb, "tf2", None)
        self.table = table
        self.modules = set(table.modules) if table is not None else set()
        self.option_object = set(table.option_object) if table is not None else set()
        self.open_names = set(table.open) if table is not None else set()
        self.config: Optional[SessionConfig] = None
        self.entry: Optional[Entry] = None
        self._opens: list[tuple[DeviceOpen, object]] = []  # with the scope that saw them

    # -- events from the interpreter ------------------------------------------------------------

    def call(self, last: str, full: str, call: cst.Call, frame, callee: Sym = UNKNOWN) -> Optional[Sym]:
        """The value of a call the interpreter has no model for, or None when it is not TF2's.

        ``global_options()`` and ``open()`` are the adapter's only when the name the call goes through
        comes from an import of one of the table's modules (``interp.callee_origin``: directly, or through a
        module of the tree that imports or star-imports it). Another package's ``global_options``, a
        parameter named ``npu_device``, or a name no import binds is not followed: the option object it
        gives is nobody's the knowledge base describes (docs/analysis.md, "Whose API a call is")."""
        if full == "setattr":
            return self._setattr(call, frame)
        if last not in self.option_object and (last not in self.open_names or "." not in full):
            return None  # (a bare open() is Python's own unless an import says otherwise)
        if self.interp.callee_origin(callee, call.func, frame, self.modules) != ADAPTER:
            return None
        if last in self.option_object:
            self.interp.arguments(call, frame)
            return OptionsRef(config=self._config(call, frame))
        if last in self.open_names:
            self.interp.arguments(call, frame)
            config = self._config(call, frame)
            op = DeviceOpen(path=frame.module.display, node=call, branches=tuple(frame.branches), calls=frame.calls)
            config.opens.append(op)
            self._opens.append((op, _scope(frame)))
            return UNKNOWN
        return None

    def assign(self, base: OptionsRef, attr: str, value: Sym, frame, stmt, target: cst.Attribute, value_node) -> None:
        self._write(base, attr, value, frame, stmt, target, target.attr, value_node)

    # -- internals ------------------------------------------------------------------------------

    def _config(self, node, frame) -> SessionConfig:
        if self.config is None:
            self.config = self.interp.new_config(KIND, node, frame)
            self.entry = Entry(kind=KIND, path=frame.module.display, node=node, calls=frame.calls)
            self.config.entries.append(self.entry)
        return self.config

    def _setattr(self, call: cst.Call, frame) -> Sym:
        positional, _keywords = self.interp.arguments(call, frame)
        if len(positional) == 3 and isinstance(positional[0][0], OptionsRef):
            name = to_python(positional[1][0])
            if isinstance(name, str):
                stmt = frame.stmts[-1] if frame.stmts else None
                # no key node: fixes that rename the attribute must not touch a string literal
                self._write(positional[0][0], name, positional[2][0], frame, stmt, call, None, positional[2][1])
        return UNKNOWN

    def _write(self, base: OptionsRef, attr: str, value: Sym, frame, stmt, target, key_node, value_node) -> None:
        path = ".".join(base.path + (attr,))
        if self.table is not None and self.table.is_group(path):
            return  # a whole group replaced by another object: not followed
        option = self.table.options.get(path) if self.table is not None else None
        if option is not None:
            key = option.key or path
        else:
            key = UNKNOWN_PREFIX + path
        value = self.interp.narrow(self.interp.force(value, frame), frame)
        self._config(target, frame)
        write = OptionWrite(
            key=key,
            field=None,
            value=make_value(value, _code(value_node, frame)),
            path=frame.module.display,
            stmt_node=stmt,
            target_node=target,
            key_node=key_node,
            value_node=value_node,
            branches=tuple(frame.branches),
            calls=frame.calls,
            via=KIND,
            option_path=path,
            excluded_flags=self.interp.excluded_flags(frame),
        )
        assert self.entry is not None  # (made by _config)
        self.entry.add_write(write)
        scope = _scope(frame)
        for op, op_scope in self._opens:
            if op_scope != scope and (op_scope is not None or scope is not None):
                continue  # an open in a helper nobody called, or a write there: their order is unknown
            order = _order(op.branches, write.branches)
            if order is not None:
                op.late.append((write, order))


def _scope(frame):
    """None for code the run really executes; for a helper read on its own (nobody called it), the
    function and helper calls being read: only writes in that same reading follow its open()."""
    if not frame.standalone:
        return None
    return (id(frame.function.node) if frame.function is not None else None, frame.calls)


def _order(before, after) -> Optional[str]:
    """Whether an open() under branches ``before`` runs before a later write under ``after``: "always"
    when every path to the write passes the open, "conditional" when some do, None when none can."""
    b = [(s.node_id, s.arm) for s in before]
    a = [(s.node_id, s.arm) for s in after]
    if a[: len(b)] == b:
        return "always"
    arms = dict(a)
    if any(node in arms and arms[node] != arm for node, arm in b):
        return None
    return "conditional"


def _code(node, frame) -> str:
    if node is None:
        return ""
    try:
        return frame.module.module.code_for_node(node).strip()
    except Exception:  # noqa: BLE001 - code generation of a parsed node should not fail
        return ""
