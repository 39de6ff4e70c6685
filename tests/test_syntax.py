"""npu_audit.syntax against libcst: the tree extraction reads must have libcst's shapes, libcst's syntactic
ranges and libcst's source text for every node the two share (the extraction was written against libcst
trees, and findings point where libcst's positions pointed).

The oracle is libcst itself (a test dependency of npu-audit, used by the fix engine), walked in parallel with
npu-audit's tree field by field."""

from __future__ import annotations

import re
from pathlib import Path

import libcst
import pytest
from hypothesis import HealthCheck, given, settings
from libcst.metadata import MetadataWrapper, PositionProvider

from npu_audit import syntax

SAMPLE = '''"""Module docstring."""
import tensorflow as tf, os.path as osp  # a comment
from ..pkg.sub import (a as b, c)
from . import *


@decorator(1)
class Config(Base, metaclass=Meta):
    """Doc."""
    def build(self, flag, /, other=2, *args, mode="a", **kwargs) -> None:
        config = tf.ConfigProto()
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(
            "allow_mix_precision")
        custom_op.parameter_map[("dump_path")].s = (b"/tmp" if flag else b"/var")
        if flag: x = 1; y = 2
        elif mode == 'b' and not flag or other is not None:
            x = f"{mode!r:>4}"
        else:
            if x: pass
            x = {"k": (lambda y: y + 1)(2), **kwargs}
        try:
            pass
        except (ValueError, KeyError) as exc:
            raise RuntimeError("no") from exc
        else:
            z = -1
        finally:
            del x
        for i, *rest in enumerate([1, 2]):
            total += i
        else:
            total: int = 0
        while (n := 3) > 2:
            break
        with open("f") as fh, ctx():
            global g
        async def inner():
            await thing(*args, k=1, **kwargs)
        text = "a" "b" 'c'
        mixed = ("x"
                 f"{y}")
        key = other[1:2, ::3], other[i], other[i, j], other[(i, j)]
        return """multi
line""" + b'bytes', ..., 1.5e3, 0x1F, 2j, True, None, {1, 2}, (1,), [*rest]
'''

# libcst node types npu_audit.syntax does not build (it has an Other node, or no node, there)
_NOT_BUILT = {"Lambda", "ListComp", "SetComp", "DictComp", "GeneratorExp", "Yield", "Pass", "Raise", "Del", "Break",
              "Continue", "Assert"}
# nodes whose range npu-audit never asks for and builds differently (libcst includes the operator or keyword)
_RANGE_DIFFERS = {"ComparisonTarget", "AsName", "Else", "Finally", "IndentedBlock", "SimpleStatementSuite",
                  "Decorator", "NameItem", "Parameters", "SubscriptElement", "Index", "Slice", "WithItem",
                  "ExceptHandler", "MatchCase", "StarredDictElement", "DictElement", "FormattedStringExpression",
                  "FormattedStringText", "ImportAlias", "ImportStar", "Module", "Param",
                  # compound statements (CPython may end them after a `;`)
                  "If", "For", "While", "With", "Try", "TryStar", "FunctionDef", "ClassDef", "Match"}


def _compare(ours, theirs, positions, module, where="module"):
    """Walk both trees together; returns the number of nodes compared."""
    if isinstance(ours, syntax.Other):
        return 0
    name = type(theirs).__name__
    assert type(ours).__name__ == name, f"{where}: {type(ours).__name__} is {name} in libcst"
    count = 1
    operator = isinstance(theirs, (libcst.BaseBinaryOp, libcst.BaseBooleanOp, libcst.BaseCompOp, libcst.BaseUnaryOp,
                                   libcst.BaseAugOp))
    empty = name == "Tuple" and not theirs.elements  # (libcst: an empty range after the parenthesis)
    if name not in _RANGE_DIFFERS and not operator and not empty and theirs in positions and not (where.endswith(".name") and "Global" in where):
        want = positions[theirs]
        got = syntax.range_of(ours)
        assert got is not None, where
        assert (got[0], got[1] - 1, got[2], got[3] - 1) == (
            want.start.line, want.start.column, want.end.line, want.end.column), (
            f"{where}: {name} {got} libcst {want}")
        # (libcst adds a starred element's comma, and gives `with (x):` parentheses to the statement)
        if isinstance(theirs, libcst.BaseExpression) and name != "StarredElement" and not where.endswith("WithItem.item"):
            mine, other = syntax.code_of(ours), module.code_for_node(theirs).strip()
            assert mine == other, f"{where}: {name} text {mine!r} libcst {other!r}"
    for field in ours._fields:
        if field in ("asynchronous", "relative", "source", "annotation") or (name == "FormattedStringText" and field == "value"):
            continue
        mine, other = getattr(ours, field), getattr(theirs, field)
        if isinstance(mine, syntax.CSTNode):
            if name == "Parameters" and not isinstance(other, libcst.Param):
                continue
            count += _compare(mine, other, positions, module, f"{where}.{name}.{field}")
        elif isinstance(mine, list):
            other = list(other)
            assert len(mine) == len(other), f"{where}.{name}.{field}: {len(mine)} items, libcst {len(other)}"
            for i, (a, b) in enumerate(zip(mine, other)):
                count += _compare(a, b, positions, module, f"{where}.{name}.{field}[{i}]")
        elif mine is None:
            assert other is None or type(other).__name__ in ("MaybeSentinel", "ParamStar"), f"{where}.{name}.{field}"
        else:
            assert mine == other, f"{where}.{name}.{field}: {mine!r} != {other!r}"
    return count


