"""Analysing buffers: the engine that runs :mod:`npu_audit.pipeline` on a buffer, and the scheduler
that decides when.

A change that comes after a pause (nothing typed in that document for longer than its debounce, and no
analysis of it running) is analysed at once: the diagnostics arrive as soon as the analysis is done.
During a burst of changes the scheduler waits for the user to pause as long as the last analysis of
that document took, within :data:`DEBOUNCE_MIN_SECONDS` and :data:`DEBOUNCE_SECONDS` (30–300 ms): a
slow analysis is not run for every keystroke (it could not keep up anyway, and analyses share one
interpreter lock).
Analyses run in worker threads (the engine's executor), so the server keeps answering meanwhile; each
change bumps the document's generation, and the result of an older generation is dropped as stale.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from npu_audit.lsp.code_actions import FixCache, code_actions
from npu_audit.lsp.documents import DocState, document_file, encode_buffer, job_roots
from npu_audit.lsp.positions import recode_ranges
from npu_audit.lsp.settings import ClientSettings

logger = logging.getLogger("npu_audit.lsp")

DEBOUNCE_SECONDS = 0.3  # the longest pause waited for
DEBOUNCE_MIN_SECONDS = 0.03


def debounce(last_duration: float, longest: float = DEBOUNCE_SECONDS) -> float:
    """Seconds to wait after a change: the last analysis's duration, within the bounds."""
    return min(longest, max(DEBOUNCE_MIN_SECONDS, last_duration))


def change_delay(quiet: float, busy: bool, last_duration: float, longest: float = DEBOUNCE_SECONDS) -> float:
    """Seconds to wait before analysing a change that came ``quiet`` seconds after the previous change
    of the document (``busy``: an analysis of it is scheduled or running): none after a pause, else the
    debounce."""
    wait = debounce(last_duration, longest)
    return 0.0 if not busy and quiet >= wait else wait


def _load_analysis_code() -> None:
    """Load the analysis code and the knowledge base in the background, so that the first document opened
    does not wait for them (``pipeline.load_analysis_code``)."""
    from npu_audit.pipeline import load_analysis_code

    load_analysis_code()


class Engine:
    """Editor-independent state of the server: settings, open documents, analyses."""

    def __init__(self, workers: int = 2):
        from npu_audit.pipeline import prepare_analysis_process

        prepare_analysis_process(freeze=False)  # (the server's own objects stay collectable)
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="npu-audit-analysis")
        self.settings = ClientSettings()
        self.docs: dict[str, DocState] = {}
        self.fixes = FixCache()
        self._kb: Any = None
        self._rules_by_code: Optional[dict] = None
        # the analysis code (the slice, the interpreter, the checks) and the knowledge base loaded while the
        # editor starts up, not when the first document opens
        self.executor.submit(_load_analysis_code)

    @property
    def kb(self) -> Any:
        if self._kb is None:
            from npu_audit.knowledge.loader import load

            self._kb = load()
        return self._kb

    @property
    def rules_by_code(self) -> dict:
        if self._rules_by_code is None:
            from npu_audit.checks import all_rules

            self._rules_by_code = {r.code: r for r in all_rules()}
        return self._rules_by_code

    @property
    def overrides(self) -> dict:
        return self.settings.overrides

    def job(self, uri: str, text: str, workspace_roots: tuple[str, ...]):
        """The pipeline Job for the buffer ``text`` of ``uri`` (and a settings problem, if any)."""
        from npu_audit.pipeline import Job, settings_for
        from npu_audit.settings import Settings, SettingsError

        file = document_file(uri, workspace_roots)
        roots = job_roots(file, workspace_roots)
        base = Settings()
        problem = None
        try:
            settings = settings_for(Path(file), base, self.overrides, {}, self.kb)
        except SettingsError as exc:
            problem = str(exc)
            settings = replace(base, **self.overrides)
        job = Job(file=file, display=file, roots=roots, settings=settings, source_bytes=encode_buffer(text))
        return job, problem

    def analyze(self, uri: str, text: str, workspace_roots: tuple[str, ...]):
        """(FileReport, settings problem or None, Settings used); runs in a worker thread."""
        from npu_audit.imports import forget
        from npu_audit.pipeline import analyze_file

        forget()  # files may have been added or removed since the last analysis
        job, problem = self.job(uri, text, workspace_roots)
        return analyze_file(job), problem, job.settings

    def release_for(self, uri: str) -> str:
        """The release hovers and completions describe: the document's effective settings."""
        state = self.docs.get(uri)
        if state is not None and state.release:
            return state.release
        return self.settings.release

    def diagnostics(self, report, uri: str, encoding: str) -> list[dict]:
        """LSP Diagnostic dicts for ``report``, in the client's position encoding."""
        from npu_audit.findings import Finding
        from npu_audit.render import lsp as render_lsp

        out = []
        for f in sorted(report.findings, key=Finding.sort_key):
            d = render_lsp.diagnostic(f, report, self.rules_by_code)
            out.append(recode_ranges(d, uri, report.text, encoding))
        return out

    def code_actions(self, report, uri: str, rng: dict, only: Optional[list[str]], encoding: str,
                     context_diagnostics: Any = (), text: Optional[str] = None,
                     workspace_roots: tuple[str, ...] = ()) -> list[dict]:
        """Quick fixes, suppressions and fix-all (:func:`npu_audit.lsp.code_actions.code_actions`)."""
        return code_actions(self, report, uri, rng, only, encoding, context_diagnostics, text, workspace_roots)

    def shutdown(self) -> None:
        self.executor.shutdown(wait=False)


