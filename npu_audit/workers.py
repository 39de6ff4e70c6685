"""Worker processes that survive a dying worker; shared by the analysis (``pipeline``) and the fixes
(``fix.engine``).

A worker can die without a Python exception (the kernel's out-of-memory killer, a crash in native
code): the pool is then broken and every pending result lost. Each worker marks in shared memory which
item it starts and finishes, so that after a break the items that were running are known: each is run
again alone in a process of its own (where its death is that item's own doing, reported through
``died``), and the others, innocent, go to a fresh pool.

A worker also ends when the process that runs the pool is gone (``kill -9`` of npu-audit by a CI time-out
or the out-of-memory killer): nothing would read its results, and it would otherwise wait for work for ever,
keeping its memory. It checks between items, and a thread of its own checks every
:data:`PARENT_POLL_SECONDS` (a worker busy in one long item, or waiting for work, is covered too). The
check compares ``os.getppid()`` with the process that started the worker: when that process dies, the
worker gets a new parent.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Optional

from npu_audit.folder_parts import folder_parts
from npu_audit.timings import ChunkTime

_STARTED, _FINISHED = 1, 2
_states = None  # in a worker: the shared array of item states (index -> 0, _STARTED or _FINISHED)
_parent: Optional[int] = None  # in a worker: the pid of the process that started it

#: How often (seconds) a worker's watch thread checks that the process that started it is still there.
PARENT_POLL_SECONDS = 0.5
#: The exit status of a worker that ends because the process that started it is gone (nobody reads it).
ORPHANED_EXIT = 3


def _parent_pid(context) -> Optional[int]:
    """The pid a worker started through ``context`` has as its parent while the run lives: this process,
    or None when the workers are started by a fork server (their parent is that server, which ends
    when this process does; the worker reads its parent's pid itself then)."""
    return None if context.get_start_method() == "forkserver" else os.getpid()


def _orphaned() -> bool:
    return _parent is not None and os.getppid() != _parent


def _watch_parent(parent: Optional[int]) -> None:
    """End this process (``os._exit``: nothing is left to hand over) as soon as its parent ``parent``
    (None: its parent now) is gone: checked by a daemon thread every :data:`PARENT_POLL_SECONDS`, and by
    :func:`_run_chunk` between items. A worker started after its parent died exits at once."""
    global _parent
    import threading
    import time

    _parent = parent if parent is not None else os.getppid()

    def watch() -> None:
        while not _orphaned():
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(ORPHANED_EXIT)

    threading.Thread(target=watch, name="npu-audit-parent-watch", daemon=True).start()


def _init_worker(states, setup: Optional[Callable[[], None]] = None, parent: Optional[int] = None) -> None:
    global _states
    _watch_parent(parent)
    _states = states
    if setup is not None:
        setup()


def _run_chunk(fn: Callable[[Any], Any], chunk: list[tuple[int, Any]],
               after: Optional[Callable[[list, list, Callable[[int, bool], None]], None]] = None,
               ) -> tuple[list[tuple[int, Any]], ChunkTime]:
    """The results of ``chunk``'s items, and how long this process took over them (``after`` included)."""
    began, cpu = time.monotonic(), time.process_time()
    out = []
    for i, item in chunk:
        if _orphaned():  # (the watch thread may not have had its turn yet)
            os._exit(ORPHANED_EXIT)
        if _states is not None:
            _states[i] = _STARTED
        out.append((i, fn(item)))
        if _states is not None:
            _states[i] = _FINISHED
    if after is not None:
        def running(k: int, started: bool) -> None:
            """Mark the chunk's ``k``-th item as being worked on again (or done): if the process dies
            in ``after``, that item is the one run alone."""
            if _states is not None:
                _states[chunk[k][0]] = _STARTED if started else _FINISHED

        after([item for _i, item in chunk], [result for _i, result in out], running)
    so_far = time.process_time()
    return out, ChunkTime(worker=os.getpid(), started=began, ended=time.monotonic(), cpu=so_far - cpu,
                          items=len(chunk), cpu_so_far=so_far)


def _chunks(pending: list[int], workers: int) -> list[list[int]]:
    """``pending`` cut into consecutive chunks handed to the workers in order: up to 32 items (fewer
    round trips), smaller towards the end ("guided" scheduling: what is left is a few items per worker),
    so that one worker does not finish a large last chunk alone while the others wait."""
    out = []
    k = 0
    while k < len(pending):
        size = max(1, min(32, (len(pending) - k) // (workers * 4)))
        out.append(pending[k:k + size])
        k += size
    return out


_MAX_FOLDER_CHUNK = 512  # (a dying worker costs its chunk's results, and progress moves by chunks)


def _folder_chunks(pending: list[int], workers: int, folders: list[tuple[str, ...]]) -> list[list[int]]:
    """``pending`` cut into chunks that keep the items of one folder tree together (``folders[i]``: the
    folder of item ``i``, as path parts), largest first: the tree of folders is split from the top until
    each part holds at most a sixteenth of one worker's share (at least 32 items, at most 512), so that a
    worker analyses a project's files one after the other and reads the helper modules they share once, where
    consecutive chunks of 32 spread a project over every worker, each parsing its helpers again. Fewer items
    than that make parts of at most an equal share per worker, so that no worker waits while another analyses
    them all (a second phase of a few files of one project). The largest parts go first and the smallest last,
    so that the workers finish together."""
    if not pending:
        return []
    share = -(-len(pending) // workers)
    return folder_parts(pending, folders, min(_MAX_FOLDER_CHUNK, max(32, len(pending) // (workers * 16)), share))


def run_in_workers(fn: Callable[[Any], Any], items: list, todo: list[int], workers: int,
                   finished: Callable[[int, Any], None], died: Callable[[int, str], Any],
                   setup: Optional[Callable[[], None]] = None,
                   files: Optional[list[str]] = None,
                   after_chunk: Optional[Callable[[list, list, Callable[[int, bool], None]], None]] = None,
                   timed: Optional[Callable[[ChunkTime], None]] = None) -> None:
    """``fn(items[i])`` for ``i`` in ``todo`` in worker processes (``fn`` a module-level function),
    calling ``finished(i, result)`` for each; an item whose own process dies gets ``died(i, how)``.
    ``setup`` (a module-level function) runs once in each worker before its first item. With ``files``
    (the file each item reads), the items of a folder tree go to one worker together
    (:func:`_folder_chunks`): a project's files share the helper modules a worker keeps parsed.
    ``after_chunk(items, results, running)`` (a module-level function, or a partial of one) runs in the
    worker once it has a chunk's results, before they are sent; it may complete them, and calls
    ``running(k, True)`` before more work on the chunk's ``k``-th item (``running(k, False)`` after): if
    the worker dies then, that item is blamed and run alone, as for ``fn``. ``timed(chunk_time)`` is called
    for each chunk a worker finished (:class:`npu_audit.timings.ChunkTime`: ``npu-audit --timings``)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context()
    parent = _parent_pid(context)
    pending = list(todo)
    folders = [tuple(os.path.dirname(os.path.abspath(f)).split(os.sep)) for f in files] if files is not None else None
    while pending:
        states = context.Array("b", len(items), lock=False)
        chunks = _folder_chunks(pending, workers, folders) if folders is not None else _chunks(pending, workers)
        lost: list[int] = []
        with ProcessPoolExecutor(max_workers=min(workers, len(pending)), mp_context=context,
                                 initializer=_init_worker, initargs=(states, setup, parent)) as pool:
            futures = {pool.submit(_run_chunk, fn, [(i, items[i]) for i in chunk], after_chunk): chunk
                       for chunk in chunks}
            for future in as_completed(futures):
                try:
                    results, took = future.result()
                except Exception:  # noqa: BLE001 - BrokenProcessPool: a worker died
                    lost.extend(futures[future])
                    continue
                if timed is not None:
                    timed(took)
                for i, result in results:
                    finished(i, result)
        lost.sort()
        running = [i for i in lost if states[i] == _STARTED]
        rest = [i for i in lost if states[i] != _STARTED]
        if rest and not running and len(rest) == len(pending):  # no progress at all: one by one
            running, rest = rest, []
        for i in running:
            finished(i, _alone(fn, items[i], i, died))
        pending = rest


def _alone_child(fn: Callable[[Any], Any], item: Any, conn, parent: Optional[int] = None) -> None:
    _watch_parent(parent)
    try:
        conn.send(fn(item))
    finally:
        conn.close()


def _alone(fn: Callable[[Any], Any], item: Any, i: int, died: Callable[[int, str], Any]) -> Any:
    """``fn(item)`` in a process of its own; if that process dies, ``died(i, how)``."""
    import multiprocessing

    context = multiprocessing.get_context()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_alone_child, args=(fn, item, sender, _parent_pid(context)), daemon=True)
    process.start()
    sender.close()
    got, result = False, None
    try:
        result, got = receiver.recv(), True
    except (EOFError, OSError):
        pass
    finally:
        receiver.close()
    process.join()
    if got:
        return result
    code = process.exitcode
    if code is not None and code < 0:
        import signal

        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        how = f"killed by {name}" + (", usually the out-of-memory killer" if -code == signal.SIGKILL else "")
    else:
        how = f"exit code {code}"
    return died(i, how)
