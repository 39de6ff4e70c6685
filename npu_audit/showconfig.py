"""``--show-config``: the effective configs as a public JSON contract (version 1) and as a text table.

JSON shape (documented in docs/outputs.md, "Effective configs"):
{"version": 1, "configs": [{"path", "line", "column", "kind", "variable", "helpers", "rewrite_options",
  "code_facts", "entries": [{"name", "npu", "kind", "path", "line", "column",
     "options": {KEY: {"value", "type", "field", "path", "line", "column", "certainty", "origin", "flag",
                       "implicit", "via", "possible_values", "writes": [...]}}}]}]}
TensorFlow 2 configs (kind "global_options") also carry "opens" (the npu_device.open() calls), and their
options are keyed by attribute path ("dump_config.dump_path") with "key" naming the parameter_map key.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from npu_audit.extract.model import (
    CONFIG_OBJECT,
    UNRESOLVED,
    EffectiveOption,
    Entry,
    OptionWrite,
    SessionConfig,
    Value,
)

VERSION = 1


def json_value(value: Value) -> tuple[Any, Optional[str]]:
    if not value.resolved:
        return None, None
    v = value.python
    if isinstance(v, bytes):
        return value.decoded(), "bytes"
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v, type(v).__name__ if v is not None else "none"
    try:
        json.dumps(v)
        return v, type(v).__name__
    except (TypeError, ValueError):
        return repr(v), type(v).__name__


def _pos(rng) -> dict:
    return {"line": rng.line if rng else None, "column": rng.column if rng else None}


def write_dict(w: OptionWrite) -> dict:
    value, type_name = json_value(w.value)
    out = {
        "value": value,
        "type": type_name,
        "expression": w.value.text or None,
        "field": w.field,
        "path": w.path,
        **_pos(w.range),
        "certainty": w.certainty,
        "origin": w.value.origin,
        "flag": w.value.flag,
        "implicit": w.implicit,
        "via": _via(w),
        "branch": w.branch_text(),
    }
    if w.calls:
        out["through"] = [c.callee for c in w.calls]
    return out


def _via(w: OptionWrite) -> str:
    if w.option_path is not None:
        return f"global_options().{w.option_path}"
    return w.via if w.kwarg is None else f"{w.via}({w.kwarg}=...)"


def _tf2_table():
    from npu_audit.knowledge.loader import load

    return load().tf2


def option_dict(eff: EffectiveOption) -> dict:
    last = eff.last
    out = write_dict(last)
    out.pop("branch", None)
    out["certainty"] = eff.certainty
    out["set_on_every_path"] = eff.definitely_set
    possible = []
    for w in eff.candidates:
        v, t = json_value(w.value)
        possible.append({"value": v, "type": t, "origin": w.value.origin, "line": w.range.line if w.range else None,
                         "branch": w.branch_text()})
    out["possible_values"] = possible
    out["writes"] = [write_dict(w) for w in eff.writes]
    return out


def entry_dict(entry: Entry) -> dict:
    name = None
    if entry.name is not None:
        name = json_value(entry.name)[0] if entry.name.resolved else None
    if entry.kind == "global_options":  # TF2: keyed by attribute path, with the parameter_map key
        table = _tf2_table()
        options = {}
        for k, e in entry.effective().items():
            path = e.last.option_path or k
            option = table.options.get(path) if table is not None else None
            options[path] = {**option_dict(e), "key": option.key if option is not None else None}
        options = dict(sorted(options.items()))
    else:
        options = {k: option_dict(e) for k, e in sorted(entry.effective().items())}
    return {
        "name": name,
        "npu": entry.is_npu,
        "kind": entry.kind,
        "path": entry.path,
        **_pos(entry.range),
        "options": options,
        "hazards": [h.message for h in entry.hazards],
    }


def config_dict(config: SessionConfig, extraction=None) -> dict:
    through = []
    for call in config.calls:
        rng = extraction.range_of(call.node) if extraction is not None else None
        through.append({"callee": call.callee, "path": call.path, "line": rng.line if rng else None})
    out = {
        "path": config.path,
        **_pos(config.range),
        "kind": config.kind,
        "through": through,
        "variable": config.variable,
        "helpers": list(config.helpers),
        "rewrite_options": {r.name: r.value_text for r in config.rewrite},
        "code_facts": [
            {"kind": f.kind, "value": json_value(f.value)[0] if f.value else None, "path": f.path, **_pos(f.range)}
            for f in config.facts
        ],
        "entries": [entry_dict(e) for e in config.all_entries()],
    }
    if config.kind == "global_options":
        out["opens"] = [open_dict(op, extraction) for op in config.opens]
    if config.kind == CONFIG_OBJECT and config.entries:
        out["object"] = config.entries[0].object_class  # DumpConfig, ProfilingConfig, ...
    return out


def open_dict(op, extraction=None) -> dict:
    """An npu_device.open() call of a TF2 config: where, under which branches, through which helpers."""
    through = []
    for call in op.calls:
        rng = extraction.range_of(call.node) if extraction is not None else None
        through.append({"callee": call.callee, "path": call.path, "line": rng.line if rng else None})
    return {"path": op.path, **_pos(op.range), "certainty": "conditional" if op.branches else "always",
            "branch": "; ".join(s.description for s in op.branches) or None, "through": through}


def configs_for(extraction) -> list[dict]:
    return [config_dict(c, extraction) for c in extraction.configs]


def render_json(configs: list[dict]) -> str:
    return json.dumps({"version": VERSION, "configs": configs}, indent=2, ensure_ascii=False) + "\n"


def _short(value: Any, type_name: Optional[str]) -> str:
    if value is None and type_name is None:
        return "<unresolved>"
    if type_name == "bytes":
        return f'b"{value}"'
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def render_text(configs: list[dict], defaults: Optional[dict] = None) -> str:
    """A table per entry: key, value, field, certainty, origin, line. ``defaults`` (key -> value text)
    adds the documented defaults of options the script leaves unset."""
    if not configs:
        return "No NPU session configs found.\n"
    lines = []
    for config in configs:
        where = f"{config['path']}:{config['line']}:{config['column']}"
        title = f"{config['kind']} config" + (f" '{config['variable']}'" if config.get("variable") else "")
        tf2 = config["kind"] == "global_options"
        if tf2:
            title = "TensorFlow 2 config npu_device.global_options()"
        elif config["kind"] == CONFIG_OBJECT:
            title = (f"{config.get('object') or 'config object'}(...) that no NPURunConfig read here takes: the "
                     "options it gives the entry NPUEstimator appends")
        if config.get("through"):
            title += " (built by " + ", ".join(f"{t['callee']}() called at {t['path']}:{t['line']}"
                                               for t in config["through"]) + ")"
        lines.append(f"{where}: {title}")
        if config["helpers"]:
            lines.append(f"  helpers: {', '.join(config['helpers'])}")
        for op in config.get("opens", ()):
            branch = f" ({op['branch']})" if op["branch"] else ""
            lines.append(f"  read by npu_device.open() at {op['path']}:{op['line']}{branch}")
        if tf2 and not config.get("opens"):
            lines.append("  read by npu_device.open(): no call seen")
        for i, entry in enumerate(config["entries"], 1):
            name = entry["name"] if entry["name"] is not None else "<unnamed>"
            npu = {True: "", False: "  (not the NPU entry: ignored by the adapter)", None: "  (name unknown)"}[entry["npu"]]
            lines.append(f"  entry {i}: {name} [{entry['kind']}] at {entry['path']}:{entry['line']}{npu}")
            rows = []
            for key, opt in entry["options"].items():
                value = _short(opt["value"], opt["type"])
                if len(opt["possible_values"]) > 1:
                    value = " | ".join(_short(p["value"], p["type"]) for p in opt["possible_values"])
                origin = opt["origin"] + (f" ({opt['flag']})" if opt.get("flag") else "")
                if opt["implicit"]:
                    origin = "implicit"
                where = str(opt["line"]) if opt["line"] else ""
                if opt["path"] != config["path"]:
                    where = f"{opt['path']}:{where}" if where else opt["path"]
                rows.append((key, value, f".{opt['field']}" if opt["field"] else "", opt["certainty"], origin, where))
            if defaults and tf2:
                # the TF2 adapter's own defaults (rules/tf2_options.toml), not the TF1 session's
                for key, text in sorted(_tf2_defaults().items()):
                    if key not in entry["options"]:
                        rows.append((key, text, "", "default", "adapter", ""))
            elif defaults:
                for key, text in sorted(defaults.items()):
                    if key not in entry["options"]:
                        rows.append((key, text, "", "default", "docs", ""))
            if rows:
                headers = ("option", "value", "field", "certainty", "origin", "line")
                widths = [max(len(h), *(len(r[c]) for r in rows)) for c, h in enumerate(headers)]
                widths[1] = min(widths[1], 60)
                fmt = "    " + "  ".join(f"{{:<{w}}}" for w in widths)
                lines.append(fmt.format(*headers).rstrip())
                for r in rows:
                    cells = list(r)
                    if len(cells[1]) > 60:
                        cells[1] = cells[1][:57] + "..."
                    lines.append(fmt.format(*cells).rstrip())
            else:
                lines.append("    (no options)")
        lines.append("")
    return "\n".join(lines)


def _tf2_defaults(release: str = "current") -> dict:
    """global_options() path -> the TF2 adapter's default, for options it passes on when unset."""
    table = _tf2_table()
    out = {}
    for o in table.options.values() if table is not None else ():
        value = o.default_in(release)
        if value is not None and o.exists_in(release):
            out[o.path] = repr(value) if isinstance(value, str) else str(value)
    return out


def documented_defaults(kb, release: str, product: Optional[str], scenario: Optional[str]) -> dict:
    """Defaults that apply to unset options for a target product/scenario (from the knowledge base)."""
    out = {}
    for key, spec in kb.options.items():
        chosen = None
        for d in spec.defaults:
            if d.scenario and scenario and d.scenario != scenario:
                continue
            if d.products and (product is None or product not in d.products):
                continue
            if d.scenario and not scenario:
                continue
            chosen = d.value
            break
        if chosen is None:
            view = spec.for_release(release)
            chosen = view.default
        if chosen is not None and chosen is not UNRESOLVED:
            out[key] = repr(chosen) if isinstance(chosen, str) else str(chosen)
    return out
