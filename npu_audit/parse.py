"""Parsing decoded source with libcst, turning every failure into one :class:`SyntaxProblem`.

Three things make this more than a call to :func:`libcst.parse_module`:

* **libcst crashes the process on deeply nested input.** Its native (Rust) parser recurses without a
  limit: ``"(" * 10000``, a 10 000-term ``a + a + ...`` or a 10 000-branch ``elif`` chain overflow the C
  stack and the interpreter dies with SIGSEGV, which no ``except`` can catch; it is also quadratic in the
  nesting depth (a 5 000-term ``+`` chain takes seconds). Before parsing, :func:`parse_module` therefore
  runs a cheap token scan (:func:`nesting_estimate`) and refuses files beyond CPython's own bracket limit
  (200 levels) or beyond :data:`MAX_EXPRESSION_NESTING` / :data:`MAX_ELIF_CHAIN`. The parse itself runs
  on a helper thread with a large, fixed stack (:data:`PARSE_STACK_SIZE`), so the outcome does not depend
  on the caller's thread (worker threads get 512 KiB stacks on macOS, the main thread 1 MiB on Windows).
* **Deep trees break libcst's (recursive, pure-Python) visitors**: ``module.visit()``, transformers and
  ``MetadataWrapper`` spend 3 to 3.6 Python frames per tree level (``module.code`` and ``deep_clone``
  about 2), so with the default recursion limit of 1000 a tree deeper than ~280 levels raises
  ``RecursionError`` in every check (a 300-term ``a + b + ...`` is 300 levels deep).
  When the token scan says a file might be that deep, the real depth is measured (iteratively) and a file
  whose tree the caller's remaining recursion budget cannot walk is reported instead of returned; raising
  ``sys.setrecursionlimit`` before calling raises the accepted depth accordingly.
* **libcst's error positions are imprecise.** For parser errors the position is inside the message
  (``"error at 2:18: expected one of ..."``, 0-based column in characters) and points at the start of the
  token *after* the offending one (``raw_column`` is always 0 and ``raw_line`` is sometimes wrong); for
  tokenizer errors there is no position at all (``raw_line`` 1, ``raw_column`` 0). The position reported
  here is recomputed from the source: the offending token for parser errors, the offending literal /
  character / line for tokenizer errors.
"""

from __future__ import annotations

import re
import sys
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, NamedTuple

import libcst

from npu_audit.source import SourceText

__all__ = [
    "MAX_BRACKET_NESTING",
    "MAX_ELIF_CHAIN",
    "MAX_EXPRESSION_NESTING",
    "PARSE_STACK_SIZE",
    "NestingEstimate",
    "SyntaxProblem",
    "call_with_large_stack",
    "nesting_estimate",
    "parse_module",
]

#: CPython's tokenizer refuses more than 200 nested brackets ("too many nested parentheses").
MAX_BRACKET_NESTING = 200
#: Expression nesting (token scan units, see :func:`nesting_estimate`) accepted before refusing to parse.
MAX_EXPRESSION_NESTING = 1000
#: Longest ``if``/``elif`` chain accepted (libcst nests each ``elif`` in the previous one).
MAX_ELIF_CHAIN = 3000
#: Stack size of the thread libcst parses on. Only touched pages are committed.
PARSE_STACK_SIZE = 64 * 1024 * 1024
# Python frames a libcst visitor spends per tree level (measured with libcst 1.9: 3.0 to 3.6).
_FRAMES_PER_LEVEL = 4
# Frames kept free for the caller's own machinery above the visitors.
_FRAME_RESERVE = 150
# Below this token-scan estimate a tree cannot be deep enough to matter; above it the tree is measured.
_DEPTH_CHECK_THRESHOLD = 60


@dataclass(frozen=True)
class SyntaxProblem:
    display: str
    code: str  # "syntax-error"
    message: str
    line: int  # 1-based
    column: int  # 1-based, in characters


_CODE = "syntax-error"

# ----------------------------------------------------------------------------------------------------
# A small, forgiving tokenizer (regular expression) used for the nesting guard, error positions and the
# Python 2 heuristics. It never fails: anything unknown is a one-character OTHER token.

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
_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")


