"""Where a run's time went (``npu-audit --timings``): its serial start, each phase's workers, and the idle tail.

A run is serial at its start (discovery, the settings of each file) and its end (the second phase's choice,
the report), and parallel in between: each phase hands chunks of files to worker processes
(``npu_audit.workers``), which time every chunk they run (:class:`ChunkTime`). From those, each phase says
how long each worker was busy and when each ran out of work: the *idle tail* is the time from the first
worker running out of work to the last one finishing, when the other cores wait. The figures go to stderr,
never into a report (``docs/performance.md``, "Where a run's time goes").
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Optional

#: A gap between two steps shorter than this (seconds) is not shown as a step of its own.
_SHOWN = 0.005


@dataclass(frozen=True)
class ChunkTime:
    """One chunk of files run by one worker process: which process, when (``time.monotonic``, the same clock
    in every process of the machine), and the CPU seconds that process spent on it."""

    worker: int  # the process id
    started: float
    ended: float
    cpu: float
    items: int
    cpu_so_far: float = 0.0  # the worker's CPU seconds from its start to the chunk's end (its own count)


@dataclass
class PhaseTime:
    """One phase of a run: the files it analysed and the chunks its workers ran (one chunk for the whole
    phase when it ran in the main process)."""

    name: str
    files: int
    workers: int  # worker processes that ran it (0: npu-audit's own process)
    started: float
    ended: float = 0.0
    chunks: list[ChunkTime] = field(default_factory=list)

    def busy(self) -> list[float]:
        """Seconds each worker spent on its chunks, most first; a worker that got no chunk counts 0."""
        out: dict[int, float] = {}
        for chunk in self.chunks:
            out[chunk.worker] = out.get(chunk.worker, 0.0) + chunk.ended - chunk.started
        return sorted(out.values(), reverse=True) + [0.0] * max(0, self.workers - len(out))

    def idle_tail(self) -> float:
        """Seconds from the first worker running out of chunks (a worker that got none: at the phase's start)
        to the last worker finishing its own; 0 with one worker."""
        last: dict[int, float] = {}
        for chunk in self.chunks:
            last[chunk.worker] = max(last.get(chunk.worker, chunk.ended), chunk.ended)
        if self.workers < 2 or not last:
            return 0.0
        first_idle = min(last.values()) if len(last) >= self.workers else self.started
        return max(last.values()) - first_idle


class RunTimings:
    """The clock of one run: :meth:`mark` the end of each serial step, :meth:`phase` each parallel one,
    :meth:`render` the figures."""

    def __init__(self, started: Optional[float] = None, cpu_started: Optional[float] = None) -> None:
        """``started``, ``cpu_started``: when the command began (``time.monotonic``) and this process's CPU
        seconds then (``time.process_time``); default now. The CPU counted is this process's from then on, and
        its workers'."""
        self.started = time.monotonic() if started is None else started
        self._cpu_started = time.process_time() if cpu_started is None else cpu_started
        self._children_started = _children_cpu()
        self.steps: list[tuple[str, float, float]] = []  # (what, started, ended)
        self.phases: list[PhaseTime] = []
        self._last = self.started
        self.ended: Optional[float] = None
        self.cpu_here = 0.0
        self.cpu_workers = 0.0

    def mark(self, what: str) -> None:
        """A serial step of the main process ends now; it began where the last step or phase ended."""
        now = time.monotonic()
        self.steps.append((what, self._last, now))
        self._last = now

    def phase(self, name: str, files: int, workers: int) -> PhaseTime:
        """A phase starts now (what it runs is added to its ``chunks``; :meth:`end_phase` ends it)."""
        now = time.monotonic()
        if now - self._last >= _SHOWN:  # (what happened since the last step, when it took a while)
            self.steps.append(("before the " + name, self._last, now))
        started = PhaseTime(name=name, files=files, workers=workers, started=now)
        self.phases.append(started)
        return started

    def end_phase(self, phase: PhaseTime) -> None:
        phase.ended = self._last = time.monotonic()

    def finish(self) -> None:
        """The run is over: its wall and CPU times are read now. The workers' CPU is what the operating system
        counted for the child processes waited for, or, when that is less, what each worker counted itself up
        to the end of its last chunk (workers started by a fork server are not this process's children)."""
        self.ended = time.monotonic()
        self.cpu_here = time.process_time() - self._cpu_started
        own: dict[int, float] = {}
        for phase in self.phases:
            for chunk in phase.chunks:
                own[chunk.worker] = max(own.get(chunk.worker, 0.0), chunk.cpu_so_far)
        self.cpu_workers = max(_children_cpu() - self._children_started, sum(own.values()))

    def render(self) -> str:
        """The figures as lines of text (for stderr)."""
        if self.ended is None:
            self.finish()
        assert self.ended is not None
        wall = self.ended - self.started
        cpu = self.cpu_here + self.cpu_workers
        cores = os.cpu_count() or 1
        lines = [f"timings: {wall:.2f} s wall, {cpu:.2f} CPU-s (this process {self.cpu_here:.2f}, "
                 f"workers {self.cpu_workers:.2f}), {cores} core{'s' if cores != 1 else ''}"]
        events: list[tuple[float, str]] = []
        for what, began, ended in self.steps:
            events.append((began, f"  {what}: {ended - began:.2f} s"))
        for phase in self.phases:
            events.append((phase.started, _phase_line(phase)))
        lines.extend(line for _began, line in sorted(events, key=lambda event: event[0]))
        idle = max(0.0, cores * wall - cpu)
        lines.append(f"  idle core time: {idle:.2f} of {cores * wall:.2f} core-seconds "
                     f"({100 * idle / max(cores * wall, 1e-9):.0f} %)")
        return "\n".join(lines)


def file_count(count: int) -> str:
    """"1 file", "19,138 files"."""
    return f"{count:,} file{'s' if count != 1 else ''}"


def _phase_line(phase: PhaseTime) -> str:
    wall = phase.ended - phase.started
    head = f"  {phase.name}: {file_count(phase.files)}, {wall:.2f} s"
    if not phase.workers:
        return head + " in this process"
    busy = phase.busy()
    cpu = sum(chunk.cpu for chunk in phase.chunks)
    processes = f"{phase.workers} worker process{'es' if phase.workers != 1 else ''}"
    line = f"{head} in {processes}; busy {', '.join(f'{b:.2f}' for b in busy)} s, {cpu:.2f} CPU-s on files"
    if len({chunk.worker for chunk in phase.chunks}) > phase.workers:
        # (a worker died: the pool was started again, and the files that were running were run alone, untimed)
        return line + "; a worker died and the workers were started again: no idle tail"
    return f"{line}; idle tail {phase.idle_tail():.2f} s"


def _children_cpu() -> float:
    """CPU seconds of the child processes waited for so far (``os.times``: also where ``resource`` is missing)."""
    times = os.times()
    return times.children_user + times.children_system
