"""Symbolic values the interpreter tracks while it reads a script (never runs it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import npu_audit.syntax as cst
from npu_audit.extract.model import UNRESOLVED, Entry, SessionConfig, Value


class Sym:
    """Base of everything the interpreter can bind to a name."""


@dataclass(eq=False)
class Const(Sym):
    """A value known statically."""

    value: Any
    origin: str = "literal"  # literal | resolved | flag-default
    flag: Optional[str] = None
    node: Optional[cst.CSTNode] = None  # the literal that produced it, when it is a single literal
    path: Optional[str] = None  # module of that literal


@dataclass(eq=False)
class Unknown(Sym):
    """A value npu-audit does not know. ``name`` is set for plain names (parameters, unbound globals)."""

    name: Optional[str] = None
    why: str = ""  # "imported", "parameter", "environment variable", ...
    owner: Optional[InstanceRef] = None  # for `obj.attr` never assigned: the object and the attribute
    attr: Optional[str] = None
    source: Optional[str] = None  # a name imported from outside the tree: its dotted path ("pkg.mod.Name")


UNKNOWN = Unknown()

#: where the name of a call of an adapter API was bound (``Calls.callee_origin``): an import from the adapter's
#: packages, somewhere else (another package, the script's own code), or nowhere npu-audit can see
ADAPTER, ELSEWHERE, UNSEEN = "adapter", "elsewhere", "unseen"


@dataclass(eq=False)
class ConfigRef(Sym):
    """A ConfigProto, or an attribute path inside it (graph_options.rewrite_options...)."""

    config: SessionConfig
    path: tuple[str, ...] = ()


@dataclass(eq=False)
class EntryRef(Sym):
    """A custom optimizer entry, its parameter_map, or one parameter_map item."""

    entry: Entry
    part: str = ""  # "" | "parameter_map" | "item"
    key: Optional[str] = None
    key_node: Optional[cst.CSTNode] = None


@dataclass(eq=False)
class RunConfigRef(Sym):
    """An NPURunConfig, made in the script or returned by an NPU helper."""

    config: SessionConfig


@dataclass(eq=False)
class ConfigObjectRef(Sym):
    """DumpConfig(...), ProfilingConfig(...), ... with the arguments it was given."""

    cls: str
    args: dict[str, tuple[Sym, cst.CSTNode, cst.CSTNode]]  # param -> (value, value node, arg node)
    node: cst.Call
    path: str
    branches: tuple = ()
    calls: tuple = ()
    expanded: bool = False  # passed to an NPURunConfig the interpreter read (its hazards are the entry's)
    # ``name = DumpConfig(...)`` inside a function: the name, and whether the object may go anywhere (False:
    # every use of the name in the function rebinds it or writes into it, so nothing ever reads the object)
    bound_to: Optional[str] = None
    handed_on: Optional[bool] = None


@dataclass(eq=False)
class SessionRef(Sym):
    """A TensorFlow session, with the config it was opened with (None: opened without one)."""

    config: Optional[Sym]


@dataclass(eq=False)
class FlagsRef(Sym):
    """absl/tf FLAGS object."""


@dataclass(eq=False)
class ArgsRef(Sym):
    """Result of argparse's parse_args()."""


@dataclass(eq=False)
class ParserRef(Sym):
    """An argparse.ArgumentParser."""


@dataclass(eq=False)
class ListRef(Sym):
    """A list built in the script (``.append`` is followed)."""

    items: list[Sym] = field(default_factory=list)
    exact: bool = True  # False once something we could not follow touched it


@dataclass(eq=False)
class FunctionRef(Sym):
    """A function or method defined in the analysed tree, bound to an instance when looked up on one."""

    node: cst.FunctionDef
    module: Any  # ModuleState
    owner: Optional[ClassRef] = None
    bound_self: Optional[Sym] = None
    qualname: str = ""


@dataclass(eq=False)
class ClassRef(Sym):
    """A class defined in the analysed tree, with the attributes its body binds."""

    node: cst.ClassDef
    module: Any
    attrs: dict[str, Sym] = field(default_factory=dict)
    qualname: str = ""
    bases: list = field(default_factory=list)  # ClassRef of the base classes npu-audit could follow

    def lookup(self, name: str, _seen=None) -> Optional[Sym]:
        """An attribute of the class or, depth first, of its bases (enough for single inheritance)."""
        if name in self.attrs:
            return self.attrs[name]
        seen = _seen or set()
        seen.add(id(self))
        for base in self.bases:
            if id(base) not in seen:
                found = base.lookup(name, seen)
                if found is not None:
                    return found
        return None


@dataclass(eq=False)
class SuperRef(Sym):
    """``super()`` inside a method: attribute lookups start at the bases of ``cls``."""

    instance: Sym
    cls: ClassRef


@dataclass(eq=False)
class InstanceRef(Sym):
    """An instance of a class of the analysed tree, with the attributes assigned to it (``self.sess = ...``)."""

    cls: ClassRef
    attrs: dict[str, Sym] = field(default_factory=dict)


@dataclass(eq=False)
class ModuleRef(Sym):
    """An imported module: a module of the analysed tree (loaded lazily) or an external one."""

    name: str  # dotted name as imported ("tensorflow", "npu_bridge.npu_init", ".utils")
    state: Any = None  # ModuleState once loaded
    file: Optional[str] = None  # path if it is in the analysed tree


def to_python(sym: Sym) -> Any:
    """Plain Python value of a symbol, or UNRESOLVED."""
    if isinstance(sym, Const):
        return sym.value
    if isinstance(sym, ListRef) and sym.exact:
        out = []
        for item in sym.items:
            v = to_python(item)
            if v is UNRESOLVED:
                return UNRESOLVED
            out.append(v)
        return out
    return UNRESOLVED


def origin_of(*syms: Sym) -> str:
    """Combined origin: flag-default dominates, then resolved, then literal."""
    origins = set()
    for s in syms:
        if isinstance(s, Const):
            origins.add(s.origin)
        elif isinstance(s, ListRef):
            origins.add("resolved")
            origins.update(origin_of(i) for i in s.items)
    if "flag-default" in origins:
        return "flag-default"
    if "resolved" in origins:
        return "resolved"
    return "literal"




def make_value(sym: Sym, text: str) -> Value:
    python = to_python(sym)
    if python is UNRESOLVED:
        return Value(python=UNRESOLVED, origin="unresolved", text=text)
    if isinstance(sym, Const):
        return Value(
            python=python,
            origin=sym.origin,
            text=text,
            flag=sym.flag,
            source_node=sym.node,
            source_path=sym.path,
        )
    return Value(python=python, origin=origin_of(sym), text=text)