class NestingEstimate(NamedTuple):
    """Result of the token scan; offsets are character offsets into the text (-1: none)."""

    brackets: int  # deepest bracket nesting
    brackets_at: int
    expression: int  # deepest expression nesting estimate (operators, keywords, brackets, concatenations)
    expression_at: int
    elif_chain: int  # longest if/elif chain
    elif_at: int
    indent_levels: int  # deepest block nesting (indentation levels)

    @property
    def tree_depth_bound(self) -> int:
        """A rough bound of the libcst tree depth (used only to decide whether to measure it)."""
        return self.expression * 3 // 2 + 2 * self.indent_levels + self.elif_chain + 5


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
    for m in finditer(text):
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
    return NestingEstimate(max_brackets, brackets_at, max_expr, expr_at, max_elif, elif_at, max_indent)


# ----------------------------------------------------------------------------------------------------
# Running libcst on a thread with a known stack size.

_STACK_LOCK = threading.Lock()


def call_with_large_stack(fn: Callable[..., Any], *args: Any, stack_size: int = PARSE_STACK_SIZE) -> Any:
    """Call ``fn(*args)`` on a fresh thread whose C stack is ``stack_size`` bytes and return its result.

    Exceptions (including ``BaseException`` subclasses such as pyo3's ``PanicException``) are re-raised
    in the calling thread. Falls back to a direct call when no such thread can be created.
    """
    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append((True, fn(*args)))
        except BaseException as exc:  # transported to the caller
            outcome.append((False, exc))

    thread = None
    with _STACK_LOCK:
        try:
            previous = threading.stack_size()
            threading.stack_size(stack_size)
        except (ValueError, RuntimeError, OverflowError):
            previous = None
        else:
            try:
                thread = threading.Thread(target=target, name="npu-audit-parse", daemon=True)
                thread.start()
            except RuntimeError:  # "can't start new thread"
                thread = None
            finally:
                threading.stack_size(previous)
    if thread is None:
        return fn(*args)
    thread.join()
    if not outcome:  # pragma: no cover - the thread died without reporting
        raise RuntimeError("the parser thread ended without a result")
    ok, value = outcome[0]
    if ok:
        return value
    raise value


@lru_cache(maxsize=64)
def _config_for(encoding: str) -> libcst.PartialParserConfig | None:
    try:
        return libcst.PartialParserConfig(encoding=encoding)
    except Exception:
        return None


def _parse_text(text: str, encoding: str) -> libcst.Module:
    config = _config_for(encoding)
    if config is None:
        return libcst.parse_module(text)
    return libcst.parse_module(text, config)


# ----------------------------------------------------------------------------------------------------


def parse_module(source: SourceText) -> libcst.Module | SyntaxProblem:
    """Parse ``source.text`` with libcst; every failure (never an exception) is a :class:`SyntaxProblem`.

    The module's ``encoding`` is the file's (so ``module.bytes`` re-encodes like the original, BOM
    included for ``utf-8-sig``).
    """
    try:
        return _parse_module(source)
    except Exception as exc:  # a defect in the guards must not stop the run
        return _problem(source, f"could not parse: {type(exc).__name__}: {_one_line(str(exc))}", 1, 1)


