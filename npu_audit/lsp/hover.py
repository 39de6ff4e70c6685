"""Hover: what the knowledge base says about the option, keyword or value under the cursor.

In order: a name or value string of a TensorFlow 2 ``global_options()`` chain (rules/tf2_options.toml,
and the parameter_map option it is passed on as); an option key ``parameter_map["<key>"]`` (known,
known but read by no adapter version, or unknown with the closest names); the value string of a
``parameter_map`` write (the value's facts); a keyword of ``NPURunConfig(...)`` or a config object; the
value string of such a keyword. The texts come from :mod:`npu_audit.explain`, as ``--explain`` shows them.
"""

from __future__ import annotations

from typing import Optional

from npu_audit.explain import explain_option, explain_tf2_option, value_markdown
from npu_audit.lsp.cursor import (
    ASSIGN_AFTER,
    KEY_RE,
    KW_BEFORE_VALUE,
    STRING_RE,
    TF2_STRING,
    WORD_RE,
    WRITE_RE,
    enclosing_call,
    runconfig_param,
    tf2_chains,
)
from npu_audit.lsp.positions import Span, line_offset
from npu_audit.text import split_lines, suggestions


def key_markdown(kb, key: str, release: str) -> str:
    """Hover text for an option key (known, known-but-unread, or unknown)."""
    if key in kb.options:
        return explain_option(kb, key, release, markdown=True)
    unread = kb.unread_keys.get(key)
    if unread is not None:
        text = f"# {key}\n\n**Not read by any adapter version**: {unread.reason}\n"
        if unread.suggestion:
            text += f"\nUse instead: `{unread.suggestion}`\n"
        return text
    text = f"# {key}\n\n**Unknown option**: no adapter version reads this key, so the setting has no effect.\n"
    close = suggestions(key, kb.options)
    if close:
        text += "\nDid you mean " + ", ".join(f"`{c}`" for c in close) + "?\n"
    return text


def param_markdown(kb, callee: str, param, release: str) -> str:
    """Hover text for an NPURunConfig (or config object) keyword."""
    head = f"**{callee}({param.name}=...)**"
    if param.key and param.key in kb.options:
        text = f"{head} writes `parameter_map[\"{param.key}\"].{param.field or kb.options[param.key].field}`"
        if param.written:
            text += f" ({param.written})"
        text += "".join(f"\n\n{note}" for note in _param_warnings(param))
        return text + "\n\n---\n\n" + explain_option(kb, param.key, release, markdown=True)
    parts = [head, ""]
    if param.key:
        parts.append(f"Writes `parameter_map[\"{param.key}\"]`, a key no adapter version reads.")
    elif param.object:
        parts.append(f"Takes a `{param.object}(...)`; hover its keywords for the options they set.")
    else:
        parts.append("Not a parameter_map session option.")
    if param.note:
        parts += ["", param.note]
    for note in _param_warnings(param):
        parts += ["", note]
    return "\n".join(parts) + "\n"


def _param_warnings(param) -> list[str]:
    """A keyword's hazard and what to write instead, as its hover shows them."""
    return ([f"⚠ {param.hazard}"] if param.hazard else []) + ([f"Instead: {param.instead}."] if param.instead else [])


# -- TensorFlow 2 ------------------------------------------------------------------------------------


def tf2_name_markdown(kb, release: str, groups: list[str], name: str) -> str:
    """Hover text for a group or option name of a ``global_options()`` chain below ``groups``."""
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


def tf2_value_markdown(kb, release: str, path: str, value: str) -> str:
    """Hover text for ``value`` assigned to the option ``global_options().<path>``."""
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
        text += "\n---\n\n" + value_markdown(kb, option.key, value, release)
    return text


def tf2_hover(kb, release: str, line_text: str, col: int) -> Optional[tuple[str, int, int]]:
    """(markdown, start, end) for a name or value of a global_options() chain at code-point ``col``."""
    table = getattr(kb, "tf2", None)
    if table is None or "global_options" not in line_text:
        return None
    for m, parts in tf2_chains(line_text):
        names = [p[0] for p in parts]
        for i, (name, start, end) in enumerate(parts):
            if start <= col <= end:
                return tf2_name_markdown(kb, release, names[:i], name), start, end
        if parts:
            s = TF2_STRING.match(line_text, m.end("rest"))
            if s is not None and s.start("q") <= col <= s.end():
                path = ".".join(names)
                return tf2_value_markdown(kb, release, path, s.group("body")), s.start("q"), s.end()
    return None


# -- the hover ---------------------------------------------------------------------------------------


def hover_at(kb, release: str, text: str, line: int, col: int) -> tuple[str, Span] | None:
    """Markdown and span for what is at 0-based ``line`` / code-point ``col`` of ``text``, or None."""
    lines = split_lines(text)
    if not 0 <= line < len(lines):
        return None
    s = lines[line]
    # 0. TensorFlow 2: a name or value of a global_options() chain
    tf2 = tf2_hover(kb, release, s, col)
    if tf2 is not None:
        return tf2[0], Span(line, tf2[1], tf2[2])
    # 1. an option key: parameter_map["<key>"]
    for m in KEY_RE.finditer(s):
        if m.start("q") <= col <= m.end("key") + 1:
            return key_markdown(kb, m.group("key"), release), Span(line, m.start("q"), m.end("key") + 1)
    # 2. a value string of a parameter_map write
    for m in WRITE_RE.finditer(s):
        key = m.group("key")
        if key not in kb.options:
            continue
        for sm in STRING_RE.finditer(s, m.end()):
            if sm.start() <= col <= sm.end():
                return value_markdown(kb, key, sm.group("body"), release), Span(line, sm.start(), sm.end())
    # 3. a keyword of NPURunConfig(...) / DumpConfig(...) & co.
    base = line_offset(text, line)
    for m in WORD_RE.finditer(s):
        if m.start() <= col <= m.end() and ASSIGN_AFTER.match(s, m.end()):
            callee = enclosing_call(text, base + m.start())
            param = runconfig_param(kb, callee, m.group())
            if param is not None and callee is not None:
                return param_markdown(kb, callee, param, release), Span(line, m.start(), m.end())
            break
    # 4. a value string of such a keyword
    for sm in STRING_RE.finditer(s):
        if sm.start() <= col <= sm.end():
            km = KW_BEFORE_VALUE.search(s, 0, sm.start())
            if km:
                callee = enclosing_call(text, base + km.start("kw"))
                param = runconfig_param(kb, callee, km.group("kw"))
                if param is not None and param.key in kb.options:
                    return value_markdown(kb, param.key, sm.group("body"), release), Span(line, sm.start(), sm.end())
            break
    return None
