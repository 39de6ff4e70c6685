"""Draw the triage sample: a seeded, severity-stratified sample of findings from a whole-tree report.

    python tests/triage/draw_sample.py REPORT.json > tests/triage/sample.tsv
    python tests/triage/draw_sample.py REPORT.json --seed 2026 --errors 30 --warnings 30 --infos 15 \
        --prefix zoo/ > tests/triage/sample-2026.tsv

REPORT.json is an ``npu-audit --format json`` report of a tree (paths as in the report, e.g. run from
the folder that holds ``zoo/``). The draw is reproducible: same report, same seed, same quotas, same
sample. ``--prefix`` is put before every path, for a report run from inside the tree (``--prefix zoo/``
for one run from ``zoo/``), so that the sample's paths are relative to the same folder as the old one.
``--exclude SAMPLE.tsv`` (repeatable) leaves out of the pools the findings already in an earlier sample
(same path, line and code, the path compared after ``--prefix``), so that a new sample is fresh:

    python tests/triage/draw_sample.py /work/s4_cold2.json --seed 7 --errors 40 --warnings 40 --infos 0 \
        --prefix zoo/ --exclude tests/triage/sample.tsv --exclude tests/triage/sample-2026.tsv
The verdict columns are left empty, to be filled by hand (see README.md in this folder).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys

COLUMNS = ("id", "path", "line", "column", "code", "name", "severity", "message",
           "verdict", "should_be", "why")
DEFAULT_QUOTAS = {"error": 15, "warning": 15, "info": 10}


def read_excluded(paths: list[str]) -> set[tuple[str, int, str]]:
    """The (path, line, code) of every finding in these sample files."""
    excluded = set()
    for path in paths:
        with open(path, encoding="utf-8", newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                excluded.add((row["path"], int(row["line"]), row["code"]))
    return excluded


def draw(report: dict, quotas: dict, seed: int, prefix: str = "",
         excluded: set[tuple[str, int, str]] = frozenset()) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for severity, count in quotas.items():
        pool = sorted((d for d in report["diagnostics"] if d["severity"] == severity
                       and (prefix + d["path"], d["line"], d["code"]) not in excluded),
                      key=lambda d: (d["path"], d["line"], d["column"], d["code"], d["message"]))
        for d in sorted(rng.sample(pool, min(count, len(pool))), key=lambda d: (d["path"], d["line"], d["code"])):
            rows.append(d)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--errors", type=int, default=DEFAULT_QUOTAS["error"], help="how many errors to draw")
    parser.add_argument("--warnings", type=int, default=DEFAULT_QUOTAS["warning"],
                        help="how many warnings to draw")
    parser.add_argument("--infos", type=int, default=DEFAULT_QUOTAS["info"], help="how many infos to draw")
    parser.add_argument("--prefix", default="", help="put before every path (e.g. zoo/ for a report run from zoo/)")
    parser.add_argument("--exclude", action="append", default=[], metavar="SAMPLE.tsv",
                        help="leave out the findings of this earlier sample (same path, line, code); repeatable")
    args = parser.parse_args(argv)
    quotas = {"error": args.errors, "warning": args.warnings, "info": args.infos}
    with open(args.report, encoding="utf-8") as f:
        report = json.load(f)
    writer = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n")
    writer.writerow(COLUMNS)
    for i, d in enumerate(draw(report, quotas, args.seed, args.prefix, read_excluded(args.exclude)), 1):
        message = " ".join(d["message"].split())
        writer.writerow([i, args.prefix + d["path"], d["line"], d["column"], d["code"], d["name"], d["severity"], message,
                         "", "", ""])
    return 0


if __name__ == "__main__":
    sys.exit(main())