def _parse_module(source: SourceText) -> libcst.Module | SyntaxProblem:
    text = source.text
    estimate = nesting_estimate(text)
    refused = _refuse_nesting(source, estimate)
    if refused is not None:
        return refused
    try:
        if estimate.tree_depth_bound > _DEPTH_CHECK_THRESHOLD:
            module = call_with_large_stack(_parse_text, text, source.encoding)
        else:
            # shallow code (nearly every file) cannot exhaust the default C stack: no thread needed
            module = _parse_text(text, source.encoding)
    except libcst.ParserSyntaxError as exc:
        return _syntax_problem(source, exc)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # RecursionError, MemoryError, pyo3 PanicException, ...
        return _problem(source, f"could not parse: {type(exc).__name__}: {_one_line(str(exc))}", 1, 1)
    if estimate.tree_depth_bound > _DEPTH_CHECK_THRESHOLD:
        budget = _visitable_depth()
        # the bound is usually 1.5 times the real depth, but can be lower for nested f-strings
        if estimate.tree_depth_bound * 3 > budget * 2:
            depth = _tree_depth(module, budget)
            if depth > budget:
                at = estimate.expression_at
                if estimate.elif_chain * 2 > estimate.expression and estimate.elif_at >= 0:
                    at = estimate.elif_at
                line, column = _line_col(text, at) if at >= 0 else (1, 1)
                return _problem(
                    source,
                    f"too deeply nested to analyse: the syntax tree is more than {budget} levels deep, "
                    f"more than the recursion limit ({sys.getrecursionlimit()}) lets npu-audit walk; "
                    "typical of generated code; skipped",
                    line,
                    column,
                )
    return module


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
        )
    if est.expression > MAX_EXPRESSION_NESTING:
        line, column = _line_col(text, max(est.expression_at, 0))
        return _problem(
            source,
            f"too deeply nested to analyse: an expression nests about {est.expression} levels deep "
            f"(limit {MAX_EXPRESSION_NESTING}); typical of generated code; skipped",
            line,
            column,
        )
    if est.elif_chain > MAX_ELIF_CHAIN:
        line, column = _line_col(text, est.elif_at)
        return _problem(
            source,
            f"too deeply nested to analyse: an if/elif chain has {est.elif_chain} branches "
            f"(limit {MAX_ELIF_CHAIN}); typical of generated code; skipped",
            line,
            column,
        )
    return None


def _visitable_depth() -> int:
    """How many tree levels a recursive libcst visitor can still walk from the caller's frame."""
    used = 0
    frame = sys._getframe()
    while frame is not None:
        used += 1
        frame = frame.f_back
    return max(0, (sys.getrecursionlimit() - used - _FRAME_RESERVE) // _FRAMES_PER_LEVEL)


def _tree_depth(module: libcst.CSTNode, limit: int) -> int:
    """Depth of the tree (iteratively), stopping as soon as it exceeds ``limit``."""
    deepest = 0
    todo = [(module, 1)]
    while todo:
        node, depth = todo.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        for child in node.children:
            todo.append((child, depth + 1))
    return deepest


# ----------------------------------------------------------------------------------------------------
# Messages and positions.

_PARSER_ERROR_RE = re.compile(r"^parser error: error at (\d+):(\d+): (.*)$", re.S)
_TOKENIZER_ERROR_RE = re.compile(r"^tokenizer error: (.*)$", re.S)
_EXPECTED_RE = re.compile(r"^expected (?:one of )?(.*)$", re.S)
_MAX_EXPECTED = 6
_EXPECTED_NAMES = {
    "INDENT": "an indented block",
    "NEWLINE": "end of line",
    "EOF": "end of file",
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a string",
}


def _problem(source: SourceText, message: str, line: int, column: int) -> SyntaxProblem:
    return SyntaxProblem(
        display=source.display, code=_CODE, message=message, line=max(1, line), column=max(1, column)
    )


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in _LINE_BREAK_RE.finditer(text)]


