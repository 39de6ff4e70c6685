"""What the parts of the interpreter share: the frame a read happens in, the bindings of its names, the
limits of a read, and :class:`InterpreterBase`, the state and the methods the parts call on one another.

The interpreter (:class:`npu_audit.extract.interpreter.Interpreter`) is one object made of parts, one
module each: the reading of modules and names (``interpreter``), statements (``statements``),
expressions, attributes and assignment (``expressions``) and calls (``calls``). A part calls another's
methods on ``self``; :class:`InterpreterBase` declares them for the type checker only, so a call costs
what a method call on one class costs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

import npu_audit.extract.api as api
import npu_audit.syntax as cst
from npu_audit.extract.model import (
    BranchStep,
    CallSite,
    CodeFact,
    SessionConfig,
)
from npu_audit.extract.project import ModuleState, Project
from npu_audit.extract.recorder import PositionRecorder
from npu_audit.extract.symbols import (
    ConfigObjectRef,
    FunctionRef,
    InstanceRef,
    ModuleRef,
    Sym,
    Unknown,
)
from npu_audit.extract.tf2 import Tf2Extractor
from npu_audit.knowledge.model import KnowledgeBase

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


def _short(module: ModuleState, node, limit: int = 60) -> str:
    """The source of ``node`` (of ``module``) on one line, cut to ``limit`` characters."""
    text = " ".join(module.code(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class InterpreterBase:
    """The state of an :class:`~npu_audit.extract.interpreter.Interpreter` (set in its ``__init__``) and,
    for the type checker, the methods one part of it calls on another."""

    project: Project
    kb: KnowledgeBase
    configs: list[SessionConfig]
    loose_facts: list[CodeFact]
    config_objects: list[ConfigObjectRef]
    unseen_calls: list[tuple[str, Any, str]]
    api: api.Registry
    tf2: Tf2Extractor
    _active: list[int]
    _inlined: set[int]
    functions_read: set[int]
    positions: PositionRecorder
    _executed: set[int]
    _executing: set[int]
    _running_at: dict[int, int]
    _kept: dict[tuple[int, str], bool]
    _guards: dict[tuple[int, int], frozenset[str]]
    _set_in: dict[InstanceRef, dict[str, object]]
    _linked: dict[InstanceRef, dict[str, Sym]]
    _setters: dict[int, dict[str, frozenset[str]]]

    if TYPE_CHECKING:
        def _dotted(self, node) -> Optional[str]: ...
        def _eval(self, node, frame: Frame) -> Sym: ...
        def _read_definitions(self, state: ModuleState, name: str) -> None: ...
        def _suite(self, suite) -> list: ...
        def assign(self, target, value: Sym, frame: Frame, stmt=None, value_node=None) -> None: ...
        def bind(self, name: str, sym: Sym, frame: Frame) -> None: ...
        def code(self, node, frame: Frame) -> str: ...
        def eval(self, node, frame: Frame) -> Sym: ...
        def excluded_flags(self, frame: Frame) -> frozenset[str]: ...
        def exec_block(self, body, frame: Frame) -> None: ...
        def force(self, sym: Sym, frame: Frame) -> Sym: ...
        def get_attr(self, base: Sym, attr: str, node: cst.Attribute, frame: Frame) -> Sym: ...
        def load_module(self, ref: ModuleRef, importer: ModuleState, name: Optional[str] = None) -> Optional[ModuleState]: ...
        def lookup(self, name: str, frame: Frame) -> Sym: ...
        def module_attr(self, ref: ModuleRef, name: str, frame: Frame) -> Sym: ...
        def narrow(self, value: Sym, frame: Frame) -> Sym: ...
        def new_config(self, kind: str, node, frame: Frame, variable: Optional[str] = None) -> SessionConfig: ...
        def short(self, node, frame: Frame, limit: int = 60) -> str: ...
