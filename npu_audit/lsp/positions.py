"""Positions in the client's encoding: the one place the language server converts columns.

LSP counts a ``character`` in the position encoding negotiated at ``initialize`` (UTF-16 unless the
client offers UTF-8 or UTF-32); npu-audit counts code points. The units of each encoding are pygls's
:class:`~pygls.workspace.PositionCodec`; the arithmetic over one line (a column inside a character's
units, columns past the end) is :func:`npu_audit.render.lsp.client_column` / ``char_index``, the same
functions the ``--format lsp`` renderer uses for UTF-16.

Lines are split as LSP and Python count them (``\\r\\n``, ``\\r``, ``\\n``: :func:`npu_audit.text.split_lines`),
not with ``str.splitlines`` (which pygls's ``TextDocument.lines`` uses, and which also breaks at form
feeds and Unicode separators), so the codec is applied to one line at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from pygls.workspace import PositionCodec

from npu_audit.render.lsp import char_index, client_column
from npu_audit.text import LINE_BREAK, split_lines

UTF16 = "utf-16"


@cache
def codec(encoding: str = UTF16) -> PositionCodec:
    """pygls's codec for ``encoding`` ("utf-8", "utf-16", "utf-32"; anything else counts UTF-16)."""
    return PositionCodec(encoding)


def encoding_name(kind: Any) -> str:
    """The lower-case name of a negotiated ``PositionEncodingKind`` (or string); None -> "utf-16"."""
    return str(getattr(kind, "value", kind) or UTF16).lower()


def char_to_client(line_text: str, index: int, encoding: str = UTF16) -> int:
    """0-based client column (in ``encoding`` units) of 0-based code-point ``index``."""
    return client_column(line_text, index, codec(encoding).client_num_units)


def client_to_char(line_text: str, column: int, encoding: str = UTF16) -> int:
    """0-based code-point index of the 0-based client ``column`` (in ``encoding`` units)."""
    return char_index(line_text, column, codec(encoding).client_num_units)


def line_offset(text: str, line: int) -> int:
    """Offset in ``text`` (code points) of the start of 0-based ``line``."""
    if line <= 0:
        return 0
    for i, m in enumerate(LINE_BREAK.finditer(text), start=1):
        if i == line:
            return m.end()
    return len(text)


@dataclass(frozen=True)
class Span:
    """Part of one line: 0-based line, 0-based code-point columns, end exclusive."""

    line: int
    start: int
    end: int

    def to_dict(self, line_text: str, encoding: str = UTF16) -> dict:
        """The LSP ``Range`` (a dict) of the span, in ``encoding`` units."""
        return {
            "start": {"line": self.line, "character": char_to_client(line_text, self.start, encoding)},
            "end": {"line": self.line, "character": char_to_client(line_text, self.end, encoding)},
        }


def _convert_position(pos: dict, lines: list[str], encoding: str) -> None:
    text = lines[pos["line"]] if 0 <= pos["line"] < len(lines) else ""
    index = client_to_char(text, pos["character"], UTF16)
    pos["character"] = char_to_client(text, index, encoding)


def recode_ranges(obj: Any, uri: str, text: str | None, encoding: str) -> Any:
    """Rewrite (in place) the UTF-16 positions of ``uri`` inside an LSP dict (Diagnostic, CodeAction,
    WorkspaceEdit, CompletionItem...) into ``encoding`` units. Ranges in other documents are left
    alone. A no-op for UTF-16, the encoding npu_audit.render.lsp produces."""
    if encoding == UTF16 or text is None:
        return obj
    lines = split_lines(text)

    def walk(o: Any, mine: bool) -> None:
        if isinstance(o, list):
            for item in o:
                walk(item, mine)
            return
        if not isinstance(o, dict):
            return
        if isinstance(o.get("uri"), str) and "range" in o:  # Location
            mine = o["uri"] == uri
        if isinstance(o.get("textDocument"), dict) and "edits" in o:  # TextDocumentEdit
            mine = o["textDocument"].get("uri") == uri
        for key, value in o.items():
            if key == "changes" and isinstance(value, dict):  # WorkspaceEdit.changes: uri -> edits
                for u, edits in value.items():
                    walk(edits, u == uri)
            elif key in ("range", "insert", "replace") and isinstance(value, dict) and "start" in value:
                if mine:
                    _convert_position(value["start"], lines, encoding)
                    _convert_position(value["end"], lines, encoding)
            else:
                walk(value, mine)

    walk(obj, True)
    return obj
