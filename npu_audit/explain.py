"""People- and machine-readable views of the knowledge base and the rules.

``--explain``, ``--list-rules``, the rule reference (docs/rules.md) and the language server's hovers all come from
here, so the wording exists once.
"""

from __future__ import annotations

from typing import Any, Optional

from npu_audit.knowledge.model import Condition, OptionSpec, Relation
from npu_audit.knowledge.vocabulary import INVALID_REACTIONS, RELATION_CHECKS, WRONG_FIELD_REACTIONS
from npu_audit.text import did_you_mean, suggestions

FIELD_TEXT = {"b": ".b (bool)", "i": ".i (int)", "s": ".s (bytes)"}
REACTIONS: dict[str, str] = {reaction: text.summary for reaction, text in INVALID_REACTIONS.items()}
WRONG_FIELD: dict[str, str] = {reaction: text.summary for reaction, text in WRONG_FIELD_REACTIONS.items()}


def _value(v: Any) -> str:
    return repr(v) if isinstance(v, str) else str(v)


def option_summary(kb, spec: OptionSpec, release: str = "current") -> dict:
    view = spec.for_release(release)
    relations = [r for r in kb.relations if spec.key in r.keys]
    migration = next((m for m in kb.migrations.values() if m.from_key == spec.key), None)
    return {
        "key": spec.key,
        "field": view.field,
        "section": spec.section,
        "summary": spec.summary,
        "description": spec.description,
        "domain": {"kind": view.domain.kind, "text": view.domain.describe(), "values": list(view.domain.values),
                   "min": view.domain.min, "max": view.domain.max, "grammar": view.domain.grammar,
                   "unit": view.domain.unit},
        "default": view.default,
        "default_note": spec.default_note,
        "defaults": [{"value": d.value, "scenario": d.scenario, "products": list(d.products), "note": d.note}
                     for d in spec.defaults],
        "scenarios": list(view.scenarios),
        "products": list(spec.products),
        "lifecycle": {r: {"status": lc.status, "replacement": lc.replacement, "note": lc.note, "scheduled": lc.scheduled}
                      for r, lc in spec.lifecycle.items()},
        "on_invalid": spec.on_invalid,
        "on_wrong_field": spec.on_wrong_field,
        "read_condition": spec.read_condition,
        "values": [{"value": f.value, "same_as": f.same_as, "preferred": f.preferred, "scenarios": list(f.scenarios),
                    "products": list(f.products), "releases": list(f.releases), "note": f.note} for f in spec.values],
        "npurunconfig": [{"kwarg": r.kwarg, "object": r.object, "param": r.param, "written": r.written,
                          "default": r.default} for r in spec.routes],
        "relations": [{"id": r.id, "kind": r.kind, "subject": r.subject, "keys": list(r.keys), "severity": r.severity,
                       "message": r.message, "releases": list(r.releases),
                       "examples": [relation_example_summary(e) for e in r.examples]} for r in relations],
        "migration": None if migration is None else {
            "id": migration.id, "to_key": migration.to_key, "summary": migration.summary,
            "rows": [{"old": row.old, "new": row.new, "exact": row.exact, "note": row.note} for row in migration.rows]},
        "cite": [c.render() for c in spec.cite],
    }


