"""The fix engine: one implementation behind ``--fix``, ``--diff`` and the language server's fix-all
and quick fixes. It takes jobs and reports, returns data; it never prints, exits or writes the
analysed file (writing is :mod:`npu_audit.fix.atomic`, printing is the caller's).

Per file, in rounds (at most ``MAX_ROUNDS``):

1. select the applicable fixes whose edits do not overlap (:func:`select`, in finding order; a fix
   with several edits is all or nothing); safe fixes first, unsafe ones (when asked for) only in a
   round where no safe fix is left;
2. apply them to the text and check that the result is still valid Python (CPython's parser and
   libcst);
3. re-analyse the result. For safe fixes, the effective configuration (:mod:`.effective`) must be
   the one the file had before any fix: a fix that changes it is not safe here. Then the fixes are
   tried group by group (the fixes of one option together), and a group that changes the effective
   configuration or breaks the file is left out and reported in :attr:`FileFix.rejected`; in the
   re-checked report that finding has no fix, and its hint says why. A failed group whose fixes only
   remove code (dead writes) is tried fix by fix: such fixes do not depend on each other, and leaving
   them all out would leave a fix for the next run (not idempotent);
4. repeat on the re-analysed findings until nothing applicable is left.

Only the edited ranges change: the text is re-encoded in the file's own encoding with its BOM, line
endings and every other byte untouched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from npu_audit.findings import FileReport, Finding, Fix

if TYPE_CHECKING:
    from npu_audit.pipeline import Job

MAX_ROUNDS = 20

# reasons a fix was not applied
NOT_VALID = "would not leave valid Python"
CHANGES_CONFIG = "would change the effective configuration"
FILE_EXISTS = "needs to create a file that exists"


@dataclass(frozen=True)
class Rejected:
    """A fix the engine tried and left out, and why."""

    finding: Finding  # as reported when the fix was tried (positions of that round's text)
    reason: str  # one of NOT_VALID, CHANGES_CONFIG, FILE_EXISTS
    detail: str = ""  # e.g. what would change in the effective configuration


@dataclass
class FileFix:
    """What fixing one file gave: the bytes before and after, the fixes applied and rejected, and the re-checked
    report (for --fix, --diff and the language server)."""

    path: str
    display: str
    original: bytes
    fixed: bytes
    applied: list[Finding] = field(default_factory=list)  # findings whose own fix was applied
    # findings of the start that are gone, or whose own fix was applied (a finding may stay, reworded: a
    # renamed value of precision_mode still prefers precision_mode_v2)
    fixed_findings: list[Finding] = field(default_factory=list)
    remaining: Optional[FileReport] = None  # the re-checked report of the fixed text
    rejected: list[Rejected] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the file could not be read
    new_files: list[tuple[str, str]] = field(default_factory=list)  # (path, content) to create
    fixed_text: Optional[str] = None  # the decoded fixed text (None when the file could not be read)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def applicable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and (finding.fix.applicability == "safe" or unsafe) and bool(
        finding.fix.edits or finding.fix.new_files)


# -- selection -----------------------------------------------------------------------------------


def fix_of(finding: Finding) -> Fix:
    """The fix of a finding known to have one."""
    assert finding.fix is not None
    return finding.fix


def _writes_code(finding: Finding) -> bool:
    """Whether a finding's fix inserts or replaces code (else it only removes some)."""
    return any(e.content for e in fix_of(finding).edits)


def _spans(fix: Fix) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    return [((e.line, e.column), (e.end_line, e.end_column)) for e in fix.edits]


def _overlap(a, b) -> bool:
    """Whether two edit spans conflict: they share characters, or one is an insertion at a point of
    the other (an insertion next to a replacement: which goes first would be a guess)."""
    (a0, a1), (b0, b1) = a, b
    if a0 == a1 and b0 <= a0 <= b1 or b0 == b1 and a0 <= b0 <= a1:
        return True
    return a0 < b1 and b0 < a1


