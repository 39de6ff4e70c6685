"""Small helpers shared by rules: pointing inside string literals, building edits, phrasing."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from npu_audit.extract.model import OptionWrite
from npu_audit.extract.ranges import Range
from npu_audit.findings import Edit
from npu_audit.syntax import python_walk

if TYPE_CHECKING:
    from npu_audit.checks.base import CheckContext

QUOTE_PREFIXES = ("rb", "br", "Rb", "bR", "RB", "BR", "rB", "Br", "b", "B", "r", "R", "u", "U", "f", "F")


def string_body_offset(node) -> Optional[int]:
    """Offset of the first character of a string literal's body inside its source, or None
    when source offsets and value offsets differ (escapes, implicit concatenation, f-strings)."""
    import npu_audit.syntax as cst  # (here, not at the top: a warm run imports the checks without libcst)

    if not isinstance(node, cst.SimpleString):
        return None
    raw = node.value
    prefix_len = len(node.prefix)
    quote = node.quote
    body = raw[prefix_len + len(quote): len(raw) - len(quote)]
    if "\\" in body or "\n" in body:
        return None
    return prefix_len + len(quote)


def literal_subrange(ctx: CheckContext, w: OptionWrite, start: int, end: int) -> Optional[Range]:
    """Range of characters [start, end) of the decoded value inside the literal that wrote it, if the
    literal is written right here in this file; else None."""
    node, path = w.value.source_node, w.value.source_path
    if node is None or path != ctx.path or ctx.extraction is None:
        return None
    rng = ctx.extraction.range_of(node)
    offset = string_body_offset(node)
    if rng is None or offset is None or rng.line != rng.end_line:
        return None
    col = rng.column + offset
    return Range(rng.line, col + start, rng.line, col + max(end, start + 1) if end > start else col + start + 1)


def value_range(w: OptionWrite) -> Optional[Range]:
    return w.value_range or w.range


def edit_for(rng: Range, content: str) -> Edit:
    return Edit(line=rng.line, column=rng.column, end_line=rng.end_line, end_column=rng.end_column, content=content)


def fixable_here(ctx: CheckContext, w: OptionWrite) -> bool:
    """A fix may edit this write: it is in this file, written directly (not inside a helper called
    from elsewhere) and not implicit."""
    return w.path == ctx.path and not w.implicit and w.range is not None


def requote(old_literal: str, new_value: str) -> Optional[str]:
    """``old_literal`` (a Python string literal) with its body replaced by ``new_value``, keeping the
    prefix and quotes. None when the new value would need escaping."""
    prefix = ""
    for p in QUOTE_PREFIXES:
        if old_literal.startswith(p) and old_literal[len(p):][:1] in ("'", '"'):
            prefix = p
            break
    rest = old_literal[len(prefix):]
    quote = rest[:3] if rest[:3] in ('"""', "'''") else rest[:1]
    if "\\" in new_value or quote[0] in new_value or "\n" in new_value:
        return None
    if "b" in prefix.lower() and not new_value.isascii():
        return None
    return f"{prefix}{quote}{new_value}{quote}"


def delete_statement(ctx: CheckContext, w: OptionWrite) -> Optional[Edit]:
    """An edit deleting the whole line of a write's statement, when the statement is alone on its
    line(s) and written directly in this file; else None."""
    from npu_audit.findings import Edit

    if (not fixable_here(ctx, w) or w.stmt_node is None or len(getattr(w.stmt_node, "body", ())) != 1
            or ctx.extraction is None):
        return None
    rng = ctx.extraction.range_of(w.stmt_node)
    if rng is None:
        return None
    return Edit(rng.line, 1, rng.end_line + 1, 1, "")


