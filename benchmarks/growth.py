"""How the cost of a cold run grows with the tree: 1/8, 1/4, 1/2 and the whole of it. Prints figures; never fails.

    python benchmarks/growth.py TREE [--runs 3] [--jobs N] [--limit UNITS] [--json figures.json]

The parts are made of whole model folders, so that the helper modules of a model stay with its scripts (a part
cut through a model folder would read helpers outside it and count their cost against too few files):

* a file's model folder is the first folder on its path below TREE whose name holds ``_for_`` (the
  ModelZoo's ``<Model>_for_TensorFlow``, ``_for_ACL``, ...); for a file below no such folder, its folder
  ``--depth`` levels below TREE (default 4: ``<framework>/<built-in|contrib>/<domain>/<model>``); a file
  less deep than that is a unit of its own. A unit inside another unit belongs to the outer one.
* the units are ordered by the sha256 of their path (a fixed shuffle: every part mixes domains and
  frameworks, and the same tree gives the same parts on every machine), and a part is the shortest prefix
  of that order holding at least its share of the files: 1/8 is inside 1/4, inside 1/2, inside the whole.
  ``--limit N`` keeps the first N units of the order as the tree (to try the script on a small tree).

Each part is checked as a user would, from TREE: ``npu-audit --no-cache --format json --files-from LIST``
(LIST: the part's units), whole processes, workers included. Per part: files and files parsed (npu-audit's
summary), wall seconds, CPU seconds (user + system), the peak resident memory of the largest process, and
CPU seconds and wall seconds per 1,000 files (flat when the cost per file does not grow with the tree),
medians of ``--runs`` runs. The machine's CPU model is printed with the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_real_tree import byte_compile, cpu_seconds, exit_code, machine, npu_audit, run_timed  # noqa: E402

SHARES = ((1, 8), (1, 4), (1, 2), (1, 1))


def model_units(tree: Path, depth: int = 4, marker: str = "_for_") -> dict[str, int]:
    """Each unit (a path relative to ``tree``, POSIX form) and the number of ``*.py`` files below it."""
    units: dict[str, int] = {}
    for path in tree.rglob("*.py"):
        parts = path.relative_to(tree).parts
        folders = parts[:-1]
        cut = next((i + 1 for i, name in enumerate(folders) if marker in name), None)
        if cut is None and len(folders) >= depth:
            cut = depth
        key = "/".join(parts[:cut]) if cut is not None else "/".join(parts)
        units[key] = units.get(key, 0) + 1
    outer = sorted(units)
    merged: dict[str, int] = {}
    for key in outer:  # sorted: a folder comes before the units inside it
        owner = next((k for k in _ancestors(key) if k in merged), None)
        if owner is not None:
            merged[owner] += units[key]
        else:
            merged[key] = units[key]
    return merged


def _ancestors(key: str) -> list[str]:
    parts = key.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def ordered(units: dict[str, int]) -> list[str]:
    return sorted(units, key=lambda key: (hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest(), key))


def parts(order: list[str], units: dict[str, int]) -> list[tuple[str, list[str]]]:
    """(label, units) of each share: the shortest prefix of ``order`` holding at least that share of the files."""
    total = sum(units[key] for key in order)
    out = []
    for num, den in SHARES:
        taken, count = [], 0
        for key in order:
            if count * den >= total * num and taken:
                break
            taken.append(key)
            count += units[key]
        out.append((f"{num}/{den}" if den > 1 else "whole", taken))
    return out


def measure(tree: Path, units: list[str], runs: int, jobs: int) -> dict:
    walls, cpus, peaks, summary = [], [], [], {}
    with tempfile.TemporaryDirectory() as work:
        listing = os.path.join(work, "units.txt")
        with open(listing, "wb") as handle:
            handle.write(b"\0".join(os.fsencode(unit) for unit in units) + b"\0")  # NUL: any name
        for _ in range(runs):
            report = os.path.join(work, "report.json")
            extra = ["--jobs", str(jobs)] if jobs else []
            wall, peak, done = run_timed(npu_audit("--no-cache", "--isolated", "--format", "json", "-o", report,
                                                   "--no-progress", "--files-from", listing, *extra), cwd=str(tree))
            if exit_code(done) not in (0, 1):
                raise SystemExit(f"npu-audit failed (exit {exit_code(done)}): {done.stderr[-2000:]}")
            with open(report, encoding="utf-8") as handle:
                summary = json.load(handle)["summary"]
            walls.append(wall)
            cpus.append(cpu_seconds(done))
            peaks.append(peak)
    files = summary.get("files", 0)
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    return {"units": len(units), "files": files, "files_parsed": summary.get("files_parsed", 0), "wall_s": wall,
            "cpu_s": cpu, "peak_mb": max(peaks), "cpu_s_per_1000": 1000 * cpu / files if files else float("nan"),
            "wall_s_per_1000": 1000 * wall / files if files else float("nan")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--runs", type=int, default=1, help="runs per part (the median is shown)")
    parser.add_argument("--jobs", type=int, default=0, help="--jobs for npu-audit (0: all cores)")
    parser.add_argument("--depth", type=int, default=4, help="depth of a model folder without _for_ in its name")
    parser.add_argument("--limit", type=int, help="only the first LIMIT units of the order (a small tree)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    tree = args.tree.resolve()
    print(f"machine: {machine()}")
    byte_compile()
    units = model_units(tree, args.depth)
    order = ordered(units)
    if args.limit:
        order = order[:args.limit]
    print(f"tree: {tree}: {sum(units[k] for k in order)} .py files in {len(order)} units (model folders)")
    figures: dict = {"machine": machine(), "tree": str(tree), "rows": []}
    header = (f"{'part':>6} {'units':>6} {'files':>7} {'parsed':>7} {'wall s':>8} {'CPU-s':>8} {'peak MB':>8} "
              f"{'CPU-s/1k':>9} {'wall s/1k':>9}")
    print(header)
    for label, taken in parts(order, units):
        row = {"part": label, **measure(tree, taken, max(1, args.runs), args.jobs)}
        figures["rows"].append(row)
        print(f"{label:>6} {row['units']:>6} {row['files']:>7} {row['files_parsed']:>7} {row['wall_s']:>8.2f} "
              f"{row['cpu_s']:>8.2f} {row['peak_mb']:>8.0f} {row['cpu_s_per_1000']:>9.2f} {row['wall_s_per_1000']:>9.2f}",
              flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
