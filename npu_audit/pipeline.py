"""The run: discover files -> prefilter -> parse -> extract -> check -> (fix) -> report.

``analyze_file`` handles one file in isolation and never raises: unreadable files, syntax errors and
internal errors become findings for that file. ``run`` spreads files over worker processes and uses
the cache; results are plain data (no libcst nodes) so they cross process boundaries cheaply.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from npu_audit.findings import FileReport, Finding, RunReport
from npu_audit.second_phase import feeders
from npu_audit.settings import RuleFilter, Settings, SettingsResolver, ignored_for_file
from npu_audit.slice_knowledge import slice_knowledge

if TYPE_CHECKING:
    from npu_audit.timings import ChunkTime, RunTimings


@dataclass(frozen=True)
class Job:
    """One file to analyse, with the settings that apply to it (what analyze_file and the fix engine take)."""

    file: str  # path to open
    display: str  # path to show
    roots: tuple[str, ...]  # folders below which helper modules are looked up
    settings: Settings
    want_configs: bool = False
    source_bytes: Optional[bytes] = None  # content to analyse instead of the file's (editor buffer, fixed text)
    force_parse: bool = False  # parse even without NPU markers (the file imports a module that has them)


def _file_finding(rule_name: str, display: str, message: str, line: int = 1, column: int = 1,
                  severity: Optional[str] = None, hint: Optional[str] = None) -> Finding:
    from npu_audit.checks import rule_by

    rule = rule_by(rule_name)
    return Finding(path=display, line=line, column=column, end_line=line, end_column=column + 1, code=rule.code,
                   name=rule.name, severity=severity or rule.severity, message=message, hint=hint)


def _problem_finding(display: str, problem) -> Finding:
    """The finding of a file problem (source.ReadProblem, parse.SyntaxProblem, discover.DiscoveryProblem):
    its rule (``code``; a discovery problem is an unreadable file), position, severity and hint."""
    return _file_finding(getattr(problem, "code", "unreadable-file"), display, problem.message,
                         getattr(problem, "line", 1), getattr(problem, "column", 1), getattr(problem, "severity", None),
                         problem.hint)


#: Allocations between two young-generation collections (CPython's default is 700). An analysis
#: allocates millions of short-lived objects next to large long-lived trees (parsed helper modules,
#: the knowledge base): with the default, the collector ran so often that it cost about a tenth of the
#: analysis time (benchmarks: paired A/B runs on a real folder, ``--jobs 1``: 0.89 of the time).
GC_THRESHOLDS = (50_000, 20, 100)


def prepare_analysis_process(freeze: bool = True) -> None:
    """Make this process ready to analyse many files: a collector tuned to the analysis's allocation
    pattern and, in a worker (``freeze``), the analysis code and knowledge base loaded once and moved out
    of the collector's sight (they live as long as the process)."""
    import gc

    gc.set_threshold(*GC_THRESHOLDS)
    if freeze:
        load_analysis_code()
        gc.freeze()


def load_analysis_code() -> None:
    """Import what analysing a file needs (the slice, the interpreter, the rules) and load the knowledge base,
    before the first file asks for them. Done before worker processes start as well (:func:`_in_workers`):
    forked workers then share the loaded code and knowledge base instead of each building its own."""
    import npu_audit.extract.demand
    import npu_audit.extract.extraction
    import npu_audit.knowledge.grammars
    import npu_audit.relevance
    import npu_audit.slicing
    import npu_audit.suppress  # noqa: F401
    from npu_audit.checks import all_rules
    from npu_audit.knowledge.loader import load

    load()
    all_rules()


#: A file whose analysis took longer than this (seconds) is followed by a collection before what it left
#: is frozen (see :func:`analyze_in_batch`).
COLLECT_AFTER_SECONDS = 1.0


