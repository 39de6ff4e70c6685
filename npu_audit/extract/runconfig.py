"""NPURunConfig(...) and its config objects, turned into the option writes NPUEstimator makes.

The mapping (keyword -> key, field, default, when it is written) is data in rules/npurunconfig.toml;
this module only applies it. Writes the user did not ask for (defaults NPUEstimator writes anyway)
are marked ``implicit``: they explain what runs, and checks never blame the user for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Protocol

from npu_audit.extract.model import (
    CONFIG_OBJECT,
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
from npu_audit.extract.symbols import ConfigObjectRef, ConfigRef, Const, Sym, make_value, to_python
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


def _run_decides(value: Value) -> Value:
    """A keyword given a flag whose default is None: NPUEstimator writes nothing with the default, but the
    real run may pass the flag; the value is the run's, unknown here. The write is marked implicit: no
    finding claims the option is absent, and none blames the script for it (a placeholder
    DumpConfig(enable_dump_debug=False, dump_path=FLAGS.dump_dir) in the branch without overflow detection)."""
    return Value(python=UNRESOLVED, origin="unresolved", text=value.text)


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


@dataclass
class _ObjectFrame:
    """Where a config object was built, as the expansion reads a frame."""

    module: ModuleState
    branches: list[BranchStep]
    calls: tuple[CallSite, ...]


def lone_object_config(kb: KnowledgeBase, obj: ConfigObjectRef, module: ModuleState) -> Optional[SessionConfig]:
    """A config object no NPURunConfig the interpreter read takes (built in a helper that returns it, handed
    to code npu-audit cannot follow), as the writes it becomes when an NPURunConfig takes it: its values,
    and the relations among the keys its own class writes, are checked where it is built. Its entry's
    ``kind`` is "config-object": relations that involve a key the class cannot write need the whole session
    config and are not claimed from the object alone (npu_audit.checks.relations)."""
    spec = kb.runconfig.keyword_taking(obj.cls)
    if spec is None:
        return None
    config = SessionConfig(kind=CONFIG_OBJECT, path=obj.path, node=obj.node, calls=obj.calls,
                           bound_to=obj.bound_to, handed_on=obj.handed_on)
    entry = Entry(kind=CONFIG_OBJECT, path=obj.path, node=obj.node, calls=obj.calls, object_class=obj.cls,
                  name=Value(python="NpuOptimizer", origin="resolved", text=obj.cls))
    config.entries.append(entry)
    _expand_object(kb, entry, spec, obj, obj.node, obj.node, _ObjectFrame(module, list(obj.branches), obj.calls), obj.node)
    return config


def object_keys(kb: KnowledgeBase, cls: str) -> frozenset[str]:
    """The parameter_map keys a config-object class writes (rules/npurunconfig.toml)."""
    spec = kb.runconfig.objects.get(cls)
    return frozenset(p.key for p in spec.params if p.key) if spec is not None else frozenset()


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
        flagged = False
        if value.resolved and value.python is None and spec.written in ("if-not-none", "conditional"):
            if value.origin != "flag-default":
                continue
            value, flagged = _run_decides(value), True
        _write(entry, spec.key, spec.field, value, frame, via="NPURunConfig", kwarg=name, target=arg,
               value_node=node, implicit=flagged, stmt=call)
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
    model = kb.runconfig
    if not isinstance(sym, ConfigObjectRef):
        v = to_python(sym)
        if v is None and isinstance(sym, Const):
            return
        return  # built elsewhere, unknown contents
    obj = model.objects.get(sym.cls)
    if obj is None:
        return
    if sym.cls != spec.object:
        _hazard(entry, "runconfig-wrong-object",
                f"{spec.name} expects a {spec.object}, got {sym.cls}: NPURunConfig raises when it checks the type", arg, frame,
                option=f"NPURunConfig.{spec.name}", hint=f"pass a {spec.object}(...) as {spec.name}=")
        return
    sym.expanded = True
    for hazard in object_hazards(sym):
        entry.hazards.append(hazard)
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
                    sym.node, frame, option=f"NPURunConfig.{spec.name}",
                    hint="; ".join([f"give each of {', '.join(missing)} a value" if len(missing) > 1
                                    else f"give {missing[0]} a value"]
                                   + [p.instead for p in obj.params if p.name in missing and p.instead]))
            return
    if sym.cls == "ProfilingConfig":
        enabled = values.get("enable_profiling")
        if enabled is not None and enabled.resolved and not enabled.python and "profiling_options" in given and not is_none(
                "profiling_options"):
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
            flagged = False
            if value.resolved and value.python is None:
                if value.origin != "flag-default":
                    continue
                value, flagged = _run_decides(value), True
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
            # a keyword spelled out with the class's own default: NPUEstimator writes that value anyway, so
            # the write is the object's, not the user's (no finding blames it: a placeholder DumpConfig(
            # enable_dump=False, dump_mode="output") that branches replace loses nothing)
            default = (value.resolved and p.default is not None and type(value.python) is type(p.default)
                       and value.python == p.default)
            _write(entry, p.key, p.field, value, frame, via=f"{sym.cls}", kwarg=p.name, target=value_arg,
                   value_node=value_node, implicit=default or flagged, stmt=sym.node)
        elif p.written in ("always", "if-not-none") and p.default is not None:
            _write(entry, p.key, p.field, values[p.name], frame, via=f"{sym.cls}", kwarg=p.name, target=None,
                   value_node=None, implicit=True, stmt=sym.node)