def select(findings: list[Finding], unsafe: bool = False) -> list[Finding]:
    """The fixes one round applies: applicable fixes with edits, in finding order, skipping a fix
    whose edits overlap each other or an edit already taken (it waits for the next round, on the
    re-checked text). Safe fixes only, unless ``unsafe``."""
    taken: list = []
    chosen: list[Finding] = []
    for f in sorted(findings, key=Finding.sort_key):
        if not applicable(f, unsafe) or not fix_of(f).edits:
            continue
        spans = _spans(fix_of(f))
        if any(_overlap(s, t) for s in spans for t in taken) or any(
                _overlap(s, t) for i, s in enumerate(spans) for t in spans[i + 1:]):
            continue
        taken += spans
        chosen.append(f)
    return chosen


# -- text helpers --------------------------------------------------------------------------------


def _encode(text: str, encoding: str, has_bom: bool) -> bytes:
    codec = "utf-8" if encoding in ("utf-8-sig",) else encoding
    data = text.encode(codec)
    if has_bom and not data.startswith(b"\xef\xbb\xbf"):
        data = b"\xef\xbb\xbf" + data
    return data


def _valid_python(text: str, libcst_too: bool) -> bool:
    import ast

    import libcst

    try:
        ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    if not libcst_too:
        return True
    try:
        libcst.parse_module(text)
        return True
    except Exception:  # noqa: BLE001 - any parser failure means "does not parse"
        return False


def _parses_with_libcst(text: str) -> bool:
    """Whether libcst parses ``text`` (never tried past the token scan's limits: its native parser dies
    with SIGSEGV on deeply nested code; then only CPython checks the fixes)."""
    import libcst

    from npu_audit.parse import within_parser_limits

    if not within_parser_limits(text):
        return False
    try:
        libcst.parse_module(text)
        return True
    except Exception:  # noqa: BLE001
        return False


class _Offsets:
    """Maps offsets of the start text to the text after the applied rounds of edits."""

    def __init__(self) -> None:
        self.rounds: list[list[tuple[int, int, int]]] = []  # per round: (start, end, new length), sorted

    def add(self, spans: list[tuple[int, int, int]]) -> None:
        self.rounds.append(sorted(spans))

    def map(self, off: int) -> tuple[int, bool]:
        """(offset in the final text, whether an edit touched it)."""
        touched = False
        for spans in self.rounds:
            shift = 0
            for a, b, n in spans:
                if off >= b and not (a == b == off):
                    shift += n - (b - a)
                elif a <= off < b or a == b == off:
                    touched = True
                    off = a
                    break
            off += shift
        return off, touched


# -- the engine ----------------------------------------------------------------------------------


@dataclass
class _State:
    """One text the engine considered, with its report and the effective configs a safe fix must keep."""

    text: str
    report: FileReport
    configs: list


