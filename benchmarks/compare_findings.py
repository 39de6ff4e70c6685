"""Compare two ``npu-audit --format json`` reports of the same tree, by check name.

    npu-audit --format json --no-cache -o before.json TREE      # on the old version
    npu-audit --format json --no-cache -o after.json TREE       # on the new version
    python benchmarks/compare_findings.py before.json after.json [--show 20] [--check NAME]

Prints, per check name, the number of findings before and after and how many disappeared or
appeared (a finding is identified by path, line, column, code and message), then up to ``--show``
examples of each difference so that they can be read. Exit status 0 always: this is a reading aid,
not a verdict.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter


def _load(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    return data.get("diagnostics", [])


def _key(d: dict) -> tuple:
    return (d.get("path"), d.get("line"), d.get("column"), d.get("code"), d.get("message"))


def compare(before: list[dict], after: list[dict]) -> tuple[dict, list[dict], list[dict]]:
    """Counts per check name, and the findings that disappeared / appeared (multiset difference)."""
    b_keys = Counter(_key(d) for d in before)
    a_keys = Counter(_key(d) for d in after)
    lost_keys = b_keys - a_keys
    new_keys = a_keys - b_keys
    lost, new = [], []
    for source, wanted, out in ((before, lost_keys, lost), (after, new_keys, new)):
        wanted = Counter(wanted)
        for d in source:
            k = _key(d)
            if wanted[k] > 0:
                wanted[k] -= 1
                out.append(d)
    names = sorted({d.get("name") for d in before} | {d.get("name") for d in after})
    table = {}
    for name in names:
        table[name] = (
            sum(1 for d in before if d.get("name") == name),
            sum(1 for d in after if d.get("name") == name),
            sum(1 for d in lost if d.get("name") == name),
            sum(1 for d in new if d.get("name") == name),
        )
    return table, lost, new


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--show", type=int, default=10, help="examples printed per difference and check")
    parser.add_argument("--check", help="only this check name")
    args = parser.parse_args(argv)
    before, after = _load(args.before), _load(args.after)
    if args.check:
        before = [d for d in before if d.get("name") == args.check]
        after = [d for d in after if d.get("name") == args.check]
    table, lost, new = compare(before, after)
    print(f"{'check':32} {'before':>7} {'after':>7} {'lost':>6} {'new':>6}")
    for name, (b, a, lo, ne) in table.items():
        print(f"{name:32} {b:7} {a:7} {lo:6} {ne:6}")
    print(f"{'total':32} {len(before):7} {len(after):7} {len(lost):6} {len(new):6}")
    for title, items in (("lost", lost), ("new", new)):
        by_name: dict[str, list[dict]] = {}
        for d in items:
            by_name.setdefault(d.get("name"), []).append(d)
        for name, group in sorted(by_name.items()):
            print(f"\n{title}: {name} ({len(group)})")
            for d in group[: args.show]:
                print(f"  {d.get('path')}:{d.get('line')}:{d.get('column')} {d.get('code')} {d.get('message', '')[:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
