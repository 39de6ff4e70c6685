"""Pure operations on symbolic values: what Python would compute from constants the script spells out.

Constant folding (literals, unary and binary operators, comparisons, string concatenation, f-string
fields, conversions such as ``str(x)`` / ``as_bytes(x)``, the few str/bytes/dict methods that are safe to
compute) and the origin bookkeeping that goes with it (a value computed from a flag default is itself a
flag default). Every function here takes and returns :class:`~npu_audit.extract.symbols.Sym` values (or
plain Python values) and needs no interpreter: no names, no scopes, no modules. Anything that cannot be
computed exactly gives ``UNKNOWN`` (or ``UNRESOLVED`` for plain values), never a guess.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import Any, Optional

import npu_audit.syntax as cst
from npu_audit.extract.model import UNRESOLVED
from npu_audit.extract.symbols import UNKNOWN, Const, ListRef, Sym, Unknown, origin_of, to_python

# str/bytes methods computed at analysis time: pure, cheap, and unable to run code of the script
STR_METHODS = frozenset({
    "lower",
    "upper",
    "strip",
    "lstrip",
    "rstrip",
    "replace",
    "format",
    "join",
    "encode",
    "decode",
    "title",
    "capitalize",
})

# conversions by built-in name: str(x), int(x), ...
BUILTIN_CONVERSIONS = ("str", "int", "float", "bool", "bytes", "repr")

_COMPARISONS = {
    "Equal": lambda a, b: a == b,
    "NotEqual": lambda a, b: a != b,
    "LessThan": lambda a, b: a < b,
    "LessThanEqual": lambda a, b: a <= b,
    "GreaterThan": lambda a, b: a > b,
    "GreaterThanEqual": lambda a, b: a >= b,
    "In": lambda a, b: a in b,
    "NotIn": lambda a, b: a not in b,
    "Is": lambda a, b: a is b if a is None or b is None else a == b,
    "IsNot": lambda a, b: a is not b if a is None or b is None else a != b,
}

#: the comparisons a guard may narrow a flag by (``if FLAGS.n > 0:``): an order or an identity, not membership
GUARD_COMPARISONS = frozenset({"Equal", "NotEqual", "LessThan", "LessThanEqual", "GreaterThan", "GreaterThanEqual",
                               "Is", "IsNot"})


# -- origins ---------------------------------------------------------------------------------------

def derived(*syms: Sym) -> str:
    """Origin of a value computed from ``syms``: flag-default when any input is one, else resolved."""
    return "flag-default" if origin_of(*syms) == "flag-default" else "resolved"


def flag_of(*syms: Sym) -> Optional[str]:
    """The flag name the first flag-derived input carries, if any."""
    return next((s.flag for s in syms if isinstance(s, Const) and s.flag), None)


def read_through_name(sym: Sym) -> Sym:
    """A literal read through a name (or another module's constant) is "resolved": its literal is
    elsewhere. Other values are returned as they are."""
    if isinstance(sym, Const) and sym.origin == "literal":
        return Const(sym.value, origin="resolved", flag=sym.flag, node=sym.node, path=sym.path)
    return sym


# -- literals --------------------------------------------------------------------------------------

@lru_cache(maxsize=8192)
def _string_value(source: str) -> Any:
    """The value of a string literal's source text (libcst's ``evaluated_value``), once per distinct text:
    scripts repeat the same keys and values many times. Read from CPython's tree of the literal rather
    than with ``ast.literal_eval``, whose nested helper functions are reference cycles left to the
    garbage collector on every call."""
    node = ast.parse(source, mode="eval").body
    if type(node) is not ast.Constant or not isinstance(node.value, (str, bytes)):
        raise ValueError(f"not a string literal: {source[:40]!r}")
    return node.value


def literal(node: cst.CSTNode, path: Optional[str]) -> Sym:
    """The value of a string or number literal (``path``: the module it is written in): CPython's, kept on
    the node when the tree was built (:mod:`npu_audit.syntax`), else read from the literal's text (a part
    of an implicit concatenation)."""
    try:
        value = node._evaluated  # type: ignore[attr-defined]
    except AttributeError:
        value = _literal_text_value(node)
        if value is _NOT_A_LITERAL:
            return UNKNOWN
    return Const(value, origin="literal", node=node, path=path)


_NOT_A_LITERAL = object()


def _literal_text_value(node: cst.CSTNode) -> Any:
    """The value of a literal read from its text, or _NOT_A_LITERAL."""
    try:
        if isinstance(node, cst.SimpleString):
            return _string_value(node.value)
        if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
            text = node.value
            if isinstance(node, cst.Integer):
                return int(text, 0) if not (len(text) > 1 and text[0] == "0" and text[1].isdigit()) else int(text)
            if isinstance(node, cst.Float):
                return float(text)
            return complex(text.replace("_", "").replace("J", "j"))  # (an imaginary literal: 1j, 2.5J)
    except Exception:  # noqa: BLE001 - a literal Python itself would reject
        return _NOT_A_LITERAL
    return _NOT_A_LITERAL


def concat(left: Sym, right: Sym) -> Sym:
    """Implicit concatenation of two string (or two bytes) literals: ``"a" "b"``."""
    lv, rv = to_python(left), to_python(right)
    if isinstance(lv, (str, bytes)) and type(lv) is type(rv):
        return Const(lv + rv, origin=origin_of(left, right))  # type: ignore[operator]  # (same type)
    return UNKNOWN


# -- operators -------------------------------------------------------------------------------------

def unary(operator: cst.BaseUnaryOp, operand: Sym, node: cst.CSTNode, path: Optional[str]) -> Sym:
    """``-x``, ``+x``, ``not x``, ``~x``; ``-1`` written as is stays a literal (at ``node``)."""
    v = to_python(operand)
    if v is UNRESOLVED:
        return UNKNOWN
    try:
        if isinstance(operator, cst.Minus):
            return Const(-v, origin=origin_of(operand),
                         node=node if isinstance(operand, Const) and operand.origin == "literal" else None,
                         path=path, flag=getattr(operand, "flag", None))
        if isinstance(operator, cst.Plus):
            return Const(+v, origin=origin_of(operand))
        if isinstance(operator, cst.Not):
            return Const(not v, origin=derived(operand), flag=getattr(operand, "flag", None))
        if isinstance(operator, cst.BitInvert):
            return Const(~v, origin="resolved")
    except Exception:  # noqa: BLE001 - what Python would raise: not one value
        return UNKNOWN
    return UNKNOWN


def binop(op: str, left: Sym, right: Sym) -> Sym:
    """``left <op> right`` with ``op`` a libcst operator class name ("Add", "Modulo", ...). Results that
    could be huge (``"x" * 10**9``, ``2 ** 10**6``) are not computed."""
    lv, rv = to_python(left), to_python(right)
    if lv is UNRESOLVED or rv is UNRESOLVED:
        return UNKNOWN
    try:
        if op == "Add":
            result = lv + rv
        elif op == "Subtract":
            result = lv - rv
        elif op == "Multiply":
            if isinstance(lv, (str, bytes, list)) or isinstance(rv, (str, bytes, list)):
                n = rv if isinstance(rv, int) else lv
                if isinstance(n, int) and n > 10000:
                    return UNKNOWN
            result = lv * rv
        elif op == "Divide":
            result = lv / rv
        elif op == "FloorDivide":
            result = lv // rv
        elif op == "Modulo":
            result = lv % rv
        elif op == "Power":
            if isinstance(rv, int) and abs(rv) > 256:
                return UNKNOWN
            result = lv**rv
        elif op == "LeftShift":
            if isinstance(rv, int) and rv > 256:
                return UNKNOWN
            result = lv << rv
        elif op == "RightShift":
            result = lv >> rv
        elif op == "BitOr":
            result = lv | rv
        elif op == "BitAnd":
            result = lv & rv
        elif op == "BitXor":
            result = lv ^ rv
        else:
            return UNKNOWN
    except Exception:  # noqa: BLE001 - what Python would raise: not one value
        return UNKNOWN
    return Const(result, origin=derived(left, right), flag=flag_of(left, right))


def compare(op: str, left: Any, right: Any) -> Any:
    """One link of a comparison chain on plain values (``op`` a libcst operator class name): its result,
    or UNRESOLVED when Python would raise."""
    try:
        return _COMPARISONS[op](left, right)
    except Exception:  # noqa: BLE001 - incomparable values, unknown operator
        return UNRESOLVED


def comparison_result(result: bool, syms: list[Sym]) -> Sym:
    """The value of a whole comparison chain computed from ``syms``."""
    return Const(result, origin=derived(*syms), flag=flag_of(*syms))


def subscript(container: Sym, index: Sym) -> Sym:
    """``container[index]`` for a constant container and index."""
    value, i = to_python(container), to_python(index)
    if value is UNRESOLVED or i is UNRESOLVED:
        return UNKNOWN
    try:
        item = value[i]
    except Exception:  # noqa: BLE001 - missing key, bad index: not one value
        return UNKNOWN
    return Const(item, origin=derived(container), flag=getattr(container, "flag", None))


def if_both_same(body: Sym, orelse: Sym) -> Sym:
    """``a if <unknown> else b``: one value only when both arms are equal."""
    bv, ov = to_python(body), to_python(orelse)
    if bv is not UNRESOLVED and bv == ov and type(bv) is type(ov):
        return Const(bv, origin="resolved")
    return UNKNOWN


def tuple_of(items: list[Sym], starred: bool) -> Sym:
    """A tuple display: a constant when every item is, else a loose list of its items."""
    values = [to_python(i) for i in items]
    if all(v is not UNRESOLVED for v in values) and not starred:
        return Const(tuple(values), origin=origin_of(*items))
    return ListRef(items=items, exact=False)


def dict_of(pairs: list[tuple[Sym, Sym]]) -> Sym:
    """A dict display of constant keys and values."""
    out = {}
    syms: list[Sym] = []
    for k, v in pairs:
        kp, vp = to_python(k), to_python(v)
        if kp is UNRESOLVED or vp is UNRESOLVED:
            return UNKNOWN
        try:
            out[kp] = vp
        except TypeError:
            return UNKNOWN
        syms += [k, v]
    return Const(out, origin=origin_of(*syms) if syms else "literal")


# -- f-strings -------------------------------------------------------------------------------------

def format_field(value: Any, conversion: Optional[str], spec: str) -> Any:
    """One ``{value!conversion:spec}`` field of an f-string, or UNRESOLVED when formatting raises."""
    try:
        if conversion == "r":
            value = repr(value)
        elif conversion == "s":
            value = str(value)
        elif conversion == "a":
            value = ascii(value)
        return format(value, spec)
    except Exception:  # noqa: BLE001 - a bad format spec
        return UNRESOLVED


def fstring(pieces: list[str], syms: list[Sym], prefix: str) -> Sym:
    """The f-string made of the formatted ``pieces``; ``syms`` are the values of its fields."""
    text = "".join(pieces)
    if "b" in prefix.lower():
        return UNKNOWN
    origin = origin_of(*syms) if syms else "literal"
    if origin == "literal" and syms:
        origin = "resolved"
    return Const(text, origin=origin, flag=flag_of(*syms))


# -- calls on values -------------------------------------------------------------------------------

def const_method(base: Const, method: str, args: list[Sym], kwargs: dict[str, Sym]) -> Sym:
    """``base.method(*args, **kwargs)`` for a constant dict (get/items/keys/values) or str/bytes
    (:data:`STR_METHODS`)."""
    value = base.value
    plain_args = [to_python(a) for a in args]
    plain_kwargs = {k: to_python(v) for k, v in kwargs.items()}
    if any(a is UNRESOLVED for a in plain_args) or any(v is UNRESOLVED for v in plain_kwargs.values()):
        return UNKNOWN
    syms = [base] + list(args) + list(kwargs.values())
    origin = derived(*syms)
    flag = flag_of(*syms)
    if isinstance(value, dict):
        if method == "get" and plain_args:
            return Const(value.get(*plain_args[:2]), origin=origin, flag=flag)
        if method in ("items", "keys", "values"):
            return Const(list(getattr(value, method)()), origin=origin, flag=flag)
        return UNKNOWN
    if not isinstance(value, (str, bytes)) or method not in STR_METHODS:
        return UNKNOWN
    try:
        result = getattr(value, method)(*plain_args, **plain_kwargs)
    except Exception:  # noqa: BLE001 - what Python would raise: not one value
        return UNKNOWN
    if method == "encode" and base.origin == "literal" and not plain_args and not plain_kwargs:
        # "x".encode() keeps pointing at the literal
        return Const(result, origin="literal", node=base.node, path=base.path)
    return Const(result, origin=origin, flag=flag)


def convert(to: str, positional: list[Sym], keywords: dict[str, Sym]) -> Sym:
    """``str(x)``, ``int(x)``, ..., ``as_bytes(x)`` (``to="bytes"``), ``as_str(x)`` / ``as_text(x)``
    (``to="text"``), ``as_str_any(x)`` (``to="text-any"``) with the call's argument values."""
    if not positional:
        if to == "str":
            return Const("", origin="resolved")
        return UNKNOWN
    sym = positional[0]
    value = to_python(sym)
    if value is UNRESOLVED:
        return UNKNOWN
    encoding = "utf-8"
    if len(positional) > 1 and isinstance(to_python(positional[1]), str):
        encoding = to_python(positional[1])
    if "encoding" in keywords and isinstance(to_python(keywords["encoding"]), str):
        encoding = to_python(keywords["encoding"])
    result: Any
    try:
        if to == "bytes":
            if isinstance(value, bytes):
                result = value
            elif isinstance(value, str):
                result = value.encode(encoding)
            elif value is None:
                return Unknown(why="as_bytes(None) raises TypeError")
            else:
                return UNKNOWN
        elif to == "str":
            result = value.decode(encoding) if isinstance(value, bytes) and len(positional) > 1 else str(value)
        elif to in ("text", "text-any"):
            # tf.compat.as_text / as_str decode bytes and return a str as it is; anything else raises TypeError
            # (as_str_any gives str() of it instead)
            if isinstance(value, bytes):
                result = value.decode(encoding)
            elif isinstance(value, str) or to == "text-any":
                result = str(value)
            else:
                return Unknown(why=f"tf.compat.as_text({type(value).__name__}) raises TypeError")
        elif to == "repr":
            result = repr(value)
        elif to == "int":
            result = int(value)
        elif to == "float":
            result = float(value)
        elif to == "bool":
            result = bool(value)
        else:
            return UNKNOWN
    except Exception:  # noqa: BLE001 - what Python would raise: not one value
        return UNKNOWN
    keep_literal = isinstance(sym, Const) and sym.origin == "literal" and to in ("bytes",) and isinstance(value, (str, bytes))
    if keep_literal:
        assert isinstance(sym, Const)  # (keep_literal)
        return Const(result, origin="literal", node=sym.node, path=sym.path)
    return Const(result, origin=derived(sym), flag=getattr(sym, "flag", None),
                 node=sym.node if isinstance(sym, Const) else None,
                 path=sym.path if isinstance(sym, Const) else None)


