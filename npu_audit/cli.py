"""Command line: a thin layer over npu_audit.pipeline, npu_audit.fix and npu_audit.render.

Exit codes: 0 nothing at warning level or above; 1 findings at warning level or above (after --fix:
what remains); 2 usage or configuration error, or npu-audit failed on a file.
Heavy modules are imported only when needed so that ``--version`` stays instant.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _csv(values: Optional[list[str]]) -> tuple[str, ...]:
    out: list[str] = []
    for v in values or ():
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return tuple(out)


def build_parser() -> argparse.ArgumentParser:
    from npu_audit import __version__

    p = argparse.ArgumentParser(
        prog="npu-audit",
        description="Check Ascend NPU session options in TensorFlow scripts without running them.",
        epilog="Exit codes: 0 clean, 1 findings at warning level or above, 2 usage/config error or internal error. "
        "`npu-audit lsp` starts the language server.",
    )
    p.add_argument("paths", nargs="*", help="files or folders to check (folders: *.py, recursively)")
    p.add_argument("--version", action="version", version=f"npu-audit {__version__}")
    out = p.add_argument_group("output")
    out.add_argument("--format", choices=("text", "json", "lsp", "sarif", "github"), default="text")
    out.add_argument("--show-config", action="store_true", help="print the effective NPU configs instead of findings")
    out.add_argument("--statistics", action="store_true", help="count findings per rule")
    out.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    out.add_argument("--no-progress", action="store_true", help="no progress bar on a terminal")
    out.add_argument("--output-file", "-o", help="write the report to this file instead of stdout")
    kb = p.add_argument_group("knowledge base")
    kb.add_argument("--list-rules", action="store_true", help="list checks and every option the adapter reads")
    kb.add_argument("--explain", metavar="NAME", help="explain a check (code or name) or an option key")
    target = p.add_argument_group("target")
    target.add_argument("--release", help="current (default) or legacy")
    target.add_argument("--product", help="atlas-training, atlas-inference, atlas-a2, atlas-a3 (default: none)")
    target.add_argument("--scenario", help="training or inference (default: from graph_run_mode when certain)")
    sel = p.add_argument_group("selection")
    sel.add_argument("--select", action="append", help="only these checks (codes, names or code prefixes; comma-separated)")
    sel.add_argument("--ignore", action="append", help="skip these checks")
    sel.add_argument("--exclude", action="append", help="glob(s) of paths to skip (adds to the configured excludes)")
    sel.add_argument("--no-gitignore", action="store_true", help="do not honour .gitignore files")
    sel.add_argument("--isolated", action="store_true", help="ignore [tool.npu-audit] in pyproject.toml files")
    sel.add_argument("--max-file-size", type=int, metavar="BYTES", help="skip (and report) larger files")
    fix = p.add_argument_group("fixes")
    fix.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    fix.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff: also apply unsafe fixes")
    fix.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
    perf = p.add_argument_group("performance")
    perf.add_argument("--jobs", "-j", type=int, default=0, help="worker processes (default: all cores)")
    perf.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    perf.add_argument("--cache-dir", help="cache folder (default: .npu-audit-cache or $NPU_AUDIT_CACHE_DIR)")
    return p


def main(argv: Optional[list[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["lsp"]:
        from npu_audit.lsp_server import main as lsp_main

        return lsp_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _run(args, parser)
    except KeyboardInterrupt:
        print("npu-audit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return EXIT_OK


def _run(args, parser) -> int:
    from npu_audit.knowledge.loader import KnowledgeBaseError, load
    from npu_audit.settings import (
        Settings,
        SettingsError,
        validate_product,
        validate_release,
        validate_scenario,
    )

    try:
        kb = load()
    except KnowledgeBaseError as exc:
        print(f"npu-audit: the knowledge base is broken: {exc}", file=sys.stderr)
        return EXIT_ERROR
    try:
        overrides = {}
        if args.release:
            overrides["release"] = validate_release(args.release)
        if args.product:
            overrides["product"] = validate_product(args.product, kb)
        if args.scenario:
            overrides["scenario"] = validate_scenario(args.scenario)
        if args.select:
            overrides["select"] = _csv(args.select)
        if args.ignore:
            overrides["ignore"] = _csv(args.ignore)
        if args.no_gitignore:
            overrides["respect_gitignore"] = False
        if args.max_file_size is not None:
            if args.max_file_size <= 0:
                raise SettingsError("--max-file-size must be a positive number of bytes")
            overrides["max_bytes"] = args.max_file_size
        base = Settings()
        _check_selectors(overrides.get("select", ()) + overrides.get("ignore", ()))
    except SettingsError as exc:
        print(f"npu-audit: {exc}", file=sys.stderr)
        return EXIT_ERROR

    release = overrides.get("release", "current")
    if args.list_rules or args.explain:
        return _knowledge(args, kb, release)
    if not args.paths:
        parser.print_usage(sys.stderr)
        print("npu-audit: error: give at least one file or folder (or --list-rules / --explain NAME)", file=sys.stderr)
        return EXIT_ERROR
    if args.fix and args.diff:
        print("npu-audit: error: --fix and --diff exclude each other (--diff changes nothing)", file=sys.stderr)
        return EXIT_ERROR
    if args.show_config and args.format not in ("text", "json"):
        print("npu-audit: error: --show-config prints text or json", file=sys.stderr)
        return EXIT_ERROR
    missing = [p for p in args.paths if not os.path.lexists(p)]
    if missing:
        for p in missing:
            print(f"npu-audit: error: {p}: no such file or directory", file=sys.stderr)
        return EXIT_ERROR

    from npu_audit.pipeline import RunOptions, run

    progress = _progress_bar(args)
    cache_dir = None
    if not args.no_cache and not args.fix and not args.diff:
        from npu_audit.cache import default_cache_dir

        cache_dir = args.cache_dir or default_cache_dir()
    options = RunOptions(jobs=max(0, args.jobs), cache_dir=cache_dir, want_configs=args.show_config, progress=progress,
                         isolated=args.isolated, extra_exclude=_csv(args.exclude))
    try:
        report = run(args.paths, base, overrides, options, kb)
    except SettingsError as exc:
        _clear_progress(progress)
        print(f"npu-audit: {exc}", file=sys.stderr)
        return EXIT_ERROR
    _clear_progress(progress)

    if args.show_config:
        return _show_config(args, report, kb, overrides)
    if args.fix or args.diff:
        from npu_audit.fix import apply_fixes

        return apply_fixes(report, args, base, overrides, options, kb, _emit)
    return _emit_report(args, report)


def _check_selectors(selectors) -> None:
    from npu_audit.checks import all_rules
    from npu_audit.settings import SettingsError

    rules = all_rules()
    for s in selectors:
        u = s.upper()
        if u == "ALL" or any(r.code == u or r.name == s or r.code.startswith(u) for r in rules):
            continue
        raise SettingsError(f"unknown check {s!r} in --select/--ignore (see npu-audit --list-rules)")


def _color(args, stream) -> bool:
    if args.color == "always":
        return True
    if args.color == "never" or os.environ.get("NO_COLOR") or args.output_file:
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def _emit(args, text: str) -> None:
    if args.output_file:
        from npu_audit.fix.atomic import write_atomic

        write_atomic(args.output_file, text.encode("utf-8"))
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


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
        print(f"{f.path}:{f.line}:{f.column}: {f.code} [{f.name}] {f.message}", file=sys.stderr)
    return EXIT_ERROR if any(r.internal_error for r in report.files) else EXIT_OK


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
        print(f"npu-audit: nothing called {args.explain!r}: not a check code/name nor an option key.{hint}", file=sys.stderr)
        return EXIT_ERROR
    if args.format == "json":
        if kind == "rule":
            data = explain.rule_summary(subject)
        elif kind == "option":
            data = explain.option_summary(kb, kb.options[subject], release)
        else:
            u = kb.unread_keys[subject]
            data = {"key": u.key, "read_by_adapter": False, "reason": u.reason, "suggestion": u.suggestion}
        _emit(args, json.dumps({"version": 1, "kind": kind, **data}, indent=2, ensure_ascii=False, default=str) + "\n")
        return EXIT_OK
    if kind == "rule":
        _emit(args, explain.explain_rule(subject))
    elif kind == "option":
        _emit(args, explain.explain_option(kb, subject, release))
    else:
        u = kb.unread_keys[subject]
        text = f"{u.key}\n\n  Not read by any adapter version: {u.reason}\n"
        if u.suggestion:
            text += f"  Use instead: {u.suggestion}\n"
        _emit(args, text)
    return EXIT_OK


def _progress_bar(args):
    stream = sys.stderr
    if args.no_progress or args.format != "text" or not (hasattr(stream, "isatty") and stream.isatty()):
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
