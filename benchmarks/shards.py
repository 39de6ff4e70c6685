"""A cold tree checked as the jobs of a CI matrix (``--shard K/N``), one job after the other. Prints figures; never fails on time.

    python benchmarks/shards.py TREE [--counts 2,4,8] [--round-robin 4] [--jobs N] [--json figures.json]

For each N of ``--counts``, the N jobs ``npu-audit --shard K/N --no-cache --isolated --format json .`` run from
TREE, one after the other as whole processes (each as one job of a matrix on a machine of its own would), then
``npu-audit merge`` of their reports. Per N: each job's wall seconds (the slowest job is when the matrix is
done), CPU seconds of all jobs together, the peak memory of the largest process, files parsed, and whether the
merged diagnostics equal those of one run over the whole tree (``npu-audit --no-cache --format json .``, run
first, N = 1 in the table). ``--round-robin N`` adds the same for a split by file (``split -n r/K/N`` of the
files that one run checked, in path order, each part given with ``--files-from``), for comparison. The machine's CPU model is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_real_tree import byte_compile, cpu_seconds, exit_code, machine, npu_audit, run_timed  # noqa: E402


def _job(tree: Path, report: str, selection: list[str], jobs: int) -> dict:
    extra = ["--jobs", str(jobs)] if jobs else []
    wall, peak, done = run_timed(npu_audit("--no-cache", "--isolated", "--exit-zero", "--no-progress", "--format",
                                           "json", "-o", report, *extra, *selection), cwd=str(tree))
    if exit_code(done) != 0:
        raise SystemExit(f"npu-audit failed (exit {exit_code(done)}): {done.stderr[-2000:]}")
    with open(report, encoding="utf-8") as handle:
        summary = json.load(handle)["summary"]
    return {"wall_s": wall, "cpu_s": cpu_seconds(done), "peak_mb": peak, "files": summary["files"],
            "files_parsed": summary["files_parsed"]}


def _diagnostics(report: str) -> list:
    with open(report, encoding="utf-8") as handle:
        return json.load(handle)["diagnostics"]


def split_by_file(whole_report: str, count: int, work: str) -> list[list[str]]:
    """``--files-from`` arguments of the K-th of ``count`` round-robin parts of the files one run over the tree
    checked (the ``files`` of its report, in path order)."""
    with open(whole_report, encoding="utf-8") as handle:
        files = sorted(entry["path"] for entry in json.load(handle)["files"])
    out = []
    for k in range(count):
        listing = os.path.join(work, f"round-robin-{k + 1}.txt")
        with open(listing, "wb") as handle:
            handle.write(b"".join(os.fsencode(name) + b"\0" for name in files[k::count]))
        out.append(["--files-from", listing])
    return out


def measure(tree: Path, selections: list[list[str]], jobs: int, single: list, work: str, label: str,
            name: str) -> dict:
    """The figures of one split (``label`` in the table); its reports are ``work/name-K.json``."""
    reports, rows = [], []
    stem = os.path.join(work, name)
    for k, selection in enumerate(selections):
        report = f"{stem}-{k + 1}.json"
        rows.append(_job(tree, report, selection, jobs))
        reports.append(report)
    merged = f"{stem}-merged.json"
    done = subprocess.run(npu_audit("merge", *reports, "-o", merged), cwd=str(tree), capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"npu-audit merge failed (exit {done.returncode}): {done.stderr[-2000:]}")
    mine = _diagnostics(merged)
    walls = [row["wall_s"] for row in rows]
    return {"split": label, "jobs": len(rows), "wall_s_max": max(walls), "wall_s_median": statistics.median(walls),
            "wall_s_min": min(walls), "cpu_s_total": sum(row["cpu_s"] for row in rows),
            "peak_mb": max(row["peak_mb"] for row in rows), "files": sum(row["files"] for row in rows),
            "files_parsed": sum(row["files_parsed"] for row in rows), "diagnostics": len(mine),
            "extra": sum(1 for d in mine if d not in single), "missing": sum(1 for d in single if d not in mine)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--counts", default="2,4,8", help="numbers of jobs, comma-separated")
    parser.add_argument("--round-robin", type=int, default=0, help="also a split by file into this many jobs")
    parser.add_argument("--jobs", type=int, default=0, help="--jobs for npu-audit (0: all cores)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    tree = args.tree.resolve()
    print(f"machine: {machine()}; tree: {tree}")
    byte_compile()
    header = (f"{'split':>14} {'jobs':>4} {'slowest s':>9} {'median s':>8} {'fastest s':>9} {'CPU-s all':>9} "
              f"{'peak MB':>7} {'parsed':>6} {'findings':>8} {'extra':>5} {'missing':>7}")
    rows = []
    with tempfile.TemporaryDirectory() as work:
        whole = os.path.join(work, "whole.json")
        one = _job(tree, whole, ["."], args.jobs)
        single = _diagnostics(whole)
        rows.append({"split": "one run", "jobs": 1, "wall_s_max": one["wall_s"], "wall_s_median": one["wall_s"],
                     "wall_s_min": one["wall_s"], "cpu_s_total": one["cpu_s"], "peak_mb": one["peak_mb"],
                     "files": one["files"], "files_parsed": one["files_parsed"], "diagnostics": len(single),
                     "extra": 0, "missing": 0})
        print(header)
        _print(rows[-1])
        for count in [int(n) for n in args.counts.split(",") if n.strip()]:
            rows.append(measure(tree, [["--shard", f"{k}/{count}", "."] for k in range(1, count + 1)], args.jobs,
                                single, work, f"--shard K/{count}", f"shard-of-{count}"))
            _print(rows[-1])
        if args.round_robin:
            rows.append(measure(tree, split_by_file(whole, args.round_robin, work), args.jobs, single, work,
                                f"by file /{args.round_robin}", "by-file"))
            _print(rows[-1])
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine(), "rows": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


def _print(row: dict) -> None:
    print(f"{row['split']:>14} {row['jobs']:>4} {row['wall_s_max']:>9.2f} {row['wall_s_median']:>8.2f} "
          f"{row['wall_s_min']:>9.2f} {row['cpu_s_total']:>9.2f} {row['peak_mb']:>7.0f} {row['files_parsed']:>6} "
          f"{row['diagnostics']:>8} {row['extra']:>5} {row['missing']:>7}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
