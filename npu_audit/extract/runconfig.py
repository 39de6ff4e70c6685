"""NPURunConfig(...) and its config objects, turned into the option writes NPUEstimator makes.

The mapping (keyword -> key, field, default, when it is written) is data in rules/npurunconfig.toml;
this module only applies it. Writes the user did not ask for (defaults NPUEstimator writes anyway)
are marked ``implicit``: they explain what runs, and checks never blame the user for them.
"""

from __future__ import annotations

from typing import Optional, Protocol

from npu_audit.extract.model import (
    UNRESOLVED,
    BranchStep,
    CallSite,
    Entry,
    Hazard,
    OptionWrite,
    SessionConfig,
    Value,
)
from npu_audit.extract.project import ModuleState
from npu_audit.extract.symbols import ConfigObjectRef, ConfigRef, Sym, make_value
from npu_audit.knowledge.model import KnowledgeBase
from npu_audit.text import did_you_mean


class Frame(Protocol):
    """What this module reads of the interpreter's frame (``extract.interpreter.Frame``): where the
    call is, on which branch, through which calls."""

    module: ModuleState
    branches: list[BranchStep]
    calls: tuple[CallSite, ...]


def config_object_names(kb):
    """Names of the config-object classes NPURunConfig takes (DumpConfig, ...)."""
    return kb.runconfig.objects.keys()


def _default_value(default, text: str) -> Value:
    return Value(python=default, origin="resolved", text=text)


def build_config_object(kb: KnowledgeBase, cls: str, positional, keywords, call, frame: Frame) -> Sym:
    spec = kb.runconfig.objects[cls]
    names = [p.name for p in spec.params]
    args = {}
    for i, (sym, node, arg) in enumerate(positional):
        if i < len(names):
            args[names[i]] = (sym, node, arg)
    for name, triple in keywords.items():
        args[name] = triple
    obj = ConfigObjectRef(cls=cls, args=args, node=call, path=frame.module.display,
                          branches=tuple(frame.branches), calls=frame.calls)
    unknown = [k for k in keywords if k not in names]
    if unknown:
        obj.unknown_keywords = [(k, keywords[k][2], names) for k in unknown]  # type: ignore[attr-defined]
    return obj


def object_hazards(obj: ConfigObjectRef) -> list[Hazard]:
    """What constructing ``obj`` raises by itself, placed where it is built (a helper that returns it, a
    module of the tree): keywords its class does not take (TypeError)."""
    out = []
    for k, arg_node, names in getattr(obj, "unknown_keywords", []):
        message, hint = _unknown_keyword(obj.cls, k, names, "")
        out.append(Hazard(id="unknown-runconfig-keyword", message=message, path=obj.path, node=arg_node,
                          option=f"{obj.cls}.{k}", branches=obj.branches, calls=obj.calls, hint=hint))
    return out


def _unknown_keyword(callee: str, name: str, names, when: str) -> tuple[str, str]:
    """The message and hint for a keyword ``callee`` does not take (TypeError ``when`` ...)."""
    close = did_you_mean(name, names)
    guess = f"; did you mean '{close}'?" if close else ""
    return (f"{callee} has no keyword '{name}': the script fails with TypeError{when}{guess}",
            f"write {close}=" if close else f"remove {name}=")


def _write(entry: Entry, key, field, value: Value, frame: Frame, *, via, kwarg, target, value_node, implicit, stmt):
    entry.add_write(
        OptionWrite(
            key=key,
            field=field,
            value=value,
            path=frame.module.display,
            stmt_node=stmt,
            target_node=target,
            key_node=getattr(target, "keyword", None) if target is not None and not implicit else None,
            value_node=value_node,
            branches=tuple(frame.branches),
            calls=frame.calls,
            via=via,
            kwarg=kwarg,
            implicit=implicit,
        )
    )


def _hazard(entry: Entry, hid: str, message: str, node, frame: Frame, option=None, severity="error",
            hint: Optional[str] = None) -> None:
    entry.hazards.append(
        # (a hazard text of rules/npurunconfig.toml is a sentence; a message has no final full stop)
        Hazard(id=hid, message=message.rstrip("."), path=frame.module.display, node=node, option=option, severity=severity,
               branches=tuple(frame.branches), calls=frame.calls, hint=hint)
    )


