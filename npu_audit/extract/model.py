"""What extraction produces: session configs, their optimizer entries, every option write, and the
effective option set of each entry.

A write remembers where it is (path, libcst nodes, and once computed, 1-based ranges), how its value
was obtained (origin), and under which branches it happens. The effective set follows "last write
wins" per entry while keeping every write, and tells "always" from "conditional".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from npu_audit.extract.ranges import Range

#: SessionConfig.kind and Entry.kind of the TF2 option object (npu_device.global_options())
TF2_OPTIONS_KIND = "global_options"

if TYPE_CHECKING:  # only in annotations: the checks and a warm run read the model without libcst
    import npu_audit.syntax as cst


class _Unresolved:
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNRESOLVED"

    def __bool__(self) -> bool:
        return False


UNRESOLVED: Any = _Unresolved()
ORIGINS = ("literal", "resolved", "flag-default", "unresolved")



#: The kind of the config, and of its one entry, that stands for a config object (DumpConfig(...) & co.) no
#: NPURunConfig the interpreter read takes (npu_audit.extract.runconfig.lone_object_config)
CONFIG_OBJECT = "config-object"

@dataclass(frozen=True)
class Value:
    """A value as the interpreter obtained it (or UNRESOLVED): how it was found, and where its literal is written
    for fixes."""

    python: Any  # str, bytes, int, float, bool, None, list, dict, tuple ... or UNRESOLVED
    origin: str  # literal | resolved | flag-default | unresolved
    text: str = ""  # source text of the expression as written
    flag: Optional[str] = None  # flag/argument name for flag-default values
    # Where the literal that produced the value is written (may be in another module, e.g. a
    # constant); None when the value was computed. Fixes edit there or not at all.
    source_node: Optional[cst.CSTNode] = None
    source_path: Optional[str] = None

    @property
    def resolved(self) -> bool:
        return self.python is not UNRESOLVED

    @property
    def type_name(self) -> Optional[str]:
        if not self.resolved:
            return None
        return type(self.python).__name__

    def decoded(self) -> Any:
        """The value as the adapter compares it: bytes decoded as UTF-8, other values as is."""
        if isinstance(self.python, bytes):
            try:
                return self.python.decode("utf-8")
            except UnicodeDecodeError:
                return self.python.decode("latin-1")
        return self.python


class BranchStep:
    """One enclosing control-flow arm of a write.

    ``description`` (e.g. "if FLAGS.use_dump" / "else of if FLAGS.use_dump") may be given as a function
    that returns it: the interpreter enters thousands of arms per file and a message shows few of them,
    and writing a test's source back out is a code-generation pass. Two steps are equal when they are
    the same arm of the same statement (the description follows from that)."""

    __slots__ = ("node_id", "arm", "kind", "has_else", "_description", "node", "place")

    def __init__(self, node_id: int, arm: int, kind: str, has_else: bool,
                 description: Union[str, Callable[[], str]], node: Any = None):
        self.node_id = node_id
        self.arm = arm  # 0 = body / if-branch, 1 = else-branch (or next elif), ...
        self.kind = kind  # if | loop | try | except | with-else
        self.has_else = has_else  # for "if": whether the statement has an else arm
        self._description = description
        self.node = node  # the test expression (for positions)
        self.place = (node_id, arm)  # (the part of a binding's branch path it stands for)

    @property
    def description(self) -> str:
        text = self._description
        if not isinstance(text, str):
            text = self._description = text()
        return text

    def _key(self) -> tuple:
        return (self.node_id, self.arm, self.kind, self.has_else, id(self.node))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BranchStep) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"BranchStep({self.kind} arm {self.arm}: {self.description!r})"

    def __reduce__(self):  # (a description given as a function is computed before it is pickled)
        return (BranchStep, (self.node_id, self.arm, self.kind, self.has_else, self.description, self.node))


@dataclass(frozen=True)
class CallSite:
    """A helper call made in ``path`` that a write, an entry, a hazard or a code fact happened inside: a finding about
    something in another module's helper can be shown at it."""

    path: str
    node: cst.CSTNode  # the Call node
    callee: str


