"""Whether an object bound to a name can leave the code that builds it: a syntactic scan, no values.

A ConfigProto only reaches the adapter through something it is handed to (a session, an estimator's
RunConfig, a helper, a return value, an attribute, a container, a global). :func:`only_written_into` says
whether every use of a name in a scope writes *into* the object it names (``config.x.y = v``,
``config.graph_options.rewrite_options.custom_optimizers.add()``, ``config.CopyFrom(other)``) or rebinds the
name, so that the object certainly goes nowhere. Any other use (an argument, a return, a read of a part of
it into a variable, ``global``, a lambda ...) is a possible way out: the answer is then False.
"""

from __future__ import annotations

import ast
from typing import Optional

import npu_audit.syntax as cst

#: methods of a protobuf message (and of its repeated fields) that write into it
WRITING_METHODS = frozenset({"add", "CopyFrom", "MergeFrom", "ParseFromString", "Clear", "ClearField", "extend",
                             "append"})


def only_written_into(tree: ast.AST, name: str) -> bool:
    """True when every reference to ``name`` inside ``tree`` (CPython's ``ast`` of a module or of one
    function, nested functions and classes included) writes into the object or rebinds the name; False at
    the first use that could hand the object on. The ``ast`` is that of the original text: for a module
    parsed from a relevance slice, the blanked statements may use the name too."""
    return _scan_ast(tree, name, [])


def _scan_ast(node: ast.AST, name: str, parents: list[ast.AST]) -> bool:
    if type(node) is ast.Name:
        return node.id != name or _allowed_ast(node, parents)
    kind = type(node)
    if kind is ast.Constant:
        return True
    if kind is ast.Global or kind is ast.Nonlocal:
        return name not in node.names  # type: ignore[attr-defined]
    parents.append(node)
    try:
        for child in cst.python_children(node):
            if not _scan_ast(child, name, parents):
                return False
    finally:
        parents.pop()
    return True


def _allowed_ast(ref: ast.Name, parents: list[ast.AST]) -> bool:
    if isinstance(ref.ctx, ast.Store):
        return True  # the name is rebound (assignment, for, with ... as, walrus)
    if not isinstance(ref.ctx, ast.Load):
        return False
    chain: ast.AST = ref
    i = len(parents) - 1
    while i >= 0:
        link = parents[i]
        if not isinstance(link, (ast.Attribute, ast.Subscript)) or link.value is not chain:
            break
        chain = link
        i -= 1
    if chain is ref:
        return False
    if isinstance(getattr(chain, "ctx", None), ast.Store):
        return True  # config.x.y = value (also as an augmented assignment's target)
    holder = parents[i] if i >= 0 else None
    if isinstance(holder, ast.Call) and holder.func is chain and isinstance(chain, ast.Attribute):
        return chain.attr in WRITING_METHODS
    return False


def function_named(tree: ast.AST, name: str) -> Optional[ast.AST]:
    """The one function definition called ``name`` in ``tree`` (methods included), or None when there is
    none or more than one (then the whole module is the safe scope to scan)."""
    found = _functions_of(tree).get(name, ())
    return found[0] if len(found) == 1 else None


def function_at(tree: ast.AST, name: str, line: int) -> Optional[ast.AST]:
    """The function definition called ``name`` in ``tree`` that starts on ``line`` (its ``def`` or one of
    its decorators), for a name several classes of one module define; None when there is none."""
    for node in _functions_of(tree).get(name, ()):
        lines = [node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())]  # type: ignore[attr-defined]
        if line in lines:
            return node
    return None


# The function definitions of the last few trees asked about, by name: one walk per tree, not one per
# question (a script asks once per config it binds). Entries hold their tree, so an id is never reused.
_FUNCTIONS: dict[int, tuple[ast.AST, dict[str, list[ast.AST]]]] = {}
_BLOCKS = ("body", "orelse", "finalbody")  # the statement lists of a statement (besides handlers and cases)


def _functions_of(tree: ast.AST) -> dict[str, list[ast.AST]]:
    known = _FUNCTIONS.get(id(tree))
    if known is not None and known[0] is tree:
        return known[1]
    index: dict[str, list[ast.AST]] = {}
    # definitions are statements: only statement blocks are walked, not the expressions (most nodes)
    todo: list = [[tree]]
    while todo:
        for node in todo.pop():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                index.setdefault(node.name, []).append(node)
            for name in _BLOCKS:
                block = getattr(node, name, None)
                if block:
                    todo.append(block)
            for part in getattr(node, "handlers", None) or getattr(node, "cases", None) or ():
                todo.append(part.body)
    if len(_FUNCTIONS) >= 8:
        _FUNCTIONS.clear()  # (not one eviction: the language server asks from several threads)
    _FUNCTIONS[id(tree)] = (tree, index)
    return index


def attributes_set_by_methods(cls: cst.ClassDef) -> dict[str, frozenset[str]]:
    """For each attribute that the methods of ``cls`` assign on their instance (``self.sess = ...``), the names
    of the methods that do, counting only assignments of something other than a literal (``self.sess =
    None`` in ``__init__`` only declares it). An attribute set by two methods holds the object of whichever ran
    last, which only the caller's order of calls decides."""
    found: dict[str, set[str]] = {}
    for item in _class_body(cls):
        if not isinstance(item, cst.FunctionDef):
            continue
        params = list(item.params.posonly_params) + list(item.params.params)
        if not params:
            continue
        own = params[0].name.value
        for target, value in _assignments(item):
            if (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                    and target.value.value == own and not _literal(value)):
                found.setdefault(target.attr.value, set()).add(item.name.value)
    return {attr: frozenset(methods) for attr, methods in found.items()}


def _class_body(cls: cst.ClassDef) -> list:
    body = cls.body
    return list(body.body) if isinstance(body, cst.IndentedBlock) else []


def _assignments(node: cst.CSTNode):
    """(target, value) of every assignment statement inside ``node`` (tuple targets element by element, the
    value then unknown: None). Walks statements only: an assignment statement is never inside an expression,
    and libcst's generic ``children`` on every expression node cost a third of an analysis."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):  # (a suite: `if x: a = 1`)
            for small in current.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        yield from _targets(target.target, small.value)
                elif isinstance(small, cst.AnnAssign) and small.value is not None:
                    yield from _targets(small.target, small.value)
            continue
        for field_name in _BLOCK_FIELDS:
            part = getattr(current, field_name, None)
            if part is None:
                continue
            if isinstance(part, (list, tuple)):
                stack.extend(part)
            else:
                stack.append(part)


# The fields of compound statements (and of their blocks and clauses) that hold statements or clauses.
_BLOCK_FIELDS = ("body", "orelse", "handlers", "finalbody", "cases")


def _targets(target: cst.CSTNode, value: Optional[cst.CSTNode]):
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _targets(element.value, None)
    else:
        yield target, value


def _literal(value: Optional[cst.CSTNode]) -> bool:
    """Whether an assigned value is a plain literal (None, True, a number, a string, an empty container)."""
    if isinstance(value, cst.Name):
        return value.value in ("None", "True", "False")
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(value, (cst.List, cst.Tuple, cst.Dict, cst.Set)):
        return not value.elements
    return False