def _check(text: str) -> int:
    theirs = libcst.parse_module(text)
    positions = MetadataWrapper(theirs, unsafe_skip_copy=True).resolve(PositionProvider)
    ours = syntax.parse_module(text)
    assert len(ours.body) == len(theirs.body)
    return sum(_compare(a, b, positions, theirs, f"body[{i}]") for i, (a, b) in enumerate(zip(ours.body, theirs.body)))


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_the_tree_has_libcsts_shapes_ranges_and_texts(newline):
    assert _check(SAMPLE.replace("\n", newline)) > 250


@pytest.mark.parametrize("text", [
    "x = 'é' + \"ü\"; y = x  # non-ASCII columns are characters\n",
    "f((a), b)\nf((1))\ng(x)\nz = (1)\nw = ( b + c )\n",
    "if a:\n    pass\nelse:\n    if b:\n        pass\n",
    "a = 1; \\\n    b = 2\n",
    "s = ('a'\n     'b'\n     \"c\")\n",
    "t = f'{a}' 'b'\n",
    "class A: x = 1\n",
    "def f(*, a, b=2): return a\n",
    "x = [i for i in range(3)]\ny = lambda: 1\n",
    # found in review: continuation lines moving back left, tabs, CR line breaks, comments by parentheses
    "x = ('a'\n        'b'\n    'c')\n",
    "if 1:\n\tx = ('a'\n\t     'b'\n        'c')\n",
    "x = ('a'  # c\r    'b')\r",
    "x = (  # c\n    1, 2)\n",
    "x = (  # c\n    a + b\n)\n",
    "if (  # only when asked\n        FLAGS.debug):\n    pass\n",
    "(lr, a,\n b,\n #  bn_w,\n ) = f()\n",
    # found by the random programs: an attribute name with a combining mark (not ``\\w``) after a letter
    "importA, match.A\uabe30\n",
    "x = a . b\u0301c  \\\n\n",
])
def test_the_tree_matches_libcst_on_tricky_code(text):
    _check(text)


# (random programs call string literals and the like: compiling them warns, which is not news)
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(__import__("hypothesmith").from_grammar())
def test_random_programs_match_libcst(text):
    try:
        compile(text, "<t>", "exec", dont_inherit=True)
        libcst.parse_module(text)
    except Exception:  # noqa: BLE001 - only programs both parsers read
        return
    if _FORM_FEED_BEFORE_CODE.search(text):
        return  # (a known difference: test_a_statement_after_a_form_feed_starts_where_cpython_says)
    _check(text)


_FORM_FEED_BEFORE_CODE = re.compile(r"(?m)^[ \t\x0c]*\x0c[ \t\x0c]*[^\s#]")


def test_a_statement_after_a_form_feed_starts_where_cpython_says():
    """A form feed before code at the start of a line (old GNU-style files put them between sections):
    libcst places a top-level statement there at column 0, before the form feed; npu-audit keeps
    CPython's column, where the code starts, so a finding underlines the code itself."""
    import ast

    for text in ("\x0cx = f(1)\n", "\n\n\x0cmatch\n", "  \x0cx = f(1)\n"):
        statement = syntax.parse_module(text).body[0]
        expected = ast.parse(text).body[0]
        assert statement._pos[:2] == (expected.lineno, expected.col_offset) and expected.col_offset > 0
        assert _FORM_FEED_BEFORE_CODE.search(text)
    assert not _FORM_FEED_BEFORE_CODE.search("x = 1\n\x0c\n# section\ny = 2\n")