def explain_option(kb, key: str, release: str = "current", markdown: bool = False) -> str:
    spec = kb.options[key]
    s = option_summary(kb, spec, release)
    lines = [f"# {key}" if markdown else key, "", s["summary"], ""]
    if s["description"]:
        lines += [s["description"], ""]

    def row(label: str, text: str) -> None:
        lines.append(f"- **{label}**: {text}" if markdown else f"  {label + ':':<16} {text}")

    code = f'custom_op.parameter_map["{key}"].{s["field"]} = ...'
    row("field", f"{FIELD_TEXT[s['field']]}   {code}" if not markdown else f"{FIELD_TEXT[s['field']]} — `{code}`")
    row("values", s["domain"]["text"])
    if s["default"] is not None:
        row("default", _value(s["default"]))
    elif s["default_note"]:
        row("default", s["default_note"])
    for d in s["defaults"]:
        where = " / ".join(x for x in [d["scenario"], ", ".join(d["products"])] if x)
        row("default" if not where else f"default ({where})", _value(d["value"]) + (f" — {d['note']}" if d["note"] else ""))
    row("scenarios", ", ".join(s["scenarios"]))
    if s["products"]:
        row("products", ", ".join(kb.products[p].name for p in s["products"]))
    for release_name, lc in s["lifecycle"].items():
        status = "will be deprecated in later versions" if lc["scheduled"] else lc["status"]
        text = status + (f" -> use {lc['replacement']}" if lc["replacement"] else "")
        if lc["note"]:
            text += f" ({lc['note']})"
        row(f"{release_name} release", text)
    row("bad value", REACTIONS.get(s["on_invalid"], s["on_invalid"]))
    row("wrong field", WRONG_FIELD.get(s["on_wrong_field"], s["on_wrong_field"]))
    if s["read_condition"]:
        row("read when", s["read_condition"])
    for v in s["values"]:
        parts = []
        if v["same_as"] is not None:
            parts.append(f"same as {_value(v['same_as'])}")
        if v["preferred"] is not None and v["preferred"] != v["same_as"]:
            parts.append(f"prefer {_value(v['preferred'])}")
        if v["scenarios"]:
            parts.append("only " + "/".join(v["scenarios"]))
        if v["products"]:
            parts.append("only on " + ", ".join(v["products"]))
        if v["releases"]:
            parts.append("release " + "/".join(v["releases"]))
        if v["note"]:
            parts.append(v["note"])
        row(f"value {_value(v['value'])}", "; ".join(parts))
    for r in s["npurunconfig"]:
        via = f"NPURunConfig({r['kwarg']}=...)" if not r["object"] else f"{r['object']}({r['param']}=...)"
        if r["object"] and r["kwarg"]:
            via = f"NPURunConfig({r['kwarg']}={r['object']}({r['param']}=...))"
        row("NPURunConfig", via + f", written {r['written']}" + (f", default {_value(r['default'])}" if r["default"] is not None else ""))
    if s["relations"]:
        lines += ["", "## Relations" if markdown else "  relations:"]
        for r in s["relations"]:
            lines.append(f"- {r['kind']} ({r['severity']}): {r['message']}" if markdown else f"    - [{r['kind']}] {r['message']}")
            lines += relation_example_lines(r["examples"], markdown)
    if s["migration"]:
        m = s["migration"]
        lines += ["", f"## Migration to {m['to_key']}" if markdown else f"  migration to {m['to_key']}:"]
        for row_ in m["rows"]:
            new = _value(row_["new"]) if row_["new"] is not None else "(no equivalent)"
            exact = "exact" if row_["exact"] else "not exact"
            note = f" — {row_['note']}" if row_["note"] and not row_["exact"] else ""
            lines.append(f"    {_value(row_['old']):<28} -> {new:<24} {exact}{note}" if not markdown
                         else f"- `{row_['old']}` → `{row_['new']}` ({exact}){note}")
    lines += ["", "Sources:" if not markdown else "**Sources:**"]
    lines += [f"  - {c}" if not markdown else f"- {c}" for c in s["cite"]]
    return "\n".join(lines).rstrip() + "\n"


def relation_example_summary(example) -> dict:
    """A ``[[relation.example]]`` of rules/relations.toml as data (its code follows the TF1 prelude of
    the rule examples: ``custom_op`` is the NpuOptimizer entry of a ConfigProto)."""
    return {"code": example.code, "valid": example.valid, "release": example.release, "line": example.line,
            "column": example.column, "message": example.message, "severity": example.severity}


def relation_example_lines(examples: list, markdown: bool) -> list:
    """The first invalid example of a relation, as --explain shows it under the relation."""
    first = next((e for e in examples if not e["valid"]), None)
    if first is None:
        return []
    where = f"reported at line {first['line']}, column {first['column']}"
    if first["release"]:
        where += f", {first['release']} release"
    code = first["code"].rstrip("\n").splitlines()
    if markdown:
        return [f"  Example ({where}):", "  ```python", *(f"  {c}" for c in code), "  ```"]
    return [f"        example ({where}):", *(f"          {c}" for c in code)]


def explain_rule(rule) -> str:
    return rule.documentation()


