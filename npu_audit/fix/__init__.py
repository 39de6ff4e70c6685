"""``--fix`` and ``--diff``: apply the fixes findings carry, safely.

Per file: apply the edits of applicable findings (all edits of one finding or none; overlapping
findings wait for the next round), check that the result still parses, re-check it, and repeat until
nothing applicable is left (at most ``MAX_ROUNDS``). Only the edited ranges change: the text is
re-encoded in the file's own encoding with its BOM, line endings and everything else untouched.
With --fix the file is replaced atomically (mode kept); with --diff nothing is written.
"""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional

from npu_audit.findings import FileReport, Finding, RunReport

MAX_ROUNDS = 20


@dataclass
class FileFix:
    path: str
    display: str
    original: bytes
    fixed: bytes
    applied: list[Finding] = field(default_factory=list)
    remaining: Optional[FileReport] = None
    problems: list[str] = field(default_factory=list)
    new_files: list[tuple[str, str]] = field(default_factory=list)  # (path, content)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def applicable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and (finding.fix.applicability == "safe" or unsafe) and bool(
        finding.fix.edits or finding.fix.new_files)


def _encode(text: str, encoding: str, has_bom: bool) -> bytes:
    codec = "utf-8" if encoding in ("utf-8-sig",) else encoding
    data = text.encode(codec)
    if has_bom and not data.startswith(b"\xef\xbb\xbf"):
        data = b"\xef\xbb\xbf" + data
    return data


def _parses(text: str) -> bool:
    import libcst

    try:
        libcst.parse_module(text)
        return True
    except Exception:  # noqa: BLE001 - any parser failure means "does not parse"
        return False


def fix_file(job, report: FileReport, unsafe: bool) -> FileFix:
    from npu_audit.fix.edits import apply_edits, line_starts, offset
    from npu_audit.pipeline import analyze_file
    from npu_audit.source import ReadProblem, read_source

    source = read_source(Path(job.file), job.display, job.settings.max_bytes)
    if isinstance(source, ReadProblem):
        return FileFix(job.file, job.display, b"", b"", remaining=report, problems=[source.message])
    result = FileFix(job.file, job.display, source.raw, source.raw, remaining=report)
    text = source.text
    current = report
    for _round in range(MAX_ROUNDS):
        todo = [f for f in current.findings if applicable(f, unsafe)]
        if not todo:
            break
        progressed = False
        taken: list = []  # (start, end) offsets already edited this round
        starts = line_starts(text)
        round_text = text
        chosen = []
        for finding in todo:
            if not finding.fix.edits:
                continue
            existing = [rel for rel, _ in finding.fix.new_files
                        if os.path.lexists(os.path.join(os.path.dirname(job.file), rel))]
            if existing:
                result.problems.append(f"{job.display}:{finding.line}:{finding.column}: fix for {finding.name} needs to "
                                       f"create {', '.join(existing)}, which exists; not overwritten, fix skipped")
                continue
            spans = [(offset(starts, round_text, e.line, e.column), offset(starts, round_text, e.end_line, e.end_column))
                     for e in finding.fix.edits]
            if any(a < tb and ta < b or (a == b == ta == tb) for a, b in spans for ta, tb in taken):
                continue  # overlaps an edit of this round: next round, on the re-checked text
            candidate, skipped = apply_edits(text, [e for f in chosen + [finding] for e in f.fix.edits])
            if skipped or candidate == text or not _parses(candidate):
                if not _parses(apply_edits(round_text, list(finding.fix.edits))[0]):
                    result.problems.append(f"{job.display}:{finding.line}:{finding.column}: fix for {finding.name} "
                                           "would not leave valid Python; left unchanged")
                continue
            chosen.append(finding)
            taken.extend(spans)
        if chosen:
            text, _ = apply_edits(round_text, [e for f in chosen for e in f.fix.edits])
            for finding in chosen:
                result.applied.append(finding)
                for rel, content in finding.fix.new_files:
                    result.new_files.append((os.path.join(os.path.dirname(job.file), rel), content))
            progressed = True
        if not progressed:
            break
        data = _encode(text, source.encoding, source.has_bom)
        current = analyze_file(replace(job, source_bytes=data))
        current.path = job.display
    result.fixed = _encode(text, source.encoding, source.has_bom) if result.applied else source.raw
    result.remaining = current
    return result


def unified_diff(fix: FileFix) -> str:
    try:
        old = fix.original.decode("utf-8", "replace").splitlines(keepends=True)
        new = fix.fixed.decode("utf-8", "replace").splitlines(keepends=True)
    except Exception:  # pragma: no cover
        return ""
    lines = list(difflib.unified_diff(old, new, fromfile=f"a/{fix.display}", tofile=f"b/{fix.display}"))
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def apply_fixes(report: RunReport, args, base, overrides, options, kb, emit) -> int:
    from npu_audit.checks import all_rules
    from npu_audit.fix.atomic import create_new, write_atomic
    from npu_audit.pipeline import Job, _roots, settings_for
    from npu_audit.render import render

    unsafe = bool(args.unsafe_fixes)
    roots = _roots(args.paths)
    settings_cache: dict = {}
    fixes: list[FileFix] = []
    files_out: list[FileReport] = []
    for file_report in report.files:
        if not any(applicable(f, unsafe) for f in file_report.findings):
            files_out.append(file_report)
            continue
        real = file_report.path  # paths are shown as given (relative to the working directory): openable
        settings = settings_for(Path(real), base, overrides, settings_cache, kb, options.isolated)
        job = Job(file=real, display=file_report.path, roots=roots, settings=settings)
        fix = fix_file(job, file_report, unsafe)
        fixes.append(fix)
        files_out.append(fix.remaining or file_report)
    diff_text = ""
    written = 0
    problems = [p for fx in fixes for p in fx.problems]
    for fx in fixes:
        if not fx.changed and not fx.new_files:
            continue
        if args.diff:
            diff_text += unified_diff(fx)
            for path, _content in fx.new_files:
                diff_text += f"# would create {os.path.relpath(path)} (never overwritten)\n"
            continue
        try:
            if fx.changed:
                write_atomic(fx.path, fx.fixed)
                written += 1
            for path, content in fx.new_files:
                if not create_new(path, content.encode("utf-8")):
                    problems.append(f"{os.path.relpath(path)} exists; not overwritten (write the op_precision_mode file yourself)")
        except OSError as exc:
            problems.append(f"{fx.display}: could not write the fixed file: {exc}")
    applied = sum(len(fx.applied) for fx in fixes)
    final = RunReport(files=files_out, settings=report.settings)
    if args.diff:
        emit(args, diff_text)
        summary = f"Would fix {applied} finding{'s' if applied != 1 else ''} in {sum(1 for fx in fixes if fx.changed)} file(s)."
        print(summary, file=sys.stderr)
    else:
        text = render(final, args.format, rules=all_rules(), color=False if args.format != "text" else _color(args),
                      statistics=args.statistics)
        emit(args, text)
        if args.format == "text":
            for fx in fixes:
                for f in fx.applied:
                    print(f"fixed {fx.display}:{f.line}:{f.column}: {f.code} [{f.name}] {f.fix.message}", file=sys.stderr)
            print(f"Fixed {applied} finding{'s' if applied != 1 else ''} in {written} file{'s' if written != 1 else ''}.",
                  file=sys.stderr)
    for p in problems:
        print(f"npu-audit: {p}", file=sys.stderr)
    code = final.exit_code()
    if args.diff and diff_text:
        code = max(code, 1)
    return code


def _color(args) -> bool:
    from npu_audit.cli import _color as cli_color

    return cli_color(args, sys.stdout)
