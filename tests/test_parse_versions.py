"""A syntax error reads the same on every Python npu-audit runs on (3.10 to 3.13). Python 3.10 calls a
number followed by a non-ASCII character (``1，2``: a full-width comma from a Chinese input method) an
invalid number and the hint was the general one; 3.11 and later name the character, and the hint says to
type the ASCII one. The errors below are the ones Python 3.10 raises, given to npu-audit on any Python."""

from __future__ import annotations

import pytest

from npu_audit.parse import _cpython_problem
from npu_audit.source import decode_source

FULL_WIDTH = "write the ASCII character instead (full-width \uff0c \uff08 \uff09 \uff1a come from a Chinese input method)"
INVISIBLE = "delete the invisible character (often pasted from a web page)"


@pytest.mark.parametrize(("code", "msg_310", "offset_310", "message", "column", "hint"), [
    ("x = 1\uff0c2\n", "invalid decimal literal", 5, "invalid character '\uff0c' (U+FF0C)", 6, FULL_WIDTH),
    ("f(1.5\uff09\n", "invalid decimal literal", 5, "invalid character '\uff09' (U+FF09)", 6, FULL_WIDTH),
    ("y = 0x1\uff0c2\n", "invalid hexadecimal literal", 7, "invalid character '\uff0c' (U+FF0C)", 8, FULL_WIDTH),
    ("x = 1j\uff0c\n", "invalid imaginary literal", 6, "invalid character '\uff0c' (U+FF0C)", 7, FULL_WIDTH),
    ("x = 1\u200b\n", "invalid decimal literal", 5, "invalid non-printable character U+200B", 6, INVISIBLE),
    ("x = 1\xa0\n", "invalid decimal literal", 5, "invalid non-printable character U+00A0", 6, INVISIBLE),
    ("x = 1\u00e9\n", "invalid decimal literal", 5, "invalid syntax at '\u00e9'", 6, None),
])
def test_a_character_after_a_number_is_named_as_newer_pythons_name_it(code, msg_310, offset_310, message, column,
                                                                        hint):
    source = decode_source(code.encode("utf-8"), "t.py")
    found = _cpython_problem(source, SyntaxError(msg_310, ("t.py", 1, offset_310, code, 1, offset_310)))
    assert (found.message, found.line, found.column) == (message, 1, column)
    if hint is not None:
        assert found.hint == hint


@pytest.mark.parametrize(("code", "msg", "offset"), [
    ("x = 1e\uff0c2\n", "invalid decimal literal", 5),  # an incomplete exponent: the number is wrong
    ("x = 10L\uff0c\n", "invalid decimal literal", 6),  # a Python 2 long literal
    ("x = 1abc\n", "invalid decimal literal", 5),  # ASCII letters glued to a number
])
def test_a_number_that_is_itself_invalid_keeps_its_error(code, msg, offset):
    source = decode_source(code.encode("utf-8"), "t.py")
    found = _cpython_problem(source, SyntaxError(msg, ("t.py", 1, offset, code, 1, offset)))
    assert msg in found.message