def test_parse_expression_and_deep_replace():
    call = syntax.parse_expression("as_bytes('a' if flag else 'b')")
    assert isinstance(call, syntax.Call) and isinstance(call.args[0].value, syntax.IfExp)
    ifexp = call.args[0].value
    replaced = call.deep_replace(ifexp, ifexp.orelse)
    assert replaced.args[0].value is ifexp.orelse  # the replacement itself, positioned
    assert syntax.range_of(replaced) is None and syntax.range_of(replaced.args[0].value) is not None
    assert syntax.code_of(ifexp.test) == "flag"


def test_multiline_fstring_fields_without_trusted_positions_keep_their_values(monkeypatch):
    # Python 3.9 places the fields of a multi-line f-string wrongly: they are built from the ast alone
    monkeypatch.setattr(syntax.builder, "_FSTRING_FIELDS_PLACED", False)
    value = syntax.parse_module("x = f\'\'\'a\n{d['k'] + 1}\'\'\'\n").body[0].body[0].value
    field = value.parts[1].expression
    assert isinstance(field, syntax.BinaryOperation) and field.right.value == "1"
    assert field.left.slice[0].slice.value.value == "'k'"
    assert syntax.range_of(field) is None and syntax.code_of(field) == ""


def test_unparsable_text_raises():
    with pytest.raises(syntax.Unparsable):
        syntax.parse_module("print 'x'\n")


def test_python_children_are_the_child_nodes_without_load_and_store_markers():
    import ast

    tree = ast.parse(SAMPLE)
    count = 0
    for node in ast.walk(tree):
        expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.expr_context)]
        assert syntax.python_children(node) == expected
        count += 1
    assert count > 300


def test_python_walk_visits_what_ast_walk_does_in_the_same_order_without_load_and_store_markers():
    import ast

    for text in (SAMPLE, Path(syntax.builder.__file__).read_text(encoding="utf-8")):
        tree = ast.parse(text)
        expected = [n for n in ast.walk(tree) if not isinstance(n, ast.expr_context)]
        assert list(syntax.python_walk(tree)) == expected and len(expected) > 200


LAZY_SOURCE = '''\
import tensorflow as tf


class Trainer(object):
    def __init__(self, mode):
        self.mode = mode

    def config(self):
        config = tf.ConfigProto()
        if self.mode:
            config.allow_soft_placement = True
        return config


def build(x): return x


def nested(depth):
    def inner():
        return depth
    return inner
'''


def _defs(body: list) -> list:
    """The functions of ``body`` and the methods of its classes, in the order of the text."""
    out = []
    for node in body:
        if isinstance(node, syntax.FunctionDef):
            out.append(node)
        elif isinstance(node, syntax.ClassDef):
            out.extend(_defs(node.body.body))
    return out


def test_lazy_function_bodies_are_built_when_read_and_equal_eager_ones():
    """A helper module's function bodies are built when the interpreter first enters one (most are never
    entered): until then nothing is built; once read, a body is what building it at once gives."""
    lazy = syntax.parse_module(LAZY_SOURCE, lazy_bodies=True)
    eager = syntax.parse_module(LAZY_SOURCE)
    lazy_defs, eager_defs = _defs(lazy.body), _defs(eager.body)
    assert [d.name.value for d in lazy_defs] == ["__init__", "config", "build", "nested"]
    waiting = [d for d in lazy_defs if isinstance(d.body, syntax.nodes.LazyIndentedBlock)]
    assert [d.name.value for d in waiting] == ["__init__", "config", "nested"]  # (build's body is on its line)
    assert all(d.body._built is None for d in waiting)
    for got, want in zip(lazy_defs, eager_defs):
        assert syntax.range_of(got.body) == syntax.range_of(want.body)
        assert [syntax.code_of(s) for s in got.body.body] == [syntax.code_of(s) for s in want.body.body]
        assert [syntax.range_of(s) for s in got.body.body] == [syntax.range_of(s) for s in want.body.body]
    built = waiting[1].body.body
    assert waiting[1].body.body is built  # (built once)


def test_a_lazy_body_too_deep_to_build_raises_recursion_error_when_read():
    text = "def deep():\n" + "".join("    " * (i + 1) + "if x:\n" for i in range(40)) + "    " * 41 + "y = 1\n"
    with pytest.raises(syntax.TooDeep):
        syntax.parse_module(text, max_depth=30)
    (fn,) = syntax.parse_module(text, max_depth=30, lazy_bodies=True).body
    with pytest.raises(RecursionError):
        _ = fn.body.body
