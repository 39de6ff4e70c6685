"""The effective configuration of a file, reduced to what the adapter acts on, for comparing a
file before and after a fix.

A *safe* fix must leave every NPU session config of the file with the same effective options. The
comparison works on the ``--show-config`` JSON of the file (``FileReport.configs``) and ignores
everything a safe fix may change without changing behaviour:

* positions, expressions, origins and which AttrValue field carried the value (``.i = 1`` and
  ``.b = True`` on a boolean option, ``"x"`` and ``b"x"`` on a bytes option are one value);
* documented equivalences that the safe fixes use: value aliases (``ValueFact.preferred``), the
  exact rows of the precision_mode -> precision_mode_v2 migration (current release) and the
  legacy engine names of stream_max_parallel_num.

What it compares, per config (in order): its kind; per entry its name, whether it is the NPU entry,
and per written key the canonical key, the canonical values that can be final and whether it is
set on every path; the merge of the NPU entries as the adapter does it (in order, later entries
overwrite earlier ones key by key, *then* canonicalised, so a key moved in one entry only is a
change); rewrite options and code facts by value.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from npu_audit.knowledge.model import KnowledgeBase

_INT = re.compile(r"[+-]?\d+")

Signature = tuple


def _field(kb: KnowledgeBase, release: str, key: str) -> Optional[str]:
    spec = kb.options.get(key)
    return spec.for_release(release).field if spec is not None else None


def canonical_value(kb: KnowledgeBase, release: str, key: str, value: Any, type_name: Optional[str]) -> tuple:
    """What the adapter gets for ``key`` from a value of this JSON type, as a comparable tuple."""
    if type_name is None:
        return ("unresolved",)
    field = _field(kb, release, key)
    v = value
    if field == "b" and type_name in ("bool", "int") and v in (0, 1):
        return ("bool", bool(v))
    if field == "i":
        if type_name == "bool":
            return ("int", int(v))
        if type_name in ("str", "bytes") and isinstance(v, str) and _INT.fullmatch(v):
            return ("int", int(v))
        if type_name == "int":
            return ("int", v)
    if field == "s" and type_name == "bool":
        return ("str", "true" if v else "false")
    if type_name in ("str", "bytes") and isinstance(v, str):
        spec = kb.options.get(key)
        fact = spec.value_fact(v) if spec is not None else None
        if fact is not None and fact.preferred is not None and isinstance(fact.preferred, str):
            v = fact.preferred
        engines = kb.migrations.get("stream_engine_names")
        if engines is not None and key == engines.from_key:
            v = _engine_names(engines, v)
        return ("str", v)
    if type_name in ("int", "float"):
        return ("num", v)
    return (type_name, repr(v))


def _engine_names(migration, value: str) -> str:
    items = []
    for item in value.split(","):
        name, sep, rest = item.partition(":")
        row = migration.row(name.strip())
        items.append(f"{row.new}{sep}{rest}" if row is not None and row.exact and row.new else item)
    return ",".join(items)


def _canonical_option(kb: KnowledgeBase, release: str, key: str, option: dict) -> tuple:
    """(canonical key, sorted canonical values that can be final, set on every path)."""
    values = [canonical_value(kb, release, key, p.get("value"), p.get("type")) for p in option.get("possible_values", ())]
    out_key: Optional[str] = key
    migration = kb.migrations.get("precision_mode_v2") if release == "current" else None
    if migration is not None and key == migration.from_key and values:
        moved = []
        for v in values:
            row = migration.row(v[1]) if v[0] == "str" else None
            if row is None or not row.exact or row.new is None:
                break
            moved.append(("str", row.new))
        else:
            out_key, values = migration.to_key, moved
    return (out_key, tuple(sorted(set(values), key=repr)), bool(option.get("set_on_every_path")))


def _options_signature(kb: KnowledgeBase, release: str, options: dict) -> tuple:
    return tuple(sorted((_canonical_option(kb, release, k, o) for k, o in options.items()), key=repr))


def _merged(entries: list[dict]) -> dict:
    """The NPU entries merged as the adapter does: in order, later entries overwrite key by key (a
    write that may not happen keeps the earlier values possible)."""
    merged: dict[str, dict] = {}
    for entry in entries:
        if entry.get("npu") is False:
            continue
        for key, option in entry.get("options", {}).items():
            before = merged.get(key)
            if before is None or option.get("set_on_every_path"):
                merged[key] = option
            else:
                merged[key] = {"possible_values": list(before.get("possible_values", ())) + list(option.get("possible_values", ())),
                               "set_on_every_path": bool(before.get("set_on_every_path"))}
    return merged


def signature(configs: list[dict], kb: KnowledgeBase, release: str) -> Signature:
    """The comparable effective configuration of a file's configs (``--show-config`` JSON dicts)."""
    out = []
    for config in configs:
        entries = config.get("entries", [])
        out.append((
            config.get("kind"),
            tuple((e.get("name"), e.get("npu"), e.get("kind"), _options_signature(kb, release, e.get("options", {})))
                  for e in entries),
            _options_signature(kb, release, _merged(entries)),
            tuple(sorted((config.get("rewrite_options") or {}).items())),
            tuple(sorted((f.get("kind"), repr(f.get("value"))) for f in config.get("code_facts", ()))),
        ))
    return tuple(out)


def describe_change(before: list[dict], after: list[dict], kb: KnowledgeBase, release: str) -> str:
    """A short account of the first difference between two files' configs, for messages."""
    if len(before) != len(after):
        return f"the file would have {len(after)} NPU session config(s) instead of {len(before)}"
    for old, new in zip(before, after):
        where = f"config at line {old.get('line')}" if old.get("line") else "a config"
        if signature([old], kb, release) == signature([new], kb, release):
            continue
        old_entries, new_entries = old.get("entries", []), new.get("entries", [])
        pairs = [(f"entry {i + 1}", o.get("options", {}), n.get("options", {}))
                 for i, (o, n) in enumerate(zip(old_entries, new_entries))]
        pairs.append(("merged entries", _merged(old_entries), _merged(new_entries)))
        for label, o, n in pairs:
            a, b = _options_signature(kb, release, o), _options_signature(kb, release, n)
            if a != b:
                gone = [x for x in a if x not in b]
                came = [x for x in b if x not in a]
                return (f"{where}, {label}: {_show(gone) or 'nothing'} would become {_show(came) or 'nothing'}")
        return f"{where}: its entries or rewrite options would change"
    return "the effective configuration would change"


def _show(items) -> str:
    parts = []
    for key, values, every in items:
        shown = " | ".join("<unresolved>" if v[0] == "unresolved" else repr(v[1]) for v in values) or "?"
        parts.append(f"{key} = {shown}" + ("" if every else " (on some paths)"))
    return ", ".join(parts)
