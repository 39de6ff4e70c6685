"""Parsing decoded source into the tree extraction reads (:mod:`npu_audit.syntax`), turning every failure
into one :class:`SyntaxProblem`.

* **CPython parses, and says what a syntax error is.** The tree is built from CPython's own ``ast``
  (nothing is executed). When CPython rejects the file, its ``SyntaxError`` gives the message and the exact
  position, and the offending construct there tells whether the file is Python 2 code (a hint is added).
  So a file that runs under Python is read (tabs and spaces mixed in its indentation included), and one
  that does not is reported; code newer than the running interpreter's grammar is reported too.
* **Memory.** Files above :data:`MAX_PARSE_TOKENS` tokens (counted by the token scan below, or above
  :data:`MAX_PARSE_CHARS` characters, refused before the scan) are not parsed: the problem has the code
  ``unreadable-file`` and says why. (The fix engine checks its results with libcst, whose tree costs 1.5 to
  3 KB per token.) The verdict comes before anything is built from the text (:func:`too_large_to_parse`,
  which the analysis asks before CPython's ast and the relevance slice): a 10 MB file is refused from its
  length alone, and the scan of a shorter one keeps no tokens (about 0.2 s and no memory per MB), where
  building CPython's ast and the slice of a 10 MB file first took seconds and gigabytes.
* **Deeply nested input.** libcst's native (Rust) parser, which the fix engine runs on the files it fixes,
  recurses without a limit and dies with SIGSEGV on ``"(" * 10000`` or a 10 000-term ``a + a + ...``; the
  extraction walks the tree recursively too. The tree is built with a depth limit: a file whose tree the
  caller's remaining recursion budget cannot walk (at :data:`_FRAMES_PER_LEVEL` frames per level) is reported
  instead of returned (raising ``sys.setrecursionlimit`` before calling raises the accepted depth). A cheap
  token scan (:func:`nesting_estimate`) runs where its verdict is needed: on a text CPython rejects (files
  beyond CPython's own bracket limit of 200 levels, or beyond :data:`MAX_EXPRESSION_NESTING` /
  :data:`MAX_ELIF_CHAIN`, are refused in those terms), on a text long enough to pass the token budget, and
  in the fix engine before libcst is given a text (:func:`within_parser_limits`). On the files CPython
  accepts the scan cost a tenth of a cold run; the depth check costs next to nothing.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from npu_audit.source import LEAVE_OUT, REPORT_IT, SourceText
from npu_audit.text import LINE_BREAK, line_starts

if TYPE_CHECKING:  # imported where it parses: the rules import this module for its limits
    from npu_audit.syntax import Module

__all__ = [
    "MAX_BRACKET_NESTING",
    "MAX_ELIF_CHAIN",
    "MAX_EXPRESSION_NESTING",
    "MAX_PARSE_CHARS",
    "MAX_PARSE_TOKENS",
    "NestingEstimate",
    "SyntaxProblem",
    "nesting_estimate",
    "parse_module",
    "too_large_to_parse",
    "within_parser_limits",
]

#: CPython's tokenizer refuses more than 200 nested brackets ("too many nested parentheses").
MAX_BRACKET_NESTING = 200
#: Expression nesting (token scan units, see :func:`nesting_estimate`) accepted before refusing to parse.
MAX_EXPRESSION_NESTING = 1000
#: Longest ``if``/``elif`` chain accepted (each ``elif`` is nested in the previous one).
MAX_ELIF_CHAIN = 3000
#: Most tokens (as :func:`nesting_estimate` counts them) of a file that is parsed: about 150 MB of
#: npu-audit's tree and 0.5 to 1 GB of libcst tree when a fix of it is checked, 20 times the largest NPU
#: script of the Ascend model zoo (16 000 tokens, 125 KB).
MAX_PARSE_TOKENS = 300_000
#: Files with more characters are refused without even scanning them (no Python file of that size stays
#: under :data:`MAX_PARSE_TOKENS` unless it is nearly all comments or string literals).
MAX_PARSE_CHARS = 4_000_000
# Python frames a recursive walk of the tree spends per level (the interpreter: 2 to 3; libcst's visitors,
# which the fix engine's checks do not use on deep trees: 3.0 to 3.6).
_FRAMES_PER_LEVEL = 4
# Frames kept free for the caller's own machinery above the visitors.
_FRAME_RESERVE = 150


@dataclass(frozen=True)
class SyntaxProblem:
    """Why a file was not parsed, and where; reported as a finding of ``code``."""

    display: str
    code: str  # "syntax-error", or "unreadable-file" for a file too large to parse
    message: str
    line: int  # 1-based
    column: int  # 1-based, in characters
    hint: str | None = None  # what to do: the Python 3 spelling of a Python 2 construct, a syntax fix, ...


_CODE = "syntax-error"

# ----------------------------------------------------------------------------------------------------
# A small, forgiving tokenizer (regular expression) used for the nesting guard and the size budget, and to
# show the token at an error. It never fails: anything unknown is a one-character OTHER token.

_COMMENT, _NL, _CONT, _STRING, _KW, _NAME, _NUMBER, _OPEN, _CLOSE, _COMMA, _SEMI, _OP, _COLON, _OTHER = range(
    1, 15
)
_TOKEN_RE = re.compile(
    r"""
    (\#[^\r\n]*)                                           # 1 comment
  | (\r\n|\r|\n)                                           # 2 newline
  | (\\(?:\r\n|\r|\n))                                     # 3 line continuation
  | ((?:[rRbBuUfFtT]{1,2})?                                # 4 string (unterminated ones run to the line end)
       (?: '''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*(?:'''|\Z)
         | \"\"\"[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*(?:\"\"\"|\Z)
         | '[^'\\\r\n]*(?:\\(?:\r\n|[\s\S])[^'\\\r\n]*)*'?
         | "[^"\\\r\n]*(?:\\(?:\r\n|[\s\S])[^"\\\r\n]*)*"?
       ))
  | ((?:and|or|not|if|elif|lambda|await|in|is|for)\b)      # 5 keywords that nest expressions
  | ([^\W\d]\w*)                                           # 6 name
  | ((?:\d|\.\d)(?:[eE][+-]\d|[\w.])*)                     # 7 number (loose)
  | ([(\[{])                                               # 8 open bracket
  | ([)\]}])                                               # 9 close bracket
  | (,)                                                    # 10
  | (;)                                                    # 11
  | (\*\*=?|//=?|>>=?|<<=?|->|:=|\.\.\.|!=|<>|[-+*/%@&|^~<>=]=?|\.)   # 12 operator
  | (:)                                                    # 13
  | (\S)                                                   # 14 anything else
    """,
    re.VERBOSE,
)


class NestingEstimate(NamedTuple):
    """Result of the token scan; offsets are character offsets into the text (-1: none)."""

    brackets: int  # deepest bracket nesting
    brackets_at: int
    expression: int  # deepest expression nesting estimate (operators, keywords, brackets, concatenations)
    expression_at: int
    elif_chain: int  # longest if/elif chain
    elif_at: int
    indent_levels: int  # deepest block nesting (indentation levels)
    tokens: int = 0  # tokens seen (comments and line breaks included): what parsing costs in memory


# Operator classes for the nesting estimate: 1 binds looser than "+", 2 is "+"/"-", 3 binds tighter
# (and trailers: ".", calls, subscripts). 0: no nesting (assignments, walrus, annotations, "...").
_LOW, _MID, _HIGH = 1, 2, 3
_OP_CLASS = {
    "+": _MID, "-": _MID,
    "*": _HIGH, "/": _HIGH, "//": _HIGH, "%": _HIGH, "@": _HIGH, "**": _HIGH, "~": _HIGH, ".": _HIGH,
    "|": _LOW, "^": _LOW, "&": _LOW, "<<": _LOW, ">>": _LOW,
    "<": _LOW, ">": _LOW, "==": _LOW, "!=": _LOW, "<=": _LOW, ">=": _LOW, "<>": _LOW,
}  # fmt: skip


def nesting_estimate(text: str) -> NestingEstimate:
    """Scan ``text`` once with a regular expression tokenizer and estimate how deeply it nests.

    The expression estimate approximates the depth of the syntax tree of each statement: inside each
    comma-separated item, operators are grouped in three precedence classes (looser than ``+``; ``+``
    and ``-``; tighter, including trailers and unary operators) and the item's depth is the chain of
    loose operators plus the longest run of ``+``/``-`` and tight operators between two of them, plus
    the deepest bracketed group in the item (a group counts one more than its deepest item). Nesting
    keywords (``and or not if lambda in is for``) count as loose operators, implicit string
    concatenations as tight ones. It never raises and costs about a tenth of a libcst parse.
    """
    finditer = _TOKEN_RE.finditer
    op_class = _OP_CLASS
    stack: list[list[int]] = []
    # [loose ops, +/- run, tight run, deepest (+/- run + tight run), deepest child group, best item]
    cur = [0, 0, 0, 0, 0, 0]
    max_brackets = 0
    brackets_at = -1
    max_expr = 0
    expr_at = -1
    stmt_start = 0
    max_elif = 0
    elif_at = -1
    elifs: dict[int, int] = {}
    indents = [0]
    max_indent = 0
    at_stmt_start = True
    line_start = 0
    after_string = False
    operand = False  # whether the previous token ends an operand (so "-" is binary)
    tokens = 0
    for m in finditer(text):
        tokens += 1
        k = m.lastindex
        if k == _NAME or k == _NUMBER:
            operand = True
            after_string = False
            at_stmt_start = False
            continue
        if k == _OP:
            c = op_class.get(m.group(), 0)
            if c == _MID and not operand:
                c = _HIGH  # unary + / -
            if c == _HIGH:
                cur[2] += 1
                if cur[1] + cur[2] > cur[3]:
                    cur[3] = cur[1] + cur[2]
            elif c == _MID:
                cur[1] += 1
                cur[2] = 0
                if cur[1] > cur[3]:
                    cur[3] = cur[1]
            elif c == _LOW:
                cur[0] += 1
                cur[1] = cur[2] = 0
            operand = False
            after_string = False
            at_stmt_start = False
            continue
        if k == _STRING:
            if after_string:
                cur[2] += 1
                if cur[1] + cur[2] > cur[3]:
                    cur[3] = cur[1] + cur[2]
            after_string = True
            operand = True
            at_stmt_start = False
            continue
        if k == _OPEN:
            cur[2] += 1
            if cur[1] + cur[2] > cur[3]:
                cur[3] = cur[1] + cur[2]
            stack.append(cur)
            cur = [0, 0, 0, 0, 0, 0]
            if len(stack) > max_brackets:
                max_brackets = len(stack)
                brackets_at = m.start()
            operand = False
            after_string = False
            at_stmt_start = False
            continue
        if k == _CLOSE:
            if stack:
                d = cur[0] + cur[3] + cur[4]
                if cur[5] > d:
                    d = cur[5]
                cur = stack.pop()
                if d + 1 > cur[4]:
                    cur[4] = d + 1
            operand = True
            after_string = False
            continue
        if k == _COMMA:
            d = cur[0] + cur[3] + cur[4]
            if d > cur[5]:
                cur[5] = d
            cur[0] = cur[1] = cur[2] = cur[3] = cur[4] = 0
            operand = False
            after_string = False
            continue
        if k == _NL or k == _SEMI:
            if not stack:
                d = cur[0] + cur[3] + cur[4]
                if cur[5] > d:
                    d = cur[5]
                if d > max_expr:
                    max_expr = d
                    expr_at = stmt_start
                cur = [0, 0, 0, 0, 0, 0]
                after_string = False
                operand = False
                at_stmt_start = True
                stmt_start = m.end()
                if k == _NL:
                    line_start = stmt_start
            continue
        if k == _KW:
            if at_stmt_start:
                word = m.group()
                col = m.start() - line_start
                if col > indents[-1]:
                    indents.append(col)
                    if len(indents) - 1 > max_indent:
                        max_indent = len(indents) - 1
                else:
                    while len(indents) > 1 and col < indents[-1]:
                        indents.pop()
                if word == "if":
                    elifs[col] = 0
                elif word == "elif":
                    n = elifs.get(col, 0) + 1
                    elifs[col] = n
                    if n > max_elif:
                        max_elif = n
                        elif_at = m.start()
                    at_stmt_start = False
                    operand = False
                    after_string = False
                    continue
            cur[0] += 1
            cur[1] = cur[2] = 0
            operand = False
            after_string = False
            at_stmt_start = False
            continue
        if k == _COLON or k == _OTHER:
            operand = False
            after_string = False
            at_stmt_start = False
        # comments and line continuations change nothing
    # an unterminated last statement (or brackets still open at the end of the file)
    while stack:
        d = max(cur[5], cur[0] + cur[3] + cur[4])
        cur = stack.pop()
        cur[4] = max(cur[4], d + 1)
    d = max(cur[5], cur[0] + cur[3] + cur[4])
    if d > max_expr:
        max_expr = d
        expr_at = stmt_start
    return NestingEstimate(max_brackets, brackets_at, max_expr, expr_at, max_elif, elif_at, max_indent, tokens)


# ----------------------------------------------------------------------------------------------------


def parse_module(source: SourceText, tree: ast.Module | None = None, keep: Iterable[int] | None = None,
                 skip: Collection[int] = (), lazy_bodies: bool = False) -> Module | SyntaxProblem:
    """Parse ``source.text``; every failure (never an exception) is a :class:`SyntaxProblem`.

    ``tree``, ``keep``, ``skip``: CPython's ast of the text when the caller has it, and the part of it to
    build; ``lazy_bodies``: function bodies built when first read (:func:`npu_audit.syntax.parse_module`).

    Positions are exact (1-based lines, character columns of ``source.text``); fixes edit the original
    text at those positions.
    """
    try:
        return _parse_module(source, tree, keep, skip, lazy_bodies)
    except Exception as exc:  # a defect in the guards must not stop the run
        return _problem(source, f"could not parse: {type(exc).__name__}: {_one_line(str(exc))}", 1, 1, REPORT_IT)


def _parse_module(source: SourceText, tree: ast.Module | None = None, keep: Iterable[int] | None = None,
                  skip: Collection[int] = (), lazy_bodies: bool = False) -> Module | SyntaxProblem:
    from npu_audit import syntax

    text = source.text
    refused = too_large_to_parse(source)  # (before CPython's ast is built)
    if refused is not None:
        return refused
    tree = tree if tree is not None else syntax.python_tree(text)
    # The nesting scan runs only where its verdict is not known without it: CPython rejected the text (the
    # scan's refusals say why in libcst's terms, and they come before CPython's message), or the text is
    # long enough to have been scanned for its tokens already. A text CPython accepts is within its own
    # bracket limit, and how deep its tree goes is checked while it is built.
    if tree is None or len(text) > MAX_PARSE_TOKENS:
        refused = _refuse_nesting(source, _estimate_of(text))
        if refused is not None:
            return refused
    if tree is None:
        verdict = _cpython_verdict(text)
        if isinstance(verdict, SyntaxError):
            return _cpython_problem(source, verdict)
        return _problem(source, "could not parse: CPython's parser gave up on this file (too large or too "
                                "deeply nested); skipped", 1, 1, _GENERATED)
    budget = _visitable_depth()
    try:
        return syntax.parse_module(text, tree, keep, skip, max_depth=budget, lazy_bodies=lazy_bodies)
    except syntax.TooDeep as deep:
        return _problem(
            source,
            f"too deeply nested to analyse: the syntax tree is more than {budget} levels deep, more than the "
            f"recursion limit ({sys.getrecursionlimit()}) lets npu-audit walk; typical of generated code; skipped",
            deep.line,
            deep.column,
            _GENERATED,
        )
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # RecursionError, MemoryError, ...
        return _problem(source, f"could not parse: {type(exc).__name__}: {_one_line(str(exc))}", 1, 1, REPORT_IT)


def too_large_to_parse(source: SourceText) -> SyntaxProblem | None:
    """The ``unreadable-file`` problem of a text above the parse budget (more than :data:`MAX_PARSE_CHARS`
    characters, or more than :data:`MAX_PARSE_TOKENS` tokens), else None; decided before anything is built
    from the text. The length decides alone above :data:`MAX_PARSE_CHARS` and below
    :data:`MAX_PARSE_TOKENS` (a token is one character at least); in between, the token scan counts,
    keeping no token (0.1 to 0.3 s per MB). Its result is kept with the text (:func:`_estimate_of`): the
    nesting checks of the parse read it again."""
    text = source.text
    if len(text) > MAX_PARSE_CHARS:
        return _too_large(source, f"{len(text):,} characters, more than the {MAX_PARSE_CHARS:,} characters")
    if len(text) > MAX_PARSE_TOKENS:
        tokens = _estimate_of(text).tokens
        if tokens > MAX_PARSE_TOKENS:
            return _too_large(source, f"{tokens:,} tokens, more than the {MAX_PARSE_TOKENS:,} tokens")
    return None


def within_parser_limits(text: str) -> bool:
    """Whether ``text`` is within the limits the token scan checks (tokens, bracket nesting, expression
    nesting, elif chains): the fix engine gives libcst's native parser, which recurses without a limit and
    dies with SIGSEGV past them, only such a text (the analysis of a text CPython accepts does not scan it:
    it checks the depth of the statements it builds, and a slice may leave the deepest out)."""
    if len(text) > MAX_PARSE_CHARS:
        return False
    estimate = nesting_estimate(text)
    return estimate.tokens <= MAX_PARSE_TOKENS and estimate.brackets <= MAX_BRACKET_NESTING and (
        estimate.expression <= MAX_EXPRESSION_NESTING and estimate.elif_chain <= MAX_ELIF_CHAIN)


# The last few texts estimated, by identity: a helper module read in parts (npu_audit.extract.demand) is
# judged as a whole each time, from the same text object.
_ESTIMATES: list[tuple[str, NestingEstimate]] = []


def _estimate_of(text: str) -> NestingEstimate:
    for known, estimate in _ESTIMATES:
        if known is text:
            return estimate
    estimate = nesting_estimate(text)
    _ESTIMATES.insert(0, (text, estimate))
    del _ESTIMATES[8:]
    return estimate


def _too_large(source: SourceText, what: str) -> SyntaxProblem:
    size = len(source.raw)
    return SyntaxProblem(
        display=source.display,
        code="unreadable-file",
        message=(
            f"file too large to parse: {what} npu-audit parses per file ({size / 1e6:.1f} MB; checking a fix "
            "of it with libcst needs 1.5 to 3 KB of memory per token); skipped"
        ),
        line=1,
        column=1,
        hint=f"split the file into smaller modules, or {LEAVE_OUT}",
    )


def _refuse_nesting(source: SourceText, est: NestingEstimate) -> SyntaxProblem | None:
    text = source.text
    if est.brackets > MAX_BRACKET_NESTING:
        line, column = _line_col(text, est.brackets_at)
        return _problem(
            source,
            f"too many nested parentheses: brackets nest more than {MAX_BRACKET_NESTING} levels deep "
            "(CPython refuses this too)",
            line,
            column,
            _GENERATED,
        )
    if est.expression > MAX_EXPRESSION_NESTING:
        line, column = _line_col(text, max(est.expression_at, 0))
        return _problem(
            source,
            f"too deeply nested to analyse: an expression nests about {est.expression} levels deep "
            f"(limit {MAX_EXPRESSION_NESTING}); typical of generated code; skipped",
            line,
            column,
            _GENERATED,
        )
    if est.elif_chain > MAX_ELIF_CHAIN:
        line, column = _line_col(text, est.elif_at)
        return _problem(
            source,
            f"too deeply nested to analyse: an if/elif chain has {est.elif_chain} branches "
            f"(limit {MAX_ELIF_CHAIN}); typical of generated code; skipped",
            line,
            column,
            "split the chain (a dict lookup replaces a chain that compares one value); if the file is generated, "
            f"{LEAVE_OUT}",
        )
    return None


def _visitable_depth() -> int:
    """How many tree levels a recursive walk can still go down from the caller's frame."""
    used = 0
    frame = sys._getframe()
    while frame is not None:
        used += 1
        frame = frame.f_back
    return max(0, (sys.getrecursionlimit() - used - _FRAME_RESERVE) // _FRAMES_PER_LEVEL)


# ----------------------------------------------------------------------------------------------------
# Syntax errors: CPython's verdict, message and position.


def _cpython_verdict(text: str) -> bool | SyntaxError | None:
    """True when CPython parses ``text``, its SyntaxError when not, None when it cannot tell."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            compile(text, "<npu-audit>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:  # IndentationError and TabError included
        return exc
    except (ValueError, RecursionError, MemoryError, OverflowError):
        return None
    return True


def _problem(source: SourceText, message: str, line: int, column: int, hint: str | None = None) -> SyntaxProblem:
    return SyntaxProblem(
        display=source.display, code=_CODE, message=message, line=max(1, line), column=max(1, column), hint=hint
    )


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and character column of a character offset."""
    offset = max(0, min(offset, len(text)))
    line = 1
    line_start = 0
    for m in LINE_BREAK.finditer(text, 0, offset):
        if m.end() > offset:
            break
        line += 1
        line_start = m.end()
    return line, offset - line_start + 1


def _show(token: str, limit: int = 24) -> str:
    if len(token) > limit:
        token = token[: limit - 1] + "…"
    return repr(token)


# Characters that start no Python token (CPython says only "invalid syntax" for them).
_NOT_A_TOKEN = frozenset("$?`!")
_NUMBER_CHARS_RE = re.compile(r"[0-9A-Za-z_.]*")


def _cpython_problem(source: SourceText, err: SyntaxError) -> SyntaxProblem:
    text = source.text
    starts = line_starts(text)
    line = min(max(1, err.lineno or 1), len(starts))
    begin = starts[line - 1]
    end = starts[line] if line < len(starts) else len(text)
    line_text = LINE_BREAK.sub("", text[begin:end])
    err = _character_after_number(err, line_text)
    col0 = _column0(err.offset, line_text)
    message, col0 = _describe(err, line_text, col0)
    construct = _python2_construct(err.msg or "", line_text, col0)
    if construct:
        message = f"{message}; looks like Python 2 code ({construct} at line {line}); npu-audit reads Python 3 only"
    spelling = _PYTHON3_SPELLING.get(construct) if construct else None
    hint = f"port the file to Python 3: {spelling}" if spelling else _syntax_hint(err.msg or "")
    return _problem(source, message, line, col0 + 1, hint)


_NUMBER_ERROR_RE = re.compile(r"invalid (?:decimal|hexadecimal|octal|binary|imaginary) literal$")


def _character_after_number(err: SyntaxError, line_text: str) -> SyntaxError:
    """CPython 3.11 and later's error for a complete number followed by a non-ASCII character (``1，2``
    with a full-width comma from a Chinese input method, ``1`` and a zero-width space): the character
    itself is invalid (or, when it can continue a name, the syntax there). Python 3.10 calls the number
    an invalid literal instead; npu-audit says the same thing, at the same column, on every Python."""
    if not _NUMBER_ERROR_RE.match(err.msg or ""):
        return err
    import tokenize

    start, end = _number_span(line_text, _column0(err.offset, line_text))
    if end >= len(line_text) or line_text[end].isascii() or not re.fullmatch(tokenize.Number, line_text[start:end]):
        return err
    char = line_text[end]
    if ("x" + char).isidentifier():
        msg = "invalid syntax"
    elif char.isprintable():
        msg = f"invalid character '{char}' (U+{ord(char):04X})"
    else:
        msg = f"invalid non-printable character U+{ord(char):04X}"
    return SyntaxError(msg, (err.filename, err.lineno, end + 1, err.text, err.lineno, end + 1))


def _syntax_hint(msg: str) -> str:
    """The hint of a syntax error that is not Python 2 code: by CPython's message, else the general one
    (the running Python decides what is a syntax error: code for a newer Python is one here)."""
    for pattern, hint in _SYNTAX_HINTS:
        if re.search(pattern, msg):
            return hint
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return (f"correct the code here (npu-audit parses with Python {version}: 'python{version} -m py_compile FILE' "
            "shows the same error); if the file needs a newer Python, run npu-audit under it")


def _column0(offset: int | None, line_text: str) -> int:
    """0-based character column of CPython's 1-based ``offset`` (a count of characters)."""
    if not offset or offset < 1:
        return 0
    return min(offset - 1, len(line_text))


def _token_at(line_text: str, col0: int) -> str:
    """The token starting at (or after spaces from) ``col0``; "" at the end of the line."""
    m = _TOKEN_RE.search(line_text, col0)
    if m is None or m.lastindex in (_NL, _COMMENT):
        return ""
    return m.group()


def _describe(err: SyntaxError, line_text: str, col0: int) -> tuple[str, int]:
    """npu-audit's wording and 0-based column for CPython's ``err`` on ``line_text``."""
    msg = _one_line(err.msg or "invalid syntax")
    indent = len(line_text) - len(line_text.lstrip(" \t\f"))
    if msg.startswith("invalid syntax. Perhaps you forgot a comma"):
        same_line = getattr(err, "end_lineno", None) == err.lineno
        end0 = _column0(getattr(err, "end_offset", None), line_text) if same_line else len(line_text)
        col0 = _second_expression(line_text, col0, end0)
        return f"invalid syntax at {_show(_token_at(line_text, col0))}: perhaps a comma is missing before it", col0
    if msg == "invalid syntax":
        token = _token_at(line_text, col0)
        if not token:
            return "invalid syntax: unexpected end of line", col0
        if token in _NOT_A_TOKEN:
            return f"{token!r} is not a valid character", col0
        return f"invalid syntax at {_show(token)}", col0
    if msg == "unexpected indent":
        return msg, indent
    if msg.startswith("unindent does not match"):
        return f"{msg} (this dedent returns to no enclosing block)", 0
    if msg.startswith("inconsistent use of tabs and spaces"):
        return msg, 0
    if msg.startswith("unexpected character after line continuation"):
        backslash = line_text.rfind("\\", 0, col0 + 1)
        return msg, backslash if backslash >= 0 else col0
    if msg.endswith("was never closed"):
        return f"unexpected end of file: {msg}", col0
    if "literal" in msg and "string" not in msg and ("invalid" in msg or "leading zeros" in msg):
        return msg, _number_span(line_text, col0)[0]
    return msg, col0


def _second_expression(line_text: str, start0: int, end0: int) -> int:
    """Where the second of two expressions CPython found next to each other (``(1 2)``) begins."""
    part = line_text[start0:end0]
    for m in re.finditer(r"\s+", part):
        left, right = part[: m.start()], part[m.end() :]
        if left and right and _is_expression(left) and _is_expression(right):
            return start0 + m.end()
    gaps = list(re.finditer(r"\s+", part))
    return start0 + gaps[-1].end() if gaps else start0


def _is_expression(code: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(code, "<npu-audit>", "eval", ast.PyCF_ONLY_AST, dont_inherit=True)
        return True
    except Exception:  # noqa: BLE001 - anything CPython refuses
        return False


def _number_span(line_text: str, col0: int) -> tuple[int, int]:
    """The run of number-like characters around ``col0`` (``0b102``, ``10L``)."""
    start = col0
    while start > 0 and _NUMBER_CHARS_RE.fullmatch(line_text[start - 1]):
        start -= 1
    end = _NUMBER_CHARS_RE.match(line_text, col0).end()
    if start < end and not line_text[start].isdigit() and line_text[start] != ".":
        # a name glued to the number (``x10L``): the number starts at its first digit
        digit = re.search(r"[0-9]", line_text[start:end])
        start = start + digit.start() if digit else start
    return start, end


# Python 2 constructs (only looked for where CPython stopped).
_PY2_LONG_RE = re.compile(r"(?:0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|[0-9]+)[lL]")
_UR_PREFIX_RE = re.compile(r"(?<![\w])[uU][rR]$")


#: The hint of a file refused for its size or depth.
_GENERATED = f"split the expression or statement into smaller ones; if the file is generated, {LEAVE_OUT}"

# What to do about a syntax error: the first regular expression that CPython's message matches (the
# messages of Python 3.10 to 3.13), else the general hint of _syntax_hint.
_SYNTAX_HINTS = (
    (r"inconsistent use of tabs and spaces", "indent with spaces only throughout the file (convert the tabs)"),
    (r"^unexpected indent", "remove the extra indentation, or end the line above with ':' if it opens a block"),
    (r"^unindent does not match", "indent the line exactly like the block it belongs to (the same spaces or tabs)"),
    (r"^expected an indented block", "indent the block's first line (write pass for an empty block)"),
    (r"^too many levels of indentation", _GENERATED),
    (r"was never closed|^unexpected EOF while parsing", "close the bracket opened here"),
    (r"^unmatched ", "remove the bracket, or open it where it belongs"),
    (r"^closing parenthesis .* does not match", "close with the bracket that matches the one opened"),
    (r"unterminated triple-quoted|EOF while scanning triple-quoted", "close the triple-quoted string opened here"),
    (r"unterminated (f-)?string literal|EOL while scanning string literal",
     "close the string on the same line (a backslash before the closing quote escapes it: write 'C:\\\\data\\\\' "
     "or 'C:/data/'), or use a triple-quoted string"),
    (r"^f-string: expecting '}'", "close the replacement field with '}' (write '{{' for a literal brace)"),
    (r"^expected ':'", "end the header of the statement with ':'"),
    (r"^unexpected character after line continuation", "end the line at the backslash (no space or comment after it)"),
    (r"^invalid character '[\uff01-\uff5e\u3000-\u303f]'",
     "write the ASCII character instead (full-width ， （ ） ： come from a Chinese input method)"),
    (r"^invalid non-printable character", "delete the invisible character (often pasted from a web page)"),
    (r"'unicodeescape' codec can't decode",
     "write the path as a raw string (r'C:\\Users\\me'), with forward slashes, or with doubled backslashes"),
)

# How Python 3 writes each construct _python2_construct names (the finding's hint).
_PYTHON3_SPELLING = {
    "print statement": "print(...) is a function call",
    "exec statement": "exec(...) is a function call",
    "except X, e:": "write except X as e: (several types in parentheses: except (X, Y) as e:)",
    "0777-style octal literal": "write octal literals with 0o (0o777)",
    "1L-style long literal": "drop the L (every int is long in Python 3)",
    "backticks": "write repr(x) instead of `x`",
    "'<>' operator": "write != instead of <>",
    "ur'' string prefix": "write r'' (every str is Unicode in Python 3)",
    "raise E, 'message'": "write raise E('message')",
}


def _python2_construct(msg: str, line_text: str, col0: int) -> str | None:
    """The Python-2-only construct at CPython's error, if that is what it is."""
    if msg.startswith("Missing parentheses in call to 'print'"):
        return "print statement"
    if msg.startswith("Missing parentheses in call to 'exec'"):
        return "exec statement"
    if msg.startswith("multiple exception types must be parenthesized"):
        return "except X, e:"
    if msg.startswith("leading zeros in decimal integer literals"):
        return "0777-style octal literal"
    start, end = _number_span(line_text, col0)
    if _PY2_LONG_RE.fullmatch(line_text[start:end]):
        return "1L-style long literal"
    token = _token_at(line_text, col0)
    if token == "`":
        return "backticks"
    if line_text.startswith("<>", col0):
        return "'<>' operator"
    if token[:1] in ("'", '"') and _UR_PREFIX_RE.search(line_text, 0, col0):
        return "ur'' string prefix"
    words = line_text.split(None, 1)
    first = words[0] if words else ""
    if first == "raise" and token == ",":
        return "raise E, 'message'"
    if msg == "invalid syntax" and first in ("print", "exec") and col0 > len(line_text) - len(line_text.lstrip()):
        return f"{first} statement"  # CPython names no construct here (print >>f, a b)
    return None