def _line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and character column of a character offset."""
    offset = max(0, min(offset, len(text)))
    line = 1
    line_start = 0
    for m in _LINE_BREAK_RE.finditer(text, 0, offset):
        if m.end() > offset:
            break
        line += 1
        line_start = m.end()
    return line, offset - line_start + 1


def _offset_of(text: str, line: int, column0: int) -> int:
    """Character offset of a 1-based line and 0-based column (clamped to the text)."""
    starts = _line_starts(text)
    if line < 1:
        return 0
    if line > len(starts):
        return len(text)
    start = starts[line - 1]
    end = starts[line] if line < len(starts) else len(text)
    return min(start + max(0, column0), end)


def _show(token: str, limit: int = 24) -> str:
    if len(token) > limit:
        token = token[: limit - 1] + "…"
    return repr(token)


def _syntax_problem(source: SourceText, exc: libcst.ParserSyntaxError) -> SyntaxProblem:
    text = source.text
    raw_message = str(getattr(exc, "message", "") or exc)
    line, column = 1, 1
    m = _PARSER_ERROR_RE.match(raw_message)
    t = _TOKENIZER_ERROR_RE.match(raw_message)
    if m:
        reported = _offset_of(text, int(m.group(1)), int(m.group(2)))
        message, offset = _describe_parser_error(text, reported, m.group(3))
        line, column = _line_col(text, offset)
    elif t:
        detail = _one_line(t.group(1))
        message = detail
        offset = _locate_tokenizer_error(text, detail)
        if offset is not None:
            line, column = _line_col(text, offset)
    else:  # another libcst message format: keep its own position
        message = _one_line(raw_message)
        line = max(1, int(getattr(exc, "raw_line", 1) or 1))
        column = max(1, int(getattr(exc, "raw_column", 0) or 0) + 1)
    hint = _python2_hint(text)
    if hint:
        message = f"{message}; {hint}"
    return _problem(source, message, line, column)


def _describe_parser_error(text: str, reported: int, detail: str) -> tuple[str, int]:
    """The message and offset for a libcst parser error reported at character offset ``reported``.

    libcst reports the start of the token *after* the one it could not parse. The offending token is the
    last significant token before ``reported`` -- or, when a line break lies in between, the end of that
    line (a NEWLINE token) or the indentation of the next one (an INDENT token).
    """
    previous = None
    newline_since = False
    for tok in _TOKEN_RE.finditer(text, _scan_window_start(text, reported)):
        if tok.start() >= reported:
            break
        k = tok.lastindex
        if k == _NL:
            newline_since = True
        elif k != _COMMENT and k != _CONT:
            previous = tok
            newline_since = False
    expected = ""
    e = _EXPECTED_RE.match(detail.strip())
    if e:
        items = [_EXPECTED_NAMES.get(item.strip(), item.strip()) for item in e.group(1).split(", ")]
        if 0 < len(items) <= _MAX_EXPECTED:
            expected = "expected " + (items[0] if len(items) == 1 else "one of " + ", ".join(items))
    elif detail.strip():
        expected = _one_line(detail)
    if previous is None:
        message, offset = "invalid syntax", reported
    elif not newline_since:
        message, offset = f"invalid syntax at {_show(previous.group())}", previous.start()
    elif not text[reported:].strip():
        message, offset = (
            f"invalid syntax: unexpected end of file after {_show(previous.group())}",
            previous.end(),
        )
    elif _BLOCK_HEADER_RE.match(text, _line_start(text, previous.start())) and previous.group() != ":":
        message, offset = f"invalid syntax: expected ':' after {_show(previous.group())}", previous.end()
        expected = ""
    elif _more_indented(text, reported, previous.start()) and previous.group() != ":":
        message, offset = "invalid syntax: unexpected indent", reported
    else:
        message, offset = (
            f"invalid syntax: unexpected end of line after {_show(previous.group())}",
            previous.end(),
        )
    if expected:
        message = f"{message} ({expected})"
    return message, offset


_BLOCK_HEADER_RE = re.compile(
    r"[ \t\f]*(?:if|elif|else|for|while|def|class|with|try|except|finally|async|match|case)\b"
)


def _line_start(text: str, offset: int) -> int:
    start = text.rfind("\n", 0, offset) + 1
    return text.rfind("\r", start, offset) + 1 or start


def _indent_of_line_at(text: str, offset: int) -> tuple[str, bool]:
    """The leading whitespace of the line holding ``offset`` and whether ``offset`` is its first token."""
    start = _line_start(text, offset)
    head = text[start:offset]
    stripped = head.lstrip(" \t\x0c")
    return head[: len(head) - len(stripped)], not stripped


def _more_indented(text: str, offset: int, earlier: int) -> bool:
    indent, first = _indent_of_line_at(text, offset)
    if not first:
        return False
    earlier_indent, _ = _indent_of_line_at(text, earlier)
    return len(indent.expandtabs(8)) > len(earlier_indent.expandtabs(8))


def _scan_window_start(text: str, offset: int, chars_back: int = 50_000) -> int:
    """Where to start tokenizing to find the token before ``offset`` without scanning a huge file.

    Small files are scanned from the start (exact); for big ones, from a line start about
    ``chars_back`` characters earlier (a string literal spanning that line could confuse the scan,
    which only affects the reported column).
    """
    if offset <= chars_back:
        return 0
    return text.rfind("\n", 0, offset - chars_back) + 1


_VALID_NUMBER_RE = re.compile(
    r"""(?x)
    (?: 0[xX](?:_?[0-9a-fA-F])+ | 0[oO](?:_?[0-7])+ | 0[bB](?:_?[01])+
      | (?: (?:[0-9](?:_?[0-9])*)?\.[0-9](?:_?[0-9])* | [0-9](?:_?[0-9])*\.? ) (?:[eE][-+]?[0-9](?:_?[0-9])*)? [jJ]?
    )"""
)
_DECIMAL_INT_RE = re.compile(r"[0-9](?:_?[0-9])*")
_INVALID_CHAR_RE = re.compile(r"^'(.+)' is not a valid character", re.S)


def _bad_number(tok: str) -> bool:
    if not _VALID_NUMBER_RE.fullmatch(tok):
        return True
    if _DECIMAL_INT_RE.fullmatch(tok) and len(tok) > 1 and tok[0] == "0" and tok.strip("0_"):
        return True  # 0777
    return False


def _unterminated(tok: str) -> bool:
    body = tok.lstrip("rRbBuUfFtT")
    for quote in ('"""', "'''"):
        if body.startswith(quote):
            return len(body) < 6 or not body.endswith(quote) or _escaped_end(body, 3)
    if len(body) < 2 or body[-1] != body[0]:
        return True
    return _escaped_end(body, 1)