def analyze_in_batch(job: Job, collect: bool = True) -> FileReport:
    """:func:`analyze_file` in a process that analyses many files (a worker, or a run with one job):
    afterwards, what survives the file's analysis (the helper modules parsed for it, kept for the next
    files) is moved out of the collector's sight. Without that, each collection walked every helper tree
    parsed so far: the collector took a quarter of the analysis time (benchmarks: 300 files of the real
    tree, ``--jobs 1``).

    An analysis leaves next to no reference cycles (``tests/test_memory.py``), so no full collection runs
    after an ordinary file: it would find next to nothing and cost about a twentieth of a run. It runs
    only after an analysis that took longer than ``COLLECT_AFTER_SECONDS``, where much could have been
    allocated and where it costs little in proportion. What a shorter one may leave stays until the
    process ends: a worker lives for one phase of a run; with ``--jobs 1`` this is the command's own
    process, which ends after its fixes and report (memory only: nothing reads frozen garbage). The
    language server does not analyse through here."""
    import gc
    import time

    started = time.perf_counter()
    report = analyze_file(job)
    if report.parsed and collect:  # (a file the prefilter passed over allocated next to nothing)
        if time.perf_counter() - started > COLLECT_AFTER_SECONDS:
            gc.collect()
        gc.freeze()
    return report


def analyze_file(job: Job) -> FileReport:
    """Analyse one file; never raises."""
    try:
        return _analyze(job)
    except Exception as exc:  # noqa: BLE001 - an internal error must not stop the run
        import traceback

        from npu_audit.source import LEAVE_OUT, REPORT_IT

        tb = traceback.extract_tb(exc.__traceback__)
        where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
        report = FileReport(path=job.display, internal_error=True)
        report.findings.append(_file_finding(
            "internal-error", job.display,
            f"npu-audit failed on this file ({type(exc).__name__}: {exc}{where}); the file was not checked, "
            "the other files were", hint=f"{REPORT_IT}; until it is fixed, {LEAVE_OUT}"))
        return report


def _analyze(job: Job) -> FileReport:
    from npu_audit import prefilter
    from npu_audit.knowledge.loader import load
    from npu_audit.parse import SyntaxProblem, parse_module, too_large_to_parse
    from npu_audit.source import ReadProblem, decode_source, read_source

    settings = job.settings
    if job.source_bytes is not None:
        source = decode_source(job.source_bytes, job.display, lenient=True)
    else:
        source = read_source(Path(job.file), job.display, settings.max_bytes, lenient=True)
    if isinstance(source, ReadProblem):
        report = FileReport(path=job.display)
        report.findings.append(_problem_finding(job.display, source))
        return report
    report = FileReport(path=job.display, text=source.text)
    # encoding problems that left the file readable (bytes that are not UTF-8 only in comments)
    notes = [_problem_finding(job.display, note) for note in source.notes]
    report.findings.extend(notes)
    report.content_hash = hashlib.sha256(source.raw).hexdigest()
    if not job.force_parse and not prefilter.may_configure_npu(source.raw):
        report.imports = _imports_of(source.raw)
        report.text = None
        return report
    # (a file above the parse budget is refused before its ast and its slice are built: for a 10 MB file they
    # cost seconds and gigabytes)
    refused = too_large_to_parse(source)
    if refused is not None:
        report.findings.append(_problem_finding(job.display, refused))
        return report
    kb = load()
    sliced = _sliced(source, kb, job.file, job.roots, drop_if_idle=job.force_parse)
    if sliced is None:  # a file without NPU markers whose slice keeps only imports: nothing to read
        report.imports = _imports_of(source.raw)
        report.text = None
        return report
    parsed, tree, dropped = sliced
    # (built from the whole text's ast without the dropped statements: what parsing the sliced text gives)
    module = parse_module(source, tree=tree, skip=dropped)
    if isinstance(module, SyntaxProblem):
        # syntax-error, or unreadable-file for a file above the parse budget
        report.findings.append(_problem_finding(job.display, module))
        return report
    report.parsed = True
    from npu_audit.extract.extraction import extract_configs

    # (the interpreter and positions read the parsed text; findings, suppressions and fixes the original)
    extraction = extract_configs(job.display, Path(job.file), module, source.raw, kb,
                                 job.roots, settings.max_bytes, all_positions=job.want_configs,
                                 text=parsed.text, tree=tree, dropped=dropped)
    from npu_audit.extract.inputs import caller_inputs
    from npu_audit.extract.positions import python_ast
    from npu_audit.relevance import npu_exports

    report.exports = npu_exports(tree if tree is not None else python_ast(source.text), source.text)
    report.caller_inputs = caller_inputs(extraction, report.exports)
    # (what a module imports reaches its importers too: ``import helpers`` reaches helpers.npu_lib)
    report.imports = _imports_of(source.raw)
    if job.want_configs:
        from npu_audit.showconfig import configs_for

        report.configs = configs_for(extraction)
    report.findings = notes + check_extraction(extraction, settings, kb, report.text)
    report.dependencies = [str(p) for p in extraction.dependencies]  # (checks may add files they looked for)
    extraction.release()
    if not report.findings and job.source_bytes is None:
        report.text = None  # the text is only kept to show findings; clean files travel light
    return report


