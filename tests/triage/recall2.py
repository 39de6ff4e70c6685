"""Recall and false findings of npu-audit on public code outside the tuning tree (issue 37, recall-2.md).

    python tests/triage/recall2.py prepare --mirrors /work/.mirror --root /tmp/recall2
    python tests/triage/recall2.py measure --root /tmp/recall2 [--manifest M.json] [--save-reports DIR]

The manifest (``recall2_manifest.json`` beside this script) names every file of the study by repository,
commit and path, with the role of the file (``adapter``: it configures the Ascend TF adapter;
``look-alike``: it only uses names that look like the adapter's, so the truth is "no finding"), the
defects judged in it (line, kind, severity class ``error``/``warning``, option, release) and the
findings judged right that are not defects (``accepted``: advice infos, true facts about dead code) or
judged wrong (``rejected``).
It holds no third-party code: the files are read from a local folder laid out as
``ROOT/<owner>+<name>/<path>``.

``prepare`` fills that folder from bare git snapshots (``MIRRORS/<owner>+<name>/repo``, as the ``fetch``
tool leaves them) with ``git archive`` of the folders listed as each repository's ``context`` (so that
the helper modules a script imports are there too), keeping ``.py`` files only. A repository marked
``source: index`` has no snapshot small enough to fetch: prepare says which file to save by hand.

``measure`` runs npu-audit (``python -m npu_audit`` of the interpreter running this script, so run it
with the virtual environment of the code to measure) from ROOT on every prepared file with the default
settings (release current), and once more with ``--release legacy`` on the files that hold a defect of
that release. A defect is *found* when a finding of the matching run sits on one of its lines and names
its option (the last dotted part of the finding's ``option``, or the option named in the message when
``option`` is null). Where several defects share a line and option, a finding goes first to the defect
whose ``codes`` list its code. Recall = found / defects, per severity class, kind and repository; "at
its severity" also asks the finding's severity to be the defect's class. A finding in a look-alike file,
or one the manifest rejects, is a false finding. A finding in an adapter file that is neither a defect nor accepted is listed as
*unjudged*: read it (it may be a new right finding, or a false one) and add it to the manifest.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "recall2_manifest.json"
SEVERITIES = ("error", "warning", "info")
CLASSES = ("error", "warning")


def folder(repo: str) -> str:
    return repo.replace("/", "+")


def local_path(entry: dict) -> str:
    return f"{folder(entry['repo'])}/{entry['path']}"


def load_manifest(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    for entry in data["files"]:
        assert entry["role"] in ("adapter", "look-alike"), entry
        for defect in entry["defects"]:
            assert defect["class"] in CLASSES, defect
            assert defect["release"] in ("current", "legacy"), defect
    return data


# ---------------------------------------------------------------- prepare


def prepare(manifest: dict, mirrors: Path, root: Path) -> int:
    missing = 0
    for repo in manifest["repositories"]:
        target = root / folder(repo["repo"])
        if repo["source"] == "index":
            for path in repo["context"]:
                if not (target / path).is_file():
                    missing += 1
                    print(f"save by hand: read_file repo={repo['repo']} path={path} commit={repo['commit']} "
                          f"-> {target / path}")
            continue
        git_dir = mirrors / folder(repo["repo"]) / "repo"
        if not git_dir.is_dir():
            missing += 1
            print(f"no snapshot at {git_dir}: fetch github:{repo['repo']} first")
            continue
        done = subprocess.run(["git", "-C", str(git_dir), "archive", repo["commit"], "--", *repo["context"]],
                              capture_output=True)
        if done.returncode != 0:
            missing += 1
            print(f"git archive failed for {repo['repo']}@{repo['commit']}: {done.stderr.decode(errors='replace')}")
            continue
        with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
            members = [m for m in archive.getmembers()
                       if m.isfile() and m.name.endswith(".py") and not m.name.startswith(("/", ".."))
                       and ".." not in Path(m.name).parts]
            target.mkdir(parents=True, exist_ok=True)
            if sys.version_info >= (3, 12):
                archive.extractall(target, members=members, filter="data")
            else:
                archive.extractall(target, members=members)
        print(f"{repo['repo']}@{repo['commit'][:10]}: {len(members)} .py files under {target}")
    absent = [local_path(e) for e in manifest["files"] if not (root / local_path(e)).is_file()]
    for path in absent:
        print(f"not prepared: {path}")
    return 1 if missing or absent else 0


# ---------------------------------------------------------------- measure


def run_npu_audit(paths: list[str], root: Path, release: str) -> dict:
    cmd = [sys.executable, "-m", "npu_audit", "--format", "json", "--no-cache", "--isolated", "--exit-zero",
           "--release", release, *sorted(set(paths))]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=os.environ.copy())
    if done.returncode not in (0, 1):
        raise SystemExit(f"npu-audit failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout)


def option_of(finding: dict) -> str:
    option = finding.get("option")
    return option.rsplit(".", 1)[-1] if option else ""


def names(finding: dict, option: str) -> bool:
    own = option_of(finding)
    if own:
        return own == option
    return f"'{option}'" in finding.get("message", "") or f" {option} " in finding.get("message", "")


def at(finding: dict, lines: list[int], option: str) -> bool:
    return finding["line"] in lines and names(finding, option)


def judged(finding: dict, verdicts: list[dict]) -> bool:
    return any(finding["line"] == v["line"] and names(finding, v["option"])
               and (not v.get("codes") or finding["code"] in v["codes"]) for v in verdicts)


def match_file(entry: dict, findings: dict[str, list[dict]]) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """Returns (defects with the findings that report them, accepted, rejected and other findings) of a file."""
    claimed: set[int] = set()
    results = []
    for defect in entry["defects"]:
        lines = defect.get("lines") or [defect["line"]]
        pool = findings[defect["release"]]
        strict = [f for f in pool if at(f, lines, defect["option"])
                  and (not defect.get("codes") or f["code"] in defect["codes"])]
        results.append({"defect": defect, "findings": strict, "lines": lines})
        claimed.update(id(f) for f in strict)
    for result in results:
        if not result["findings"]:
            defect = result["defect"]
            loose = [f for f in findings[defect["release"]]
                     if id(f) not in claimed and at(f, result["lines"], defect["option"])]
            result["findings"] = loose
            claimed.update(id(f) for f in loose)
    accepted, rejected, other = [], [], []
    for finding in findings["current"]:
        if id(finding) in claimed:
            continue
        if judged(finding, entry["accepted"]):
            accepted.append(finding)
        elif judged(finding, entry.get("rejected", [])):
            rejected.append(finding)
        else:
            other.append(finding)
    return results, accepted, rejected, other


def pct(found: int, total: int) -> str:
    return f"{found}/{total} = {found / total:.2f}" if total else "0/0"


def measure(manifest: dict, root: Path, save: Path | None) -> int:
    entries = [e for e in manifest["files"] if (root / local_path(e)).is_file()]
    absent = [local_path(e) for e in manifest["files"] if e not in entries]
    for path in absent:
        print(f"not prepared (left out of the figures): {path}", file=sys.stderr)
    reports = {"current": run_npu_audit([local_path(e) for e in entries], root, "current")}
    legacy_files = [local_path(e) for e in entries if any(d["release"] == "legacy" for d in e["defects"])]
    reports["legacy"] = run_npu_audit(legacy_files, root, "legacy") if legacy_files else {"diagnostics": []}
    if save:
        save.mkdir(parents=True, exist_ok=True)
        for release, report in reports.items():
            (save / f"recall2-{release}.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    by_path: dict[str, dict[str, list[dict]]] = defaultdict(lambda: {"current": [], "legacy": []})
    for release, report in reports.items():
        for finding in report["diagnostics"]:
            by_path[finding["path"].replace(os.sep, "/")][release].append(finding)

    per_class: dict[str, list[int]] = {c: [0, 0, 0] for c in CLASSES}  # defects, found, at its severity
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    per_repo: dict[str, dict] = defaultdict(lambda: {"files": 0, "defects": 0, "found": 0, "right_sev": 0,
                                                     "false": defaultdict(int), "unjudged": defaultdict(int)})
    false_by_sev: dict[str, int] = defaultdict(int)
    unjudged_by_sev: dict[str, int] = defaultdict(int)
    missed, misrated, false_rows, unjudged_rows = [], [], [], []
    accepted_total = 0
    for entry in entries:
        path = local_path(entry)
        results, accepted, rejected, other = match_file(entry, by_path[path])
        repo = per_repo[entry["repo"]]
        repo["files"] += 1
        accepted_total += len(accepted)
        for result in results:
            defect, found = result["defect"], result["findings"]
            right = [f for f in found if f["severity"] == defect["class"]]
            for row in (per_class[defect["class"]], per_kind[defect["kind"]]):
                row[0] += 1
                row[1] += bool(found)
                row[2] += bool(right)
            repo["defects"] += 1
            repo["found"] += bool(found)
            repo["right_sev"] += bool(right)
            where = f"{path}:{defect['line']} {defect['option']} ({defect['kind']}, {defect['class']}"
            where += ", --release legacy)" if defect["release"] == "legacy" else ")"
            if not found:
                missed.append(where)
            elif not right:
                misrated.append(f"{where}: reported as " + ", ".join(f"{f['code']} {f['severity']}" for f in found))
        for finding in rejected + other:
            row = f"{path}:{finding['line']} {finding['code']} {finding['severity']} {finding.get('option')}: " \
                  f"{finding['message'][:160]}"
            if entry["role"] == "look-alike" or finding in rejected:
                false_by_sev[finding["severity"]] += 1
                repo["false"][finding["severity"]] += 1
                false_rows.append(row)
            else:
                unjudged_by_sev[finding["severity"]] += 1
                repo["unjudged"][finding["severity"]] += 1
                unjudged_rows.append(row)

    roles = defaultdict(int)
    for entry in entries:
        roles[entry["role"]] += 1
    print(f"files: {len(entries)} ({roles['adapter']} configure the adapter, {roles['look-alike']} look-alikes); "
          f"findings: {len(reports['current']['diagnostics'])} (release current), "
          f"{len(reports['legacy']['diagnostics'])} (release legacy, {len(legacy_files)} files); "
          f"accepted (right, not defects): {accepted_total}\n")
    print("| defects | count | found | recall | found at its severity |")
    print("| --- | --- | --- | --- | --- |")
    total = [sum(per_class[c][i] for c in CLASSES) for i in range(3)]
    for name, row in [*per_class.items(), ("all", total)]:
        print(f"| {name} | {row[0]} | {row[1]} | {pct(row[1], row[0])} | {pct(row[2], row[0])} |")
    print("\n| kind | defects | found | at its severity |")
    print("| --- | --- | --- | --- |")
    for kind, row in sorted(per_kind.items()):
        print(f"| {kind} | {row[0]} | {row[1]} | {row[2]} |")
    print("\n| repository | files | defects | found | at its severity | false findings (E/W/I) | unjudged (E/W/I) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, repo in per_repo.items():
        false = "/".join(str(repo["false"][s]) for s in SEVERITIES)
        unjudged = "/".join(str(repo["unjudged"][s]) for s in SEVERITIES)
        print(f"| {name} | {repo['files']} | {repo['defects']} | {repo['found']} | {repo['right_sev']} "
              f"| {false} | {unjudged} |")
    print("\n| severity | false findings (look-alike files, and findings judged wrong) | unjudged findings (adapter files) |")
    print("| --- | --- | --- |")
    for severity in SEVERITIES:
        print(f"| {severity} | {false_by_sev[severity]} | {unjudged_by_sev[severity]} |")
    for title, rows in (("missed", missed), ("found at another severity", misrated),
                        ("false findings", false_rows), ("unjudged findings (read them)", unjudged_rows)):
        print(f"\n{title}: {len(rows)}")
        for row in rows:
            print(f"- {row}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    sub = parser.add_subparsers(dest="command", required=True)
    prep = sub.add_parser("prepare", help="fill ROOT from fetched snapshots")
    prep.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    prep.add_argument("--root", type=Path, required=True)
    meas = sub.add_parser("measure", help="run npu-audit on ROOT and print recall and false findings")
    meas.add_argument("--root", type=Path, required=True)
    meas.add_argument("--save-reports", type=Path, default=None, help="keep the JSON reports in this folder")
    args = parser.parse_args()
    manifest = load_manifest(args.manifest)
    if args.command == "prepare":
        return prepare(manifest, args.mirrors, args.root)
    return measure(manifest, args.root, args.save_reports)


if __name__ == "__main__":
    sys.exit(main())
