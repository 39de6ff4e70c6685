"""The text a syntax tree is built from, and the scanning of it that positions need.

:class:`Source` holds the text, its line starts and the conversion of CPython's UTF-8 byte columns to
character columns (done only for the nodes asked about). The scanners below read the text around a
node: the brackets, parentheses, comments and line continuations that are not nodes of the tree but
decide a node's source text and range (:mod:`npu_audit.syntax.nodes`); :func:`_between` and
:func:`_relocated` place the fields of an f-string read on its own.
"""

from __future__ import annotations

import ast
import tokenize
from bisect import bisect_right
from io import StringIO
from typing import Any, Optional

from npu_audit.text import LINE_BREAK, line_starts

Pos = tuple  # (line, byte column, end line, end byte column) as CPython's ast gives them


class Source:
    """The text a tree is built from, and its lines (for columns and source segments)."""

    __slots__ = ("text", "starts", "_lines", "ascii", "_indents")

    def __init__(self, text: str):
        self.text = text
        self.ascii = text.isascii()  # (else identifiers are read from the text: CPython NFKC-normalises them)
        self.starts = line_starts(text)
        self._lines: dict[int, Optional[bytes]] = {}
        self._indents: Optional[dict[int, str]] = None

    def line(self, number: int) -> str:
        starts = self.starts
        if number < 1 or number > len(starts):
            return ""
        end = starts[number] if number < len(starts) else len(self.text)
        return self.text[starts[number - 1]: end]

    def column(self, line: int, byte_column: int) -> int:
        """The 0-based character column of a byte column of ``line``."""
        encoded = self._lines.get(line, b"")
        if encoded == b"":
            text = self.line(line)
            encoded = None if text.isascii() else text.encode("utf-8", "surrogatepass")
            self._lines[line] = encoded
        if encoded is None:
            return byte_column
        return len(encoded[:byte_column].decode("utf-8", "replace"))

    def block_indent(self, line: int) -> str:
        """The indentation of the statement (logical line) that physical line ``line`` belongs to
        (tokenizes the text the first time it is asked: only multi-line texts need it)."""
        if self._indents is None:
            indents: dict[int, str] = {}
            start = None
            try:
                for token in tokenize.generate_tokens(StringIO(LINE_BREAK.sub("\n", self.text)).readline):
                    if token.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.NL, tokenize.COMMENT,
                                      tokenize.ENDMARKER):
                        continue
                    if start is None:
                        start = token.start[0]
                    if token.type == tokenize.NEWLINE:
                        first = self.line(start)
                        indent = first[: len(first) - len(first.lstrip(" \t\f"))]
                        for number in range(start, token.end[0] + 1):
                            indents[number] = indent
                        start = None
            except (tokenize.TokenError, SyntaxError):
                pass
            self._indents = indents
        if line in self._indents:
            return self._indents[line]
        text = self.line(line)
        return text[: len(text) - len(text.lstrip(" \t\f"))]

    def byte_position(self, offset: int) -> tuple[int, int]:
        """(1-based line, byte column) of an offset in :attr:`text`: a position as CPython's ast gives it."""
        line, column = self.position(offset)
        text = self.line(line)[:column]
        return line, column if text.isascii() else len(text.encode("utf-8", "surrogatepass"))

    def position(self, offset: int) -> tuple[int, int]:
        """(1-based line, 0-based character column) of an offset in :attr:`text`."""
        line = bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1]

    def offset(self, line: int, byte_column: int) -> int:
        """The offset in :attr:`text` of a position."""
        if line < 1 or line > len(self.starts):
            return len(self.text)
        if self.ascii:  # (byte and character columns are one)
            return min(self.starts[line - 1] + byte_column, len(self.text))
        return min(self.starts[line - 1] + self.column(line, byte_column), len(self.text))


def _closing(text: str, start: int) -> int:
    """Offset of the bracket closing the one at ``start``, string literals and comments skipped; -1 when
    there is none."""
    depth = 0
    i, n = start, len(text)
    while i < n:
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
        elif c == "#":
            while i < n and text[i] not in "\r\n":
                i += 1
            continue
        elif c in "'\"":
            quote = text[i: i + 3] if text[i: i + 3] in ("'''", '"""') else c
            i += len(quote)
            while i < n and not text.startswith(quote, i):
                i += 2 if text[i] == "\\" else 1
            i += len(quote)
            continue
        i += 1
    return -1


