"""Functions whose frame gives the analyses' deep recursion one large chunk of CPython's frame stack."""

from __future__ import annotations

import sys

import pytest

from npu_audit import pipeline, stack_room, workers
from npu_audit.settings import Settings


def _depth(n: int) -> int:
    return 0 if n == 0 else 1 + _depth(n - 1)


@stack_room.gives_stack_room
def _roomy(n: int) -> int:
    return _depth(n)


def test_a_function_given_room_returns_and_raises_as_before_at_any_depth():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5_000))
    try:
        assert _roomy(3_000) == 3_000  # (deeper than the room: more chunks beyond it, as usual)
    finally:
        sys.setrecursionlimit(limit)

    @stack_room.gives_stack_room
    def fail(message):
        raise ValueError(message)

    with pytest.raises(ValueError, match="boom"):
        fail("boom")


@pytest.mark.skipif(not stack_room.CHUNKED_FRAMES, reason="frames are kept in chunks since CPython 3.11")
def test_the_frame_reserves_more_than_half_a_mebibyte():
    # (a frame of more than half of 1 MiB gets a 1 MiB chunk: the rest is room for what it calls)
    assert _roomy.__code__.co_stacksize * 8 > 512 * 1024
    assert workers._run_chunk.__code__.co_stacksize == _roomy.__code__.co_stacksize


def test_no_frame_is_added_between_a_worker_chunk_and_its_analyses():
    # (the parser's nesting budget counts the frames above it: a frame more, a level less for every file)
    callers = workers._run_chunk(lambda item: sys._getframe(1).f_code.co_name, [(0, "a"), (1, "b")])
    assert callers == [(0, "_run_chunk"), (1, "_run_chunk")]


def test_no_frame_is_added_between_a_run_without_workers_and_its_analyses(tmp_path, monkeypatch):
    callers = []

    def analyze(job, collect=True):
        callers.append(sys._getframe(1).f_code.co_name)
        return pipeline.FileReport(path=job.display)

    monkeypatch.setattr(pipeline, "analyze_in_batch", analyze)
    job = pipeline.Job(file=str(tmp_path / "a.py"), display="a.py", roots=(str(tmp_path),), settings=Settings())
    pipeline._execute([job], pipeline.RunOptions(jobs=1))
    assert callers == ["_execute"]