def _imports_of(raw: bytes) -> list[str]:
    """The modules (and ``module:member`` names) a file imports, as the second phase reads them."""
    from npu_audit import prefilter

    return sorted(prefilter.imported_module_names(raw, members=True))


def _sliced(source, kb, file: str, roots: tuple[str, ...], drop_if_idle: bool = False):
    """(``source`` with the statements that cannot reach NPU configuration blanked (npu_audit.slicing),
    CPython's ast of the whole text, the ids of its dropped statements): the same lines and columns for every
    statement kept, so the tree is built from the whole text's ast without them. ``source`` itself, no ast
    and nothing dropped when the slice is off (``NPU_AUDIT_NO_SLICE=1``), when CPython cannot parse the text
    (its syntax error is reported then) or when nothing is dropped. None when ``drop_if_idle`` and the slice
    keeps nothing but imports (a file of the second phase that only imports an NPU module: parsing and
    reading it could give no config)."""
    from npu_audit import slicing
    from npu_audit.imports import real_folders

    if not slicing.enabled():
        return source, None, frozenset()
    from npu_audit.extract.positions import python_ast

    known = slice_knowledge(kb)
    here = os.path.realpath(os.path.dirname(os.path.abspath(file)))
    reaches = slicing.TreeReach(here, real_folders(roots) or (here,),
                                identifiers=known.identifiers + known.config_calls)
    tree = python_ast(source.text)
    result = slicing.slice_text(source.text, tree, known.identifiers, reaches, reaches.exports, known.modelled,
                                known.sessions)
    if drop_if_idle and result is not None and not result.kept_besides_imports:
        return None
    if result is None or not result.blanked:
        return source, tree, frozenset()
    return replace(source, text=result.text), tree, result.dropped


def check_extraction(extraction, settings: Settings, kb, text: Optional[str]) -> list[Finding]:
    from npu_audit import suppress
    from npu_audit.checks import rule_by, run_checks
    from npu_audit.checks.base import CheckContext

    flt = RuleFilter(settings.select, settings.ignore, ignored_for_file(settings, extraction.display))
    table = suppress.scan(text) if text is not None else None  # (read once: folding asks, then apply)
    ctx = CheckContext(path=extraction.display, configs=extraction.configs, facts=extraction.facts, kb=kb,
                       settings=settings, extraction=extraction,
                       suppressed=(lambda f: table.matching(f) is not None) if table is not None else (lambda f: False))
    findings = run_checks(ctx, flt.enabled)
    return suppress.apply(findings, text, extraction.display, flt.enabled, rule_by("unused-suppression"), table)


# ---------------------------------------------------------------------------------------------
# whole runs


@dataclass
class RunOptions:
    """How a whole run (:func:`run`) goes: worker processes, cache, progress, and what the command line adds."""

    jobs: int = 0  # 0: all cores
    cache_dir: Optional[str] = None  # None: no cache
    want_configs: bool = False
    progress: Optional[Callable[[int, int], None]] = None
    isolated: bool = False  # ignore [tool.npu-audit] tables
    extra_exclude: tuple[str, ...] = ()  # --exclude on the command line
    resolver: Optional[SettingsResolver] = None  # settings per file (a new one when None); keeps warnings
    timings: Optional[RunTimings] = None  # where the run's time goes (--timings)
    shard: Optional[tuple[int, int]] = None  # (K, N): check only the K-th of N parts of the files found (--shard)