def _escaped_end(body: str, quote_len: int) -> bool:
    """Whether the closing quote is escaped by an odd run of backslashes."""
    i = len(body) - quote_len - 1
    n = 0
    while i >= quote_len and body[i] == "\\":
        n += 1
        i -= 1
    return n % 2 == 1


def _locate_tokenizer_error(text: str, detail: str) -> int | None:
    """Best-effort character offset of a libcst tokenizer error (libcst gives none)."""
    if "string literal" in detail:
        for tok in _TOKEN_RE.finditer(text):
            if tok.lastindex == _STRING and _unterminated(tok.group()):
                return tok.start()
        return None
    if "literal" in detail or "digit" in detail:
        for tok in _TOKEN_RE.finditer(text):
            if tok.lastindex == _NUMBER and _bad_number(tok.group()):
                return tok.start()
        return None
    m = _INVALID_CHAR_RE.match(detail)
    if m:
        char = m.group(1)
        for tok in _TOKEN_RE.finditer(text):
            k = tok.lastindex
            if k not in (_STRING, _COMMENT) and char in tok.group():
                return tok.start() + tok.group().index(char)
        pos = text.find(char)
        return pos if pos >= 0 else None
    if "parenthes" in detail or "unmatched" in detail or "bracket" in detail:
        return _locate_bracket_error(text)
    if "line continuation" in detail:
        for tok in _TOKEN_RE.finditer(text):
            if tok.lastindex == _OTHER and tok.group() == "\\":
                return tok.start()
        return None
    if "indent" in detail or "dedent" in detail or "tabs" in detail:
        return _locate_indentation_error(text, detail)
    return None


_PAIRS = {")": "(", "]": "[", "}": "{"}


def _locate_bracket_error(text: str) -> int | None:
    stack: list[tuple[str, int]] = []
    for tok in _TOKEN_RE.finditer(text):
        k = tok.lastindex
        if k == _OPEN:
            stack.append((tok.group(), tok.start()))
            if len(stack) > MAX_BRACKET_NESTING:
                return tok.start()
        elif k == _CLOSE:
            if not stack or stack[-1][0] != _PAIRS[tok.group()]:
                return tok.start()
            stack.pop()
    return stack[-1][1] if stack else None


