"""The TensorFlow / NPU calls the interpreter knows, as a registry: names are data, behaviours are code.

Which calls are known, and where their arguments are, is ``rules/tf_api.toml`` (loaded with the
knowledge base: ``kb.tf_api``, a :class:`~npu_audit.knowledge.tf_api.ApiModel`). Each entry has a
``kind``; :data:`HANDLERS` maps every kind to one small function that turns the call into a symbolic
value (a new config, a session, a converted constant, a code fact ...). The interpreter asks
:func:`call` for every call that is not a function or class of the analysed tree; teaching it another
spelling of a known API is a change of the TOML only.

A handler receives the interpreter (for what only it can do: evaluate arguments, look names up, read a
function's body) and the frame of the call. It never runs the script's code.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Optional, Protocol

import npu_audit.syntax as cst
from npu_audit.extract.model import BranchStep, CallSite, CodeFact, Entry, RewriteWrite, SessionConfig, Value
from npu_audit.extract.project import ModuleState
from npu_audit.extract.runconfig import build_config_object, build_runconfig, config_object_names
from npu_audit.extract.symbols import (
    ELSEWHERE,
    UNKNOWN,
    UNSEEN,
    ConfigObjectRef,
    ConfigRef,
    Const,
    FunctionRef,
    ParserRef,
    RunConfigRef,
    SessionRef,
    SuperRef,
    Sym,
    Unknown,
    make_value,
    to_python,
)
from npu_audit.extract.values import convert, dict_call, path_join
from npu_audit.knowledge.tf_api import KINDS, ApiEntry, ApiModel


class Frame(Protocol):
    """What a handler reads of the interpreter's frame (``extract.interpreter.Frame``)."""

    module: ModuleState
    branches: list[BranchStep]
    calls: tuple[CallSite, ...]
    function: Optional[FunctionRef]


class Interpreter(Protocol):
    """What a handler asks of the interpreter (``extract.interpreter.Interpreter``); the interpreter
    imports this module, never the other way round."""

    kb: Any
    loose_facts: list[CodeFact]
    config_objects: list[ConfigObjectRef]
    unseen_calls: list[tuple[str, Any, str]]

    def arguments(self, call: cst.Call, frame: Any, force: bool = True) -> tuple[list, dict]: ...
    def new_config(self, kind: str, node: Any, frame: Any, variable: Optional[str] = None) -> SessionConfig: ...
    def code(self, node: Any, frame: Any) -> str: ...
    def short(self, node: Any, frame: Any, limit: int = 60) -> str: ...
    def attach_fact(self, sess: Optional[Sym], fact: CodeFact) -> None: ...
    def lookup(self, name: str, frame: Any) -> Sym: ...
    def import_root(self, func: Any, frame: Any) -> Optional[str]: ...
    def callee_origin(self, callee: Sym, func: Any, frame: Any, packages: Any = None) -> str: ...
    def narrow(self, value: Sym, frame: Any) -> Sym: ...
    def call_function(self, fn: FunctionRef, args: list[Sym], kwargs: dict[str, Sym], call: Any, frame: Any,
                      standalone: bool = False) -> Sym: ...


Handler = Callable[[Interpreter, ApiEntry, cst.Call, Frame, str], Sym]
Arg = tuple  # (value, value node, cst.Arg) as Interpreter.arguments gives them

# the kind of the config classes NPURunConfig takes (their names come from rules/npurunconfig.toml)
RUNCONFIG_OBJECT = ApiEntry(kind="runconfig-object", adapter=True)  # DumpConfig & co. (npurunconfig.toml)


class Registry:
    """The known calls of one knowledge base: the table of tf_api.toml plus NPURunConfig's config
    classes."""

    def __init__(self, kb: Any):
        table = getattr(kb, "tf_api", None)
        self.model: ApiModel = table if table is not None else packaged_model()
        self.objects = frozenset(config_object_names(kb)) if getattr(kb, "runconfig", None) is not None else frozenset()

    def lookup(self, last: str, full: str) -> Optional[ApiEntry]:
        found = self.model.by_full.get(full) or self.model.by_name.get(last)
        if found is None and last in self.objects:
            return RUNCONFIG_OBJECT
        if found is None and self.model.by_suffix and "." in full:
            found = self.model.by_suffix.get(".".join(full.split(".")[-2:]))
        return found


