"""The carrier call that gives the analyses' frames one large chunk of CPython's frame stack."""

from __future__ import annotations

import sys

import pytest

from npu_audit import stack_room


def _depth(n: int) -> int:
    return 0 if n == 0 else 1 + _depth(n - 1)


def test_the_call_gives_back_what_the_function_returns_at_any_depth():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5_000))
    try:
        assert stack_room.with_stack_room(_depth, 3_000) == 3_000  # (beyond the room the carrier keeps)
        assert stack_room.with_stack_room(lambda a, b: a + b, 2, 3) == 5
    finally:
        sys.setrecursionlimit(limit)


def test_an_exception_goes_through_unchanged():
    def fail(message):
        raise ValueError(message)

    with pytest.raises(ValueError, match="boom"):
        stack_room.with_stack_room(fail, "boom")


@pytest.mark.skipif(not stack_room._CHUNKED_FRAMES, reason="frames are kept in chunks since CPython 3.11")
def test_the_carrier_reserves_more_than_half_a_mebibyte_of_frame():
    # (a frame of more than half of 1 MiB gets a 1 MiB chunk: the rest is the analysis's room)
    assert stack_room._carrier.__code__.co_stacksize * 8 > 512 * 1024
