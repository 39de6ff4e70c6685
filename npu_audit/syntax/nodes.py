"""The node classes of the syntax tree, named and shaped like the libcst nodes the extraction reads, and
a node's range and source text.

Only fields the extraction uses exist; every other construct is an :class:`Other` node (a statement or
expression the interpreter does not evaluate). A node holds its position as CPython's ast gives it
(``_pos``) and the :class:`~npu_audit.syntax.source.Source` it comes from (``_src``): :func:`range_of`
and :func:`code_of` turn these into a 1-based character range and the node's text only when asked.

Each class's ``__init__`` is written out for its fields and compiled once, at import
(:func:`_initializer`): building a node is one plain call, with no loop over the fields.
"""

from __future__ import annotations

import ast
import threading
from functools import cache
from typing import Any, Optional, Union

from npu_audit.syntax.source import (
    Pos,
    Source,
    _closing,
    _inside,
    _parens_after,
    _parens_before,
    _without_block_indent,
)


class CSTNode:
    """A node: its position in :attr:`_src` (see module docstring). Fields are set by position."""

    __slots__ = ("_pos", "_src", "_outer")
    _fields: tuple[str, ...] = ()
    _pos: Any  # Optional[Pos]
    _src: Source
    _outer: int  # parentheses around the node that belong to its parent (`f(x)`); unset: 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._pos: Optional[Pos] = None
        for name, value in zip(self._fields, args):
            object.__setattr__(self, name, value)
        for name in self._fields[len(args):]:
            object.__setattr__(self, name, kwargs.get(name))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # (a slot named with an underscore is not a field: set after construction, like _pos)
        own = tuple(name for name in cls.__dict__.get("__slots__", ()) if not name.startswith("_"))
        cls._fields = tuple(getattr(cls.__mro__[1], "_fields", ())) + own
        cls.__init__ = _initializer(cls._fields)  # type: ignore[method-assign]

    def deep_replace(self, old: CSTNode, new: CSTNode) -> CSTNode:
        """A copy of this tree with ``old`` replaced by ``new`` (as libcst's: every node a new one, so none of
        them has a position in the file)."""
        if self is old:
            return new
        copy = type(self).__new__(type(self))
        copy._pos = None
        for name in self._fields:
            value = getattr(self, name, None)
            if isinstance(value, CSTNode):
                value = value.deep_replace(old, new)
            elif isinstance(value, list):
                value = [v.deep_replace(old, new) if isinstance(v, CSTNode) else v for v in value]
            object.__setattr__(copy, name, value)
        return copy

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{f}={getattr(self, f, None)!r}' for f in self._fields)})"


@cache
def _initializer(fields: tuple[str, ...]) -> Any:
    """An ``__init__`` taking ``fields`` in order (each may be given by name; missing ones are None): written
    out for the fields, a tree is built faster than with a loop over them. Classes with the same fields (the
    operators, say) share one: 42 functions for 116 classes."""
    params = "".join(f", {f}=None" for f in fields)
    body = "".join(f"\n    self.{f} = {f}" for f in fields)
    namespace: dict[str, Any] = {}
    exec(f"def __init__(self{params}):\n    self._pos = None{body}", namespace)
    return namespace["__init__"]


BaseExpression = CSTNode
BaseStatement = CSTNode


class Module(CSTNode):
    __slots__ = ("body", "source")
    body: list
    source: Source

    @property
    def code(self) -> str:
        return self.source.text

    def code_for_node(self, node: CSTNode) -> str:
        return code_of(node)



# -- statements ------------------------------------------------------------------------------------

class SimpleStatementLine(CSTNode):
    __slots__ = ("body",)
    body: list


class SimpleStatementSuite(CSTNode):
    __slots__ = ("body",)
    body: list


class IndentedBlock(CSTNode):
    __slots__ = ("body",)
    body: list


class LazyIndentedBlock(IndentedBlock):
    """An indented block whose statements are built when first read: the body of a function of a helper
    module (most of those are never entered). ``_make`` builds the statements; a body too deep to build
    raises RecursionError when read, as reading a too deep body does. Built once, also when threads (the
    language server's) read it together."""

    __slots__ = ("_make", "_built")
    _make: Any  # Optional[Callable[[], list]]
    _built: Optional[list]

    @property
    def body(self) -> list:
        built = self._built
        if built is None:
            with _BUILDING:
                built = self._built
                if built is None:
                    built = self._built = self._make()
                    self._make = None
        return built

    @body.setter
    def body(self, value: Optional[list]) -> None:
        self._built = value


