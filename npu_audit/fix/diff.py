"""``--diff`` output: a unified diff of the fixes that ``patch -p1`` and ``git apply`` accept.

The diff is made of the file's own bytes (lines end at ``\\n``, as diff and patch read them), so a
GBK or latin-1 file gets a diff in GBK or latin-1 that applies to it; the output is bytes. File
names follow git: ``a/<path>`` and ``b/<path>``, C-quoted when they hold a double quote, a
backslash, a control character or a non-ASCII byte, and followed by a tab when they hold a space
(what GNU patch needs to read a name with spaces).
"""

from __future__ import annotations

import difflib
import os
import re

_LINE = re.compile(rb"[^\n]*\n|[^\n]+")
_ESCAPES = {0x07: b"\\a", 0x08: b"\\b", 0x09: b"\\t", 0x0A: b"\\n", 0x0B: b"\\v", 0x0C: b"\\f", 0x0D: b"\\r",
            0x22: b'\\"', 0x5C: b"\\\\"}


def _needs_quotes(name: bytes) -> bool:
    return any(b < 0x20 or b >= 0x7F or b in (0x22, 0x5C) for b in name)


def quote_name(name: bytes) -> bytes:
    """A name as git writes it in a ``---``/``+++`` line (without the line's end)."""
    if not _needs_quotes(name):
        return name + (b"\t" if b" " in name else b"")
    out = bytearray(b'"')
    for b in name:
        if b in _ESCAPES:
            out += _ESCAPES[b]
        elif b < 0x20 or b >= 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    return bytes(out) + b'"'


def diff_label(path: str) -> bytes:
    """The path a diff names a file by: relative to the working directory, with ``/`` separators."""
    rel = os.path.relpath(path)
    return os.fsencode(rel.replace(os.sep, "/"))


def _lines(data: bytes) -> list[bytes]:
    return _LINE.findall(data)


def unified_diff(original: bytes, fixed: bytes, label: bytes) -> bytes:
    """The unified diff (bytes) turning ``original`` into ``fixed``; empty when equal."""
    if original == fixed:
        return b""
    lines = difflib.diff_bytes(difflib.unified_diff, _lines(original), _lines(fixed),
                               quote_name(b"a/" + label), quote_name(b"b/" + label), lineterm=b"\n")
    return _finish(lines)


def new_file_diff(content: bytes, label: bytes) -> bytes:
    """A diff creating a file (``--- /dev/null``)."""
    lines = difflib.diff_bytes(difflib.unified_diff, [], _lines(content), b"/dev/null", quote_name(b"b/" + label),
                               lineterm=b"\n")
    return _finish(lines)


def _finish(lines) -> bytes:
    out = []
    for line in lines:
        out.append(line if line.endswith(b"\n") else line + b"\n\\ No newline at end of file\n")
    return b"".join(out)