@dataclass
class OptionWrite:
    """One option write the interpreter saw: key, field, value, where, under which branches."""

    key: str
    field: Optional[str]  # b | i | s | f | list | None (unknown) ; for NPURunConfig: the field the estimator uses
    value: Value
    path: str
    stmt_node: Optional[cst.CSTNode]  # the whole assignment / call statement
    target_node: Optional[cst.CSTNode]  # what to point at: parameter_map[...].x target, or the keyword arg
    key_node: Optional[cst.CSTNode]  # the key string literal
    value_node: Optional[cst.CSTNode]
    field_node: Optional[cst.CSTNode] = None
    branches: tuple[BranchStep, ...] = ()
    calls: tuple[CallSite, ...] = ()  # helper calls this write happened inside (outermost first)
    via: str = "parameter_map"  # parameter_map | NPURunConfig | <ConfigObject>.<param> | implicit
    kwarg: Optional[str] = None  # NPURunConfig keyword or config-object parameter that produced it
    implicit: bool = False  # written by NPURunConfig/NPUEstimator by itself (user did not write it)
    option_path: Optional[str] = None  # via global_options: the attribute path ("dump_config.dump_path")
    # flags whose default the `if` guards on this write's path rule out (`if FLAGS.mode == "x":` excludes
    # a default "train"): a value another write takes from such a flag's default is not its value here
    excluded_flags: frozenset[str] = frozenset()
    index: int = 0  # order of the write within its entry
    range: Optional[Range] = None
    key_range: Optional[Range] = None
    value_range: Optional[Range] = None
    field_range: Optional[Range] = None

    @property
    def conditional(self) -> bool:
        return bool(self.branches)

    @property
    def certainty(self) -> str:
        return "conditional" if self.branches else "always"

    def branch_text(self) -> Optional[str]:
        if not self.branches:
            return None
        return "; ".join(step.description for step in self.branches)



@dataclass
class EffectiveOption:
    """One key of an entry's effective option set: its writes, and those whose value can be the final one."""

    key: str
    writes: list[OptionWrite]  # every write of this key to the entry, in order
    candidates: list[OptionWrite]  # writes whose value can be the final one
    definitely_set: bool  # set on every path (else it may be absent)

    @property
    def last(self) -> OptionWrite:
        return self.candidates[-1]

    @property
    def certainty(self) -> str:
        return "always" if self.definitely_set and len(self.candidates) == 1 else "conditional"



@dataclass
class Entry:
    """One custom optimizer entry (``custom_optimizers.add()``) or the entry NPUEstimator appends."""

    kind: str  # custom_optimizer | npurunconfig | helper-default | config-object | orphan
    path: str
    node: Optional[cst.CSTNode]  # the add() call / NPURunConfig call / helper call
    name: Optional[Value] = None  # value written to .name (None: never named)
    name_node: Optional[cst.CSTNode] = None
    writes: list[OptionWrite] = field(default_factory=list)
    name_writes: list[OptionWrite] = field(default_factory=list)  # every `.name = ...`, with its branches
    hazards: list[Hazard] = field(default_factory=list)
    calls: tuple[CallSite, ...] = ()
    range: Optional[Range] = None
    object_class: Optional[str] = None  # config-object: the class (DumpConfig, ...) whose writes these are

    @property
    def is_npu(self) -> Optional[bool]:
        """True when named exactly "NpuOptimizer" on every path, False when never, None when unknown
        (unresolved, or the name depends on a branch)."""
        if self.kind in ("npurunconfig", "helper-default", "global_options", CONFIG_OBJECT):
            return True
        if not self.name_writes:
            if self.name is not None:  # named by a helper
                return self.name.resolved and self.name.decoded() == "NpuOptimizer" or None
            return False if self.kind == "custom_optimizer" else None
        eff = _effective("name", self.name_writes)
        if any(not w.value.resolved for w in eff.candidates):
            return None
        names = {w.value.decoded() for w in eff.candidates}
        if not eff.definitely_set:
            names.add(None)
        if names == {"NpuOptimizer"}:
            return True
        if "NpuOptimizer" not in names:
            return False
        return None

    def name_candidates(self) -> list[OptionWrite]:
        return _effective("name", self.name_writes).candidates if self.name_writes else []

    def add_write(self, write: OptionWrite) -> None:
        write.index = len(self.writes)
        self.writes.append(write)
        self._effective_cache: Optional[tuple[int, dict[str, EffectiveOption]]] = None

    def effective(self) -> dict[str, EffectiveOption]:
        """The effective option set (computed once per set of writes)."""
        cached = getattr(self, "_effective_cache", None)
        if cached is not None and cached[0] == len(self.writes):
            return cached[1]
        by_key: dict[str, list[OptionWrite]] = {}
        for w in self.writes:
            by_key.setdefault(w.key, []).append(w)
        result = {key: _effective(key, writes) for key, writes in by_key.items()}
        self._effective_cache = (len(self.writes), result)
        return result


@dataclass
class Hazard:
    """A known adapter pitfall triggered by the way a script calls it (see npurunconfig.toml)."""

    id: str
    message: str
    path: str
    node: Optional[cst.CSTNode]
    option: Optional[str] = None
    severity: str = "error"
    branches: tuple[BranchStep, ...] = ()
    calls: tuple[CallSite, ...] = ()
    range: Optional[Range] = None
    hint: Optional[str] = None  # what to write instead


@dataclass
class CodeFact:
    """Code around the config that options must agree with (set_iteration_per_loop, NPUOptimizer)."""

    # set_iteration_per_loop | npu_optimizer_tailing | session | helper | foreign-session (a session config
    # given as config= to a class named like a session but imported from another package: node is the
    # config= argument, value the config expression (unresolved), detail the callee, package its package) |
    # session-without-config (a TensorFlow session opened with no config: node the call, detail the callee) |
    # config-object-hazard (what building a config object no NPURunConfig takes raises: detail the message)
    kind: str
    value: Optional[Value]
    path: str
    node: Optional[cst.CSTNode]
    detail: str = ""
    branches: tuple[BranchStep, ...] = ()
    calls: tuple[CallSite, ...] = ()
    range: Optional[Range] = None
    package: Optional[str] = None
    hint: Optional[str] = None  # config-object-hazard: what to write instead
    option: Optional[str] = None  # config-object-hazard: the keyword, as Class.keyword