def build_runconfig(kb: KnowledgeBase, config, positional, keywords, call, frame: Frame) -> None:
    model = kb.runconfig
    entry = Entry(kind="npurunconfig", path=frame.module.display, node=call, calls=frame.calls,
                  name=Value(python="NpuOptimizer", origin="resolved", text="NPURunConfig"))
    session = keywords.get("session_config")
    if session is not None and isinstance(session[0], ConfigRef):
        config.wraps.append(session[0].config)
    config.entries.append(entry)

    for name, (sym, node, arg) in keywords.items():
        spec = model.kwargs.get(name)
        if spec is None:
            message, hint = _unknown_keyword("NPURunConfig", name, model.kwargs, " when it builds the config")
            _hazard(entry, "unknown-runconfig-keyword", message, arg, frame, option=f"NPURunConfig.{name}", hint=hint)
            continue
        if spec.removed:
            _hazard(entry, "removed-runconfig-keyword", spec.hazard or f"NPURunConfig no longer accepts '{name}' (TypeError)",
                    arg, frame, option=spec.key or f"NPURunConfig.{name}", hint=spec.instead or f"remove {name}=")
            continue
        if spec.object:
            _expand_object(kb, entry, spec, sym, node, arg, frame, call)
            continue
        if not spec.key or spec.written == "never":
            continue
        value = make_value(sym, frame.module.code(node))
        if value.resolved and value.python is None and spec.written in ("if-not-none", "conditional"):
            continue
        _write(entry, spec.key, spec.field, value, frame, via="NPURunConfig", kwarg=name, target=arg,
               value_node=node, implicit=False, stmt=call)
        if spec.hazard and value.resolved and isinstance(value.python, str) and spec.key == "insert_op_file":
            _hazard(entry, "runconfig-str-not-bytes", spec.hazard, arg, frame, option=spec.key,
                    hint=f"pass {name} as bytes: b\"...\" (or tf.compat.as_bytes(...))")

    # keywords not given whose defaults NPUEstimator writes anyway
    for name, spec in model.kwargs.items():
        # "always" keywords, and "if-not-none" ones whose default is not None, are written by default
        if name in keywords or spec.object or not spec.key or spec.written not in ("always", "if-not-none"):
            continue
        if spec.default is None:
            continue
        _write(entry, spec.key, spec.field, _default_value(spec.default, f"NPURunConfig default {name}={spec.default!r}"),
               frame, via="NPURunConfig", kwarg=name, target=None, value_node=None, implicit=True, stmt=call)
    for spec in model.implicit:
        if not spec.key:
            continue
        if spec.written == "always" or (spec.written == "conditional" and spec.unless_kwarg
                                        and spec.unless_kwarg not in keywords):
            _write(entry, spec.key, spec.field, _default_value(spec.default, "written by NPUEstimator"), frame,
                   via="implicit", kwarg=None, target=None, value_node=None, implicit=True, stmt=call)


def _expand_object(kb: KnowledgeBase, entry: Entry, spec, sym, node, arg, frame: Frame, call) -> None:
    if not isinstance(sym, ConfigObjectRef):
        return  # built elsewhere (or None): unknown contents
    if kb.runconfig.objects.get(sym.cls) is None:
        return
    if sym.cls != spec.object:
        _hazard(entry, "runconfig-wrong-object",
                f"{spec.name} expects a {spec.object}, got {sym.cls}: NPURunConfig raises when it checks the type", arg, frame,
                option=f"NPURunConfig.{spec.name}", hint=f"pass a {spec.object}(...) as {spec.name}=")
        return
    sym.expanded = True
    for hazard in object_hazards(sym):
        entry.hazards.append(hazard)
    _object_writes(kb, entry, sym, frame, f"NPURunConfig.{spec.name}")


#: The kind of the entry that stands for a config object no NPURunConfig read here takes (see
#: :func:`lone_object_config`); the checks read the same literal.
LONE_OBJECT_KIND = "config-object"


class _ObjectFrame:
    """Where a config object was built, as :func:`_object_writes` reads a frame."""

    def __init__(self, module: ModuleState, obj: ConfigObjectRef) -> None:
        self.module = module
        self.branches = list(obj.branches)
        self.calls = obj.calls