_BUILDING = threading.RLock()
Suite = Union[IndentedBlock, SimpleStatementSuite]


class Else(CSTNode):
    __slots__ = ("body",)
    body: Suite


class Finally(CSTNode):
    __slots__ = ("body",)
    body: Suite


class If(CSTNode):
    __slots__ = ("test", "body", "orelse")
    test: CSTNode
    body: Suite
    orelse: Union[If, Else, None]


class For(CSTNode):
    __slots__ = ("target", "iter", "body", "orelse")
    target: CSTNode
    iter: CSTNode
    body: Suite
    orelse: Optional[Else]


class While(CSTNode):
    __slots__ = ("test", "body", "orelse")
    test: CSTNode
    body: Suite
    orelse: Optional[Else]


class AsName(CSTNode):
    __slots__ = ("name",)
    name: CSTNode


class ExceptHandler(CSTNode):
    __slots__ = ("type", "name", "body")
    type: Optional[CSTNode]
    name: Optional[AsName]
    body: Suite


class ExceptStarHandler(ExceptHandler):
    __slots__ = ()


class Try(CSTNode):
    __slots__ = ("body", "handlers", "orelse", "finalbody")
    body: Suite
    handlers: list
    orelse: Optional[Else]
    finalbody: Optional[Finally]


class TryStar(Try):
    __slots__ = ()


class WithItem(CSTNode):
    __slots__ = ("item", "asname")
    item: CSTNode
    asname: Optional[AsName]


class With(CSTNode):
    __slots__ = ("items", "body")
    items: list
    body: Suite


class Param(CSTNode):
    __slots__ = ("name", "default", "annotation")
    name: Name
    default: Optional[CSTNode]
    annotation: Optional[CSTNode]


class Parameters(CSTNode):
    __slots__ = ("params", "posonly_params", "kwonly_params", "star_arg", "star_kwarg")
    params: list
    posonly_params: list
    kwonly_params: list
    star_arg: Optional[Param]
    star_kwarg: Optional[Param]


class Decorator(CSTNode):
    __slots__ = ("decorator",)
    decorator: CSTNode


class FunctionDef(CSTNode):
    __slots__ = ("name", "params", "body", "decorators", "asynchronous")
    name: Name
    params: Parameters
    body: Suite
    decorators: list
    asynchronous: bool


class ClassDef(CSTNode):
    __slots__ = ("name", "bases", "keywords", "body", "decorators")
    name: Name
    bases: list
    keywords: list
    body: Suite
    decorators: list


class MatchCase(CSTNode):
    __slots__ = ("body",)
    body: Suite


class Match(CSTNode):
    __slots__ = ("subject", "cases")
    subject: CSTNode
    cases: list


class AssignTarget(CSTNode):
    __slots__ = ("target",)
    target: CSTNode


class Assign(CSTNode):
    __slots__ = ("targets", "value")
    targets: list
    value: CSTNode


class AnnAssign(CSTNode):
    __slots__ = ("target", "annotation", "value")
    target: CSTNode
    annotation: CSTNode
    value: Optional[CSTNode]


class AugAssign(CSTNode):
    __slots__ = ("target", "operator", "value")
    target: CSTNode
    operator: CSTNode
    value: CSTNode


class Expr(CSTNode):
    __slots__ = ("value",)
    value: CSTNode


class Return(CSTNode):
    __slots__ = ("value",)
    value: Optional[CSTNode]


class ImportAlias(CSTNode):
    __slots__ = ("name", "asname")
    name: CSTNode  # Name or Attribute
    asname: Optional[AsName]


class ImportStar(CSTNode):
    __slots__ = ()


class Import(CSTNode):
    __slots__ = ("names",)
    names: list


class ImportFrom(CSTNode):
    __slots__ = ("module", "names", "relative")
    module: Optional[CSTNode]
    names: Any  # list of ImportAlias, or ImportStar
    relative: list


class NameItem(CSTNode):
    __slots__ = ("name",)
    name: Name


class Global(CSTNode):
    __slots__ = ("names",)
    names: list


class Nonlocal(CSTNode):
    __slots__ = ("names",)
    names: list


class Other(CSTNode):
    """A statement or expression the extraction does not read (``pass``, ``raise``, a lambda, a
    comprehension ...): ``kind`` is CPython's ast class name."""

    __slots__ = ("kind",)
    kind: str


# -- expressions -----------------------------------------------------------------------------------

class Name(CSTNode):
    __slots__ = ("value",)
    value: str