@dataclass
class RewriteWrite:
    """An assignment to a field of a ConfigProto's rewrite_options (remapping, memory_optimization...), by the
    script or made by an NPU helper itself."""

    name: str  # remapping | memory_optimization | ...
    value_text: str
    path: str
    node: Optional[cst.CSTNode]
    implicit: bool = False
    range: Optional[Range] = None


@dataclass
class DeviceOpen:
    """``npu_device.open()``: the TF2 adapter reads global_options() here, once per process."""

    path: str
    node: Optional[cst.CSTNode]
    branches: tuple[BranchStep, ...] = ()
    calls: tuple[CallSite, ...] = ()
    late: list[tuple[OptionWrite, str]] = field(default_factory=list)  # writes made after it, with certainty
    range: Optional[Range] = None


@dataclass
class SessionConfig:
    """One session config a script builds (a ConfigProto, an NPURunConfig or the TF2 option object), with its
    optimizer entries and the code around it that the checks need."""

    # ConfigProto | NPURunConfig | global_options (TF2) | config-object (DumpConfig & co. that no NPURunConfig
    # npu-audit read takes) | unknown
    kind: str
    path: str
    node: Optional[cst.CSTNode]
    variable: Optional[str] = None
    entries: list[Entry] = field(default_factory=list)
    rewrite: list[RewriteWrite] = field(default_factory=list)
    facts: list[CodeFact] = field(default_factory=list)
    calls: tuple[CallSite, ...] = ()
    wraps: list[SessionConfig] = field(default_factory=list)  # NPURunConfig(session_config=...)
    helpers: list[str] = field(default_factory=list)  # npu_config_proto & co. applied to it
    opens: list[DeviceOpen] = field(default_factory=list)  # global_options: the npu_device.open() calls
    # a ConfigProto bound to a plain name where it is made (``bound_to``): ``handed_on`` is False when every
    # use of that name only writes into it (it reaches no session, estimator, helper, return value, attribute
    # or global), True when some use may hand it on, None when not known (not bound to a plain name)
    bound_to: Optional[str] = None
    handed_on: Optional[bool] = None
    # a TF1 session seen opened with it (tf.Session(config=...) & co., set_keras_session_npu_config(config=...)):
    # it runs as it is there, its own entries deciding the scenario
    opened: bool = False
    range: Optional[Range] = None

    def all_entries(self) -> list[Entry]:
        """Entries in the order the adapter processes them (wrapped session_config first)."""
        out: list[Entry] = []
        for inner in self.wraps:
            out.extend(inner.all_entries())
        out.extend(self.entries)
        return out

    def npu_entries(self) -> list[Entry]:
        return [e for e in self.all_entries() if e.is_npu is not False]



def _effective(key: str, writes: list[OptionWrite]) -> EffectiveOption:
    """Last write wins; conditional writes after the last certain one stay candidates.

    Writes are grouped by the top-level statement they sit in (no branch: each write alone). Walking
    back from the end, the first group that sets the key on every path ends the search: writes before
    it are dead (still listed in ``writes``).
    """
    groups: list[list[OptionWrite]] = []
    for w in writes:
        if w.branches and groups and groups[-1][0].branches and groups[-1][0].branches[0].node_id == w.branches[0].node_id:
            groups[-1].append(w)
        else:
            groups.append([w])
    for g in range(len(groups) - 1, -1, -1):
        if _definitely_set([w.branches for w in groups[g]], 0):
            candidates = [w for group in groups[g:] for w in group]
            if len(groups[g]) == 1 and not groups[g][0].branches:
                candidates = [groups[g][0]] + [w for group in groups[g + 1 :] for w in group]
            return EffectiveOption(key=key, writes=writes, candidates=candidates, definitely_set=True)
    return EffectiveOption(key=key, writes=writes, candidates=list(writes), definitely_set=False)


def _definitely_set(paths: list[tuple[BranchStep, ...]], depth: int) -> bool:
    """Whether writes with these branch paths (sharing their first ``depth`` steps) cover every path."""
    if any(len(p) == depth for p in paths):
        return True
    groups: dict[int, dict[int, list]] = {}
    steps: dict[int, BranchStep] = {}
    for p in paths:
        step = p[depth]
        steps[step.node_id] = step
        groups.setdefault(step.node_id, {}).setdefault(step.arm, []).append(p)
    for node_id, arms in groups.items():
        step = steps[node_id]
        if step.kind != "if" or not step.has_else:
            continue
        if set(arms) >= {0, 1} and all(_definitely_set(arms[a], depth + 1) for a in (0, 1)):
            return True
    return False
