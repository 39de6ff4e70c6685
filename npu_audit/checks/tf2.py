"""TensorFlow 2 parts of the checks: writes to ``npu_device.global_options()``.

TF2 writes (``via == "global_options"``) sit in the same effective-config model as parameter_map
writes, keyed by the TF1 key each option is passed on as, so relations, scenario and product limits,
value facts, lifecycles and migrations of the knowledge base apply to them unchanged. What differs is
how the option object reacts at assignment (rules/tf2_options.toml): an attribute its group does not
define raises ValueError, a value outside its list raises TypeError or ValueError. The rules that
report those (unknown-option, invalid-value, no-effect, option-after-open) call the functions here for
TF2 writes; each function yields findings of the rule it is given.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Optional

from npu_audit.checks.base import describe
from npu_audit.checks.helpers import edit_for, fixable_here
from npu_audit.extract.model import TF2_OPTIONS_KIND as KIND
from npu_audit.findings import Finding, Fix, Related
from npu_audit.text import did_you_mean

#: The start of the TF2 examples of the rules (Rule.valid / Rule.invalid).
PRELUDE = "import npu_device as npu\n\n"

#: How the TF2 adapter reacts to a malformed value of an option it passes on unchecked.
UNCHECKED = ("global_options() accepts it, but open() passes it on to the device unchecked, where it fails "
             "or is ignored when the graph is compiled")


def tf2_writes(ctx) -> Iterator[tuple[Any, Any]]:
    """(write, option or None) for each user write to global_options()."""
    table = ctx.kb.tf2
    for _config, _entry, w in ctx.user_writes():
        if w.via == KIND and w.option_path is not None:
            yield w, table.options.get(w.option_path) if table is not None else None


def shown(path: str) -> str:
    return f"global_options().{path}"


_PM_WRITE = re.compile(r"""(?:\w+\.)?parameter_map\[\\?["'](?P<key>\w+)\\?["']\]\.[bis] = """)


def wording(ctx, w, message: Optional[str]) -> Optional[str]:
    """A message or hint of the knowledge base (written for parameter_map) as a TF2 user reads it:
    parameter_map writes become global_options() assignments, keys whose TF2 option has another name are
    given by their TF2 path, and "the same (NpuOptimizer) entry" is dropped (there is one object)."""
    table = ctx.kb.tf2
    if w is None or w.via != KIND or table is None or not message:
        return message

    def assignment(m):
        option = table.by_key(m.group("key"))
        return f"{shown(option.path)} = " if option is not None else m.group(0)

    message = _PM_WRITE.sub(assignment, message)
    message = message.replace(" in the same NpuOptimizer entry", "").replace(" in the same entry", "")
    for option in table.options.values():
        if option.key and option.key != option.name:
            message = re.sub(rf"\b{re.escape(option.key)}\b", option.path, message)
    return message


#: The adapters as a message names them.
ADAPTER_NAMES = {"tf1": "the TF1 adapter", "tf2": "the TF2 adapter"}


def adapter_of(w) -> str:
    """The adapter that reads a write: "tf2" for global_options(), else "tf1" (parameter_map, NPURunConfig)."""
    return "tf2" if w is not None and w.via == KIND else "tf1"


def unenforced(w, relation) -> bool:
    """Whether the failure a relation names is another adapter's own check than the one that reads ``w``
    (Relation.enforced_by): the adapter reading it passes the options on unchecked."""
    return bool(relation.enforced_by) and adapter_of(w) not in relation.enforced_by


def relation_note(w, relation) -> str:
    """For a write whose adapter does not enforce the relation, a note that the failure it describes is
    another adapter's check (the documented rule still holds)."""
    if not unenforced(w, relation):
        return ""
    whose = " and ".join(ADAPTER_NAMES[a] for a in relation.enforced_by)
    return (f" (that failure is {whose}'s check: {ADAPTER_NAMES[adapter_of(w)]} passes these options on "
            "unchecked, to GE)")


def reaction(w, text: str) -> str:
    """The adapter's reaction to a bad value, for TF2 writes the TF2 one."""
    return UNCHECKED if w.via == KIND else text


# ---------------------------------------------------------------------------------------------
# unknown-option


def unknown_options(rule, ctx) -> Iterator[Finding]:
    table = ctx.kb.tf2
    if table is None:
        return
    release = ctx.settings.release
    for w, option in tf2_writes(ctx):
        if option is not None and option.exists_in(release):
            continue
        group, _, name = w.option_path.rpartition(".")
        fix, where = None, w.key_range or w.range
        if option is not None:  # an option of another release
            cls = table.groups[option.group].cls
            message = (f"'{w.option_path}' is not an option of global_options() in the {release} TF2 adapter: "
                       f"assigning it raises ValueError ({cls} has no option {name}), so the script stops here")
            removed = option.removed or {}
            hint = removed.get("note") or "remove this line"
            if removed.get("instead"):
                hint += f"; write {shown(removed['instead'])} instead"
        elif not table.is_group(group):
            known, _, missing = _known_prefix(table, group)
            cls = table.groups[known].cls
            guess = did_you_mean(missing, [m for m in table.members(known, release) if table.is_group(_join(known, m))])
            message = (f"global_options() has no group '{_join(known, missing)}': reading it raises AttributeError "
                       f"({cls} has no attribute {missing}), so the script stops here")
            hint = f"did you mean '{_join(known, guess)}'?" if guess else f"the groups of {cls}: " + (
                ", ".join(m for m in table.members(known, release) if table.is_group(_join(known, m))) or "none")
            where = w.range
        else:
            cls = table.groups[group].cls
            members = table.members(group, release)
            elsewhere = [o for o in table.with_name(name) if o.exists_in(release) and o.group != group]
            tf1 = ctx.kb.options.get(name)
            guess = did_you_mean(name, members)
            if elsewhere:
                right = elsewhere[0].path
                message = (f"'{name}' is not an option of {_where(group)}: it belongs to "
                           f"{_where(elsewhere[0].group)}, and assigning it here raises ValueError ({cls} has no "
                           f"option {name}), so the script stops here")
                hint = f"write {shown(right)}"
                fix = _insert_groups(ctx, w, group, right)
            elif tf1 is not None and table.by_key(name) is not None:
                right = table.by_key(name).path
                message = (f"'{name}' is the TensorFlow 1 name of {shown(right)}; the TF2 option object has no option "
                           f"{name}, so assigning it raises ValueError ({cls} has no option {name})")
                hint = f"write {shown(right)}"
            elif tf1 is not None:
                only = table.tf1_only.get(name)
                message = (f"'{name}' is a TensorFlow 1 session option (parameter_map); the TF2 option object has "
                           f"no such option, so assigning it raises ValueError ({cls} has no option {name})")
                hint = only["hint"] if only else "remove this line"
            else:
                message = (f"unknown option '{name}' of {_where(group)}: assigning it raises ValueError "
                           f"({cls} has no option {name}), so the script stops here")
                if guess:
                    hint = f"did you mean {shown(_join(group, guess))}?"
                    fix = _rename(ctx, w, guess)
                else:
                    hint = f"{cls} defines: " + ", ".join(sorted(members))
        f = ctx.report(rule, w, message, at=where, hint=hint, option=w.option_path, fix=fix)
        if f:
            yield f


def _join(group: str, name: Optional[str]) -> str:
    return f"{group}.{name}" if group and name else (name or group)


def _where(group: str) -> str:
    return "global_options()" if not group else shown(group)


def _known_prefix(table, group: str) -> tuple[str, str, str]:
    """The longest known group above ``group``, and the first unknown part below it."""
    parts = group.split(".")
    known = ""
    for i, part in enumerate(parts):
        candidate = _join(known, part)
        if not table.is_group(candidate):
            return known, ".".join(parts[i:]), part
        known = candidate
    return known, "", ""


def _insert_groups(ctx, w, group: str, right: str) -> Optional[Fix]:
    """Unsafe fix for an option written in the wrong group: insert the missing groups before its name,
    when the right path extends the group the script is in."""
    import npu_audit.syntax as cst  # (checks are imported where libcst is not: a warm run)

    prefix = f"{group}." if group else ""
    if not right.startswith(prefix) or not isinstance(w.key_node, cst.Name):
        return None
    missing = right[len(prefix):].rpartition(".")[0]
    if not missing or not fixable_here(ctx, w) or w.key_range is None:
        return None
    r = w.key_range
    return Fix("unsafe", f"Write {shown(right)}", (edit_for(_empty_at(r), f"{missing}."),))


def _rename(ctx, w, guess: str) -> Optional[Fix]:
    import npu_audit.syntax as cst

    if not isinstance(w.key_node, cst.Name) or not fixable_here(ctx, w) or w.key_range is None:
        return None
    return Fix("unsafe", f"Rename '{w.key_node.value}' to '{guess}'", (edit_for(w.key_range, guess),))


def _empty_at(r):
    from npu_audit.extract.ranges import Range

    return Range(r.line, r.column, r.line, r.column)


# ---------------------------------------------------------------------------------------------
# invalid-value


def invalid_values(rule, ctx) -> Iterator[Finding]:
    release = ctx.settings.release
    for w, option in tf2_writes(ctx):
        if option is None or not option.exists_in(release) or not w.value.resolved:
            continue
        value = w.value.python
        allowed = option.allowed_in(release)
        if allowed is None:
            continue
        if w.value.origin == "flag-default" and (value is None or (isinstance(value, str) and not any(
                isinstance(a, str) for a in allowed))):
            continue  # a flag default: None means "not given"; argparse's type= may convert a str default
        rejection = option.rejection(value, release)
        if rejection is None:
            continue
        exc, detail = rejection
        choices = ", ".join(describe(a) if isinstance(a, str) else str(a) for a in allowed)
        if exc == "ValueError":  # its text repeats the whole list the message already gives
            detail = detail.split(" not in optional list ", 1)[0] + " not in optional list"
        flag = (f" (this is the default of flag '{w.value.flag}'; the real run may override it)"
                if w.value.origin == "flag-default" else "")
        message = (f"{_describe(value)} is not accepted by {shown(option.path)}, which takes one of {choices}: "
                   f"assigning it raises {exc} ({detail}), so the script stops here{flag}")
        meant = _meant(value, allowed)
        if meant is not _NONE:
            hint = f"write {_literal(meant)}"
        else:
            guess = did_you_mean(str(value), [str(a) for a in allowed])
            hint = f"did you mean {guess!r}?" if guess else f"write one of {choices}"
        fix = None
        if (meant is not _NONE and fixable_here(ctx, w) and w.value.origin == "literal"
                and w.value_node is not None and w.value_node is w.value.source_node and w.value_range is not None):
            fix = Fix("unsafe", f"Write {_literal(meant)}", (edit_for(w.value_range, _literal(meant)),))
        f = ctx.report(rule, w, message, at="value", hint=hint, option=option.path, fix=fix)
        if f:
            yield f


_NONE = object()


def _describe(value: Any) -> str:
    return repr(value) if isinstance(value, bytes) else describe(value)


def _meant(value: Any, allowed: tuple) -> Any:
    """The accepted value a rejected one obviously stands for ("True" for True, "1" for 1, 0 for "0",
    b"x" for "x"), or _NONE."""
    candidates: list = []
    if isinstance(value, bytes):
        try:
            candidates.append(value.decode("utf-8"))
        except UnicodeDecodeError:
            pass
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in ("true", "false"):
            candidates.append(text.lower() == "true")
        try:
            candidates.append(int(text))
        except ValueError:
            pass
    if isinstance(value, int) and not isinstance(value, bool):
        candidates.append(str(value))
    for c in candidates:
        for a in allowed:
            if type(a) is type(c) and a == c:
                return a
    return _NONE


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value + '"' if '"' not in value and "\\" not in value else repr(value)
    return repr(value)


# ---------------------------------------------------------------------------------------------
# no-effect


def no_effect(rule, ctx) -> Iterator[Finding]:
    release = ctx.settings.release
    for w, option in tf2_writes(ctx):
        if option is None or not option.no_effect or not option.exists_in(release):
            continue
        f = ctx.report(rule, w, f"{shown(option.path)} has no effect: {option.no_effect}", at="key",
                       option=option.path, hint="remove this setting")
        if f:
            yield f


# ---------------------------------------------------------------------------------------------
# option-after-open


def raises_on_assignment(ctx, w) -> bool:
    """Whether assigning ``w`` to global_options() raises, whenever it runs: its path is no option of the
    release's TF2 option object (unknown-option reports the ValueError or AttributeError), or its value as
    written is one the option rejects (invalid-value reports the TypeError or ValueError). A value that
    comes from a flag's default is not taken as certain: the real run may pass another one."""
    table = ctx.kb.tf2
    if table is None or w.via != KIND or w.option_path is None:
        return False
    release = ctx.settings.release
    option = table.options.get(w.option_path)
    if option is None or not option.exists_in(release):
        return True
    value = w.value
    if not value.resolved or value.origin not in ("literal", "resolved") or getattr(value, "flag", None):
        return False
    if option.allowed_in(release) is None:
        return False
    return option.rejection(value.python, release) is not None


def late_writes(rule, ctx) -> Iterator[Finding]:
    """Writes made after the npu_device.open() that read the options (one finding per write). A write that
    raises (an option the release does not have, a value it rejects) is left to the rule reporting the
    exception: it sets nothing, so nothing set after open() is lost."""
    seen = set()
    for config in ctx.configs:
        if config.kind != KIND:
            continue
        for op in config.opens:
            for w, order in op.late:
                if id(w) in seen or w.implicit:
                    continue
                if raises_on_assignment(ctx, w):
                    seen.add(id(w))
                    continue
                seen.add(id(w))
                certain = order == "always" and not w.branches
                where = f" at line {op.range.line}" if op.range is not None and op.path == w.path else (
                    f" in {op.path}" if op.path != w.path else "")
                related = []
                if op.range is not None:
                    related.append(Related(op.path, op.range.line, op.range.column,
                                           "the device is opened here: it reads global_options() once"))
                branch = w.branch_text()
                if order != "always":
                    steps = "; ".join(s.description for s in op.branches if s not in w.branches)
                    branch = "; ".join(x for x in (branch, f"after npu_device.open() {steps}".strip()) if x)
                f = ctx.report(rule, w,
                               f"{shown(w.option_path)} is set after npu_device.open(){where}: the adapter read the options "
                               "when it opened the device, so this setting has no effect",
                               at="key", option=w.option_path, related=related,
                               hint="move this line before npu_device.open()",
                               certainty="always" if certain else "conditional", branch=branch)
                if f:
                    yield f