class Attribute(CSTNode):
    __slots__ = ("value", "attr")
    value: CSTNode
    attr: Name


class Arg(CSTNode):
    __slots__ = ("value", "keyword", "star")
    value: CSTNode
    keyword: Optional[Name]
    star: str  # "", "*" or "**"


class Call(CSTNode):
    __slots__ = ("func", "args")
    func: CSTNode
    args: list


class Index(CSTNode):
    __slots__ = ("value",)
    value: CSTNode


class Slice(CSTNode):
    __slots__ = ("lower", "upper", "step")
    lower: Optional[CSTNode]
    upper: Optional[CSTNode]
    step: Optional[CSTNode]


class SubscriptElement(CSTNode):
    __slots__ = ("slice",)
    slice: Union[Index, Slice]


class Subscript(CSTNode):
    __slots__ = ("value", "slice")
    value: CSTNode
    slice: list


class SimpleString(CSTNode):
    __slots__ = ("value", "_evaluated")
    value: str  # the literal as written, prefix and quotes included
    _evaluated: Any  # its value as CPython's tree gives it; unset on a node built by hand or a part of an implicit
    # concatenation (``values.literal`` then reads ``value``)

    @property
    def prefix(self) -> str:
        return _prefix(self.value)

    @property
    def quote(self) -> str:
        rest = self.value[len(self.prefix):]
        return rest[:3] if rest[:3] in ('"""', "'''") else rest[:1]


class ConcatenatedString(CSTNode):
    __slots__ = ("left", "right")
    left: CSTNode
    right: CSTNode


class FormattedStringText(CSTNode):
    __slots__ = ("value",)
    value: str  # (the text's value: escapes and doubled braces already read)


class FormattedStringExpression(CSTNode):
    __slots__ = ("expression", "conversion", "format_spec")
    expression: CSTNode
    conversion: Optional[str]
    format_spec: Optional[list]


class FormattedString(CSTNode):
    __slots__ = ("parts", "prefix")
    parts: list
    prefix: str


class Integer(CSTNode):
    __slots__ = ("value", "_evaluated")
    value: str
    _evaluated: Any


class Float(CSTNode):
    __slots__ = ("value", "_evaluated")
    value: str
    _evaluated: Any


class Imaginary(CSTNode):
    __slots__ = ("value", "_evaluated")
    value: str
    _evaluated: Any


class Ellipsis(CSTNode):  # noqa: A001 - libcst's name
    __slots__ = ()


class UnaryOperation(CSTNode):
    __slots__ = ("operator", "expression")
    operator: BaseUnaryOp
    expression: CSTNode


class BinaryOperation(CSTNode):
    __slots__ = ("left", "operator", "right")
    left: CSTNode
    operator: CSTNode
    right: CSTNode


class BooleanOperation(CSTNode):
    __slots__ = ("left", "operator", "right")
    left: CSTNode
    operator: CSTNode
    right: CSTNode


class ComparisonTarget(CSTNode):
    __slots__ = ("operator", "comparator")
    operator: CSTNode
    comparator: CSTNode


class Comparison(CSTNode):
    __slots__ = ("left", "comparisons")
    left: CSTNode
    comparisons: list


class IfExp(CSTNode):
    __slots__ = ("test", "body", "orelse")
    test: CSTNode
    body: CSTNode
    orelse: CSTNode


class Element(CSTNode):
    __slots__ = ("value",)
    value: CSTNode


class StarredElement(CSTNode):
    __slots__ = ("value",)
    value: CSTNode


class List(CSTNode):
    __slots__ = ("elements",)
    elements: list


class Tuple(CSTNode):
    __slots__ = ("elements",)
    elements: list


class Set(CSTNode):
    __slots__ = ("elements",)
    elements: list


class DictElement(CSTNode):
    __slots__ = ("key", "value")
    key: CSTNode
    value: CSTNode


class StarredDictElement(CSTNode):
    __slots__ = ("value",)
    value: CSTNode


class Dict(CSTNode):
    __slots__ = ("elements",)
    elements: list


class NamedExpr(CSTNode):
    __slots__ = ("target", "value")
    target: CSTNode
    value: CSTNode


class Await(CSTNode):
    __slots__ = ("expression",)
    expression: CSTNode


# operators: one shared instance per kind, named as libcst names them (values.binop reads the names)

class BaseUnaryOp(CSTNode):
    __slots__ = ()


class Minus(BaseUnaryOp):
    __slots__ = ()


class Plus(BaseUnaryOp):
    __slots__ = ()


class Not(BaseUnaryOp):
    __slots__ = ()


