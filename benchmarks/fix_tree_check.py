"""Run ``npu-audit --fix`` over a copy of a tree and check what it did.

    python benchmarks/fix_tree_check.py SOURCE_TREE [--work DIR] [--jobs N] [--unsafe] [--json OUT]

SOURCE_TREE is never touched: it is copied to --work (default: a new temporary folder), and the copy
is fixed twice with the command line (``--fix --no-cache``). Printed figures:

* files changed by the first ``--fix``; findings it says it fixed, against the "fixable" count of the
  check before;
* effective-config changes: files whose effective NPU configuration (``--show-config``, compared as
  :mod:`npu_audit.fix.effective` does: documented equivalences and field/type spellings of one value
  are one value) differs after fixing — every file of the tree, so helper modules changed under a
  script count too; with safe fixes only this must be 0;
* new findings after fixing: (path, code, option) present after but not before (must be 0);
* parse failures: changed files that CPython or libcst no longer parse;
* second-run changes: files the second ``--fix`` still changes (must be 0: fixes are idempotent).

Exit status 0 when the must-be-0 figures are 0, else 1.

The run takes a while (three analyses and two fixes of the tree), so it first copies the npu_audit
package and rules/ to a temporary folder and runs from that copy: edits made to the working tree
meanwhile cannot make the analyses before and after fixing disagree.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                path = Path(dirpath) / name
                out[str(path.relative_to(root))] = path.read_bytes()
    return out


def analyse(root: Path, jobs: int):
    """Findings and effective configs of every file below ``root`` (in-process, no cache)."""
    from npu_audit.knowledge.loader import load
    from npu_audit.pipeline import RunOptions, run
    from npu_audit.settings import Settings

    kb = load()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        report = run(["."], Settings(), {}, RunOptions(jobs=jobs, want_configs=True), kb)
    finally:
        os.chdir(cwd)
    return report


def norm(path: str) -> str:
    return os.path.normpath(path)


def fix(root: Path, jobs: int, unsafe: bool) -> tuple[subprocess.CompletedProcess, float]:
    cmd = [sys.executable, "-m", "npu_audit", "--fix", "--no-cache", "--no-progress", "--jobs", str(jobs), "."]
    if unsafe:
        cmd.insert(3, "--unsafe-fixes")
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))
    return proc, time.monotonic() - start


def parses(data: bytes) -> tuple[bool, bool]:
    import libcst

    from npu_audit.source import SourceText, decode_source

    source = decode_source(data, "x")
    if not isinstance(source, SourceText):
        return False, False
    try:
        ast.parse(source.text)
        cpython = True
    except SyntaxError:
        cpython = False
    try:
        libcst.parse_module(source.text)
        cst = True
    except Exception:  # noqa: BLE001
        cst = False
    return cpython, cst


def pin_code() -> None:
    """Re-run this script from a copy of the package and its rules (once)."""
    if os.environ.get("NPU_AUDIT_FIX_CHECK_PINNED"):
        return
    repo = Path(__file__).resolve().parent.parent
    code = Path(tempfile.mkdtemp(prefix="npu-audit-code-"))
    shutil.copytree(repo / "npu_audit", code / "npu_audit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(repo / "rules", code / "rules")
    env = dict(os.environ, NPU_AUDIT_FIX_CHECK_PINNED="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH")])))
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]], env)


def main(argv=None) -> int:
    if argv is None:
        pin_code()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path)
    parser.add_argument("--work", type=Path, help="where to copy the tree (must not exist)")
    parser.add_argument("--jobs", type=int, default=0)
    parser.add_argument("--unsafe", action="store_true", help="also apply unsafe fixes (config changes then expected)")
    parser.add_argument("--json", type=Path, help="write the figures (and the offending files) here")
    args = parser.parse_args(argv)

    from npu_audit.fix.effective import signature
    from npu_audit.knowledge.loader import load

    kb = load()
    work = args.work or Path(tempfile.mkdtemp(prefix="npu-audit-fix-check-")) / "tree"
    shutil.copytree(args.source, work, symlinks=True)
    original = snapshot(work)

    t0 = time.monotonic()
    before = analyse(work, args.jobs)
    t_before = time.monotonic() - t0
    fixable = sum(1 for f in before.findings if f.fix is not None and (f.fix.applicability == "safe" or args.unsafe))

    first, t_fix = fix(work, args.jobs, args.unsafe)
    after_fix = snapshot(work)
    changed = sorted(p for p, data in after_fix.items() if original.get(p) != data)
    said = [line for line in first.stderr.splitlines() if line.startswith("Fixed ")]
    refused = [line for line in first.stderr.splitlines() if "fix not applied" in line or "not fixed" in line]

    after = analyse(work, args.jobs)
    release = "current"
    configs_before = {norm(r.path): r.configs for r in before.files}
    configs_after = {norm(r.path): r.configs for r in after.files}
    config_changes = sorted(p for p in set(configs_before) | set(configs_after)
                            if signature(configs_before.get(p, []), kb, release)
                            != signature(configs_after.get(p, []), kb, release))

    def keys(report):
        return collections.Counter((norm(f.path), f.code, f.option) for f in report.findings)

    from npu_audit.fix.effective import describe_change

    config_changes = [f"{p}: {describe_change(configs_before.get(p, []), configs_after.get(p, []), kb, release)}"
                      for p in config_changes]
    new_findings = keys(after) - keys(before)
    parse_failures = []
    for p in changed:
        cpython, cst = parses(after_fix[p])
        was = parses(original[p])
        if (was[0] and not cpython) or (was[1] and not cst):
            parse_failures.append(p)

    second, t_fix2 = fix(work, args.jobs, args.unsafe)
    after_second = snapshot(work)
    second_changes = sorted(p for p, data in after_second.items() if after_fix.get(p) != data)

    figures = {
        "files": len(original),
        "findings_before": len(before.findings),
        "fixable_before": fixable,
        "first_fix_exit": first.returncode,
        "first_fix_says": said,
        "fixes_refused": len(refused),
        "files_changed": len(changed),
        "effective_config_changes": len(config_changes),
        "new_findings_after_fixing": sum(new_findings.values()),
        "findings_after": len(after.findings),
        "parse_failures": len(parse_failures),
        "second_run_changes": len(second_changes),
        "seconds": {"analysis": round(t_before, 1), "first_fix": round(t_fix, 1), "second_fix": round(t_fix2, 1)},
    }
    for key, value in figures.items():
        print(f"{key:28} {value}")
    for title, items in (("effective-config changes", config_changes), ("new findings", sorted(new_findings)),
                         ("parse failures", parse_failures), ("second-run changes", second_changes),
                         ("refused fixes", refused)):
        if items:
            print(f"\n{title}:")
            for item in items[:50]:
                print(f"  {item}")
    if args.json:
        figures["details"] = {"config_changes": config_changes, "new_findings": [list(k) for k in new_findings],
                              "parse_failures": parse_failures, "second_run_changes": second_changes,
                              "refused": refused, "changed": changed}
        args.json.write_text(json.dumps(figures, indent=2))
    print(f"\nthe fixed copy: {work}")
    bad = figures["new_findings_after_fixing"] or figures["parse_failures"] or figures["second_run_changes"]
    if not args.unsafe:
        bad = bad or figures["effective_config_changes"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
