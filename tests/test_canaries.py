"""Canaries for the private internals of libcst and pathspec that npu-audit relies on.

Each test fails loudly when a new release of the library changes what npu-audit uses, instead of
npu-audit silently reporting wrong positions or losing its speed. (The canary for libcst's per-node
validation hook, used by ``parse.unvalidated_nodes``, is in test_parse.py.)
"""

from __future__ import annotations

import re

import libcst
import pytest

SAMPLE = '''"""Module docstring."""
import tensorflow as tf  # a comment


@decorator(1)
class Config(object):
    def build(self, flag, *, mode="a"):
        config = tf.ConfigProto()
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(
            "allow_mix_precision")
        if flag:
            x = [1,
                 2]  # trailing
        elif mode == 'b':
            x = f"{mode!r:>4}"
        else:
            x = {"k": (lambda y: y + 1)(2)}
        try:
            pass
        except ValueError as exc:
            raise RuntimeError("no") from exc
        finally:
            del x
        return """multi
line""" + b'bytes'
'''


def _all_nodes(module: libcst.Module) -> list[libcst.CSTNode]:
    nodes: list[libcst.CSTNode] = []

    class Collect(libcst.CSTVisitor):
        def on_visit(self, node: libcst.CSTNode) -> bool:
            nodes.append(node)
            return True

    module.visit(Collect())
    return nodes


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_canary_libcst_codegen_state_positions(newline):
    """extract.positions subclasses libcst's private ``libcst._nodes.internal.CodegenState`` and calls the
    private ``CSTNode._codegen`` to compute the ranges of the nodes it reports in one pass: they must be
    the ranges libcst's public PositionProvider gives (its syntactic positions)."""
    from libcst._nodes.internal import CodegenState  # noqa: F401 - the private import itself is the canary
    from libcst.metadata import MetadataWrapper, PositionProvider

    from npu_audit.extract.positions import node_ranges, statement_ranges

    text = SAMPLE.replace("\n", newline)
    module = libcst.parse_module(text)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    nodes = [n for n in _all_nodes(module) if n in positions and not isinstance(n, libcst.Module)]
    ranges = node_ranges(module, nodes)
    checked = 0
    for node in nodes:
        want = positions[node]
        got = ranges.get(id(node))
        assert got is not None, type(node).__name__
        assert (got.line, got.column - 1, got.end_line, got.end_column - 1) == (
            want.start.line, want.start.column, want.end.line, want.end.column), type(node).__name__
        checked += 1
    assert checked > 150
    # the faster per-statement variant places the reported expressions the same way
    tops: dict[int, tuple] = {}

    def walk(stmts, outer):
        for stmt in stmts:
            path = outer + (stmt,)
            for n in _all_nodes(stmt) if isinstance(stmt, libcst.SimpleStatementLine) else ():
                tops[id(n)] = path
            body = getattr(stmt, "body", None)
            inner = getattr(body, "body", None)
            if isinstance(inner, (list, tuple)) and not isinstance(stmt, libcst.SimpleStatementLine):
                walk(inner, path)

    walk(module.body, ())
    simple = [n for n in nodes if id(n) in tops and isinstance(n, (libcst.Name, libcst.SimpleString, libcst.Call))]
    assert simple
    fast = statement_ranges(module, text, simple, tops)
    for node in simple:
        assert fast[id(node)] == ranges[id(node)], type(node).__name__


def test_canary_pathspec_pattern_internals():
    """discover._Matcher reads pathspec's compiled patterns (``spec.patterns``, each with ``include`` and a
    ``regex``), its one named group ``ps_d``, ``GitIgnoreSpec.check_file`` and ``pathspec.util.normalize_file``
    to answer "no pattern matches" without the spec. With the installed pathspec the shortcut must be
    active (a list of searches, and a joined expression), and agree with the spec."""
    from pathspec import GitIgnoreSpec
    from pathspec.util import normalize_file

    from npu_audit.discover import _ANY_FOLDER, _DIR_GROUP, _joined_search, _Matcher, _pattern_searches

    lines = ["*.pyc", "build/", "/top.py", "!keep.py", "# comment", "", "gen_*_pb2.py", "docs/**/*.md"]
    spec = GitIgnoreSpec.from_lines(lines)
    assert callable(getattr(spec, "check_file", None))
    active = [p for p in spec.patterns if p.include is not None]
    assert len(active) == 6
    for pattern in active:
        assert isinstance(pattern.regex, re.Pattern) and isinstance(pattern.regex.pattern, str)
        assert set(pattern.regex.groupindex) <= {"ps_d"}
    assert any(p.regex.pattern.startswith(_ANY_FOLDER) for p in active)
    assert all(_DIR_GROUP in p.regex.pattern for p in active)
    assert normalize_file("a/b.py") == "a/b.py"
    searches = _pattern_searches(spec)
    assert isinstance(searches, list) and len(searches) == len(active)  # the shortcut is on
    joined = _joined_search(spec)
    assert callable(joined)  # and the patterns can be joined into one expression
    matcher = _Matcher(spec)
    for path in ("a.pyc", "x/build/", "top.py", "sub/top.py", "keep.py", "gen_a_pb2.py", "docs/x/y.md", "ok.py"):
        assert matcher.check(path) == spec.check_file(path).include, path
        assert matcher.match(path) == spec.match_file(path), path