class Fixer:
    """Fixes for one file (or editor buffer): ``job.source_bytes`` when set, else the file on disk."""

    def __init__(self, job, report: Optional[FileReport] = None):
        from npu_audit.knowledge.loader import load
        from npu_audit.source import ReadProblem, SourceText, decode_source, read_source

        self.job = job
        self.kb = load()
        self.release = job.settings.release
        if job.source_bytes is not None:
            source = decode_source(job.source_bytes, job.display)
        else:
            source = read_source(Path(job.file), job.display, job.settings.max_bytes)
        self.problem: Optional[str] = None
        if isinstance(source, ReadProblem):
            self.problem = source.message + (f" (hint: {source.hint})" if source.hint else "")
        self.source: Optional[SourceText] = source if isinstance(source, SourceText) else None
        self.given = report
        self._start: Optional[_State] = None

    # analysis of a candidate text, with its effective configs
    def _analyze(self, text: str) -> Optional[_State]:
        from npu_audit.pipeline import analyze_file

        assert self.source is not None
        try:
            data = _encode(text, self.source.encoding, self.source.has_bom)
        except UnicodeError:
            return None
        report = analyze_file(replace(self.job, source_bytes=data, want_configs=True))
        report.path = self.job.display
        configs, report.configs = report.configs, []
        return _State(text, report, configs)

    def start(self) -> Optional[_State]:
        """The analysis of the text as read (None when the file cannot be read or encoded)."""
        if self._start is None and self.source is not None:
            self._start = self._analyze(self.source.text)
        return self._start

    def _signature(self, state: _State):
        from npu_audit.fix.effective import signature

        return signature(state.configs, self.kb, self.release)

    def _changed(self, base: _State, state: _State) -> Optional[str]:
        """None when ``state`` has the effective configuration of ``base``; else what changed."""
        from npu_audit.fix.effective import describe_change

        if state.report.internal_error or self._signature(state) != self._signature(base):
            return describe_change(base.configs, state.configs, self.kb, self.release)
        return None

    def _missing_files(self, finding: Finding) -> list[str]:
        folder = os.path.dirname(self.job.file)
        return [rel for rel, _ in fix_of(finding).new_files if os.path.lexists(os.path.join(folder, rel))]

    # -- one fix (quick fixes) ------------------------------------------------------------------

    def verify(self, finding: Finding) -> Optional[Rejected]:
        """None when ``finding``'s fix can be applied alone to the current text (valid Python, and for
        a safe fix the same effective configuration); else why not."""
        from npu_audit.fix.edits import apply_edits

        if self.source is None or finding.fix is None:
            return None
        if self._missing_files(finding):
            return Rejected(finding, FILE_EXISTS, ", ".join(self._missing_files(finding)))
        text, skipped = apply_edits(self.source.text, list(finding.fix.edits))
        if skipped or not _valid_python(text, _parses_with_libcst(self.source.text)):
            return Rejected(finding, NOT_VALID)
        if finding.fix.applicability != "safe":
            return None
        start = self.start()
        state = self._analyze(text)
        if start is None or state is None:
            return Rejected(finding, NOT_VALID)
        change = self._changed(start, state)
        return Rejected(finding, CHANGES_CONFIG, change) if change else None

    # -- the whole file -------------------------------------------------------------------------

    def fix_all(self, unsafe: bool = False) -> FileFix:
        from npu_audit.fix.edits import apply_edits, line_starts, offset

        job = self.job
        if self.source is None:
            return FileFix(job.file, job.display, b"", b"", remaining=self.given, problems=[self.problem or ""])
        source = self.source
        result = FileFix(job.file, job.display, source.raw, source.raw)
        start = self.start()
        if start is None:
            result.remaining = self.given
            return result
        libcst_ok = _parses_with_libcst(source.text)
        state, base = start, start  # base: the effective configuration safe fixes must keep
        refused: set = set()
        offsets = _Offsets()
        for _round in range(MAX_ROUNDS):
            todo = [f for f in state.report.findings if not refused or self._key(state.text, f) not in refused]
            batch = select(todo, unsafe=False)
            safe_round = bool(batch)
            if not batch and unsafe:
                batch = select(todo, unsafe=True)
            if not batch:
                break
            for f in batch:
                if self._missing_files(f):
                    refused.add(self._key(state.text, f))
                    _reject(result, Rejected(f, FILE_EXISTS, ", ".join(self._missing_files(f))))
            batch = [f for f in batch if not refused or self._key(state.text, f) not in refused]
            accepted, new_state = self._round(state, base, batch, safe_round, libcst_ok, result, refused)
            if not accepted:
                continue
            starts = line_starts(state.text)
            edits = [e for f in accepted for e in fix_of(f).edits]
            text, _ = apply_edits(state.text, edits)
            after = new_state if new_state is not None and new_state.text == text else self._analyze(text)
            if after is None:  # cannot happen: the text was encoded for the check already
                break
            offsets.add([(offset(starts, state.text, e.line, e.column), offset(starts, state.text, e.end_line, e.end_column),
                          len(e.content)) for e in edits])
            state = after
            if not safe_round:
                base = state  # unsafe fixes may change the configuration; later safe ones keep this one
            for f in accepted:
                result.applied.append(f)
                for rel, content in fix_of(f).new_files:
                    result.new_files.append((os.path.join(os.path.dirname(job.file), rel), content))
        if result.applied:
            result.fixed = _encode(state.text, source.encoding, source.has_bom)
        result.remaining = state.report
        result.fixed_text = state.text
        self._drop(result)
        result.fixed_findings = self._gone(start, state, offsets, unsafe, result.applied)
        return result

    @staticmethod
    def _key(text: str, f: Finding) -> tuple:
        """An identity of a finding's fix that survives edits elsewhere in the file."""
        from npu_audit.fix.edits import line_starts, offset

        starts = line_starts(text)
        spans = tuple((text[offset(starts, text, e.line, e.column):offset(starts, text, e.end_line, e.end_column)], e.content)
                      for e in f.fix.edits) if f.fix else ()
        line = text[starts[f.line - 1]:starts[f.line] if f.line < len(starts) else len(text)].strip() \
            if 0 < f.line <= len(starts) else ""
        return (f.code, f.fix.message if f.fix else "", spans, line)

    def _round(self, state: _State, base: _State, batch: list[Finding], safe: bool, libcst_ok: bool,
               result: FileFix, refused: set) -> tuple[list[Finding], Optional[_State]]:
        """Apply ``batch`` to ``state``'s text; the fixes kept and the analysis of the result."""
        from npu_audit.fix.edits import apply_edits

        if not batch:
            return [], None
        text, skipped = apply_edits(state.text, [e for f in batch for e in fix_of(f).edits])
        if not skipped and _valid_python(text, libcst_ok):
            new = self._analyze(text)
            if new is not None and (not safe or self._changed(base, new) is None):
                return batch, new
        # something in the batch is wrong: try the fixes group by group (one option's fixes together)
        groups: dict = {}
        for f in batch:
            groups.setdefault(f.option or id(f), []).append(f)
        kept: list[Finding] = []
        kept_state: Optional[_State] = None

        def attempt(candidate: list[Finding]) -> tuple[Optional[str], str, Optional[_State]]:
            text, skipped = apply_edits(state.text, [e for f in candidate for e in fix_of(f).edits])
            if skipped or not _valid_python(text, libcst_ok):
                return NOT_VALID, "", None
            new = self._analyze(text)
            if new is None:
                return NOT_VALID, "", None
            change = self._changed(base, new) if safe else None
            return (CHANGES_CONFIG, change, None) if change else (None, "", new)

        def refuse(group: list[Finding], reason: str, detail: str) -> None:
            for f in group:
                refused.add(self._key(state.text, f))
                _reject(result, Rejected(f, reason, detail))

        for group in groups.values():
            reason, detail, new = attempt(kept + group)
            if not reason:
                kept, kept_state = kept + group, new
                continue
            # the group fails together. Fixes that only remove code (dead writes of one option) do not
            # depend on each other or on the rest: each may still do alone (one of them the only statement
            # of a block, which removed would empty it). The other fixes of one option move together (a
            # migration of some writes of a key and not the others would leave both keys), so they fail
            # together, but not because of a removal that fails on its own
            if len(group) == 1:
                refuse(group, reason, detail)
                continue
            removals = [f for f in group if not _writes_code(f)]
            together = [f for f in group if _writes_code(f)]
            for f in removals:
                reason, detail, new = attempt(kept + [f])
                if reason:
                    refuse([f], reason, detail)
                else:
                    kept, kept_state = kept + [f], new
            if together:
                reason, detail, new = attempt(kept + together)
                if reason:
                    refuse(together, reason, detail)
                else:
                    kept, kept_state = kept + together, new
        return kept, kept_state

    def _drop(self, result: FileFix) -> None:
        """In the remaining report, a safe fix that was refused is no fix at all (the next run would
        refuse it again), and the finding's hint says why."""
        if result.remaining is None or not result.rejected:
            return
        by_key = {(r.finding.code, r.finding.fix.message): r for r in result.rejected if r.finding.fix is not None}
        out = []
        for f in result.remaining.findings:
            r = by_key.get((f.code, f.fix.message)) if f.fix is not None else None
            if r is not None and r.reason in (CHANGES_CONFIG, NOT_VALID):
                why = f"{r.reason}: {r.detail}" if r.detail else r.reason
                message = fix_of(f).message
                note = f"no automatic fix here: {message[:1].lower()}{message[1:]} {why}"
                f = replace(f, fix=None, hint=f"{f.hint}; {note}" if f.hint else note)
            out.append(f)
        result.remaining.findings = out

    def _gone(self, start: _State, end: _State, offsets: _Offsets, unsafe: bool,
              applied: list[Finding]) -> list[Finding]:
        """Findings of the start whose fix could be applied and that the end no longer reports (their
        own fix or another one removed them), or whose own fix was applied."""
        from npu_audit.fix.edits import line_starts, offset

        if not offsets.rounds:
            return []
        s0, s1 = line_starts(start.text), line_starts(end.text)

        def position(off: int) -> tuple[int, int]:
            import bisect

            i = bisect.bisect_right(s1, off) - 1
            return i + 1, off - s1[i] + 1

        remaining: dict[str, list[Finding]] = {}
        for f in end.report.findings:
            remaining.setdefault(f.code, []).append(f)
        gone = []
        applied_ids = {id(f) for f in applied}
        for f in start.report.findings:
            if not applicable(f, unsafe):
                continue
            if id(f) in applied_ids:
                gone.append(f)
                continue
            mapped, touched = offsets.map(offset(s0, start.text, f.line, f.column))
            line, column = position(mapped)
            still = any((g.line, g.column) == (line, column) or (touched and g.line == line and g.option == f.option)
                        for g in remaining.get(f.code, ()))
            if not still:
                gone.append(f)
        return gone