def rule_summary(rule) -> dict:
    example, findings, instead = rule.shown_example()
    return {"code": rule.code, "name": rule.name, "severity": rule.severity, "summary": rule.summary,
            "what": rule.what, "why": rule.why, "example": example, "use_instead": instead,
            "example_findings": [{"line": e.line, "column": e.column, "message": e.message,
                                  "severity": e.severity or rule.severity, "hint": e.hint} for e in findings],
            "fix": rule.fix, "fix_applicability": list(rule.fix_applicability), "fix_kind": fix_kind(rule),
            "fix_safety": rule.fix_safety, "url": rule.help_uri}


#: The values of fix_kind, as --list-rules explains them under its table.
FIX_KINDS = {
    "safe": "--fix applies it",
    "unsafe": "applied only with --fix --unsafe-fixes (it may change what the script does: review it)",
    "safe+unsafe": "some of its fixes are safe, the others unsafe",
    "none": "no automatic fix",
}


def fix_kind(rule) -> str:
    """Whether the check's fixes are safe, unsafe, both, or whether it has none (a key of FIX_KINDS)."""
    kinds = set(rule.fix_applicability) if rule.fix != "none" else set()
    if not kinds:
        return "none"
    return "safe+unsafe" if len(kinds) > 1 else kinds.pop()


def rule_markdown(rule) -> str:
    """A rule's documentation as Markdown (editor hovers, SARIF help): its first invalid example, the
    findings it yields and what to write instead, all run by the tests."""
    return rule.documentation()


def list_rules_text(kb, rules, release: str = "current") -> str:
    lines = ["Checks (code, name, severity, fix, summary):", ""]
    fixes = {r.code: fix_kind(r) for r in rules}
    labels = {code: "-" if kind == "none" else kind for code, kind in fixes.items()}
    width = max(map(len, labels.values()), default=1)
    for r in rules:
        lines.append(f"  {r.code}  {r.name:<26} {r.severity:<8} {labels[r.code]:<{width}}  {r.summary}")
    legend = [f"{kind} = {FIX_KINDS[kind]}" for kind in FIX_KINDS if kind != "none" and kind in fixes.values()]
    lines += ["", f"  Fix: {'; '.join(legend + ['- = ' + FIX_KINDS['none']])}.",
              "  A check may fix only some of its findings (`npu-audit --explain CODE` says which)."]
    lines += ["", f"Options ({len(kb.options)}; field, values, default, {release} release):", ""]
    width = max(len(k) for k in kb.options)
    for key in sorted(kb.options, key=str.lower):
        spec = kb.options[key]
        view = spec.for_release(release)
        default = _value(view.default) if view.default is not None else "-"
        life = view.lifecycle.status + (f"->{view.lifecycle.replacement}" if view.lifecycle.replacement else "")
        domain = view.domain.describe()
        if len(domain) > 48:
            domain = domain[:45] + "..."
        lines.append(f"  {key:<{width}}  .{view.field}  {domain:<48}  {default:<16} {life}")
    table = getattr(kb, "tf2", None)
    if table is not None:
        lines += ["", f"TensorFlow 2 options of npu_device.global_options() ({len(table.options)}; values, default, "
                  f"parameter_map key):", ""]
        width2 = max(len(p) for p in table.options)
        for path in sorted(table.options):
            o = table.options[path]
            allowed = o.allowed_in(release)
            domain = "any" if allowed is None else ", ".join(_value(v) for v in allowed)
            if len(domain) > 48:
                domain = domain[:45] + "..."
            default = _value(o.default_in(release)) if o.default_in(release) is not None else "-"
            if len(default) > 16:
                default = default[:13] + "..."
            state = ("not in this release" if not o.exists_in(release)
                     else "deprecated" if o.deprecation(release) else "")
            lines.append(f"  {path:<{width2}}  {domain:<48}  {default:<10} {o.key or '-'}  {state}".rstrip())
    lines += ["", "`npu-audit --explain KEY` shows an option in full (a TF2 path such as dump_config.dump_path "
              "too); `--explain CODE` a check."]
    return "\n".join(lines) + "\n"