@lru_cache(maxsize=1)
def packaged_model() -> ApiModel:
    """The table of the rules/ folder npu-audit ships (for a knowledge base built without one)."""
    from npu_audit.knowledge import tf_api
    from npu_audit.knowledge.loader import rules_dir
    from npu_audit.toml_compat import toml_library

    return tf_api.from_data(toml_library().loads((rules_dir() / tf_api.FILE).read_text(encoding="utf-8")))


def call(interp: Interpreter, registry: Registry, last: str, full: str, node: cst.Call, frame: Frame,
         callee: Sym = UNKNOWN) -> Sym:
    """The value of a call to something the script did not define: a known API, or unknown (its
    arguments are still read: they may build configs). An API of the adapter is that API only when
    ``callee``'s name comes from the adapter (``interp.callee_origin``)."""
    entry = registry.lookup(last, full)
    if entry is None:
        return _other(interp, node, frame)
    if entry.adapter:
        origin = interp.callee_origin(callee, node.func, frame)
        if origin == ELSEWHERE:
            return _other(interp, node, frame)  # somebody else's DumpConfig, npu_config_proto, ...
        if origin == UNSEEN:
            interp.unseen_calls.append((frame.module.display, node, last))
    return HANDLERS[entry.kind](interp, entry, node, frame, last)


def argument(entry: ApiEntry, role: str, positional: list[Arg], keywords: dict[str, Arg],
             keyword_first: bool = True) -> Optional[Arg]:
    """The argument given for ``role`` (by keyword or by position, as the entry's ``params`` say)."""
    name = entry.param(role)
    index = entry.position(role)
    by_position = positional[index] if index is not None and len(positional) > index else None
    if keyword_first:
        return keywords.get(name, by_position)
    return by_position if by_position is not None else keywords.get(name)


# -- handlers ------------------------------------------------------------------------------------

def _other(interp: Interpreter, node: cst.Call, frame: Frame) -> Sym:
    interp.arguments(node, frame, force=False)
    return UNKNOWN