class Scheduler:
    """When to analyse which document, and what to do with the result.

    ``source(uri)`` gives a document's current (text, version); ``roots()`` the workspace roots;
    ``publish(uri, report, version)`` sends the diagnostics; ``warn(message)`` tells the user about a
    settings problem (once per message).
    """

    def __init__(self, engine: Engine, *, source: Callable[[str], tuple[str, Optional[int]]],
                 roots: Callable[[], tuple[str, ...]], publish: Callable[[str, Any, Optional[int]], None],
                 warn: Callable[[str], None], longest: float = DEBOUNCE_SECONDS):
        self.engine = engine
        self.source = source
        self.roots = roots
        self.publish = publish
        self.warn = warn
        self.longest = longest

    def schedule(self, uri: str, delay: float = 0) -> None:
        """Analyse ``uri`` after ``delay`` seconds, replacing any analysis scheduled or running."""
        state = self.engine.docs.setdefault(uri, DocState())
        state.generation += 1
        state.cancel()
        task = asyncio.ensure_future(self._run(uri, state.generation, delay))
        task.add_done_callback(_log_task_error)
        state.pending = task

    def changed(self, uri: str) -> None:
        """An open document changed: analyse it once the user pauses (the adaptive debounce)."""
        state = self.engine.docs.get(uri)
        if state is not None:
            now = time.monotonic()
            quiet, state.last_change = now - state.last_change, now
            busy = state.pending is not None and not state.pending.done()
            self.schedule(uri, change_delay(quiet, busy, state.last_duration, self.longest))

    def saved(self, uri: str, path: Optional[str]) -> None:
        """A document was saved: re-analyse it, and the open scripts that read it as a helper module."""
        if uri in self.engine.docs:
            self.schedule(uri)
        if path:
            saved = str(Path(path).resolve())
            for other, state in list(self.engine.docs.items()):
                if other != uri and saved in state.dependencies:
                    self.schedule(other)

    def rerun_all(self) -> None:
        """Settings changed: re-analyse every open document now."""
        for uri in list(self.engine.docs):
            self.schedule(uri)

    def close(self, uri: str) -> None:
        state = self.engine.docs.pop(uri, None)
        if state is not None:
            state.cancel()

    def cancel_all(self) -> None:
        for state in self.engine.docs.values():
            state.cancel()

    async def _analyze(self, uri: str, text: str):
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.engine.executor, self.engine.analyze, uri, text, self.roots())

    async def _run(self, uri: str, generation: int, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        state = self.engine.docs.get(uri)
        if state is None or state.generation != generation:
            return
        text, version = self.source(uri)
        started = time.perf_counter()
        report, problem, settings = await self._analyze(uri, text)
        state = self.engine.docs.get(uri)
        if state is not None:
            state.last_duration = time.perf_counter() - started
        if state is None or state.generation != generation:  # closed or changed meanwhile: stale
            logger.debug("dropping stale analysis of %s (version %s)", uri, version)
            return
        if problem:
            self.warn(problem)
        state.report, state.version, state.text, state.release = report, version, text, settings.release
        state.dependencies = tuple(str(Path(p).resolve()) for p in report.dependencies)
        self.publish(uri, report, version)

    async def report_for(self, uri: str):
        """A report for the document's current text (reusing the published one when current)."""
        text, _version = self.source(uri)
        state = self.engine.docs.get(uri)  # None: a document the client did not open (or not Python)
        if state is not None:
            if state.report is not None and state.text == text:
                return state.report
            if state.fresh is not None and state.fresh[0] == text:
                return state.fresh[1]
        report, _problem, _settings = await self._analyze(uri, text)
        if state is not None:
            state.fresh = (text, report)
        return report


def _log_task_error(task: asyncio.Future) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        logger.error("analysis failed: %r", exc, exc_info=exc)