def _reject(result: FileFix, rejected: Rejected) -> None:
    """Record a refused fix once (a fix refused again in a later round, on moved lines, is the same)."""
    f = rejected.finding
    if not any(r.finding.code == f.code and r.finding.fix == f.fix and r.reason == rejected.reason
               or (r.finding.code, r.finding.message, r.reason) == (f.code, f.message, rejected.reason)
               for r in result.rejected):
        result.rejected.append(rejected)


def fix_file(job, report: Optional[FileReport], unsafe: bool) -> FileFix:
    """Apply every applicable fix to one file (or buffer); nothing is written."""
    return Fixer(job, report).fix_all(unsafe)


def _fix_one(args) -> FileFix:
    job, report, unsafe = args
    try:
        return fix_file(job, report, unsafe)
    except Exception as exc:  # noqa: BLE001 - a defect must not lose the other files' fixes
        fx = FileFix(job.file, job.display, b"", b"", remaining=report)
        fx.problems.append(f"npu-audit failed while fixing this file ({type(exc).__name__}: {exc}); left unchanged")
        return fx


def fix_files(items: list[tuple[Job, FileReport]], unsafe: bool, jobs: int = 0,
              progress: Optional[Callable[[int, int], None]] = None) -> list[FileFix]:
    """:func:`fix_file` over many files (``items``: (Job, FileReport)), in worker processes when
    ``jobs`` (0: all cores) allows; results in the order of ``items``. A worker that dies (out of
    memory, a crash in native code) costs only its own file (npu_audit.workers): the file it was fixing
    is fixed again in a process of its own and left unchanged if that one dies too; the others are
    fixed again normally."""
    work = [(job, report, unsafe) for job, report in items]
    total = len(work)
    done = 0
    out: dict[int, FileFix] = {}

    def finished(i: int, fx: FileFix) -> None:
        nonlocal done
        out[i] = fx
        done += 1
        if progress:
            progress(done, total)

    if progress:
        progress(0, total)
    workers = jobs or os.cpu_count() or 1
    if workers > 1 and total > 1:
        from npu_audit.workers import run_in_workers

        def died(i: int, how: str) -> FileFix:
            job, report, _unsafe = work[i]
            fx = FileFix(job.file, job.display, b"", b"", remaining=report)
            fx.problems.append("npu-audit's worker process died while fixing this file; left unchanged")
            return fx

        run_in_workers(_fix_one, work, list(range(total)), workers, finished, died,
                       files=[job.file for job, _report in items])
    else:
        for i, item in enumerate(work):
            finished(i, _fix_one(item))
    return [out[i] for i in range(total)]