def lone_object_config(kb: KnowledgeBase, obj: ConfigObjectRef, module: ModuleState) -> Optional[SessionConfig]:
    """A session config holding what ``obj`` writes when NPUEstimator reads it, for an object no NPURunConfig
    read here takes (built in a helper and returned, handed to code of another package, stored in a dict).

    Only the object's own keys are known: what else the session config holds is not, so the entry (of kind
    :data:`LONE_OBJECT_KIND`) is checked for values, and for relations among the keys the object's class
    writes (DumpConfig writes enable_dump on every run, so dump_step without enable_dump=True is known to do
    nothing); relations involving other keys, and the scenario, are left to the NPURunConfig that takes it.
    The object's TypeErrors are reported as code facts (extraction), not as this entry's hazards."""
    if obj.expanded or obj.cls not in kb.runconfig.objects:
        return None
    entry = Entry(kind=LONE_OBJECT_KIND, path=obj.path, node=obj.node, calls=obj.calls,
                  name=Value(python="NpuOptimizer", origin="resolved", text=obj.cls))
    _object_writes(kb, entry, obj, _ObjectFrame(module, obj), obj.cls)
    if not entry.writes and not entry.hazards:
        return None
    return SessionConfig(kind=LONE_OBJECT_KIND, path=obj.path, node=obj.node, entries=[entry], calls=obj.calls)


def _object_writes(kb: KnowledgeBase, entry: Entry, sym: ConfigObjectRef, frame: Frame, option: str) -> None:
    """The writes NPUEstimator makes for the config object ``sym`` (npu_estimator.py), into ``entry``, and
    the settings it drops as hazards; ``option`` names the object in those (NPURunConfig.dump_config)."""
    obj = kb.runconfig.objects[sym.cls]
    given = {name: triple for name, triple in sym.args.items()}
    values = {p.name: (make_value(given[p.name][0], frame.module.code(given[p.name][1])) if p.name in given
                       else _default_value(p.default, f"{sym.cls} default")) for p in obj.params}

    def is_none(name):
        v = values.get(name)
        return v is not None and v.resolved and v.python is None

    if sym.cls == "DynamicInputConfig":
        missing = [p.name for p in obj.params if p.name not in given or is_none(p.name)]
        if missing:
            _hazard(entry, "dynamic-input-config-dropped",
                    "DynamicInputConfig needs all of input_shape, dynamic_dims, dynamic_node_type and compile_hybrid_mode; "
                    f"with {', '.join(missing)} missing or None, NPUEstimator silently drops the whole dynamic-dims setting",
                    sym.node, frame, option=option,
                    hint="; ".join([f"give each of {', '.join(missing)} a value" if len(missing) > 1
                                    else f"give {missing[0]} a value"]
                                   + [p.instead for p in obj.params if p.name in missing and p.instead]))
            return
    if sym.cls == "ProfilingConfig":
        enabled = values.get("enable_profiling")
        if (enabled is not None and enabled.resolved and not enabled.python and "profiling_options" in given
                and not is_none("profiling_options")):
            _hazard(entry, "profiling-options-unused",
                    "profiling_options is given but enable_profiling is False: NPUEstimator does not write it",
                    given["profiling_options"][2], frame, option="profiling_options", severity="warning",
                    hint="pass enable_profiling=True, or remove profiling_options")
    for p in obj.params:
        if not p.key:
            continue
        if p.name in given:
            _sym, value_node, value_arg = given[p.name]
            value = values[p.name]
            from_flag = value.python is None and value.origin == "flag-default"
            if from_flag:
                # a flag whose default is None is set on the command line when the feature is used
                # (dump_path=FLAGS.dump_path): what is written then is not known, and not blamed on the script
                value = Value(python=UNRESOLVED, origin="unresolved", text=value.text)
            elif value.resolved and value.python is None:
                continue
            if sym.cls == "DumpConfig" and p.name == "dump_debug_mode" and is_none("dump_mode"):
                _hazard(entry, "dump-debug-mode-dropped",
                        "dump_debug_mode is only written when dump_mode is not None (NPUEstimator): this setting is lost",
                        value_arg, frame, option="dump_debug_mode",
                        hint="give dump_mode a value, or leave it out so that its default is written")
                continue
            if sym.cls == "ProfilingConfig" and p.name == "profiling_options":
                enabled = values.get("enable_profiling")
                if enabled is not None and enabled.resolved and not enabled.python:
                    continue
            # a keyword spelled with the value its class gives it anyway (DumpConfig(dump_mode="output")) writes
            # what leaving it out writes: NPUEstimator's doing, not the user's (never blamed for a relation)
            spelled_default = (p.default is not None and value.resolved and type(value.python) is type(p.default)
                               and value.python == p.default)
            _write(entry, p.key, p.field, value, frame, via=f"{sym.cls}", kwarg=p.name, target=value_arg,
                   value_node=value_node, implicit=spelled_default or from_flag, stmt=sym.node)
        elif p.written in ("always", "if-not-none") and p.default is not None:
            _write(entry, p.key, p.field, values[p.name], frame, via=f"{sym.cls}", kwarg=p.name, target=None,
                   value_node=None, implicit=True, stmt=sym.node)