def _locate_indentation_error(text: str, detail: str) -> int | None:
    """Start of the first logical line whose indentation CPython would reject.

    CPython's rule: indentation widths are compared both with tabs as 8 columns and with tabs as 1
    column; the comparisons must agree ("inconsistent use of tabs and spaces"), a dedent must return to
    an enclosing level ("unindent does not match"), and there are at most 100 levels.
    """
    depth = 0
    at_line_start = True
    line_start = 0
    stack = [(0, 0)]  # (width with tabs as 8 columns, width with tabs as 1 column)
    for tok in _TOKEN_RE.finditer(text):
        k = tok.lastindex
        if k == _NL:
            line_start = tok.end()
            if depth == 0:
                at_line_start = True
            continue
        if k == _COMMENT or k == _CONT:
            continue
        was_line_start = at_line_start
        at_line_start = False
        if k == _OPEN:
            depth += 1
        elif k == _CLOSE and depth:
            depth -= 1
        if not was_line_start:
            continue
        col = alt = 0
        for ch in text[line_start : tok.start()]:
            if ch == "\t":
                col = (col // 8 + 1) * 8
                alt += 1
            elif ch == "\x0c":
                col = alt = 0
            else:
                col += 1
                alt += 1
        top_col, top_alt = stack[-1]
        if col == top_col:
            if alt != top_alt:
                return line_start
        elif col > top_col:
            if alt <= top_alt:
                return line_start
            stack.append((col, alt))
            if len(stack) > 100:
                return line_start
        else:
            while len(stack) > 1 and col < stack[-1][0]:
                stack.pop()
            if col != stack[-1][0] or alt != stack[-1][1]:
                return line_start
    return None


# ----------------------------------------------------------------------------------------------------
# Python 2 heuristics (only run when parsing failed).

_PY2_LEADING_ZERO_RE = re.compile(r"0[0-9]*[1-9][0-9]*[lL]?")
_PY2_LONG_RE = re.compile(r"(?:0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|[0-9]+)[lL]")
_PRINT_OR_EXEC_FOLLOWERS = (_STRING, _NAME, _NUMBER)


def _python2_evidence(text: str) -> tuple[str, int] | None:
    """The first Python-2-only construct found (description, character offset), if any."""
    toks = _TOKEN_RE.finditer(text)
    depth = 0
    at_stmt_start = True
    stmt_keyword = ""  # "print"/"exec"/"except"/"raise" when the current statement starts with it
    stmt_keyword_at = -1
    first_after_keyword = False
    comma_seen = False
    for tok in toks:
        k = tok.lastindex
        value = tok.group()
        if k == _COMMENT or k == _CONT:
            continue
        if k == _NL or k == _SEMI:
            if depth == 0 or k == _SEMI:
                if stmt_keyword == "raise" and comma_seen:
                    return "raise E, 'message'", stmt_keyword_at
                at_stmt_start = True
                stmt_keyword = ""
                comma_seen = False
            continue
        if k == _OTHER and value == "`":
            return "backticks", tok.start()
        if k == _OP and value == "<>":
            return "'<>' operator", tok.start()
        if k == _NUMBER and (_PY2_LEADING_ZERO_RE.fullmatch(value) or _PY2_LONG_RE.fullmatch(value)):
            if value[-1] in "lL":
                return "1L-style long literal", tok.start()
            return "0777-style octal literal", tok.start()
        if k == _STRING:
            prefix = value[: len(value) - len(value.lstrip("rRbBuUfFtT"))]
            if prefix.lower() == "ur":
                return "ur'' string prefix", tok.start()
        if first_after_keyword:
            first_after_keyword = False
            if stmt_keyword in ("print", "exec") and (
                k in _PRINT_OR_EXEC_FOLLOWERS or (k == _OP and value == ">>" and stmt_keyword == "print")
            ):
                return f"{stmt_keyword} statement", stmt_keyword_at
        if at_stmt_start:
            at_stmt_start = False
            if k in (_NAME, _KW) and value in ("print", "exec", "except", "raise"):
                stmt_keyword = value
                stmt_keyword_at = tok.start()
                first_after_keyword = True
                comma_seen = False
        if k == _OPEN:
            depth += 1
        elif k == _CLOSE:
            depth = max(0, depth - 1)
        elif k == _COMMA and depth == 0:
            comma_seen = True
        elif k == _COLON and depth == 0 and stmt_keyword == "except" and comma_seen:
            return "except X, e:", stmt_keyword_at
    return None


def _python2_hint(text: str) -> str:
    try:
        found = _python2_evidence(text)
    except Exception:  # pragma: no cover - heuristics must never hide the real error
        return ""
    if found is None:
        return ""
    what, offset = found
    line, _ = _line_col(text, offset)
    return f"looks like Python 2 code ({what} at line {line}); npu-audit reads Python 3 only"