class BitInvert(BaseUnaryOp):
    __slots__ = ()


class And(CSTNode):
    __slots__ = ()


class Or(CSTNode):
    __slots__ = ()


class Equal(CSTNode):
    __slots__ = ()


def _operator_kinds(names: dict[Any, str], suffix: str = "") -> dict[type, CSTNode]:
    out: dict[type, CSTNode] = {}
    for ast_type, name in names.items():
        cls = globals().get(name + suffix)
        if cls is None:
            cls = type(name + suffix, (CSTNode,), {"__slots__": ()})
            globals()[name + suffix] = cls
        out[ast_type] = cls()
    return out


_BINARY_NAMES = {ast.Add: "Add", ast.Sub: "Subtract", ast.Mult: "Multiply", ast.Div: "Divide",
                 ast.FloorDiv: "FloorDivide", ast.Mod: "Modulo", ast.Pow: "Power", ast.LShift: "LeftShift",
                 ast.RShift: "RightShift", ast.BitOr: "BitOr", ast.BitAnd: "BitAnd", ast.BitXor: "BitXor",
                 ast.MatMult: "MatrixMultiply"}
_BINARY = _operator_kinds(_BINARY_NAMES)
_AUGMENTED = _operator_kinds(_BINARY_NAMES, "Assign")
_COMPARISON = _operator_kinds({ast.Eq: "Equal", ast.NotEq: "NotEqual", ast.Lt: "LessThan", ast.Gt: "GreaterThan",
                               ast.LtE: "LessThanEqual", ast.GtE: "GreaterThanEqual", ast.Is: "Is",
                               ast.IsNot: "IsNot", ast.In: "In", ast.NotIn: "NotIn"})
_UNARY = {ast.USub: Minus(), ast.UAdd: Plus(), ast.Not: Not(), ast.Invert: BitInvert()}
_AND, _OR = And(), Or()


def _prefix(literal: str) -> str:
    i = 0
    while i < len(literal) and literal[i] not in "'\"":
        i += 1
    return literal[:i].lower()


# -- positions and text ----------------------------------------------------------------------------

Place = tuple  # (line, column, end line, end column): 1-based, columns in characters, end exclusive


def range_of(node: CSTNode) -> Optional[Place]:
    """The 1-based range of ``node``, parentheses around it excluded; None when unknown. (An argument or
    element written without a keyword covers its value's parentheses, as in libcst.)"""
    pos = getattr(node, "_pos", None)
    src = getattr(node, "_src", None)
    if pos is None or src is None:
        return None
    if type(node) in (Arg, Element) and not getattr(node, "keyword", None) and not getattr(node, "star", ""):
        span = _own_span(node.value)  # type: ignore[attr-defined]
        if span is not None:
            (line, column), (end_line, end_column) = src.position(span[0]), src.position(span[1])
            return (line, column + 1, end_line, end_column + 1)
    if type(node) is Tuple and node.elements:
        start, end = src.offset(pos[0], pos[1]), src.offset(pos[2], pos[3])
        text = src.text
        if text[start] == "(" and text[end - 1] == ")" and _closing(text, start) == end - 1:
            start, end = _inside(text, start, end)
            (line, column), (end_line, end_column) = src.position(start), src.position(end)
            return (line, column + 1, end_line, end_column + 1)
    line, col, end_line, end_col = pos
    return (line, src.column(line, col) + 1, end_line, src.column(end_line, end_col) + 1)


def code_of(node: CSTNode) -> str:
    """The source text of ``node``, with the parentheses that belong to it (libcst's ``code_for_node``
    of the node, stripped); "" when unknown."""
    span = _own_span(node)
    if span is None:
        return ""
    src = node._src
    text = src.text[span[0]: span[1]]
    if "\n" in text or "\r" in text:
        text = _without_block_indent(text, src.block_indent(src.position(span[0])[0]))
    return text.strip()


def _own_span(node: CSTNode) -> Optional[tuple[int, int]]:
    """(start, end) offsets of ``node`` with its own parentheses, or None when it has no position."""
    pos = getattr(node, "_pos", None)
    src = getattr(node, "_src", None)
    if pos is None or src is None:
        return None
    text = src.text
    start, end = src.offset(pos[0], pos[1]), src.offset(pos[2], pos[3])
    opened = _parens_before(text, start)
    if opened:
        closed = _parens_after(text, end)
        own = min(len(opened), len(closed)) - getattr(node, "_outer", 0)
        if own > 0:
            start, end = opened[own - 1], closed[own - 1] + 1
    return start, end
