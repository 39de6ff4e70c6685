"""Pure value operations of the extractor (npu_audit/extract/values.py), without an interpreter."""

from __future__ import annotations

import pytest

import npu_audit.syntax as cst
from npu_audit.extract import values
from npu_audit.extract.model import UNRESOLVED
from npu_audit.extract.symbols import UNKNOWN, Const, ListRef, Unknown


def lit(v):
    return Const(v, origin="literal")


def flag(v, name="f"):
    return Const(v, origin="flag-default", flag=name)


def test_origin_of_a_computed_value_is_flag_default_when_any_input_is():
    assert values.derived(lit(1), lit(2)) == "resolved"
    assert values.derived(lit(1), flag(2)) == "flag-default"
    assert values.flag_of(lit(1), flag(2, "lr"), flag(3, "bs")) == "lr"
    assert values.flag_of(lit(1)) is None


def test_a_literal_read_through_a_name_is_resolved_but_keeps_its_source():
    node = cst.SimpleString('"x"')
    got = values.read_through_name(Const("x", origin="literal", node=node, path="a.py"))
    assert (got.value, got.origin, got.node, got.path) == ("x", "resolved", node, "a.py")
    obj = ListRef(items=[])
    assert values.read_through_name(obj) is obj


@pytest.mark.parametrize("source, expected", [
    ('"abc"', "abc"), ("b'x'", b"x"), ("0x10", 16), ("00", 0), ("1.5", 1.5), ("2j", 2j), ("1_000", 1000),
])
def test_literals(source, expected):
    node = cst.parse_expression(source)
    got = values.literal(node, "m.py")
    assert isinstance(got, Const) and got.value == expected and got.origin == "literal" and got.node is node


@pytest.mark.parametrize("node, expected", [
    (cst.SimpleString('"abc"'), "abc"), (cst.SimpleString("rb'\\x'"), b"\\x"), (cst.Integer("0o17"), 15),
    (cst.Integer("007"), 7), (cst.Float("1e3"), 1000.0), (cst.Imaginary("2J"), 2j),
])
def test_literals_without_the_parsers_value_are_read_from_their_text(node, expected):
    # (a node built by hand, or a part of an implicit concatenation, carries no value from CPython's tree)
    got = values.literal(node, "m.py")
    assert isinstance(got, Const) and got.value == expected and got.node is node


def test_the_parts_of_an_implicit_concatenation_have_their_own_values():
    node = cst.parse_expression("'a\\t' 'b'")
    assert isinstance(node, cst.ConcatenatedString)
    assert values.literal(node.left, "m.py").value == "a\t"
    assert values.literal(node.right, "m.py").value == "b"


def test_the_value_kept_on_a_literal_node_is_not_one_of_its_fields():
    node = cst.parse_expression("'x'")
    assert cst.SimpleString._fields == ("value",) and cst.Integer._fields == ("value",)
    assert repr(node) == "SimpleString(value=\"'x'\")"


def test_a_malformed_literal_text_is_unknown():
    assert values.literal(cst.SimpleString("'unterminated"), "m.py") is UNKNOWN
    assert values.literal(cst.Integer("12x"), "m.py") is UNKNOWN


def test_concatenation_of_same_kind_strings_only():
    assert values.concat(lit("a"), lit("b")).value == "ab"
    assert values.concat(lit("a"), lit(b"b")) is UNKNOWN


@pytest.mark.parametrize("op, left, right, expected", [
    ("Add", 1, 2, 3), ("Subtract", 5, 2, 3), ("Multiply", "ab", 2, "abab"), ("Divide", 1, 2, 0.5),
    ("FloorDivide", 7, 2, 3), ("Modulo", "%s!", "x", "x!"), ("Power", 2, 10, 1024), ("LeftShift", 1, 4, 16),
    ("RightShift", 16, 2, 4), ("BitOr", 1, 2, 3), ("BitAnd", 3, 1, 1), ("BitXor", 3, 1, 2),
])
def test_binary_operations(op, left, right, expected):
    got = values.binop(op, lit(left), lit(right))
    assert got.value == expected and got.origin == "resolved"


@pytest.mark.parametrize("op, left, right", [
    ("Multiply", "x", 10**6), ("Power", 2, 10**4), ("LeftShift", 1, 1000), ("Divide", 1, 0), ("Add", 1, "x"),
    ("MatrixMultiply", 1, 2),
])
def test_binary_operations_that_would_be_huge_or_raise_are_unknown(op, left, right):
    assert values.binop(op, lit(left), lit(right)) is UNKNOWN


def test_binary_operation_on_a_flag_default_stays_a_flag_default():
    got = values.binop("Multiply", flag(2, "bs"), lit(8))
    assert (got.value, got.origin, got.flag) == (16, "flag-default", "bs")
    assert values.binop("Add", UNKNOWN, lit(1)) is UNKNOWN