def list_rules_json(kb, rules, release: str = "current") -> dict:
    return {
        "version": 1,
        "release": release,
        "rules": [rule_summary(r) for r in rules],
        "options": [option_summary(kb, kb.options[k], release) for k in sorted(kb.options)],
        "unread_keys": [{"key": u.key, "reason": u.reason, "suggestion": u.suggestion} for u in kb.unread_keys.values()],
        "products": [{"id": p.id, "name": p.name, "aliases": list(p.aliases)} for p in kb.products.values()],
        "tf2_options": [tf2_option_summary(kb, p, release) for p in sorted(getattr(kb.tf2, "options", {}))],
    }


def find_subject(kb, rules, query: str) -> tuple[Optional[str], Any]:
    """('rule', rule) or ('option', key) or ('unread', key) or ('tf2', global_options() path) or
    ('relation', relation) or (None, suggestions)."""
    q = query.strip()
    for r in rules:
        if r.code == q.upper() or r.name == q.lower():
            return "rule", r
    if q in kb.options:
        return "option", q
    if q in kb.unread_keys:
        return "unread", q
    path = tf2_path(kb, q)
    if path is not None:
        return "tf2", path
    relation = next((rel for rel in kb.relations if rel.id == q.lower()), None)
    if relation is not None:
        return "relation", relation
    pool = list(kb.options) + [r.name for r in rules] + [r.code for r in rules] + [rel.id for rel in kb.relations]
    return None, suggestions(q, pool)


# ---------------------------------------------------------------------------------------------
# relations (rules/relations.toml)

#: How a relation's conditions read (rules/README.md, "Conditions").
_COMPARE = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
#: The adapters as --explain names them.
ADAPTER_TEXT = {"tf1": "the TF1 adapter (parameter_map, NPURunConfig)", "tf2": "the TF2 adapter (global_options())"}


def condition_text(c: Condition) -> str:
    """A condition in words: ``enable_dump = True and dump_path is not set``."""
    if c.op == "set":
        return f"{c.key} is set" if c.operand in (None, True) else f"{c.key} is not set"
    if c.op == "unset":
        return f"{c.key} is not set"
    if c.op == "is":
        return f"{c.key} = {_value(c.operand)}"
    if c.op in ("in", "not_in"):
        values = ", ".join(_value(v) for v in c.operand)
        return f"{c.key} {'in' if c.op == 'in' else 'not in'} [{values}]"
    if c.op in _COMPARE:
        return f"{c.key} {_COMPARE[c.op]} {c.operand}"
    if c.op == "gt_key":
        return f"{c.key} > {c.operand}" + (f" × {c.factor:g}" if c.factor != 1 else "")
    if c.op == "not":
        return f"not ({condition_text(c.children[0])})"
    joined = f" {'and' if c.op == 'all' else 'or'} ".join(
        f"({condition_text(child)})" if child.op in ("all", "any") else condition_text(child) for child in c.children)
    return joined


def relation_summary(rel: Relation) -> dict:
    """A relation of rules/relations.toml as data (--explain <relation id> --format json)."""
    return {
        "id": rel.id,
        "relation_kind": rel.kind,
        "check": RELATION_CHECKS[rel.kind],
        "subject": rel.subject,
        "keys": list(rel.keys),
        "when": condition_text(rel.when) if rel.when is not None else None,
        "require": condition_text(rel.require) if rel.require is not None else None,
        "severity": rel.severity,
        "failure": rel.failure,
        "enforced_by": list(rel.enforced_by),
        "message": rel.message,
        "hint": rel.hint,
        "releases": list(rel.releases),
        "examples": [relation_example_summary(e) for e in rel.examples],
        "cite": [c.render() for c in rel.cite],
    }


_KIND_TEXT = {
    "requires": "when the condition holds, the requirement must hold",
    "together": "the options are set all together or not at all",
    "excludes": "the condition describes a combination that must not happen",
    "overrides": "when the condition holds, the subject has no effect",
    "gated": "the subject is only read when the condition holds",
}