def value_is_the_literal(w: OptionWrite) -> bool:
    """The written expression is exactly the literal that gave the value, possibly wrapped in
    ``as_bytes(...)``/``bytes(...)``/``str(...)`` or followed by ``.encode()``: rewriting that literal
    rewrites the whole value (not one arm of a conditional expression, not part of a computation)."""
    import npu_audit.syntax as cst

    node = w.value_node
    while True:
        if node is w.value.source_node:
            return node is not None
        if isinstance(node, cst.Call):
            func = node.func
            name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
            if name == "encode" and isinstance(func, cst.Attribute) and not node.args:
                node = func.value
                continue
            if name in ("as_bytes", "bytes", "str", "as_str", "as_text") and node.args:
                node = node.args[0].value
                continue
        return False


def switched_off(ctx: CheckContext, entry, key: str) -> bool:
    """The adapter does not read ``key`` in this entry on any path (a certain `gated` relation hit):
    a bad value there is latent, not an immediate failure."""
    from npu_audit.checks.relations import evaluate_relations

    return any(h.entry is entry and h.relation.kind == "gated" and h.relation.subject == key
               and h.certainty == "always" for h in evaluate_relations(ctx))


def reaction(text: str, latent: bool) -> str:
    """How the adapter reacts, said conditionally for an option that is not read now."""
    return f"not read while its switch is off, but once it is on {text}" if latent else text


def overwritten(entry, w: OptionWrite) -> bool:
    """A later write of the same key replaces ``w`` on every path before the session reads the entry, so
    the adapter never sees this value (duplicate-option reports the dead write)."""
    eff = entry.effective().get(w.key)
    return eff is not None and all(c is not w for c in eff.candidates)


def flag_compared_with(ctx: CheckContext, w: OptionWrite, value: str) -> Optional[tuple[str, int]]:
    """Where the script compares the flag whose default ``w`` writes with ``value`` (``FLAGS.x == value``,
    ``args.x != value``, ``x in (value, ...)``): (path, line) of the first such comparison in the files of
    the write, of the flag's default and of the analysed file; None when ``w``'s value is not a flag
    default or nothing compares it. Changing that default alone (to a newer name of the same value, or
    another key's value) makes those comparisons take the other branch."""
    if w.value.origin != "flag-default" or not w.value.flag or ctx.extraction is None:
        return None
    flag = w.value.flag.rsplit(".", 1)[-1]
    for path in dict.fromkeys(p for p in (ctx.path, w.path, w.value.source_path) if p):
        tree = _python_ast_of(ctx, path)
        line = _first_comparison(tree, flag, value) if tree is not None else None
        if line is not None:
            return path, line
    return None


def _python_ast_of(ctx: CheckContext, path: str):
    state = ctx.extraction.modules.get(path) if ctx.extraction is not None else None
    return state.source_ast() if state is not None else None


def _first_comparison(tree, flag: str, value: str) -> Optional[int]:
    def reads_flag(node) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == flag) or (isinstance(node, ast.Name) and node.id == flag)

    lines = [node.lineno for node in _comparisons(tree)
             if ((reads_flag(node.left) and _is_value(node.comparators[0], value))
                 or (reads_flag(node.comparators[0]) and _is_value(node.left, value)))]
    return min(lines) if lines else None


def _is_value(node, value: str) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_value(e, value) for e in node.elts)
    return isinstance(node, ast.Constant) and node.value in (value, value.encode("utf-8", "replace"))


_COMPARISONS: list = []  # [(tree, its comparisons)] of the last trees asked about


def _comparisons(tree) -> list:
    """The one-operator equality and membership comparisons of ``tree``, found in one walk per tree (the
    checks ask once per flag-default value they place)."""
    for known, found in _COMPARISONS:
        if known is tree:
            return found
    found = [node for node in python_walk(tree)
             if isinstance(node, ast.Compare) and len(node.ops) == 1
             and isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot))]
    _COMPARISONS.insert(0, (tree, found))
    del _COMPARISONS[4:]
    return found


def comparison_place(ctx: CheckContext, place: tuple[str, int]) -> str:
    """A place of :func:`flag_compared_with` as a message names it ("line 84", "other.py:84")."""
    path, line = place
    return f"line {line}" if path == ctx.path else f"{path}:{line}"
