"""Draw the triage sample: a seeded, severity-stratified sample of findings from a whole-tree report.

    python tests/triage/draw_sample.py REPORT.json > tests/triage/sample.tsv

REPORT.json is an ``npu-audit --format json`` report of a tree (paths as in the report, e.g. run from
the folder that holds ``zoo/``). The draw is reproducible: same report, same seed, same sample. The
verdict columns are left empty, to be filled by hand (see README.md in this folder).
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


def draw(report: dict, quotas: dict, seed: int) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for severity, count in quotas.items():
        pool = sorted((d for d in report["diagnostics"] if d["severity"] == severity),
                      key=lambda d: (d["path"], d["line"], d["column"], d["code"], d["message"]))
        for d in sorted(rng.sample(pool, min(count, len(pool))), key=lambda d: (d["path"], d["line"], d["code"])):
            rows.append(d)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args(argv)
    with open(args.report, encoding="utf-8") as f:
        report = json.load(f)
    writer = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n")
    writer.writerow(COLUMNS)
    for i, d in enumerate(draw(report, DEFAULT_QUOTAS, args.seed), 1):
        message = " ".join(d["message"].split())
        writer.writerow([i, d["path"], d["line"], d["column"], d["code"], d["name"], d["severity"], message,
                         "", "", ""])
    return 0


if __name__ == "__main__":
    sys.exit(main())