def path_join(parts: list[Sym]) -> Sym:
    """``os.path.join(...)`` of constant strings (POSIX separators, as on the training hosts)."""
    values = [to_python(p) for p in parts]
    if values and all(isinstance(p, str) for p in values):
        import posixpath

        return Const(posixpath.join(*values), origin="resolved")
    return UNKNOWN


def dict_call(keywords: dict[str, Sym], has_positional: bool) -> Sym:
    """``dict(a=1, b=2)``."""
    if not has_positional:
        values = {k: to_python(v) for k, v in keywords.items()}
        if all(v is not UNRESOLVED for v in values.values()):
            return Const(values, origin="resolved")
    return UNKNOWN


def merge_returns(returns: list[Sym]) -> Sym:
    """The value of a call from the values its ``return`` statements gave: an object if one was
    returned, a constant if every return gave the same one, else unknown."""
    if not returns:
        return Const(None)
    objects = [r for r in returns if not isinstance(r, (Const, Unknown))]
    if objects:
        return objects[0]
    values = [to_python(r) for r in returns]
    if all(v is not UNRESOLVED for v in values) and all(v == values[0] and type(v) is type(values[0]) for v in values):
        return returns[0] if len(returns) == 1 else Const(values[0], origin="resolved")
    return UNKNOWN
