"""What makes a statement a seed of the relevance slice, and the small ``ast`` helpers every stage of
the slice uses.

A seed is a statement the slice keeps for what it is, not for what it feeds: one whose text holds an
NPU marker (:func:`_marker_lines`), or that names an API the interpreter models
(:data:`SEED_IDENTIFIERS`), or defines a flag (:data:`DEFINITION_CALLS`). :data:`CONSUMERS` and
:data:`HANDLED_METHODS` name the calls through which a config keeps flowing.
"""

from __future__ import annotations

import ast
import re

from npu_audit.prefilter import NPU_MARKERS

# Names of APIs the interpreter models (extract/interpreter.py, extract/tf2.py) that are not NPU markers.
SEED_IDENTIFIERS = frozenset({
    "ConfigProto", "Session", "InteractiveSession", "MonitoredTrainingSession", "SingularMonitoredSession",
    "graph_options", "rewrite_options", "init_resource", "npu_device", "global_options",
})
# Flag/argument definitions: their defaults are the values of FLAGS.x / args.x.
DEFINITION_CALLS = frozenset({
    "DEFINE_string", "DEFINE_integer", "DEFINE_int", "DEFINE_float", "DEFINE_bool", "DEFINE_boolean",
    "DEFINE_enum", "DEFINE_list", "DEFINE_multi_string", "DEFINE_multi_integer", "add_argument",
})
# Callees that take a config object and whose result the interpreter models.
CONSUMERS = frozenset({
    "Session", "InteractiveSession", "MonitoredTrainingSession", "SingularMonitoredSession",
    "NPURunConfig", "NPUEstimator", "npu_config_proto", "npu_run_config_init", "set_keras_session_npu_config",
    "init_resource", "set_iteration_per_loop", "setattr", "ConfigProto",
})
# Methods the interpreter follows on the objects it models (a receiver of one of these is a real use).
HANDLED_METHODS = frozenset({
    "add", "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "add_argument",
    "parse_args", "parse_known_args", "get", "items", "keys", "values", "lower", "upper", "strip", "lstrip",
    "rstrip", "replace", "format", "join", "encode", "decode", "title", "capitalize",
})

MARKER_TEXT_RE = re.compile("|".join(re.escape(m.decode("ascii")) for m in sorted(NPU_MARKERS, key=len, reverse=True)))
_BUILTINS = frozenset(dir(__import__("builtins")))
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# statements with blocks of statements (the others are read by _Builder._simple)
_COMPOUND = frozenset(_DEFS + (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try)
                      + tuple(getattr(ast, n) for n in ("TryStar", "Match") if hasattr(ast, n)))
_NAME, _ATTRIBUTE, _CALL, _CONSTANT, _NAMED_EXPR = ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.NamedExpr


def _statements(body: list[ast.stmt]):
    """Every statement of ``body``, nested ones too (statements only sit in statement lists)."""
    todo = list(reversed(body))
    while todo:
        stmt = todo.pop()
        yield stmt
        for name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if block and isinstance(block, list):
                todo.extend(reversed(block))
        for handler in getattr(stmt, "handlers", ()):
            todo.extend(reversed(handler.body))
        for case in getattr(stmt, "cases", ()):
            todo.extend(reversed(case.body))


def _dotted_root(node: ast.AST) -> ast.AST:
    """What a dotted name starts with: ``tf`` of ``tf.train.Saver``; ``node`` itself when it is no attribute."""
    while type(node) is _ATTRIBUTE:
        node = node.value  # type: ignore[attr-defined]
    return node


def _callee_name(func: ast.expr) -> str:
    """The last name of a call's callee (``tf.compat.v1.Session`` -> ``Session``), or ""."""
    return func.attr if type(func) is _ATTRIBUTE else func.id if type(func) is _NAME else ""  # type: ignore[attr-defined]


def _marker_lines(lines: list[str]) -> list[int]:
    """Numbers of the lines holding an NPU marker (``prefilter.NPU_MARKERS``: one identifier each, never
    split over lines), from one search of the whole text."""
    text = "".join(lines)
    found = [m.start() for m in MARKER_TEXT_RE.finditer(text)]
    if not found:
        return []
    out: list[int] = []
    offset, number, i = 0, 0, 0
    for line in lines:
        number += 1
        offset += len(line)
        while i < len(found) and found[i] < offset:
            if not out or out[-1] != number:
                out.append(number)
            i += 1
        if i == len(found):
            break
    return out
