"""Precision of npu-audit on the triage sample, per severity and per check.

    python tests/triage/precision.py [--sample tests/triage/sample.tsv] [--root /work] [--report REPORT.json]
                                     [--report-prefix zoo/] [--jobs N]

Re-reads the hand-judged sample (sample.tsv: one finding per row with its verdict ``right``, ``wrong``
or ``right-but-wrong-severity`` and the severity it should have), runs npu-audit on the sampled files
(from ``--root``, the folder the sample's paths are relative to; or reads ``--report``, an existing
``--format json`` report; ``--report-prefix zoo/`` puts ``zoo/`` before its paths when it was run from
inside the tree) and matches each sampled finding (same path, line and code) in the result.

A finding still reported is *correct* when its verdict is not ``wrong`` and it is now reported at the
severity it should have. Precision of a severity (or check) = correct / still reported at that severity.
Findings that are no longer reported are counted apart: those judged wrong are gains, those judged
right are losses. The verdicts belong to the findings as first drawn; a finding whose message changed is
still the same finding (same place, same check), so read the new message when a figure moves.

To compare with another version of the code, run this script with that version first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEVERITIES = ("error", "warning", "info")


def read_sample(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    for row in rows:
        assert row["verdict"] in ("right", "wrong", "right-but-wrong-severity"), row
        assert row["should_be"] in SEVERITIES + ("none",), row
        row["line"], row["column"] = int(row["line"]), int(row["column"])
    return rows


def run_npu_audit(paths: list[str], root: Path, jobs: int | None = None) -> dict:
    cmd = [sys.executable, "-m", "npu_audit", "--format", "json", "--no-cache", "--isolated", "--exit-zero",
           *(["--jobs", str(jobs)] if jobs else []), *sorted(set(paths))]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=os.environ.copy())
    if done.returncode not in (0, 1):
        raise SystemExit(f"npu-audit failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout)


def match(row: dict, by_place: dict) -> dict | None:
    found = by_place.get((row["path"], row["line"], row["code"]), [])
    same_column = [d for d in found if d["column"] == row["column"]]
    return (same_column or found or [None])[0]


def tally(rows: list[dict], report: dict) -> tuple[dict, dict, list[tuple[dict, dict | None]]]:
    by_place: dict = defaultdict(list)
    for d in report["diagnostics"]:
        by_place[(d["path"], d["line"], d["code"])].append(d)
    per_severity: dict = defaultdict(lambda: defaultdict(int))
    per_check: dict = defaultdict(lambda: defaultdict(int))
    pairs = []
    for row in rows:
        now = match(row, by_place)
        pairs.append((row, now))
        check = f"{row['code']} {row['name']}"
        if now is None:
            gone = "gone_wrong" if row["verdict"] == "wrong" else "gone_right"
            per_severity[row["severity"]][gone] += 1
            per_check[check][gone] += 1
            continue
        correct = row["verdict"] != "wrong" and now["severity"] == row["should_be"]
        right_any = row["verdict"] != "wrong"
        for table, key in ((per_severity, now["severity"]), (per_check, check)):
            table[key]["reported"] += 1
            table[key]["correct"] += correct
            table[key]["right_any"] += right_any
    return per_severity, per_check, pairs


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "-"


def render(per_severity: dict, per_check: dict, pairs) -> str:
    head = f"{'':34} {'reported':>8} {'correct':>8} {'precision':>9} {'right(any sev.)':>15} {'gone: wrong/right':>18}"
    lines = ["per severity (as reported now; 'gone' by the severity first drawn)", head]
    for sev in SEVERITIES:
        t = per_severity.get(sev, {})
        lines.append(f"{sev:34} {t.get('reported', 0):>8} {t.get('correct', 0):>8} "
                     f"{_ratio(t.get('correct', 0), t.get('reported', 0)):>9} "
                     f"{_ratio(t.get('right_any', 0), t.get('reported', 0)):>15} "
                     f"{t.get('gone_wrong', 0):>9}/{t.get('gone_right', 0)}")
    lines += ["", "per check", head]
    for check in sorted(per_check):
        t = per_check[check]
        lines.append(f"{check:34} {t.get('reported', 0):>8} {t.get('correct', 0):>8} "
                     f"{_ratio(t.get('correct', 0), t.get('reported', 0)):>9} "
                     f"{_ratio(t.get('right_any', 0), t.get('reported', 0)):>15} "
                     f"{t.get('gone_wrong', 0):>9}/{t.get('gone_right', 0)}")
    changed = [(row, now) for row, now in pairs if now is None or now["severity"] != row["severity"]]
    if changed:
        lines += ["", "changed since the draw (id: severity then -> now, verdict)"]
        for row, now in changed:
            lines.append(f"  {row['id']:>3} {row['code']} {row['severity']} -> {now['severity'] if now else 'gone'}"
                         f"  ({row['verdict']}, should be {row['should_be']})  {row['path']}:{row['line']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=Path, default=HERE / "sample.tsv")
    parser.add_argument("--root", type=Path, default=Path("/work"),
                        help="the folder the sample's paths are relative to (default /work)")
    parser.add_argument("--report", type=Path, help="read this --format json report instead of running npu-audit")
    parser.add_argument("--report-prefix", default="",
                        help="put before every path of --report (e.g. zoo/ for a report run from inside zoo/)")
    parser.add_argument("--jobs", type=int, help="worker processes for npu-audit (default: its own)")
    args = parser.parse_args(argv)
    rows = read_sample(args.sample)
    if args.report:
        report = json.loads(args.report.read_text(encoding="utf-8"))
        for d in report["diagnostics"]:
            d["path"] = args.report_prefix + d["path"]
    else:
        report = run_npu_audit([r["path"] for r in rows], args.root, args.jobs)
    print(render(*tally(rows, report)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
