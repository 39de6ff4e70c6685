"""Editor support for TensorFlow 2 option chains: ``npu_device.global_options().<group>.<option>``.

Hover over a group or option name of a chain written out from ``global_options()`` shows what the
knowledge base knows about it (rules/tf2_options.toml, and the parameter_map option it is passed on as);
hover over the value string of such an assignment says whether the option accepts it. Completion after
``global_options().`` (or one of its groups and a dot) offers the group's options and sub-groups, and
inside the value string of an option with a list of values, those values. Names bound to the object
(``opts = npu.global_options()``) are not followed here: the editor sees one line at a time.

Plain functions over text; :mod:`npu_audit.lsp_server` calls them before its parameter_map handlers.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from npu_audit.text import suggestions

_CHAIN = re.compile(r"\bglobal_options\s*\(\s*\)(?P<rest>(?:\s*\.\s*[A-Za-z_]\w*)*)")
_PART = re.compile(r"\s*\.\s*(?P<name>[A-Za-z_]\w*)")
_COMPLETE = re.compile(r"\bglobal_options\s*\(\s*\)(?P<groups>(?:\s*\.\s*[A-Za-z_]\w*)*)\s*\.\s*(?P<partial>\w*)$")
_VALUE = re.compile(r"""\s*=(?!=)\s*[bBuU]?(?P<q>['"])(?P<partial>[^'"\\\r\n]*)$""")
_STRING = re.compile(r"""\s*=(?!=)\s*(?P<prefix>[bBuUrR]{0,2})(?P<q>['"])(?P<body>(?:\\.|(?!(?P=q))[^\\\r\n])*)(?P=q)""")
_NAME_CHARS = re.compile(r"\w*")
_VALUE_CHARS = re.compile(r"""[^'"\\\s,)]*""")

_KIND_PROPERTY, _KIND_MODULE, _KIND_ENUM_MEMBER, _TAG_DEPRECATED = 10, 9, 20, 1


def _chains(line: str):
    """(match, [(name, start, end), ...]) for every global_options() chain on the line."""
    for m in _CHAIN.finditer(line):
        parts, at = [], m.start("rest")
        for p in _PART.finditer(line, at, m.end("rest")):
            if p.start() != at:
                break
            parts.append((p.group("name"), p.start("name"), p.end("name")))
            at = p.end()
        yield m, parts


def hover(kb, release: str, line_text: str, col: int) -> Optional[tuple[str, int, int]]:
    """(markdown, start, end) for a name or value of a global_options() chain at code-point ``col``."""
    table = getattr(kb, "tf2", None)
    if table is None or "global_options" not in line_text:
        return None
    for m, parts in _chains(line_text):
        names = [p[0] for p in parts]
        for i, (name, start, end) in enumerate(parts):
            if start <= col <= end:
                return _name_markdown(kb, release, names[:i], name), start, end
        if parts:
            s = _STRING.match(line_text, m.end("rest"))
            if s is not None and s.start("q") <= col <= s.end():
                path = ".".join(names)
                return _value_markdown(kb, release, path, s.group("body")), s.start("q"), s.end()
    return None


def _name_markdown(kb, release: str, groups: list[str], name: str) -> str:
    from npu_audit.explain import explain_tf2_option

    table = kb.tf2
    group = ".".join(groups)
    path = f"{group}.{name}" if group else name
    if table.is_group(path):
        members = sorted(table.members(path, release))
        return (f"# global_options().{path}\n\nOption group `{table.groups[path].cls}` of the TF2 adapter. "
                "Its options and groups:\n\n" + "\n".join(f"- `{m}`" for m in members) + "\n")
    if path in table.options:
        return explain_tf2_option(kb, path, release, markdown=True)
    cls = table.groups[group].cls if table.is_group(group) else "NpuConfig"
    text = (f"# global_options().{path}\n\n**Unknown option**: `{cls}` has no option `{name}`; assigning it "
            "raises ValueError, so the script stops at that line.\n")
    elsewhere = [o.path for o in table.with_name(name) if o.exists_in(release)]
    close = suggestions(name, table.members(group, release) if table.is_group(group) else [])
    if elsewhere:
        text += "\nIt belongs to " + ", ".join(f"`global_options().{p}`" for p in elsewhere) + ".\n"
    elif close:
        text += "\nDid you mean " + ", ".join(f"`{c}`" for c in close) + "?\n"
    return text


def _value_markdown(kb, release: str, path: str, value: str) -> str:
    table = kb.tf2
    option = table.options.get(path)
    if option is None:
        return f"**global_options().{path}** = `{value!r}`\n\n- not an option of the TF2 adapter\n"
    lines = [f"**global_options().{path}** = `{value!r}`", ""]
    rejection = option.rejection(value, release) if option.exists_in(release) else None
    if option.allowed_in(release) is None:
        lines.append("- any value is accepted and passed on to the device as a string")
    elif rejection is None:
        lines.append("- accepted by the option object")
    else:
        lines.append(f"- **rejected**: assigning it raises {rejection[0]} ({rejection[1]})")
    text = "\n".join(lines) + "\n"
    if option.key and option.key in kb.options:
        from npu_audit.explain import value_markdown

        text += "\n---\n\n" + value_markdown(kb, option.key, value, release)
    return text


def completion(kb, release: str, line_text: str, col: int) -> Optional[tuple[list[dict], int, int]]:
    """(items without ranges, start, end) for the cursor on a global_options() chain, or None."""
    table = getattr(kb, "tf2", None)
    if table is None or "global_options" not in line_text:
        return None
    prefix = line_text[:col]
    m = _COMPLETE.search(prefix)
    if m is not None:
        groups = [p.group("name") for p in _PART.finditer(m.group("groups"))]
        group = ".".join(groups)
        if not table.is_group(group):
            return None
        end = _NAME_CHARS.match(line_text, col).end()
        return _member_items(kb, release, group), m.start("partial"), end
    for chain, parts in _chains(prefix):
        if not parts:
            continue
        v = _VALUE.match(prefix, chain.end("rest"))
        if v is None or v.end() != len(prefix):
            continue
        option = table.options.get(".".join(p[0] for p in parts))
        allowed = option.allowed_in(release) if option is not None else None
        values = [a for a in allowed or () if isinstance(a, str)]
        if not values:
            return None
        end = _VALUE_CHARS.match(line_text, col).end()
        items = [{"label": a, "kind": _KIND_ENUM_MEMBER,
                  "detail": f"global_options().{option.path}" + (" — default" if option.default_in(release) == a else ""),
                  "documentation": {"kind": "markdown", "value": _value_markdown(kb, release, option.path, a)},
                  "sortText": f"{i:03d}", "filterText": a, "newText": a} for i, a in enumerate(values)]
        return items, v.start("partial"), end
    return None


def _member_items(kb, release: str, group: str) -> list[dict[str, Any]]:
    from npu_audit.explain import explain_tf2_option

    table = kb.tf2
    items = []
    for name in sorted(table.members(group, release)):
        path = f"{group}.{name}" if group else name
        if table.is_group(path):
            items.append({"label": name, "kind": _KIND_MODULE, "detail": f"group {table.groups[path].cls}",
                          "documentation": {"kind": "markdown", "value": _name_markdown(kb, release, group.split(".") if group else [], name)},
                          "sortText": "0" + name, "filterText": name, "newText": name})
            continue
        option = table.options[path]
        summary = option.summary or (kb.options[option.key].summary if option.key in kb.options else "")
        allowed = option.allowed_in(release)
        values = "any value" if allowed is None else ", ".join(repr(a) for a in allowed)
        deprecated = option.deprecation(release) is not None or bool(option.no_effect)
        item = {"label": name, "kind": _KIND_PROPERTY, "detail": f"{values} — {summary}",
                "documentation": {"kind": "markdown", "value": explain_tf2_option(kb, path, release, markdown=True)},
                "sortText": ("2" if deprecated else "1") + name, "filterText": name, "newText": name}
        if deprecated:
            item["tags"] = [_TAG_DEPRECATED]
        items.append(item)
    return items