def settings_for(file: Path, base: Settings, overrides: dict, cache: dict, kb, isolated: bool = False) -> Settings:
    """Settings of ``file``: those of its project (the nearest pyproject.toml with [tool.npu-audit]
    at or above it), its per-file-ignores resolved, then CLI overrides. ``cache`` keeps what was read
    between calls. Raises SettingsError when the file's project configuration is invalid."""
    from npu_audit.checks import all_rules

    resolver = cache.get(SettingsResolver)
    if resolver is None:
        resolver = cache[SettingsResolver] = SettingsResolver(base, overrides, kb, isolated, all_rules())
    return resolver.for_file(file, strict=True)


def run(paths: list[str], base: Settings, overrides: dict, options: RunOptions, kb) -> RunReport:
    from npu_audit.checks import all_rules
    from npu_audit.discover import discover
    from npu_audit.imports import forget
    from npu_audit.settings import SettingsError

    forget()  # import resolutions are kept for one run: the tree may have changed since the last one
    resolver = options.resolver or SettingsResolver(base, overrides, kb, options.isolated, all_rules())
    files, problems = discover(paths, exclude=options.extra_exclude, respect_gitignore=resolver.default.respect_gitignore,
                               settings=resolver)
    roots = _roots(paths)
    elsewhere: list[str] = []  # (--shard: the files found that other jobs check)
    if options.shard is not None and options.shard[1] > 1:
        from npu_audit.discover.shards import shard_members

        # (the problems too: a path that cannot be read is reported by one job)
        keep = set(shard_members([f.display for f in files] + [p.display for p in problems], *options.shard))
        problems = [p for k, p in enumerate(problems) if len(files) + k in keep]
        elsewhere = [str(f.path) for k, f in enumerate(files) if k not in keep]
        files = [f for k, f in enumerate(files) if k in keep]
    found = []  # (path to open, path to show, settings) of each file
    for f in files:
        file = str(f.path)
        found.append((file, f.display, resolver.for_file(file)))
    if resolver.errors:  # every configuration problem at once, before any analysis
        raise SettingsError("\n".join(resolver.errors))
    reports: list[FileReport] = [FileReport(path=p.display, findings=[_problem_finding(p.display, p)]) for p in problems]
    cache = _open_cache(options)
    clock = options.timings
    if clock is not None:
        from npu_audit.timings import file_count

        clock.mark(f"start ({file_count(len(found))} found, settings read)")
    named = {os.path.normpath(p) for p in paths if os.path.isfile(p)}
    # The whole run's results, kept when nothing it read changed (not when files are named on the command
    # line, nor for a shard: their second phase reads modules outside the run from the disk).
    command = (paths, roots, options.want_configs, options.isolated, options.extra_exclude, base, sorted(overrides.items()))
    snapshot = cache.run_snapshot(repr(command), found) if cache is not None and not named \
        and not elsewhere else None
    results = cache.run_results(snapshot, found) if snapshot is not None else None
    if results is not None:
        if options.progress:
            options.progress(len(found), len(found))
        if clock is not None:
            clock.mark("the last run's results, unchanged, read from the cache")
    else:
        jobs = [Job(file=file, display=display, roots=roots, settings=s, want_configs=options.want_configs)
                for file, display, s in found]
        results = _execute(jobs, options, cache, ahead=True, phase="first phase")
        # Second phase: files without NPU markers that import a module of the tree that has them can build
        # a config through its helpers; parse those too (most were already, by the worker that analysed
        # their project: analyze_feeders_ahead).
        given = frozenset(i for i, job in enumerate(jobs) if os.path.normpath(job.display) in named)
        feeders = _feeders_of_run(jobs, results, roots, cache, given, elsewhere)
        if clock is not None:
            ahead = sum(1 for i in feeders if results[i].ahead is not None)
            clock.mark(f"second phase's choice: {file_count(len(feeders))} without NPU markers taken, "
                       f"{ahead:,} of them analysed ahead")
        done_ahead, rest = [], []
        for i in feeders:
            early = results[i].ahead
            if early is not None:
                results[i] = early
                done_ahead.append(i)
            else:
                rest.append(i)
        if cache is not None and done_ahead:
            cache.put_many((replace(jobs[i], force_parse=True), results[i]) for i in done_ahead)
            if clock is not None:
                clock.mark("second phase: the results analysed ahead written to the cache")
        for report in results:
            report.ahead = None  # (analysed ahead for a file the run did not pick: not needed)
        if rest:
            # (in a worker even when one file is left: a file whose analysis kills its process, as its
            # analysis ahead may have, must not take the run down with it)
            again = _execute([replace(jobs[i], force_parse=True) for i in rest], replace(options, progress=None),
                             cache, isolate=len(jobs) > 1, phase="second phase")
            for i, report in zip(rest, again):
                results[i] = report
        if snapshot is not None:
            cache.put_run_results(snapshot, found, results)
            if clock is not None:
                clock.mark("the run's results written to the cache")
    reports += results
    reports.sort(key=lambda r: r.path)
    return RunReport(files=reports, settings={"release": base.release if "release" not in overrides else overrides["release"],
                                              "product": overrides.get("product", base.product),
                                              "scenario": overrides.get("scenario", base.scenario)})


