"""Building the syntax tree: a single pass over CPython's ast of a text into the node classes of
:mod:`npu_audit.syntax.nodes` (:class:`_Builder`; :mod:`npu_audit.syntax.parsing` calls it).

Positions are kept as the ast gives them (UTF-8 byte columns). Strings are re-read from the text
(implicit concatenations, f-strings and their fields), since CPython's ast merges what libcst keeps
apart. Statements left out (``skip``) are not built, and a tree deeper than a limit stops the build
(:class:`TooDeep`).
"""

from __future__ import annotations

import ast
import re
import sys
import tokenize
from io import StringIO
from typing import Any, Optional, TypeVar, Union

from npu_audit.syntax.nodes import (
    _AND,
    _AUGMENTED,
    _BINARY,
    _COMPARISON,
    _OR,
    _UNARY,
    AnnAssign,
    Arg,
    AsName,
    Assign,
    AssignTarget,
    Attribute,
    AugAssign,
    Await,
    BinaryOperation,
    BooleanOperation,
    Call,
    ClassDef,
    Comparison,
    ComparisonTarget,
    ConcatenatedString,
    CSTNode,
    Decorator,
    Dict,
    DictElement,
    Element,
    Ellipsis,
    Else,
    ExceptHandler,
    ExceptStarHandler,
    Expr,
    Finally,
    Float,
    For,
    FormattedString,
    FormattedStringExpression,
    FormattedStringText,
    FunctionDef,
    Global,
    If,
    IfExp,
    Imaginary,
    Import,
    ImportAlias,
    ImportFrom,
    ImportStar,
    IndentedBlock,
    Index,
    Integer,
    LazyIndentedBlock,
    List,
    Match,
    MatchCase,
    Name,
    NamedExpr,
    NameItem,
    Nonlocal,
    Other,
    Param,
    Parameters,
    Return,
    Set,
    SimpleStatementLine,
    SimpleStatementSuite,
    SimpleString,
    Slice,
    StarredDictElement,
    StarredElement,
    Subscript,
    SubscriptElement,
    Suite,
    Try,
    TryStar,
    Tuple,
    UnaryOperation,
    While,
    With,
    WithItem,
    _own_span,
    _prefix,
)
from npu_audit.syntax.source import Source, _between, _closing, _inside, _relocated
from npu_audit.text import LINE_BREAK


class TooDeep(Exception):
    """The tree would be deeper than the ``max_depth`` given to :func:`~npu_audit.syntax.parsing.parse_module`; ``line`` and ``column``
    (1-based, the column in characters) say where it got too deep."""

    def __init__(self, line: int, column: int, depth: int):
        super().__init__(f"deeper than {depth} levels at line {line}")
        self.line = line
        self.column = column
        self.depth = depth


_Literal = TypeVar("_Literal", "SimpleString", "Integer", "Float", "Imaginary")


def _with_value(literal: _Literal, value: Any) -> _Literal:
    """``literal`` with the value CPython's tree gives it kept (``values.literal`` reads it)."""
    literal._evaluated = value
    return literal


def _last_identifier(text: str) -> str:
    """The identifier ``text`` ends with (before trailing whitespace), as written: its characters are those
    an identifier may continue with, combining marks too (``\\w`` misses some: ``Aꯣ0``)."""
    text = text.rstrip()
    start = len(text)
    while start > 0 and ("a" + text[start - 1]).isidentifier():
        start -= 1
    return text[start:]


_SINGLE_STRING = re.compile(
    r"""[rRbBuUfF]{0,2}(?:'''(?:[^\\']|\\.|'(?!''))*'''|\"\"\"(?:[^\\"]|\\.|"(?!""))*\"\"\""""
    r"""|'(?:[^'\\\n\r]|\\.)*'|"(?:[^"\\\n\r]|\\.)*")""",
    re.DOTALL,
)


N = TypeVar("N", bound=CSTNode)
_FSTRING_FIELDS_PLACED = sys.version_info >= (3, 10)  # (3.9 misplaces the fields of a multi-line f-string)