def _without_block_indent(text: str, indent: str) -> str:
    """A multi-line node's text as libcst writes it out of its module: continuation lines lose the
    indentation of the block the node is in (``indent``), except lines that continue a string literal."""
    if not indent:
        return text
    in_string: set[int] = set()
    try:
        for token in tokenize.generate_tokens(StringIO(text).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                in_string.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass
    lines = LINE_BREAK.split(text)
    breaks = LINE_BREAK.findall(text)
    out = [lines[0]]
    for number, (line, brk) in enumerate(zip(lines[1:], breaks), start=2):
        out.append(brk)
        continued = lines[number - 2].endswith("\\")  # (after a backslash the whitespace is kept as written)
        keep = number in in_string or continued or not line.startswith(indent)
        out.append(line if keep else line[len(indent):])
    return "".join(out)


_BLANK = " \t\f\r\n\\"  # whitespace and line continuations


def _forward(text: str, i: int, end: int) -> int:
    """The first offset at or after ``i`` (before ``end``) that is not whitespace, a line continuation or
    a comment."""
    while i < end:
        c = text[i]
        if c == "#":
            while i < end and text[i] not in "\r\n":
                i += 1
            continue
        if c not in _BLANK:
            break
        i += 1
    return i


def _backward(text: str, i: int) -> int:
    """The offset just after the last character before ``i`` that is not whitespace, a line continuation
    or a comment."""
    while i > 0:
        c = text[i - 1]
        if c in "\r\n":
            cut = _comment_start(text, i - 1)
            i = cut if cut is not None else i - 1
            continue
        if c not in _BLANK:
            break
        i -= 1
    return i


def _comment_start(text: str, line_end: int) -> Optional[int]:
    """Where the comment of the line ending at ``line_end`` starts (a ``#`` with no open quote before it
    on the line), or None."""
    start = max(text.rfind("\n", 0, line_end), text.rfind("\r", 0, line_end)) + 1
    hash_at = text.find("#", start, line_end)
    if hash_at < 0 or text.count("'", start, hash_at) % 2 or text.count('"', start, hash_at) % 2:
        return None
    return hash_at


def _inside(text: str, start: int, end: int) -> tuple[int, int]:
    """The span inside the brackets at ``start`` and ``end - 1``, without the whitespace, line
    continuations and comments next to them."""
    inner = _forward(text, start + 1, end - 1)
    return inner, max(inner, _backward(text, end - 1))


def _parens_before(text: str, start: int) -> list[int]:
    """Offsets of the ``(`` directly before ``start`` (only whitespace, line continuations and comments
    between), nearest first."""
    out = []
    i = _backward(text, start)
    while i > 0 and text[i - 1] == "(":
        out.append(i - 1)
        i = _backward(text, i - 1)
    return out


def _parens_after(text: str, end: int) -> list[int]:
    out = []
    i, n = end, len(text)
    while i < n:
        c = text[i]
        if c == ")":
            out.append(i)
        elif c == "#":
            while i < n and text[i] not in "\r\n":
                i += 1
            continue
        elif c not in " \t\f\r\n\\":
            break
        i += 1
    return out


def _between(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The text between two tokenize positions (rows 1-based) of the text split into ``lines``."""
    if start[0] == end[0]:
        return lines[start[0] - 1][start[1]: end[1]]
    middle = lines[start[0]: end[0] - 1]
    return "\n".join([lines[start[0] - 1][start[1]:], *middle, lines[end[0] - 1][: end[1]]])



def _relocated(tree: ast.JoinedStr, start: tuple[int, int]) -> list:
    """The values of an f-string parsed on its own, with the positions of its fields moved to where the
    f-string starts in the file (``start``: line, byte column)."""
    line, col = start
    node: Any
    for node in ast.walk(tree):
        if hasattr(node, "lineno") and node is not tree:
            if node.lineno == 1:
                node.col_offset += col
            if getattr(node, "end_lineno", None) == 1:
                node.end_col_offset += col
            node.lineno += line - 1
            if getattr(node, "end_lineno", None) is not None:
                node.end_lineno += line - 1
    return tree.values
