"""Room on CPython's frame stack for deep, long analyses (:func:`with_stack_room`).

Since 3.11, CPython keeps the frames of Python calls on a stack made of chunks of 16 KiB: a call that
does not fit in the current chunk maps a new one (``mmap``), and the chunk is unmapped as soon as the
call that needed it returns. npu-audit's interpreter recurses deeply, and its depth goes up and down
across chunk boundaries all the time: on ``TensorFlow/built-in/cv`` of the real tree (``--jobs 1``),
about 65,000 maps and as many unmaps, each fresh chunk faulted in again (114,000 page faults in all),
0.74 s of system time in a 15.8 s run.

A call whose own frame is large gets a chunk of its own size, rounded up to a power of two, and the
calls made inside it take the rest of that chunk. :func:`with_stack_room` makes its call through a
function whose frame reserves a large value stack (its code object says so: ``co_stacksize``; the
slots are never written, so their pages are not faulted in): about 560 KiB of a 1 MiB chunk, which
leaves some 480 KiB (thousands of frames) for the analysis, where chunk boundaries are rarely crossed.
Same run: 12,000 maps, 63,000 page faults, system time 0.36 s (0.54 s against 1.18 s in a second pair).
Older versions allocate each frame as an object of its own size; there the call is made directly.
"""

from __future__ import annotations

import sys
from typing import Callable, TypeVar

__all__ = ["with_stack_room"]

T = TypeVar("T")

#: slots of the carrier's value stack: 8 bytes each, a frame of ~560 KiB (more than half of 1 MiB)
STACK_SLOTS = 70_000

_CHUNKED_FRAMES = sys.implementation.name == "cpython" and sys.version_info >= (3, 11)


def _carrier(fn, args):
    return fn(*args)


if _CHUNKED_FRAMES:
    # (a larger value stack than the code needs is only room: the compiler computes the least it needs)
    _carrier.__code__ = _carrier.__code__.replace(co_stacksize=max(_carrier.__code__.co_stacksize, STACK_SLOTS))


def with_stack_room(fn: Callable[..., T], *args) -> T:
    """``fn(*args)``, called where the frames it pushes have room in one large chunk of CPython's frame
    stack (see the module docstring); a plain call where frames are not kept in chunks."""
    if _CHUNKED_FRAMES:
        return _carrier(fn, args)
    return fn(*args)