def _super(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    if frame.function is None or frame.function.owner is None:
        return _other(interp, node, frame)
    interp.arguments(node, frame, force=False)
    instance = frame.function.bound_self
    if instance is not None:
        return SuperRef(instance=instance, cls=frame.function.owner)
    return UNKNOWN


def _config_proto(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    interp.arguments(node, frame)
    return ConfigRef(config=interp.new_config("ConfigProto", node, frame))


def _npurunconfig(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    positional, keywords = interp.arguments(node, frame)
    keywords = {k: (interp.narrow(v[0], frame),) + tuple(v[1:]) for k, v in keywords.items()}
    config = interp.new_config("NPURunConfig", node, frame)
    build_runconfig(interp.kb, config, positional, keywords, node, frame)
    return RunConfigRef(config=config)


def _runconfig_object(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    positional, keywords = interp.arguments(node, frame)
    keywords = {k: (interp.narrow(v[0], frame),) + tuple(v[1:]) for k, v in keywords.items()}
    made = build_config_object(interp.kb, last, positional, keywords, node, frame)
    if isinstance(made, ConfigObjectRef):
        interp.config_objects.append(made)
    return made


def _convert(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    positional, keywords = interp.arguments(node, frame)
    assert entry.to is not None  # (checked by the loader)
    return convert(entry.to, [p[0] for p in positional], {k: v[0] for k, v in keywords.items()})


def _environment(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    interp.arguments(node, frame)
    return Unknown(why="environment variable")


def _path_join(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    positional, _ = interp.arguments(node, frame)
    return path_join([p[0] for p in positional])


def _dict(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    positional, keywords = interp.arguments(node, frame)
    return dict_call({k: v[0] for k, v in keywords.items()}, bool(positional))


def _define_flag(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    positional, keywords = interp.arguments(node, frame)
    name = argument(entry, "name", positional, keywords)
    default = argument(entry, "default", positional, keywords)
    if name is not None:
        flag = to_python(name[0])
        if isinstance(flag, str):
            frame.module.flags[flag] = (default[0] if default else Const(None), node)
    return UNKNOWN


def _argument_parser(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    interp.arguments(node, frame)
    return ParserRef()


def _session(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    positional, keywords = interp.arguments(node, frame)
    root = interp.import_root(node.func, frame) if entry.modules else None
    if root is not None and root not in entry.modules:
        # somebody else's class of the same name (requests.Session): no TensorFlow session is opened
        given = keywords.get(entry.param("config"))
        if given is not None and isinstance(given[0], (ConfigRef, RunConfigRef)):
            interp.loose_facts.append(CodeFact(
                kind="foreign-session", value=make_value(given[0], interp.short(given[1], frame)),
                path=frame.module.display, node=given[2], detail=interp.short(node.func, frame), package=root,
                branches=tuple(frame.branches), calls=frame.calls))
        return UNKNOWN
    config = argument(entry, "config", positional, keywords)
    if config is None or (isinstance(config[0], Const) and config[0].value is None):
        interp.loose_facts.append(CodeFact(kind="session-without-config", value=None, path=frame.module.display,
                                           node=node, detail=interp.short(node.func, frame),
                                           branches=tuple(frame.branches), calls=frame.calls))
    if config is not None and isinstance(config[0], ConfigRef):
        config[0].config.opened = True
    return SessionRef(config=config[0] if config else None)


def _npu_helper(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    positional, keywords = interp.arguments(node, frame)
    target = argument(entry, "config", positional, keywords)
    sym = target[0] if target else None
    if isinstance(sym, (ConfigRef, RunConfigRef)):
        config = sym.config
    elif sym is None and entry.creates:
        config = interp.new_config("ConfigProto", node, frame)
    else:
        return sym if sym is not None else UNKNOWN
    config.helpers.append(last)
    if config.kind != "NPURunConfig" and not any(e.is_npu for e in config.entries):
        config.entries.append(Entry(kind="helper-default", path=frame.module.display, node=node, calls=frame.calls,
                                    name=Value(python="NpuOptimizer", origin="resolved", text=last)))
    if config.kind != "NPURunConfig":
        for rewrite in ("remapping", "memory_optimization"):
            config.rewrite.append(RewriteWrite(name=rewrite, value_text="RewriterConfig.OFF", path=frame.module.display,
                                               node=node, implicit=True))
    if entry.returns == "session":
        config.opened = True
        return SessionRef(config=ConfigRef(config=config))
    return ConfigRef(config=config) if config.kind != "NPURunConfig" else RunConfigRef(config=config)


def _iterations_per_loop(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    positional, keywords = interp.arguments(node, frame)
    n = argument(entry, "value", positional, keywords, keyword_first=False)
    sess_arg = argument(entry, "session", positional, keywords, keyword_first=False)
    sess = sess_arg[0] if sess_arg else None
    value = make_value(n[0], interp.code(n[1], frame)) if n else None
    fact = CodeFact(kind="set_iteration_per_loop", value=value, path=frame.module.display, node=n[1] if n else node,
                    detail=interp.short(node, frame), branches=tuple(frame.branches), calls=frame.calls)
    interp.attach_fact(sess, fact)
    return UNKNOWN


def _npu_optimizer(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    positional, keywords = interp.arguments(node, frame)
    keyword = entry.roles.get("tailing")
    if keyword and keyword in keywords:
        value, vnode, _arg = keywords[keyword]
        interp.loose_facts.append(CodeFact(kind="npu_optimizer_tailing", value=make_value(value, interp.code(vnode, frame)),
                                           path=frame.module.display, node=vnode, detail=interp.short(node, frame),
                                           branches=tuple(frame.branches), calls=frame.calls))
    return UNKNOWN


def _app_run(interp: Interpreter, entry: ApiEntry, node: cst.Call, frame: Frame, last: str) -> Sym:
    positional, keywords = interp.arguments(node, frame)
    main = argument(entry, "main", positional, keywords)
    main_sym = main[0] if main else interp.lookup("main", frame)
    if isinstance(main_sym, FunctionRef):
        return interp.call_function(main_sym, [UNKNOWN], {}, node, frame)
    return UNKNOWN


HANDLERS: dict[str, Handler] = {
    "super": _super,
    "config-proto": _config_proto,
    "npurunconfig": _npurunconfig,
    "runconfig-object": _runconfig_object,
    "convert": _convert,
    "environment": _environment,
    "path-join": _path_join,
    "dict": _dict,
    "define-flag": _define_flag,
    "argument-parser": _argument_parser,
    "session": _session,
    "npu-helper": _npu_helper,
    "iterations-per-loop": _iterations_per_loop,
    "npu-optimizer": _npu_optimizer,
    "app-run": _app_run,
}
assert set(HANDLERS) == set(KINDS) | {"runconfig-object"}, "every kind of rules/tf_api.toml has a handler"