class _Builder:
    def __init__(self, source: Source, skip: frozenset[int] = frozenset(), max_depth: Optional[int] = None,
                 lazy_bodies: bool = False):
        self.src = source
        self.lazy_bodies = lazy_bodies  # function bodies built when first read (LazyIndentedBlock)
        self.skip = skip  # ids of the ast statements left out
        self.depth = 0  # how deep the node being built is (TooDeep past max_depth)
        self.max_depth = max_depth if max_depth is not None else sys.maxsize
        # False while building what CPython placed wrongly (Python 3.9: the fields of a multi-line f-string):
        # no positions, and values from the ast rather than the text
        self.trusted = True

    # nodes ---------------------------------------------------------------------------------------

    def at(self, node: N, a: Any) -> N:
        node._pos = (a.lineno, a.col_offset, a.end_lineno, a.end_col_offset) if self.trusted else None
        node._src = self.src
        return node

    def span(self, node: N, first: CSTNode, last: CSTNode) -> N:
        if first._pos is None or last._pos is None or not self.trusted:
            node._pos = None
        else:
            node._pos = (first._pos[0], first._pos[1], last._pos[2], last._pos[3])
        node._src = self.src
        return node

    def name(self, value: str, line: int, col: int) -> Name:
        node = Name(value)
        node._pos = (line, col, line, col + len(value.encode("utf-8"))) if self.trusted else None
        node._src = self.src
        return node

    def deeper(self, levels: int, line: int, byte_column: int) -> None:
        """Raise TooDeep (at the position given as CPython gives it) when ``levels`` more below the current
        depth would pass the limit."""
        if self.depth + levels > self.max_depth:
            raise TooDeep(line, self.src.column(line, byte_column) + 1, self.max_depth)

    def dotted(self, dotted: str, line: int, col: int) -> CSTNode:
        """``a.b.c`` as Name/Attribute nodes starting at (line, col)."""
        parts = dotted.split(".")
        self.deeper(len(parts), line, col)
        node: CSTNode = self.name(parts[0], line, col)
        end = col + len(parts[0].encode("utf-8"))
        for part in parts[1:]:
            attr = self.name(part, line, end + 1)
            end += 1 + len(part.encode("utf-8"))
            node = Attribute(node, attr)
            node._pos = (line, col, line, end)
            node._src = self.src
        return node

    # statements ----------------------------------------------------------------------------------

    def block(self, stmts: list) -> list:
        """Statements, the simple ones grouped per line into SimpleStatementLine."""
        if stmts:
            self.deeper(1, stmts[0].lineno, stmts[0].col_offset)
        self.depth += 1
        out: list = []
        line: Optional[SimpleStatementLine] = None
        previous = None
        skip = self.skip
        for stmt in stmts:
            if skip and id(stmt) in skip:
                line = previous = None
                continue
            handler = _COMPOUND.get(type(stmt))
            if handler is not None:
                out.append(handler(self, stmt))
                line = None
                previous = None
                continue
            small = self.small(stmt)
            if line is not None and previous is not None and self._same_line(previous, stmt):
                line.body.append(small)
                line._pos = (line._pos[0], line._pos[1], stmt.end_lineno, stmt.end_col_offset)
            else:
                line = SimpleStatementLine([small])
                self.at(line, stmt)
                out.append(line)
            previous = stmt
        self.depth -= 1
        return out

    def _same_line(self, previous: ast.stmt, stmt: ast.stmt) -> bool:
        if previous.end_lineno == stmt.lineno:
            return True
        if stmt.lineno != (previous.end_lineno or 0) + 1:
            return False
        line = self.src.line(stmt.lineno - 1)
        rest = line.encode("utf-8", "surrogatepass")[previous.end_col_offset or 0:].decode("utf-8", "replace").strip()
        return rest.startswith(";") and rest.endswith("\\")

    def suite(self, stmts: list, lazy: bool = False) -> Suite:
        """The block of ``stmts``; with ``lazy``, an indented block's statements are built when first read
        (a :class:`LazyIndentedBlock`: the body of a helper's function)."""
        first = stmts[0]
        before = self.src.line(first.lineno).encode("utf-8", "surrogatepass")[: first.col_offset]
        if before.strip():  # written on the header's line: `if x: y = 1`
            smalls = []
            for stmt in stmts:
                if self.skip and id(stmt) in self.skip:
                    continue
                smalls.append(self.small(stmt) if type(stmt) not in _COMPOUND else _COMPOUND[type(stmt)](self, stmt))
            suite: Suite = SimpleStatementSuite(smalls)
        elif lazy:
            suite = self._lazy_block(stmts)
        else:
            suite = IndentedBlock(self.block(stmts))
        last = stmts[-1]
        suite._pos = (first.lineno, first.col_offset, last.end_lineno, last.end_col_offset)
        suite._src = self.src
        return suite

    def _lazy_block(self, stmts: list) -> LazyIndentedBlock:
        """An indented block whose statements are built, at the depth they would be built at now, when it is
        first read; one too deep to build raises RecursionError then."""
        depth = self.depth

        def make() -> list:
            outer = self.depth
            self.depth = depth
            try:
                return self.block(stmts)
            except TooDeep as deep:
                raise RecursionError(str(deep)) from deep
            finally:
                self.depth = outer

        block = LazyIndentedBlock()
        block._make = make
        return block

    def small(self, stmt: ast.stmt) -> CSTNode:
        handler = _SMALL.get(type(stmt))
        node = handler(self, stmt) if handler is not None else Other(type(stmt).__name__)
        return self.at(node, stmt)

    def orelse(self, stmts: list) -> Optional[Else]:
        if not stmts:
            return None
        node = Else(self.suite(stmts))
        return self.span(node, node.body, node.body)

    def _if(self, stmt: ast.If) -> If:
        orelse: Union[If, Else, None] = None
        if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If):
            inner = stmt.orelse[0]
            text = self.src.line(inner.lineno).encode("utf-8", "surrogatepass")[inner.col_offset:]
            if text.startswith(b"elif"):
                self.deeper(1, inner.lineno, inner.col_offset)
                self.depth += 1
                orelse = self._if(inner)
                self.depth -= 1
        if orelse is None:
            orelse = self.orelse(stmt.orelse)
        return self.at(If(self.expr(stmt.test), self.suite(stmt.body), orelse), stmt)

    def _for(self, stmt: Any) -> For:
        return self.at(For(self.expr(stmt.target), self.expr(stmt.iter), self.suite(stmt.body),
                           self.orelse(stmt.orelse)), stmt)

    def _while(self, stmt: ast.While) -> While:
        return self.at(While(self.expr(stmt.test), self.suite(stmt.body), self.orelse(stmt.orelse)), stmt)

    def _try(self, stmt: Any) -> Try:
        star = type(stmt).__name__ == "TryStar"
        handlers = []
        for h in stmt.handlers:
            name = None
            if h.name:
                text = self.src.line(h.lineno).encode("utf-8", "surrogatepass")
                col = text.find(h.name.encode("utf-8"), h.type.end_col_offset if h.type is not None and h.type.end_lineno == h.lineno else h.col_offset)
                target = self.name(h.name, h.lineno, max(col, 0))
                name = self.span(AsName(target), target, target)
            handler = (ExceptStarHandler if star else ExceptHandler)(
                self.expr(h.type) if h.type is not None else None, name, self.suite(h.body))
            handlers.append(self.at(handler, h))
        final = None
        if stmt.finalbody:
            final = Finally(self.suite(stmt.finalbody))
            self.span(final, final.body, final.body)
        node = (TryStar if star else Try)(self.suite(stmt.body), handlers, self.orelse(stmt.orelse), final)
        return self.at(node, stmt)

    def _with(self, stmt: Any) -> With:
        items = []
        for item in stmt.items:
            value = self.expr(item.context_expr)
            asname = None
            if item.optional_vars is not None:
                target = self.expr(item.optional_vars)
                asname = self.span(AsName(target), target, target)
            items.append(self.span(WithItem(value, asname), value, asname.name if asname else value))
        return self.at(With(items, self.suite(stmt.body)), stmt)

    def _def(self, stmt: Any) -> FunctionDef:
        args = stmt.args
        positional = list(args.posonlyargs) + list(args.args)
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        params = [self.param(a, d) for a, d in zip(positional, defaults)]
        posonly, plain = params[: len(args.posonlyargs)], params[len(args.posonlyargs):]
        kwonly = [self.param(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
        star = self.param(args.vararg, None) if args.vararg is not None else None
        kwargs = self.param(args.kwarg, None) if args.kwarg is not None else None
        parameters = Parameters(plain, posonly, kwonly, star, kwargs)
        if len(params) == 1 and not kwonly and star is None and kwargs is None:
            params[0].name._outer = 1  # (the parentheses of `def f(x)` are the definition's)
        node = FunctionDef(self.def_name(stmt, "def"), parameters, self.suite(stmt.body, self.lazy_bodies),
                           [self.decorator(d) for d in stmt.decorator_list], isinstance(stmt, ast.AsyncFunctionDef))
        return self.at(node, stmt)

    def def_name(self, stmt: Any, keyword: str) -> Name:
        text = self.src.line(stmt.lineno).encode("utf-8", "surrogatepass")
        m = re.compile(rb"(?:async\s+)?" + keyword.encode() + rb"\s+").match(text, stmt.col_offset)
        col = m.end() if m else stmt.col_offset
        return self.name(stmt.name, stmt.lineno, col)

    def decorator(self, expr: ast.expr) -> Decorator:
        value = self.expr(expr)
        return self.span(Decorator(value), value, value)

    def param(self, arg: ast.arg, default: Optional[ast.expr]) -> Param:
        name = self.name(arg.arg, arg.lineno, arg.col_offset)
        node = Param(name, self.expr(default) if default is not None else None,
                     self.expr(arg.annotation) if arg.annotation is not None else None)
        return self.at(node, arg)

    def _class(self, stmt: ast.ClassDef) -> ClassDef:
        bases = [self.arg(b, None) for b in stmt.bases]
        if len(stmt.bases) + len(stmt.keywords) == 1 and stmt.bases:
            bases[0].value._outer = 1
        keywords = [self.keyword(k) for k in stmt.keywords]
        node = ClassDef(self.def_name(stmt, "class"), bases, keywords, self.suite(stmt.body),
                        [self.decorator(d) for d in stmt.decorator_list])
        return self.at(node, stmt)

    def _match(self, stmt: Any) -> Match:
        cases = []
        for case in stmt.cases:
            body = self.suite(case.body)
            cases.append(self.span(MatchCase(body), body, body))
        return self.at(Match(self.expr(stmt.subject), cases), stmt)

    # small statements -----------------------------------------------------------------------------

    def _assign(self, stmt: ast.Assign) -> Assign:
        targets = []
        for t in stmt.targets:
            target = self.expr(t)
            targets.append(self.span(AssignTarget(target), target, target))
        return Assign(targets, self.expr(stmt.value))

    def _ann_assign(self, stmt: ast.AnnAssign) -> AnnAssign:
        return AnnAssign(self.expr(stmt.target), self.expr(stmt.annotation),
                         self.expr(stmt.value) if stmt.value is not None else None)

    def _aug_assign(self, stmt: ast.AugAssign) -> AugAssign:
        return AugAssign(self.expr(stmt.target), _AUGMENTED[type(stmt.op)], self.expr(stmt.value))

    def _expr_stmt(self, stmt: ast.Expr) -> Expr:
        return Expr(self.expr(stmt.value))

    def _return(self, stmt: ast.Return) -> Return:
        return Return(self.expr(stmt.value) if stmt.value is not None else None)

    def alias(self, alias: ast.alias, stmt: ast.stmt) -> ImportAlias:
        # (positions of import names: Python 3.10+; on 3.9 the statement's)
        where: Any = alias if hasattr(alias, "lineno") else stmt
        name = self.dotted(alias.name, where.lineno, where.col_offset)
        asname = None
        if alias.asname:
            target = self.name(alias.asname, where.end_lineno or where.lineno,
                               (where.end_col_offset or 0) - len(alias.asname.encode("utf-8")))
            asname = self.span(AsName(target), target, target)
        return self.at(ImportAlias(name, asname), where)

    def _import(self, stmt: ast.Import) -> Import:
        return Import([self.alias(a, stmt) for a in stmt.names])

    def _import_from(self, stmt: ast.ImportFrom) -> ImportFrom:
        module = None
        if stmt.module:
            text = self.src.line(stmt.lineno).encode("utf-8", "surrogatepass")
            col = text.find(stmt.module.split(".")[0].encode("utf-8"), stmt.col_offset + 4)
            module = self.dotted(stmt.module, stmt.lineno, max(col, 0))
        names: Any
        if len(stmt.names) == 1 and stmt.names[0].name == "*":
            names = ImportStar()
        else:
            names = [self.alias(a, stmt) for a in stmt.names]
        return ImportFrom(module, names, [None] * (stmt.level or 0))

    def _global(self, stmt: Any) -> CSTNode:
        items = []
        for n in stmt.names:
            name = self.name(n, stmt.lineno, stmt.col_offset)
            items.append(self.span(NameItem(name), name, name))
        return (Global if isinstance(stmt, ast.Global) else Nonlocal)(items)

    # expressions ---------------------------------------------------------------------------------

    def expr(self, node: ast.expr) -> CSTNode:
        if self.depth >= self.max_depth:  # (inline: this runs for every expression)
            self.deeper(1, node.lineno, node.col_offset)
        depth = self.depth = self.depth + 1
        handler = _EXPRESSIONS.get(type(node))
        out = handler(self, node) if handler is not None else Other(type(node).__name__)
        self.depth = depth - 1
        if out._pos is None:
            out._src = self.src
            if self.trusted:
                out._pos = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
                if type(node) is ast.GeneratorExp:
                    self.inside_parentheses(out)
        return out

    def inside_parentheses(self, node: CSTNode) -> None:
        """Move the range of ``node`` inside the parentheses it starts and ends with (CPython counts them in
        a generator expression's range, libcst does not)."""
        src, pos = self.src, node._pos
        start, end = src.offset(pos[0], pos[1]), src.offset(pos[2], pos[3])
        text = src.text
        if end - start < 2 or text[start] != "(" or text[end - 1] != ")":
            return
        start, end = _inside(text, start, end)
        node._pos = src.byte_position(start) + src.byte_position(end)

    def span_from(self, node: N, first: CSTNode, last: CSTNode) -> N:
        """:meth:`span` counting the parentheses of ``first`` and ``last`` (a node libcst nests, such as the
        inner ``a and b`` of ``(a) and b and c``, starts where its first operand's parentheses do)."""
        head, tail = _own_span(first), _own_span(last)
        if head is None or tail is None:
            return self.span(node, first, last)
        node._pos = self.src.byte_position(head[0]) + self.src.byte_position(tail[1])
        node._src = self.src
        return node

    def _name(self, node: ast.Name) -> Name:
        # (CPython gives identifiers NFKC-normalised: the name as written is the source's)
        return Name(node.id if self.src.ascii or not self.trusted else self.segment(node))

    def _constant(self, node: ast.Constant) -> CSTNode:
        value = node.value
        if value is None or value is True or value is False:
            return Name(str(value))
        if isinstance(value, (str, bytes)):
            return self.string(node)
        if value is ...:
            return Ellipsis()
        text = self.segment(node) if self.trusted else repr(value)
        if isinstance(value, int):
            return _with_value(Integer(text), value)
        if isinstance(value, float):
            return _with_value(Float(text), value)
        if isinstance(value, complex):
            return _with_value(Imaginary(text), value)
        return Other(type(node).__name__)

    def segment(self, node: Any) -> str:
        src = self.src
        return src.text[src.offset(node.lineno, node.col_offset): src.offset(node.end_lineno, node.end_col_offset)]

    def string(self, node: Any) -> CSTNode:
        """A string literal, an f-string, or an implicit concatenation of them (split with tokenize)."""
        if not self.trusted:
            if isinstance(node, ast.JoinedStr):
                return FormattedString(self.fstring_parts(node.values), "f")
            return _with_value(SimpleString(repr(node.value)), node.value)
        text = self.segment(node)
        if _SINGLE_STRING.fullmatch(text):
            if isinstance(node, ast.JoinedStr):
                return self.fstring(node, text)
            return _with_value(SimpleString(text), node.value)
        return self.concatenation(node, text)

    def fstring(self, node: ast.JoinedStr, text: str) -> FormattedString:
        return FormattedString(self.fields_of(node.values, node.lineno != node.end_lineno), _prefix(text))

    def fields_of(self, values: list, multiline: bool) -> list:
        """:meth:`fstring_parts`; on Python 3.9, where CPython places the fields of a multi-line f-string
        wrongly, built without positions and with values read from the ast."""
        if not multiline or _FSTRING_FIELDS_PLACED:
            return self.fstring_parts(values)
        saved, self.trusted = self.trusted, False
        try:
            return self.fstring_parts(values)
        finally:
            self.trusted = saved

    def fstring_parts(self, values: list) -> list:
        parts: list = []
        for value in values:
            if isinstance(value, ast.Constant):
                parts.append(FormattedStringText(str(value.value)))
            elif isinstance(value, ast.FormattedValue):
                spec = self.fstring_parts(value.format_spec.values) if isinstance(value.format_spec, ast.JoinedStr) else None
                conversion = chr(value.conversion) if value.conversion and value.conversion > 0 else None
                parts.append(FormattedStringExpression(self.expr(value.value), conversion, spec))
        return parts

    def concatenation(self, node: Any, text: str) -> CSTNode:
        """``"a" "b" f"c"``: libcst's right-nested ConcatenatedString of the literal parts."""
        pieces: list[tuple[str, tuple[int, int], tuple[int, int]]] = []  # (literal, start, end) in ``text``
        fstring_start, fstring_end = getattr(tokenize, "FSTRING_START", -1), getattr(tokenize, "FSTRING_END", -1)
        lines = LINE_BREAK.split(text)

        def at(position: tuple[int, int]) -> tuple[int, int]:  # (the "(" added before the text)
            return (position[0], position[1] - 1) if position[0] == 1 else position

        try:
            depth, opened = 0, (0, 0)
            # inside brackets: no INDENT/DEDENT for continuation lines that move back left; and "\n" line
            # breaks only, so a file with "\r" line breaks is tokenized line by line too
            bracketed = "(" + LINE_BREAK.sub("\n", text) + ")"
            for token in tokenize.generate_tokens(StringIO(bracketed).readline):
                if token.type == tokenize.STRING and depth == 0:
                    pieces.append((token.string, at(token.start), at(token.end)))
                elif token.type == fstring_start:  # (Python 3.12+: an f-string is several tokens)
                    depth += 1
                    opened = at(token.start) if depth == 1 else opened
                elif token.type == fstring_end:
                    depth -= 1
                    if depth == 0:
                        pieces.append((_between(lines, opened, at(token.end)), opened, at(token.end)))
        except (tokenize.TokenError, SyntaxError):
            pieces = []
        self.deeper(len(pieces), node.lineno, node.col_offset)  # (built right-nested: a level per part)
        line, col = node.lineno, node.col_offset
        parts: list[CSTNode] = []
        for literal, (srow, scol), (erow, ecol) in pieces:
            try:
                part_tree = ast.parse(literal, mode="eval").body
            except SyntaxError:
                parts = []
                break
            start = self._shift(line, col, srow, scol)
            end = self._shift(line, col, erow, ecol)
            if isinstance(part_tree, ast.JoinedStr):
                # (a part parsed on its own: its fields' positions are moved to where the part is)
                built: CSTNode = FormattedString(self.fields_of(_relocated(part_tree, start), "\n" in literal),
                                                 _prefix(literal))
            else:
                built = SimpleString(literal)
            built._pos = (start[0], start[1], end[0], end[1])
            built._src = self.src
            parts.append(built)
        if len(parts) < 2:
            return SimpleString(text) if not isinstance(node, ast.JoinedStr) else FormattedString(
                self.fields_of(node.values, node.lineno != node.end_lineno), _prefix(text))
        result = parts[-1]
        for part in reversed(parts[:-1]):
            result = self.span(ConcatenatedString(part, result), part, result)
        return result

    def _shift(self, line: int, col: int, row: int, column: int) -> tuple[int, int]:
        """(line, byte column) of a tokenize position (row 1-based, character column) in a segment that
        starts at (line, col)."""
        if row == 1:
            segment_line = self.src.line(line).encode("utf-8", "surrogatepass")[col:].decode("utf-8", "replace")
            return line, col + len(segment_line[:column].encode("utf-8", "surrogatepass"))
        return line + row - 1, len(self.src.line(line + row - 1)[:column].encode("utf-8", "surrogatepass"))

    def _attribute(self, node: ast.Attribute) -> Attribute:
        value = self.expr(node.value)
        end_line, end = node.end_lineno or node.lineno, node.end_col_offset or 0
        written = node.attr
        if not self.src.ascii and self.trusted:  # (NFKC-normalised by CPython: read it from the source)
            written = _last_identifier(self.segment(node)) or written
        attr = self.name(written, end_line, end - len(written.encode("utf-8")))
        return Attribute(value, attr)

    def arg(self, value: ast.expr, keyword: Optional[str]) -> Arg:
        if isinstance(value, ast.Starred):
            inner = self.expr(value.value)
            return self.at(Arg(inner, None, "*"), value)
        built = self.expr(value)
        return self.span(Arg(built, None, ""), built, built)

    def keyword(self, kw: ast.keyword) -> Arg:
        value = self.expr(kw.value)
        if kw.arg is None:
            return self.at(Arg(value, None, "**"), kw)
        return self.at(Arg(value, self.name(kw.arg, kw.lineno, kw.col_offset), ""), kw)

    def _call(self, node: ast.Call) -> Call:
        func = self.expr(node.func)
        if node.keywords and node.args and _after(node.args[-1], node.keywords[0]):
            # keywords written between positional arguments (`f(a, k=1, *b)`): source order
            order: list[tuple[int, int, int, Any]] = sorted([(a.lineno, a.col_offset, 0, a) for a in node.args]
                           + [(k.lineno, k.col_offset, 1, k) for k in node.keywords], key=lambda t: (t[0], t[1]))
            args = [self.arg(a, None) if kind == 0 else self.keyword(a) for _, _, kind, a in order]
        else:
            args = [self.arg(a, None) for a in node.args] + [self.keyword(k) for k in node.keywords]
        if len(args) == 1 and not args[0].star and args[0].keyword is None:
            args[0].value._outer = 1  # the call's parentheses are the argument's only ones: `f(x)`
        return Call(func, args)

    def _subscript(self, node: ast.Subscript) -> Subscript:
        value = self.expr(node.value)
        index = node.slice
        elements: list[CSTNode]
        if isinstance(index, ast.Tuple) and not (self.trusted and self._parenthesised(index)):
            elements = [self.subscript_element(e) for e in index.elts]
        else:
            elements = [self.subscript_element(index)]
        return Subscript(value, elements)

    def _parenthesised(self, node: ast.expr) -> bool:
        text = self.segment(node)
        return text.startswith("(") and text.endswith(")") and _closing(text, 0) == len(text) - 1

    def subscript_element(self, node: ast.expr) -> SubscriptElement:
        if isinstance(node, ast.Slice):
            inner: CSTNode = Slice(*(self.expr(p) if p is not None else None for p in (node.lower, node.upper, node.step)))
            self.at(inner, node)
        else:
            value = self.expr(node)
            inner = self.span(Index(value), value, value)
        return self.span(SubscriptElement(inner), inner, inner)

    def _unary(self, node: ast.UnaryOp) -> UnaryOperation:
        return UnaryOperation(_UNARY[type(node.op)], self.expr(node.operand))

    def _binary(self, node: ast.BinOp) -> BinaryOperation:
        return BinaryOperation(self.expr(node.left), _BINARY[type(node.op)], self.expr(node.right))

    def _boolean(self, node: ast.BoolOp) -> CSTNode:
        operator = _AND if isinstance(node.op, ast.And) else _OR
        self.deeper(len(node.values), node.lineno, node.col_offset)  # (built left-nested: a level per operand)
        values = [self.expr(v) for v in node.values]
        result = values[0]
        for value in values[1:-1]:
            result = self.span_from(BooleanOperation(result, operator, value), result, value)
        return BooleanOperation(result, operator, values[-1])

    def _compare(self, node: ast.Compare) -> Comparison:
        targets = []
        for op, comparator in zip(node.ops, node.comparators):
            built = self.expr(comparator)
            targets.append(self.span(ComparisonTarget(_COMPARISON[type(op)], built), built, built))
        return Comparison(self.expr(node.left), targets)

    def _ifexp(self, node: ast.IfExp) -> IfExp:
        return IfExp(self.expr(node.test), self.expr(node.body), self.expr(node.orelse))

    def element(self, node: ast.expr) -> CSTNode:
        if isinstance(node, ast.Starred):
            return self.at(StarredElement(self.expr(node.value)), node)
        value = self.expr(node)
        return self.span(Element(value), value, value)

    def _list(self, node: ast.List) -> List:
        return List([self.element(e) for e in node.elts])

    def _tuple(self, node: ast.Tuple) -> Tuple:
        return Tuple([self.element(e) for e in node.elts])

    def _set(self, node: ast.Set) -> Set:
        return Set([self.element(e) for e in node.elts])

    def _dict(self, node: ast.Dict) -> Dict:
        elements: list[CSTNode] = []
        for key, value in zip(node.keys, node.values):
            built = self.expr(value)
            if key is None:
                elements.append(self.span(StarredDictElement(built), built, built))
            else:
                k = self.expr(key)
                elements.append(self.span(DictElement(k, built), k, built))
        return Dict(elements)

    def _named(self, node: ast.NamedExpr) -> NamedExpr:
        return NamedExpr(self.expr(node.target), self.expr(node.value))

    def _await(self, node: ast.Await) -> Await:
        return Await(self.expr(node.value))

    def _starred(self, node: ast.Starred) -> CSTNode:
        return StarredElement(self.expr(node.value))


def _after(a: Any, b: Any) -> bool:
    """Whether node ``a`` starts after node ``b``."""
    return (a.lineno, a.col_offset) > (b.lineno, b.col_offset)


_COMPOUND: dict[type, Any] = {
    ast.If: _Builder._if,
    ast.For: _Builder._for,
    ast.AsyncFor: _Builder._for,
    ast.While: _Builder._while,
    ast.Try: _Builder._try,
    ast.With: _Builder._with,
    ast.AsyncWith: _Builder._with,
    ast.FunctionDef: _Builder._def,
    ast.AsyncFunctionDef: _Builder._def,
    ast.ClassDef: _Builder._class,
}
if hasattr(ast, "TryStar"):
    _COMPOUND[ast.TryStar] = _Builder._try
if hasattr(ast, "Match"):
    _COMPOUND[ast.Match] = _Builder._match

_SMALL: dict[type, Any] = {
    ast.Assign: _Builder._assign,
    ast.AnnAssign: _Builder._ann_assign,
    ast.AugAssign: _Builder._aug_assign,
    ast.Expr: _Builder._expr_stmt,
    ast.Return: _Builder._return,
    ast.Import: _Builder._import,
    ast.ImportFrom: _Builder._import_from,
    ast.Global: _Builder._global,
    ast.Nonlocal: _Builder._global,
}

_EXPRESSIONS: dict[type, Any] = {
    ast.Name: _Builder._name,
    ast.Constant: _Builder._constant,
    ast.JoinedStr: _Builder.string,
    ast.Attribute: _Builder._attribute,
    ast.Call: _Builder._call,
    ast.Subscript: _Builder._subscript,
    ast.UnaryOp: _Builder._unary,
    ast.BinOp: _Builder._binary,
    ast.BoolOp: _Builder._boolean,
    ast.Compare: _Builder._compare,
    ast.IfExp: _Builder._ifexp,
    ast.List: _Builder._list,
    ast.Tuple: _Builder._tuple,
    ast.Set: _Builder._set,
    ast.Dict: _Builder._dict,
    ast.NamedExpr: _Builder._named,
    ast.Await: _Builder._await,
    ast.Starred: _Builder._starred,
}