def explain_relation(rel: Relation, markdown: bool = False) -> str:
    """Everything about one relation: what it says, how severe, which adapter enforces it, its examples
    (each after the TF1 prelude of the rule examples) and its sources."""
    s = relation_summary(rel)
    lines = [f"# {s['id']}" if markdown else s["id"], "",
             f"{s['relation_kind']} relation, reported by {s['check']}: {_KIND_TEXT[s['relation_kind']]}.", "",
             s["message"], ""]

    def row(label: str, text: str) -> None:
        lines.append(f"- **{label}:** {text}" if markdown else f"  {label + ':':<12} {text}")

    row("subject", s["subject"])
    row("options", ", ".join(s["keys"]))
    if s["when"]:
        row("when", s["when"])
    if s["require"]:
        row("requires", s["require"])
    severity = f"{s['severity']} (failure: {s['failure']})"
    if s["enforced_by"]:
        others = [a for a in ADAPTER_TEXT if a not in s["enforced_by"]]
        severity += "; the failure is the check of " + " and ".join(ADAPTER_TEXT[a] for a in s["enforced_by"])
        if others and s["severity"] == "error":
            severity += "; a config " + " or ".join(ADAPTER_TEXT[a] for a in others) + " reads gets a warning"
    row("severity", severity)
    row("releases", ", ".join(s["releases"]))
    if s["hint"]:
        row("instead", s["hint"])
    if s["examples"]:
        lines += ["", "## Examples" if markdown else "  examples (each after a TF1 prelude: custom_op is the "
                  "NpuOptimizer entry of a ConfigProto):"]
        if markdown:
            lines += ["Each follows a TF1 prelude: `custom_op` is the NpuOptimizer entry of a ConfigProto.", ""]
        for e in s["examples"]:
            if e["valid"]:
                head = "not reported"
            else:
                head = f"reported at line {e['line']}, column {e['column']}"
                if e["severity"]:
                    head += f", {e['severity']}"
            if e["release"]:
                head += f" ({e['release']} release)"
            code = e["code"].rstrip("\n").splitlines()
            if markdown:
                lines += [f"{head[:1].upper()}{head[1:]}:", "```python", *code, "```"]
                if not e["valid"]:
                    lines += [f"npu-audit reports: {e['message']}"]
                lines.append("")
            else:
                lines += [f"    {head}:", *(f"      {c}" for c in code)]
                if not e["valid"]:
                    lines.append(f"      -> {e['message']}")
    lines += ["", "Sources:" if not markdown else "**Sources:**"]
    lines += [f"  - {c}" if not markdown else f"- {c}" for c in s["cite"]]
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------------------------------------
# TensorFlow 2: options of npu_device.global_options()


def tf2_path(kb, query: str) -> Optional[str]:
    """The global_options() option path a query names ("dump_config.dump_path", with or without a
    leading "global_options()." or "npu_device.global_options()."), or None."""
    table = getattr(kb, "tf2", None)
    if table is None:
        return None
    q = query.strip()
    for prefix in ("npu_device.global_options().", "npu.global_options().", "global_options()."):
        if q.startswith(prefix):
            q = q[len(prefix):]
            break
    return q if q in table.options else None


def tf2_option_summary(kb, path: str, release: str = "current") -> dict:
    o = kb.tf2.options[path]
    dep = o.deprecation(release)
    return {
        "path": path,
        "attribute": f"npu_device.global_options().{path}",
        "group": o.group,
        "class": kb.tf2.groups[o.group].cls,
        "key": o.key,
        "summary": o.summary or (kb.options[o.key].summary if o.key else ""),
        "default": o.default_in(release),
        "allowed": list(o.allowed_in(release)) if o.allowed_in(release) is not None else None,
        "allow_none": o.allow_none,
        "releases": list(o.releases),
        "deprecated": None if dep is None else {"replacement": dep["replacement"]},
        "removed": o.removed if not o.exists_in(release) else None,
        "no_effect": o.no_effect,
        "cite": [c.render() for c in o.cite],
    }