def _open_cache(options: RunOptions):
    if not options.cache_dir:
        return None  # (sqlite3 and the cache's code are not even imported: a one-file run without cache)
    from npu_audit.cache import open_cache

    return open_cache(options.cache_dir)  # (None when it cannot be used: npu_audit.cache.notes() says why)


def _feeders_of_run(jobs: list[Job], results: list[FileReport], roots: tuple[str, ...], cache,
                    given: frozenset[int] = frozenset(), elsewhere: Optional[list[str]] = None) -> list[int]:
    """:func:`~npu_audit.second_phase.feeders`, or with a cache the answer of the last run when nothing it depends on changed
    (the files, their contents, which were parsed, the roots, npu-audit and its knowledge base): a warm
    run does not resolve the tree's imports again. Not remembered when files were named on the command
    line, nor for a shard (their answer depends on files outside the run, read from the disk)."""
    if cache is None or given or elsewhere:
        return feeders(jobs, results, roots, given, elsewhere or ())
    digest = hashlib.sha256(f"{cache.tool_token()}\0{os.getcwd()}\0{roots}".encode())
    for job, report in zip(jobs, results):
        digest.update(f"\0{job.file}\0{report.content_hash}\0{report.parsed}".encode())
    key = "feeders|" + digest.hexdigest()
    known = cache.run_fact(key)
    if known is not None:
        try:
            return [int(i) for i in json.loads(known)]
        except (TypeError, ValueError):
            pass
    found = feeders(jobs, results, roots)
    cache.put_run_fact(key, json.dumps(found))
    return found


def _roots(paths: list[str]) -> tuple[str, ...]:
    """Folders below which imports are resolved: the folders given (or holding the files given), and
    the working directory when they lie inside it (``cd repo && npu-audit models/`` resolves
    ``import models.common``)."""
    roots = []
    cwd = Path.cwd().resolve()
    for p in paths:
        path = Path(p)
        folder = (path if path.is_dir() else path.parent).resolve()
        roots.append(str(folder))
        if folder == cwd or cwd in folder.parents:
            roots.append(str(cwd))
    unique = tuple(dict.fromkeys(roots))
    # a root inside another adds no folder to search (the folders above a file are searched up to the
    # outer root): thousands of files named one by one (--files-from) are then one root, not one per
    # folder, each of which every import would be looked for in
    return tuple(r for r in unique if not any(r != o and r.startswith(o.rstrip(os.sep) + os.sep) for o in unique))


def _execute(jobs: list[Job], options: RunOptions, cache=None, ahead: bool = False,
             isolate: bool = False, phase: str = "analysis") -> list[FileReport]:
    """The reports of ``jobs`` (from the cache, else analysed, in worker processes when allowed, and for
    more than one file to analyse, or with ``isolate`` for any). ``ahead``: the workers also analyse the
    files of the second phase they can foresee (:func:`analyze_feeders_ahead`). ``phase`` names the work
    in ``options.timings``."""
    results: dict[int, FileReport] = {}
    todo = []
    for i, job in enumerate(jobs):
        hit = cache.get(job) if cache else None
        if hit is not None:
            results[i] = hit
        else:
            todo.append(i)
    clock = options.timings
    if cache and clock is not None:
        clock.mark(f"{phase}: {len(results):,} of {len(jobs):,} results found in the cache")
    workers = options.jobs or os.cpu_count() or 1
    done = len(results)
    total = len(jobs)
    if options.progress:
        options.progress(done, total)

    def finished(i: int, report: FileReport) -> None:
        nonlocal done
        results[i] = report
        done += 1
        if options.progress:
            options.progress(done, total)

    in_workers = workers > 1 and (len(todo) > 1 or (isolate and todo))
    timed = clock.phase(phase, len(todo), min(workers, len(todo)) if in_workers else 0) if clock is not None else None
    if in_workers:
        _in_workers(jobs, todo, min(workers, len(todo)), finished, noting=bool(cache), ahead=ahead,
                    timed=timed.chunks.append if timed is not None else None)
    else:
        if todo:
            prepare_analysis_process(freeze=False)
        analyze = analyze_noting_imports if cache else analyze_in_batch
        for n, i in enumerate(todo):
            # (no collection after the last file: nothing more is analysed by the run; 15 ms of a one-file run)
            finished(i, analyze(jobs[i], collect=n + 1 < len(todo)))
    if timed is not None:
        clock.end_phase(timed)
    if cache and todo:
        cache.put_many((jobs[i], results[i]) for i in todo)
        if clock is not None:
            clock.mark(f"{phase}: results written to the cache")
    return [results[i] for i in range(len(jobs))]


