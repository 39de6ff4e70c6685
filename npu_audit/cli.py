"""Command line: a thin layer over npu_audit.pipeline, npu_audit.fix and npu_audit.render.

Exit codes: 0 nothing at warning level or above; 1 findings at warning level or above (after --fix:
what remains; a path that does not exist or cannot be read is such a finding); 2 usage or
configuration error, the report could not be written, or npu-audit failed on a file. ``--exit-zero``
turns 1 into 0.
Heavy modules are imported only when needed so that ``--version`` stays instant.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Optional

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
STDIN = "-"
FORMATS = ("text", "concise", "json", "lsp", "sarif", "github")
STATISTICS_FORMATS = ("text", "concise", "json")


class OutputError(Exception):
    """The report could not be written (exit code 2)."""


def _csv(values: Optional[list[str]]) -> tuple[str, ...]:
    out: list[str] = []
    for v in values or ():
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return tuple(out)


def build_parser() -> argparse.ArgumentParser:
    from npu_audit import __version__
    from npu_audit.knowledge.vocabulary import PRODUCT_IDS, RELEASES, SCENARIOS

    p = argparse.ArgumentParser(
        prog="npu-audit",
        description="Check Ascend NPU session options in TensorFlow scripts without running them.",
        epilog="Exit codes: 0 clean, 1 findings at warning level or above (also: a path that does not exist), "
        "2 usage/config error, report not written, or internal error (--exit-zero: 1 becomes 0). "
        "`npu-audit lsp` starts the language server; `npu-audit merge` merges the reports of shards.",
    )
    p.add_argument("paths", nargs="*",
                   help="files or folders to check (folders: *.py, recursively; default: the current folder); "
                   "- reads one script from stdin")
    p.add_argument("--version", action="version", version=f"npu-audit {__version__}")
    out = p.add_argument_group("output")
    out.add_argument("--format", choices=FORMATS, default="text",
                     help="text (default), concise (one line per finding), json, lsp, sarif or github")
    out.add_argument("--show-config", action="store_true", help="print the effective NPU configs instead of findings")
    out.add_argument("--statistics", action="store_true",
                     help="count findings per check (text, concise; json: adds summary.statistics)")
    out.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    out.add_argument("--no-progress", action="store_true", help="no progress bar on a terminal")
    out.add_argument("--output-file", "-o", metavar="FILE",
                     help="write the report to FILE (atomically; - is stdout) instead of stdout")
    out.add_argument("--exit-zero", action="store_true",
                     help="exit 0 even when findings are reported (2 still reports errors)")
    out.add_argument("--stdin-filename", metavar="NAME",
                     help="with -: the path of the script read from stdin (shown, and used to find its settings)")
    kb = p.add_argument_group("knowledge base")
    kb.add_argument("--list-rules", action="store_true", help="list checks and every option the adapter reads")
    kb.add_argument("--explain", metavar="NAME", help="explain a check (code or name), an option key or a relation id")
    target = p.add_argument_group("target")
    target.add_argument("--release", help=f"{RELEASES[0]} (default) or {' or '.join(RELEASES[1:])}")
    target.add_argument("--product", help=f"{', '.join(PRODUCT_IDS)} (default: none)")
    target.add_argument("--scenario", help=f"{' or '.join(SCENARIOS)} (default: from graph_run_mode when certain, training when "
                        "graph_run_mode is never set)")
    sel = p.add_argument_group("selection")
    sel.add_argument("--select", action="append", help="only these checks (codes, names or code prefixes; comma-separated)")
    sel.add_argument("--ignore", action="append", help="skip these checks")
    sel.add_argument("--files-from", action="append", metavar="FILE",
                     help="also check the paths listed in FILE, one per line (- reads the list from stdin; "
                     "relative to the current folder; blank lines skipped, no comments; NUL-separated if the list "
                     "holds a NUL byte); repeatable")
    sel.add_argument("--exclude", action="append", help="glob(s) of paths to skip (adds to the configured excludes)")
    sel.add_argument("--shard", metavar="K/N",
                     help="check only the K-th of N parts of the files found, cut by folder (the jobs of a CI "
                     "matrix; merge their reports with npu-audit merge)")
    sel.add_argument("--no-gitignore", action="store_true", help="do not honour .gitignore files")
    sel.add_argument("--isolated", action="store_true", help="ignore [tool.npu-audit] in pyproject.toml files")
    sel.add_argument("--max-file-size", type=int, metavar="BYTES", help="skip (and report) larger files")
    fix = p.add_argument_group("fixes")
    fix.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    fix.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff: also apply unsafe fixes")
    fix.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
    perf = p.add_argument_group("performance")
    perf.add_argument("--jobs", "-j", type=int, default=0, help="worker processes (default 0: one per core)")
    perf.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    perf.add_argument("--cache-dir", help="cache folder (default: .npu-audit-cache or $NPU_AUDIT_CACHE_DIR)")
    perf.add_argument("--timings", action="store_true",
                      help="print to stderr where the run's time went: its serial steps, each phase's worker "
                      "processes, and the idle tail (the time cores wait for the last worker)")
    return p


def main(argv: Optional[list[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["lsp"]:
        from npu_audit.lsp import main as lsp_main

        return lsp_main(argv[1:])
    if argv[:1] == ["merge"]:
        from npu_audit.merge import main as merge_main

        return merge_main(argv[1:])
    started = (time.monotonic(), time.process_time())
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = _run(args, parser, started)
    except OutputError as exc:
        print(f"npu-audit: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("npu-audit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return EXIT_OK
    if args.exit_zero and code == EXIT_FINDINGS:
        return EXIT_OK
    return code


def _run(args, parser, started: tuple[float, float]) -> int:
    from npu_audit.checks import all_rules
    from npu_audit.knowledge.loader import KnowledgeBaseError, load
    from npu_audit.settings import (
        Settings,
        SettingsError,
        SettingsResolver,
        validate_product,
        validate_release,
        validate_scenario,
        validate_selectors,
    )

    try:
        kb = load()
    except KnowledgeBaseError as exc:
        print(f"npu-audit: the knowledge base is broken: {exc}", file=sys.stderr)
        return EXIT_ERROR
    _note_cache_refusals()
    try:
        overrides: dict = {}
        if args.release:
            overrides["release"] = validate_release(args.release)
        if args.product:
            overrides["product"] = validate_product(args.product, kb)
        if args.scenario:
            overrides["scenario"] = validate_scenario(args.scenario)
        if args.select:
            overrides["select"] = validate_selectors(_csv(args.select), "--select", all_rules())
        if args.ignore:
            overrides["ignore"] = validate_selectors(_csv(args.ignore), "--ignore", all_rules())
        if args.no_gitignore:
            overrides["respect_gitignore"] = False
        if args.max_file_size is not None:
            if args.max_file_size <= 0:
                raise SettingsError("--max-file-size must be a positive number of bytes")
            overrides["max_bytes"] = args.max_file_size
        base = Settings()
    except SettingsError as exc:
        _error_lines(exc)
        return EXIT_ERROR

    release = overrides.get("release", "current")
    if args.list_rules or args.explain:
        return _knowledge(args, kb, release)
    if args.files_from:
        listed = _files_from(args)
        if listed is None:
            return EXIT_ERROR
        args.paths = list(args.paths) + listed
    elif not args.paths and args.stdin_filename is not None:
        args.paths = [STDIN]  # as ruff: --stdin-filename alone reads stdin
    if not args.paths and not args.files_from:
        args.paths = [os.curdir]  # as ruff: no path checks the working directory
    if args.fix and args.diff:
        print("npu-audit: error: --fix and --diff exclude each other (--diff changes nothing)", file=sys.stderr)
        return EXIT_ERROR
    if args.show_config and args.format not in ("text", "json"):
        print("npu-audit: error: --show-config prints text or json", file=sys.stderr)
        return EXIT_ERROR
    problem = _usage_problem(args)
    if problem:
        print(f"npu-audit: error: {problem}", file=sys.stderr)
        return EXIT_ERROR

    from npu_audit.pipeline import RunOptions, run

    clock = None
    if args.timings:
        from npu_audit.timings import RunTimings

        clock = RunTimings(*started)
    resolver = SettingsResolver(base, overrides, kb, args.isolated, all_rules())
    progress = _progress_bar(args)
    cache_dir = None
    if not args.no_cache:
        from npu_audit.cache import default_cache_dir

        cache_dir = args.cache_dir or default_cache_dir()
    options = RunOptions(jobs=max(0, args.jobs), cache_dir=cache_dir, want_configs=args.show_config, progress=progress,
                         isolated=args.isolated, extra_exclude=_csv(args.exclude), resolver=resolver, timings=clock,
                         shard=_shard(args.shard) if args.shard is not None else None)
    try:
        if args.paths == [STDIN]:
            report = _run_stdin(args, base, overrides, resolver)
            if clock is not None:
                clock.mark("the script read from stdin, analysed")
        else:
            report = run(args.paths, base, overrides, options, kb)
    except SettingsError as exc:
        _clear_progress(progress)
        _warn(resolver)
        _error_lines(exc)
        return EXIT_ERROR
    _clear_progress(progress)
    _warn(resolver)
    _note_cache_refusals()

    if args.show_config:
        code = _show_config(args, report, kb, overrides)
    elif args.fix or args.diff:
        code = _fix(args, report, base, overrides, options, kb)
    else:
        code = _emit_report(args, report)
    if clock is not None:
        clock.mark("fixes and report" if args.fix or args.diff else "report")
        clock.finish()
        print(clock.render(), file=sys.stderr)
    return code


def _files_from(args) -> list[str] | None:
    """The paths of the --files-from lists (:func:`npu_audit.discover.paths.paths_from_list`), added to the
    command line's and then treated exactly as they are (discovery, exclusion, settings, diagnostics of
    missing paths); None, after saying why, when a list cannot be used."""
    from npu_audit.discover.paths import paths_from_list

    if args.files_from.count(STDIN) > 1:
        print("npu-audit: error: --files-from - reads the list from stdin, which can be read once; "
              "give - once (put the other lists in files)", file=sys.stderr)
        return None
    if STDIN in args.files_from and STDIN in args.paths:
        print("npu-audit: error: --files-from - and the path - both read stdin; give the script's path, "
              "or the list in a file", file=sys.stderr)
        return None
    listed: list[str] = []
    for source in args.files_from:
        try:
            if source == STDIN:
                data = sys.stdin.buffer.read()
            else:
                with open(source, "rb") as stream:
                    data = stream.read()
        except OSError as exc:
            reason = exc.strerror or str(exc)
            print(f"npu-audit: error: --files-from {source}: cannot read the list of paths ({reason}); give a "
                  "readable file with one path per line, or - to read the list from stdin", file=sys.stderr)
            return None
        # "-" in a list is a file of that name, not stdin
        listed.extend(os.path.join(os.curdir, p) if p == STDIN else p for p in paths_from_list(data))
    return listed


def _usage_problem(args) -> str | None:
    """What is wrong with a checking command line (after the knowledge-base commands), or None."""
    if args.shard is not None:
        try:
            _shard(args.shard)
        except ValueError as exc:
            return str(exc)
        if STDIN in args.paths:
            return "--shard cuts the files found into parts; a script read from stdin (-) is one file"
    if STDIN in args.paths:
        if args.paths != [STDIN]:
            return "- (read a script from stdin) cannot be combined with other paths"
        if args.fix or args.diff:
            return "--fix and --diff do not read stdin (-); give the file's path instead"
    elif args.stdin_filename is not None:
        return "--stdin-filename names the script read from stdin: give - as the path"
    if args.jobs < 0:
        return f"--jobs {args.jobs}: give a number of worker processes, or 0 for one per core (the default)"
    from npu_audit.settings import glob_problem

    for pattern in _csv(args.exclude):
        wrong = glob_problem(pattern)
        if wrong:
            return f"--exclude {wrong}; write a pattern as in a .gitignore, e.g. --exclude 'third_party/'"
    if args.statistics and args.show_config:
        return "--statistics counts findings; it does not combine with --show-config"
    if args.statistics and args.format not in STATISTICS_FORMATS:
        return f"--statistics works with --format {', '.join(STATISTICS_FORMATS)}, not {args.format}"
    if args.output_file and args.output_file != STDIN:
        target = args.output_file
        if os.path.isdir(target):
            return (f"-o {target}: is a folder; give the report file's name, e.g. "
                    f"-o {os.path.join(target, 'npu-audit.' + _extension(args))}")
        folder = os.path.dirname(target) or os.curdir
        if not os.path.isdir(folder):
            what = "is not a folder" if os.path.exists(folder) else "does not exist (create it first)"
            return f"-o {target}: the folder {folder} {what}"
    return None


def _shard(text: str) -> tuple[int, int]:
    from npu_audit.discover.shards import parse_shard

    return parse_shard(text)


def _extension(args) -> str:
    return {"json": "json", "lsp": "json", "sarif": "sarif"}.get(args.format, "txt")


def _run_stdin(args, base, overrides, resolver):
    """The report for one script read from stdin, shown as --stdin-filename (or -), with the
    settings of that path's project (or of the working directory's)."""
    from npu_audit.findings import RunReport
    from npu_audit.pipeline import Job, _roots, analyze_file
    from npu_audit.settings import SettingsError

    data = sys.stdin.buffer.read()
    name = args.stdin_filename or STDIN
    settings = resolver.for_file(name)
    if resolver.errors:
        raise SettingsError("\n".join(resolver.errors))
    job = Job(file=name, display=name, roots=_roots([args.stdin_filename or os.curdir]), settings=settings,
              want_configs=args.show_config, source_bytes=data)
    return RunReport(files=[analyze_file(job)], settings={"release": overrides.get("release", base.release),
                                                          "product": overrides.get("product", base.product),
                                                          "scenario": overrides.get("scenario", base.scenario)})


def _error_lines(exc) -> None:
    for line in str(exc).splitlines() or [""]:
        print(f"npu-audit: {line}", file=sys.stderr)


def _note_cache_refusals() -> None:
    """Say once why this run caches nothing in the user's cache folder (a key file that cannot be trusted),
    and what the result cache has to say (refused or turned off, entries it did not trust). None of it
    changes the exit code: a run without a cache finds the same."""
    from npu_audit import user_cache

    for note in user_cache.refusals():
        print(f"npu-audit: warning: {note}", file=sys.stderr)
    if "npu_audit.cache" in sys.modules:  # (imported only by a run that used a result cache)
        for note in sys.modules["npu_audit.cache"].notes():
            print(f"npu-audit: warning: {note}", file=sys.stderr)


def _warn(resolver) -> None:
    for warning in resolver.warnings:
        print(f"npu-audit: warning: {warning}", file=sys.stderr)


def _color(args, stream) -> bool:
    if args.color == "always":
        return True
    if args.color == "never" or os.environ.get("NO_COLOR") or (args.output_file and args.output_file != STDIN):
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def _emit(args, text: str) -> None:
    if args.output_file and args.output_file != STDIN:
        try:
            write_report(args.output_file, text.encode("utf-8"))
        except OSError as exc:
            raise OutputError(f"cannot write the report to {args.output_file}: {exc.strerror or exc}") from exc
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def write_report(path: str, data: bytes) -> None:
    """Write a report file atomically (:func:`npu_audit.fix.write.write_report`)."""
    from npu_audit.fix.write import write_report as write

    write(path, data)


def _emit_report(args, report) -> int:
    from npu_audit.checks import all_rules
    from npu_audit.render import render

    text = render(report, args.format, rules=all_rules(), color=_color(args, sys.stdout),
                  statistics=args.statistics)
    _emit(args, text)
    return report.exit_code()


def _show_config(args, report, kb, overrides) -> int:
    from npu_audit import showconfig

    configs = [c for r in report.files for c in r.configs]
    problems = [f for r in report.files for f in r.findings if f.name in ("syntax-error", "unreadable-file", "internal-error")]
    if args.format == "json":
        _emit(args, showconfig.render_json(configs))
    else:
        defaults = None
        if overrides.get("product") or overrides.get("scenario"):
            defaults = showconfig.documented_defaults(kb, overrides.get("release", "current"), overrides.get("product"),
                                                      overrides.get("scenario"))
        _emit(args, showconfig.render_text(configs, defaults))
    for f in problems:
        hint = f" (hint: {f.hint})" if f.hint else ""
        print(f"{f.path}:{f.line}:{f.column}: {f.code} [{f.name}] {f.message}{hint}", file=sys.stderr)
    if any(r.internal_error for r in report.files):
        return EXIT_ERROR
    return EXIT_FINDINGS if problems else EXIT_OK  # a path that could not be read or parsed


def _knowledge(args, kb, release) -> int:
    import json

    from npu_audit import explain
    from npu_audit.checks import all_rules

    rules = all_rules()
    if args.list_rules:
        if args.format == "json":
            _emit(args, json.dumps(explain.list_rules_json(kb, rules, release), indent=2, ensure_ascii=False) + "\n")
        else:
            _emit(args, explain.list_rules_text(kb, rules, release))
        return EXIT_OK
    kind, subject = explain.find_subject(kb, rules, args.explain)
    if kind is None:
        hint = f" Did you mean: {', '.join(subject)}?" if subject else ""
        print(f"npu-audit: nothing called {args.explain!r}: not a check code/name, an option key nor a relation id.{hint}",
              file=sys.stderr)
        return EXIT_ERROR
    if args.format == "json":
        if kind == "rule":
            data = explain.rule_summary(subject)
        elif kind == "option":
            data = explain.option_summary(kb, kb.options[subject], release)
        elif kind == "tf2":
            data = explain.tf2_option_summary(kb, subject, release)
        elif kind == "relation":
            data = explain.relation_summary(subject)
        else:
            u = kb.unread_keys[subject]
            data = {"key": u.key, "read_by_adapter": False, "reason": u.reason, "suggestion": u.suggestion}
        _emit(args, json.dumps({"version": 1, "kind": kind, **data}, indent=2, ensure_ascii=False, default=str) + "\n")
        return EXIT_OK
    if kind == "rule":
        _emit(args, explain.explain_rule(subject))
    elif kind == "option":
        _emit(args, explain.explain_option(kb, subject, release))
    elif kind == "tf2":
        _emit(args, explain.explain_tf2_option(kb, subject, release))
    elif kind == "relation":
        _emit(args, explain.explain_relation(subject))
    else:
        u = kb.unread_keys[subject]
        text = f"{u.key}\n\n  Has no effect, the adapter does not read it: {u.reason}\n"
        if u.suggestion:
            text += f"  Use instead: {u.suggestion}\n"
        _emit(args, text)
    return EXIT_OK


def _progress_bar(args):
    stream = sys.stderr
    if args.no_progress or args.format not in ("text", "concise") or not (hasattr(stream, "isatty") and stream.isatty()):
        return None
    import time

    state = {"last": 0.0, "shown": False}

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if total < 200 or (now - state["last"] < 0.1 and done != total):
            return
        state["last"] = now
        width = 30
        filled = int(width * done / total) if total else width
        stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} files")
        stream.flush()
        state["shown"] = True

    progress.state = state  # type: ignore[attr-defined]
    return progress


def _clear_progress(progress) -> None:
    if progress is not None and progress.state["shown"]:  # type: ignore[attr-defined]
        sys.stderr.write("\r" + " " * 60 + "\r")
        sys.stderr.flush()


# -- --fix and --diff: the fix engine (npu_audit.fix) does the work; printing and exit codes here


def _fix(args, report, base, overrides, options, kb) -> int:
    """Fix (or diff) the files that have applicable fixes; print what happened; the exit code."""
    from pathlib import Path

    from npu_audit.checks import all_rules
    from npu_audit.findings import RunReport
    from npu_audit.fix import applicable, fix_files
    from npu_audit.fix.atomic import WriteRefused, check_new_file, create_new, replace_file
    from npu_audit.fix.diff import diff_label, new_file_diff, unified_diff
    from npu_audit.pipeline import Job, _roots, settings_for
    from npu_audit.render import render

    unsafe = bool(args.unsafe_fixes)
    roots = _roots(args.paths)
    settings_cache: dict = {}
    todo = [(i, fr) for i, fr in enumerate(report.files) if any(applicable(f, unsafe) for f in fr.findings)]
    items = [(Job(file=fr.path, display=fr.path, roots=roots,
                  settings=settings_for(Path(fr.path), base, overrides, settings_cache, kb, args.isolated)), fr)
             for _, fr in todo]
    progress = _fix_progress(args)
    fixes = fix_files(items, unsafe, jobs=max(0, args.jobs), progress=progress)
    _clear_progress(progress)

    files = list(report.files)
    write_roots = list(args.paths)  # never write through a symlink that leads outside them
    folders = [p if os.path.isdir(p) else os.path.dirname(p) or os.curdir for p in args.paths]  # new files
    notes: list[str] = []
    failed = False
    diff = bytearray()
    done = []  # the fixes that took effect (written, or shown in the diff)
    for (i, original), fx in zip(todo, fixes):
        keep = fx.remaining if fx.remaining is not None else original
        for problem in fx.problems:
            notes.append(f"{fx.display}: not fixed: {problem}")
            failed = True
        for r in fx.rejected:
            f = r.finding
            detail = f" ({r.detail})" if r.detail else ""
            notes.append(f"{fx.display}:{f.line}:{f.column}: {f.code} [{f.name}] fix not applied: it {r.reason}{detail}")
        if not fx.changed and not fx.new_files:
            files[i] = keep
            continue
        if args.diff:
            diff += unified_diff(fx.original, fx.fixed, diff_label(fx.path))
            for path, content in fx.new_files:
                diff += new_file_diff(content.encode("utf-8"), diff_label(path))
            done.append(fx)
        else:
            try:
                for path, _content in fx.new_files:
                    check_new_file(path, folders)
                if fx.changed:
                    replace_file(fx.path, fx.fixed, expected=fx.original, roots=write_roots)
                for path, content in fx.new_files:
                    if not create_new(path, content.encode("utf-8"), roots=folders):
                        notes.append(f"{os.path.relpath(path)} exists; not overwritten (write it yourself)")
                done.append(fx)
            except (WriteRefused, OSError) as exc:
                reason = str(exc) if isinstance(exc, WriteRefused) else f"could not write it: {exc.strerror or exc}"
                notes.append(f"{fx.display}: not fixed: {reason}")
                keep = original  # unchanged on disk: its findings stand
                failed = True
        files[i] = keep
    fixed = sum(len(fx.fixed_findings) for fx in done)
    changed = sum(1 for fx in done if fx.changed)
    final = RunReport(files=files, settings=report.settings)
    if args.diff:
        _emit_bytes(args, bytes(diff))
        print(f"Would fix {fixed} finding{'s' if fixed != 1 else ''} in {changed} file{'s' if changed != 1 else ''}.",
              file=sys.stderr)
    else:
        _emit(args, render(final, args.format, rules=all_rules(), color=_color(args, sys.stdout),
                           statistics=args.statistics))
        if args.format in ("text", "concise"):
            for fx in done:
                for f in fx.applied:
                    print(f"fixed {fx.display}:{f.line}:{f.column}: {f.code} [{f.name}] {f.fix.message}", file=sys.stderr)
            print(f"Fixed {fixed} finding{'s' if fixed != 1 else ''} in {changed} file{'s' if changed != 1 else ''}.",
                  file=sys.stderr)
    for note in notes:
        print(f"npu-audit: {note}", file=sys.stderr)
    code = final.exit_code()
    if args.diff and diff:
        code = max(code, EXIT_FINDINGS)
    return EXIT_ERROR if failed else code


def _emit_bytes(args, data: bytes) -> None:
    """Write bytes (a diff in the files' own encodings) to -o FILE or stdout, unchanged."""
    if args.output_file and args.output_file != STDIN:
        try:
            write_report(args.output_file, data)
        except OSError as exc:
            raise OutputError(f"cannot write the diff to {args.output_file}: {exc.strerror or exc}") from exc
        return
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(data.decode("utf-8", "replace"))
    else:
        buffer.write(data)
        buffer.flush()


def _fix_progress(args):
    """A progress line while files are being fixed (a terminal, text output)."""
    stream = sys.stderr
    if args.no_progress or args.format not in ("text", "concise") or not (hasattr(stream, "isatty") and stream.isatty()):
        return None
    state = {"shown": False}

    def progress(done: int, total: int) -> None:
        stream.write(f"\rfixing: {done}/{total} files")
        stream.flush()
        state["shown"] = True

    progress.state = state  # type: ignore[attr-defined]
    return progress