def explain_tf2_option(kb, path: str, release: str = "current", markdown: bool = False) -> str:
    s = tf2_option_summary(kb, path, release)
    title = f"global_options().{path} (TensorFlow 2)"
    lines = [f"# {title}" if markdown else title, "", s["summary"], ""]

    def row(label: str, text: str) -> None:
        lines.append(f"- **{label}**: {text}" if markdown else f"  {label + ':':<16} {text}")

    code = f"{s['attribute']} = ..."
    row("attribute", f"`{code}`" if markdown else code)
    row("group", f"{s['group'] or '(the option object)'} ({s['class']})")
    if s["allowed"] is None:
        row("values", "any value (passed on to the device as a string)")
    else:
        values = ", ".join(_value(v) for v in s["allowed"]) + (", None" if s["allow_none"] else "")
        row("values", f"one of {values}; others raise TypeError/ValueError at the assignment")
    row("default", _value(s["default"]) if s["default"] is not None else "None (not passed on)")
    if s["removed"] is not None:
        instead = f"; write global_options().{s['removed']['instead']}" if s["removed"].get("instead") else ""
        row(f"{release} release", f"not an option (assigning it raises ValueError){instead}")
    elif s["deprecated"] is not None:
        repl = s["deprecated"]["replacement"]
        row(f"{release} release", "deprecated" + (f" -> use global_options().{repl}" if repl else ""))
    if s["no_effect"]:
        row("no effect", s["no_effect"])
    row("parameter_map key", s["key"] or "none (a TF2-only option)")
    lines += ["", "Sources:" if not markdown else "**Sources:**"]
    lines += [f"  - {c}" if not markdown else f"- {c}" for c in s["cite"]]
    text = "\n".join(lines).rstrip() + "\n"
    if s["key"] and s["key"] in kb.options:
        sep = "\n---\n\n" if markdown else "\nThe parameter_map option it is passed on as:\n\n"
        text += sep + explain_option(kb, s["key"], release, markdown=markdown)
    return text


# ---------------------------------------------------------------------------------------------
# editor hovers


def _md_value(v: Any) -> str:
    return f"`{v!r}`" if isinstance(v, str) else f"`{v}`"


def value_markdown(kb, key: str, value: str, release: str) -> str:
    """Hover text for a value string written to option ``key``: domain, value facts, v2 mapping."""
    spec = kb.options[key]
    view = spec.for_release(release)
    domain = view.domain
    lines = [f"**{key}** = {_md_value(value)}", ""]
    if domain.kind == "enum":
        values = [v for v in domain.values if isinstance(v, str)]
        same = (lambda a, b: a == b) if domain.case_sensitive else (lambda a, b: a.lower() == b.lower())
        if any(same(value, v) for v in values):
            lines.append(f"- valid value of `{key}` ({domain.describe()})")
        else:
            close = did_you_mean(value, values)
            hint = f"; did you mean {_md_value(close)}?" if close else ""
            lines.append(f"- **not a valid value** of `{key}`, which takes {domain.describe()}{hint}")
    else:
        lines.append(f"- `{key}` takes {domain.describe()}")
    if view.default is not None and view.default == value:
        lines.append("- this is the default")
    fact = spec.value_fact(value)
    if fact is not None:
        if fact.same_as is not None:
            lines.append(f"- same as {_md_value(fact.same_as)}")
        if fact.preferred is not None and fact.preferred != fact.same_as:
            lines.append(f"- prefer {_md_value(fact.preferred)}")
        elif fact.preferred is not None:
            lines.append(f"- prefer writing {_md_value(fact.preferred)}")
        if fact.scenarios:
            lines.append(f"- only for {'/'.join(fact.scenarios)}")
        if fact.products:
            names = [kb.products[p].name if p in kb.products else p for p in fact.products]
            lines.append(f"- only on {', '.join(names)}")
        if fact.releases:
            lines.append(f"- accepted in the {'/'.join(fact.releases)} release(s) only")
        if fact.note:
            lines.append(f"- {fact.note}")
    for migration in kb.migrations.values():
        if migration.from_key != key or not migration.to_key:
            continue
        row = migration.row(value)
        if row is None:
            continue
        if row.new is None:
            lines.append(f"- `{migration.to_key}`: no equivalent value" + (f" — {row.note}" if row.note else ""))
        else:
            exact = "exact" if row.exact else "not exact"
            note = f" — {row.note}" if row.note and not row.exact else ""
            lines.append(f"- `{migration.to_key}`: {_md_value(row.new)} ({exact}){note}")
    lc = view.lifecycle
    if lc.status != "supported":
        text = f"- `{key}` is {lc.status} in the {release} release"
        if lc.replacement:
            text += f"; use `{lc.replacement}`"
        lines.append(text)
    return "\n".join(lines).rstrip() + "\n"