def _in_workers(jobs: list[Job], todo: list[int], workers: int, finished: Callable[[int, FileReport], None],
                noting: bool = False, ahead: bool = False, timed: Optional[Callable[[ChunkTime], None]] = None) -> None:
    """Analyse ``jobs[i]`` for ``i`` in ``todo`` in worker processes (npu_audit.workers: a worker that
    dies costs only the file it was analysing), calling ``finished`` for each."""
    from functools import partial

    from npu_audit.source import LEAVE_OUT, REPORT_IT
    from npu_audit.workers import run_in_workers

    load_analysis_code()  # (here, once, rather than in each worker: see its docstring)

    def died(i: int, how: str) -> FileReport:
        failed = FileReport(path=jobs[i].display, internal_error=True)
        failed.findings.append(_file_finding(
            "internal-error", jobs[i].display,
            f"the npu-audit worker process died while analysing this file ({how}); the file was not checked, "
            "the other files were",
            hint=f"if it ran out of memory, split the file or {LEAVE_OUT}; otherwise {REPORT_IT}"))
        return failed

    run_in_workers(analyze_noting_imports if noting else analyze_in_batch, jobs, todo, workers, finished, died,
                   setup=prepare_analysis_process, files=[job.file for job in jobs],
                   after_chunk=partial(analyze_feeders_ahead, noting=noting) if ahead else None, timed=timed)


def analyze_feeders_ahead(jobs: list[Job], reports: list[FileReport],
                          running: Callable[[int, bool], None] = lambda i, started: None,
                          noting: bool = False) -> None:
    """In a worker, after a chunk of the first phase (a project's files, ``reports`` their reports): the
    files of the chunk that the second phase would parse as far as the chunk tells (:func:`~npu_audit.second_phase.feeders` over
    the chunk alone) are analysed now, while the helper modules they import are still parsed in this
    process; their reports go in ``ahead``. The run still decides over the whole tree which files the
    second phase takes: a file it takes that was not analysed ahead is analysed then, and a report made
    ahead for a file it does not take is dropped. On the real tree this parses ~400 files with their
    project's helpers at hand, where a second pool of workers parsed every helper again. ``running(i,
    started)`` (npu_audit.workers) marks the file analysed: a worker that dies then blames that file."""
    if not jobs or any(job.force_parse for job in jobs):
        return
    try:
        picked = feeders(jobs, reports, jobs[0].roots)
    except Exception:  # noqa: BLE001 - only a head start: the run decides the second phase on its own
        return
    analyze = analyze_noting_imports if noting else analyze_in_batch
    for i in picked:
        running(i, True)
        reports[i].ahead = analyze(replace(jobs[i], force_parse=True))
        running(i, False)


def analyze_noting_imports(job: Job, collect: bool = True) -> FileReport:
    """:func:`analyze_in_batch`, with what the result cache needs to know noted in the report: the imports it
    resolved against the file system (``resolutions``) and the folders that decide them (``watched_folders``)."""
    from npu_audit import imports

    imports.record()
    try:
        report = analyze_in_batch(job, collect)
    finally:
        report_imports = imports.recorded()
    report.resolutions, report.watched_folders = report_imports
    return report