def test_unary_minus_of_a_literal_points_at_the_whole_expression():
    node = cst.parse_expression("-1")
    got = values.unary(node.operator, Const(1, origin="literal"), node, "m.py")
    assert (got.value, got.origin, got.node) == (-1, "literal", node)
    got = values.unary(cst.Not(), flag(0, "x"), node, "m.py")
    assert (got.value, got.origin, got.flag) == (True, "flag-default", "x")
    assert values.unary(cst.BitInvert(), lit("s"), node, "m.py") is UNKNOWN
    assert values.unary(cst.Minus(), UNKNOWN, node, "m.py") is UNKNOWN


def test_comparisons():
    assert values.compare("Equal", 1, 1) is True
    assert values.compare("In", "a", "abc") is True
    assert values.compare("Is", None, None) is True
    assert values.compare("IsNot", 1, 2) is True  # `is` on values: equality, not identity
    assert values.compare("LessThan", 1, "x") is UNRESOLVED
    got = values.comparison_result(True, [lit(1), flag(1, "n")])
    assert (got.value, got.origin, got.flag) == (True, "flag-default", "n")


def test_subscript_tuple_dict_and_ifexp():
    assert values.subscript(lit({"a": 1}), lit("a")).value == 1
    assert values.subscript(lit({"a": 1}), lit("b")) is UNKNOWN
    assert values.tuple_of([lit(1), lit(2)], starred=False).value == (1, 2)
    assert isinstance(values.tuple_of([lit(1), UNKNOWN], starred=False), ListRef)
    assert values.dict_of([(lit("a"), lit(1))]).value == {"a": 1}
    assert values.dict_of([(lit([1]), lit(1))]) is UNKNOWN
    assert values.dict_of([]).origin == "literal"
    assert values.if_both_same(lit("x"), lit("x")).value == "x"
    assert values.if_both_same(lit(1), lit(True)) is UNKNOWN


def test_fstring_fields():
    assert values.format_field(3.14159, None, ".2f") == "3.14"
    assert values.format_field("x", "r", "") == "'x'"
    assert values.format_field("x", None, "d") is UNRESOLVED
    got = values.fstring(["a", "1"], [flag(1, "n")], "f")
    assert (got.value, got.origin, got.flag) == ("a1", "flag-default", "n")
    assert values.fstring(["a"], [], "f").origin == "literal"
    assert values.fstring(["a", "1"], [lit(1)], "f").origin == "resolved"
    assert values.fstring(["a"], [], "fb") is UNKNOWN


def test_methods_of_constants():
    assert values.const_method(lit("Ab"), "lower", [], {}).value == "ab"
    assert values.const_method(lit({"a": 1}), "get", [lit("a")], {}).value == 1
    assert values.const_method(lit({"a": 1}), "keys", [], {}).value == ["a"]
    assert values.const_method(lit("x"), "__class__", [], {}) is UNKNOWN  # only the listed methods run
    assert values.const_method(lit("x"), "join", [UNKNOWN], {}) is UNKNOWN
    node = cst.SimpleString('"x"')
    kept = values.const_method(Const("x", origin="literal", node=node), "encode", [], {})
    assert (kept.value, kept.origin, kept.node) == (b"x", "literal", node)


def test_conversions():
    assert values.convert("bytes", [lit("x")], {}).value == b"x"
    assert values.convert("bytes", [lit("x")], {}).origin == "literal"
    assert values.convert("str", [lit(b"x"), lit("utf-8")], {}).value == "x"
    assert values.convert("str", [], {}).value == ""
    assert values.convert("int", [flag("3", "n")], {}).origin == "flag-default"
    none = values.convert("bytes", [lit(None)], {})
    assert isinstance(none, Unknown) and "TypeError" in none.why
    # tf.compat.as_str / as_text decode bytes (not str(b"x") == "b'x'") and raise for other types; as_str_any
    # gives str() of them
    assert values.convert("text", [lit(b"fp16")], {}).value == "fp16"
    assert values.convert("text", [lit("fp16")], {}).value == "fp16"
    refused = values.convert("text", [lit(7)], {})
    assert isinstance(refused, Unknown) and "TypeError" in refused.why
    assert values.convert("text-any", [lit(b"fp16")], {}).value == "fp16"
    assert values.convert("text-any", [lit(7)], {}).value == "7"
    assert values.convert("int", [lit("x")], {}) is UNKNOWN
    assert values.path_join([lit("/a"), lit("b")]).value == "/a/b"
    assert values.path_join([lit("/a"), UNKNOWN]) is UNKNOWN
    assert values.dict_call({"a": lit(1)}, has_positional=False).value == {"a": 1}
    assert values.dict_call({}, has_positional=True) is UNKNOWN


def test_merge_returns():
    assert values.merge_returns([]).value is None
    obj = ListRef(items=[])
    assert values.merge_returns([lit(1), obj]) is obj
    assert values.merge_returns([lit(1), lit(1)]).value == 1
    assert values.merge_returns([lit(1), lit(True)]) is UNKNOWN
    assert values.merge_returns([lit(1), UNKNOWN]) is UNKNOWN
