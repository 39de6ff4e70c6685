"""``npu-audit merge``: one report from the reports of shards (jobs of a CI matrix that each checked a part of
a tree).

The reports are all ``--format json`` findings reports (contract version 1) or all ``--format sarif`` logs;
the merged report has the same format and is a valid report of the same schema:

* JSON: the diagnostics of every report, each distinct diagnostic once (two shards that both checked a file
  report its findings twice), sorted as a run sorts them (path, line, column, code, message); ``files`` the
  union of the reports' paths (a path parsed in any shard counts as parsed); ``summary`` counted again from
  those (``statistics`` too, when a report has it).
* SARIF: one run whose rules are the union of the runs' rules (by id), whose results are each distinct
  result once (``ruleIndex`` pointing into the merged rules), sorted by file, line, column and rule, and
  whose one invocation succeeded when every shard's did (their notifications kept). Artifact URIs are kept
  as written: relative to each shard's ``%SRCROOT%``, the folder it ran in; the merged log takes the first
  log's ``%SRCROOT%``, so the shards must run in the same folder of the checkout.

Reports of different npu-audit versions or different settings (release, product, scenario) are refused:
their findings are not comparable, and a merged report would describe no run.

Exit codes, as a run's: 0 nothing at warning level or above; 1 a finding at warning level or above (``--exit-zero``
turns it into 0); 2 a shard recorded an internal error, or a report cannot be read, is not a report of a
format merge reads, or does not fit the others (nothing is written then).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Optional
from urllib.parse import unquote

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
DASH = "-"  # stdin as a report, stdout as the output
JSON_VERSION = 1
SEVERITIES = ("error", "warning", "info")


class MergeError(Exception):
    """A report cannot be merged (exit code 2); the message says which and why."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="npu-audit merge",
        description="Merge the JSON reports (--format json) or the SARIF logs (--format sarif) of several npu-audit "
        "runs over parts of a tree (CI shards) into one report of the same format: each finding once, the summary "
        "counted again.",
        epilog="Exit codes: 0 clean, 1 findings at warning level or above (--exit-zero: 0), 2 a shard had an internal "
        "error, or a report cannot be read or merged.",
    )
    p.add_argument("reports", nargs="+", metavar="REPORT", help="the shards' reports: all JSON or all SARIF (- reads one from stdin)")
    p.add_argument("--output-file", "-o", metavar="FILE",
                   help="write the merged report to FILE (atomically; - is stdout) instead of stdout")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when findings are reported (2 still reports errors)")
    return p


def main(argv: Optional[list[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        kind, merged = merge_files(args.reports)
    except MergeError as exc:
        print(f"npu-audit merge: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if kind == "json":
        text, code = render_json(merged), json_exit_code(merged)
    else:
        text, code = json.dumps(merged, indent=2, ensure_ascii=False) + "\n", sarif_exit_code(merged)
    if args.output_file and args.output_file != DASH:
        from npu_audit.fix.write import write_report

        try:
            write_report(args.output_file, text.encode("utf-8"))
        except OSError as exc:
            print(f"npu-audit merge: error: cannot write the merged report to {args.output_file}: "
                  f"{exc.strerror or exc}; check that its folder exists and is writable", file=sys.stderr)
            return EXIT_ERROR
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    if args.exit_zero and code == EXIT_FINDINGS:
        return EXIT_OK
    return code


def merge_files(paths: list[str]) -> tuple[str, dict]:
    """The kind (``"json"`` or ``"sarif"``) and the merged report of the report files ``paths``."""
    loaded = [(path, _load(path)) for path in paths]
    kinds = {path: _kind(path, data) for path, data in loaded}
    if len(set(kinds.values())) > 1:
        listing = ", ".join(f"{path} ({kind})" for path, kind in kinds.items())
        raise MergeError(f"the reports mix JSON and SARIF ({listing}); merge the reports of one format at a time")
    kind = kinds[paths[0]]
    for path, data in loaded:
        wrong = _json_problem(data) if kind == "json" else _sarif_problem(data)
        if wrong:
            raise MergeError(f"{path}: {wrong}; give the report as npu-audit wrote it (a report edited or cut short "
                             "cannot be merged)")
    if kind == "json":
        return kind, merge_json(loaded)
    return kind, merge_sarif(loaded)


def _load(path: str) -> dict:
    try:
        if path == DASH:
            text = sys.stdin.buffer.read().decode("utf-8")
        else:
            with open(path, "rb") as stream:
                text = stream.read().decode("utf-8")
        data = json.loads(text)
    except OSError as exc:
        raise MergeError(f"{path}: cannot read it ({exc.strerror or exc}); give the path of a shard's report") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise MergeError(f"{path}: not a JSON document ({exc}); give a report written by npu-audit --format json "
                         "or --format sarif (a report cut short by a failed shard cannot be merged)") from None
    if not isinstance(data, dict):
        raise MergeError(f"{path}: not an npu-audit report (a JSON {type(data).__name__}, not an object); give a report "
                         "written by npu-audit --format json or --format sarif")
    return data


def _kind(path: str, data: dict) -> str:
    if "runs" in data and data.get("version") == "2.1.0":
        return "sarif"
    if "diagnostics" in data and "summary" in data:
        if data.get("version") != JSON_VERSION:
            raise MergeError(f"{path}: a findings report of contract version {data.get('version')!r}; this npu-audit "
                             f"merges version {JSON_VERSION}: merge with the npu-audit that wrote it")
        return "json"
    raise MergeError(f"{path}: not a findings report (--format json) nor a SARIF 2.1.0 log (--format sarif); "
                     "merge reads those two (not --show-config, --format lsp or the text formats)")


_DIAGNOSTIC_KEYS = {"path": str, "line": int, "column": int, "code": str, "name": str, "severity": str, "message": str}


def _json_problem(data: dict) -> str | None:
    """What makes a findings report unfit to merge, or None."""
    if not isinstance(data.get("summary"), dict):
        return "its \"summary\" is not an object"
    if not isinstance(data.get("diagnostics"), list):
        return "its \"diagnostics\" is not a list"
    files = data.get("files")
    if not isinstance(files, list):
        return ("it has no list of its files (\"files\", written by an older npu-audit), so the files two shards "
                "share could not be counted once: write the shards' reports with this version of npu-audit")
    for item in data["diagnostics"]:
        if not isinstance(item, dict) or any(not isinstance(item.get(k), t) for k, t in _DIAGNOSTIC_KEYS.items()):
            return f"a diagnostic lacks one of {', '.join(_DIAGNOSTIC_KEYS)}: {_canonical(item)[:200]}"
        if item["severity"] not in SEVERITIES:
            return f"a diagnostic's severity is {item['severity']!r}, not one of {', '.join(SEVERITIES)}"
    for entry in files:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            return f"an item of \"files\" is not {{\"path\", \"parsed\"}}: {_canonical(entry)[:200]}"
    return None


def _sarif_problem(data: dict) -> str | None:
    """What makes a SARIF log unfit to merge, or None."""
    if not isinstance(data["runs"], list) or not data["runs"]:
        return "a SARIF log without runs"
    for run in data["runs"]:
        if not isinstance(run, dict) or not isinstance(run.get("tool"), dict) \
                or not isinstance(run["tool"].get("driver"), dict):
            return "a run without tool.driver"
        driver = run["tool"]["driver"]
        if driver.get("name") != "npu-audit":
            return (f"a run of {driver.get('name')!r}, not of npu-audit (merge npu-audit's logs only; upload other "
                    "tools' logs as their own SARIF category)")
        if not isinstance(driver.get("rules", []), list) or any(
                not isinstance(rule, dict) or not isinstance(rule.get("id"), str) for rule in driver.get("rules", [])):
            return "a rule of tool.driver.rules without an id"
        for key in ("results", "invocations"):
            if not isinstance(run.get(key, []), list) or any(not isinstance(x, dict) for x in run.get(key, [])):
                return f"its {key} are not a list of objects"
        for result in run.get("results", []):
            locations = result.get("locations", [])
            if not isinstance(locations, list) or any(not isinstance(x, dict) for x in locations) \
                    or not isinstance(result.get("message", {}), dict):
                return "a result whose locations or message are not objects"
    return None


def _canonical(item) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def _same(loaded: list[tuple[str, dict]], what: str, value) -> None:
    """Refuse reports that disagree on ``what`` (``value(data)``): findings of another version or other settings
    are not comparable."""
    first_path, first = loaded[0]
    for path, data in loaded[1:]:
        if value(data) != value(first):
            raise MergeError(f"{path} and {first_path} differ in {what} ({_canonical(value(data))} against "
                             f"{_canonical(value(first))}); their findings are not comparable: run every shard with "
                             "the same npu-audit and options")


# -- JSON findings reports --------------------------------------------------------------------------------------


def merge_json(loaded: list[tuple[str, dict]]) -> dict:
    _same(loaded, "the npu-audit version", lambda d: d.get("tool"))
    _same(loaded, "settings", lambda d: d.get("settings"))
    seen: set[str] = set()
    diagnostics: list[dict] = []
    parsed: dict[str, bool] = {}
    statistics = False
    for _path, data in loaded:
        for item in data["diagnostics"]:
            key = _canonical(item)
            if key not in seen:
                seen.add(key)
                diagnostics.append(item)
        for entry in data["files"]:
            parsed[entry["path"]] = parsed.get(entry["path"], False) or bool(entry.get("parsed"))
        statistics = statistics or "statistics" in data["summary"]
    diagnostics.sort(key=lambda d: (d["path"], d["line"], d["column"], d["code"], d["message"]))
    first = loaded[0][1]
    merged = {key: value for key, value in first.items() if key not in ("diagnostics", "files", "summary")}
    merged["diagnostics"] = diagnostics
    merged["files"] = [{"path": path, "parsed": parsed[path]} for path in sorted(parsed)]
    merged["summary"] = _summary(diagnostics, merged["files"], statistics)
    return merged


def _summary(diagnostics: list[dict], files: list[dict], statistics: bool) -> dict:
    """The summary a run over the merged files writes (:meth:`npu_audit.findings.RunReport.summary`)."""
    counts = dict.fromkeys(SEVERITIES, 0)
    for d in diagnostics:
        counts[d["severity"]] = counts.get(d["severity"], 0) + 1
    summary = {"files": len(files), "files_parsed": sum(1 for f in files if f["parsed"]),
               "findings": len(diagnostics), **counts,
               "fixable": sum(1 for d in diagnostics if d.get("fix") is not None)}
    if statistics:  # as npu_audit.render.statistics.rows
        rows: dict[str, dict] = {}
        for d in diagnostics:
            row = rows.setdefault(d["code"], {"code": d["code"], "name": d["name"], "count": 0, "fixable": 0,
                                              "fixable_safe": 0})
            row["count"] += 1
            if d.get("fix") is not None:
                row["fixable"] += 1
                row["fixable_safe"] += isinstance(d["fix"], dict) and d["fix"].get("applicability") == "safe"
        summary["statistics"] = sorted(rows.values(), key=lambda r: (-r["count"], r["code"]))
    return summary


def render_json(report: dict) -> str:
    """The merged report laid out as ``npu-audit --format json`` lays out a report (one diagnostic, one file per
    line), so that a merged report and a single run's compare as text."""
    dump = lambda o: json.dumps(o, ensure_ascii=False)  # noqa: E731
    out = ["{\n"]
    for key, value in report.items():
        last = key == list(report)[-1]
        if key in ("diagnostics", "files") and value:
            out.append(f'  "{key}": [\n' + ",\n".join("    " + dump(item) for item in value) + "\n  ]")
        else:
            out.append(f'  "{key}": {dump(value)}')
        out.append("\n" if last else ",\n")
    out.append("}\n")
    return "".join(out)


def json_exit_code(report: dict) -> int:
    """As :meth:`npu_audit.findings.RunReport.exit_code`: an internal error recorded by a shard is a 2."""
    if any(d.get("name") == "internal-error" for d in report["diagnostics"]):
        return EXIT_ERROR
    return EXIT_FINDINGS if any(d.get("severity") in ("error", "warning") for d in report["diagnostics"]) else EXIT_OK


# -- SARIF logs -------------------------------------------------------------------------------------------------


def merge_sarif(loaded: list[tuple[str, dict]]) -> dict:
    runs = []
    for path, data in loaded:
        runs.extend((path, run) for run in data["runs"])
    _same(runs, "the npu-audit version", lambda r: r["tool"]["driver"].get("version"))
    first_run = runs[0][1]
    rules: list[dict] = []
    index: dict[str, int] = {}
    results: list[dict] = []
    seen: set[str] = set()
    notifications: list[dict] = []
    seen_notes: set[str] = set()
    successful = True
    for _path, run in runs:
        for rule in run["tool"]["driver"].get("rules", []):
            if rule["id"] not in index:
                index[rule["id"]] = len(rules)
                rules.append(rule)
        for result in run.get("results", []):
            result = dict(result)
            if "ruleIndex" in result:
                result["ruleIndex"] = index.get(result.get("ruleId"), result["ruleIndex"])
            key = _canonical(result)
            if key not in seen:
                seen.add(key)
                results.append(result)
        for invocation in run.get("invocations", []):
            successful = successful and invocation.get("executionSuccessful", True)
            for note in invocation.get("toolExecutionNotifications", []):
                if _canonical(note) not in seen_notes:
                    seen_notes.add(_canonical(note))
                    notifications.append(note)
    results.sort(key=_result_order)
    invocation: dict = {"executionSuccessful": successful and not notifications}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    run = {key: value for key, value in first_run.items()}
    run["tool"] = {**first_run["tool"], "driver": {**first_run["tool"]["driver"], "rules": rules}}
    run["invocations"] = [invocation]
    run["results"] = results
    first_log = loaded[0][1]
    return {**{key: value for key, value in first_log.items() if key != "runs"}, "runs": [run]}


def _result_order(result: dict):
    """File, line, column, rule and message of a result, as a run orders them (anything malformed sorts first)."""
    def field(data, key, kind, default):
        value = data.get(key, default) if isinstance(data, dict) else default
        return value if isinstance(value, kind) else default

    location = field((result.get("locations") or [{}])[0], "physicalLocation", dict, {})
    region = field(location, "region", dict, {})
    uri = field(field(location, "artifactLocation", dict, {}), "uri", str, "")
    return (unquote(uri), field(region, "startLine", int, 0), field(region, "startColumn", int, 0),
            str(result.get("ruleId", "")), field(result.get("message", {}), "text", str, ""))


def sarif_exit_code(log: dict) -> int:
    run = log["runs"][0]
    if not all(invocation.get("executionSuccessful", True) for invocation in run.get("invocations", [])):
        return EXIT_ERROR
    return EXIT_FINDINGS if any(r.get("level") in ("error", "warning") for r in run["results"]) else EXIT_OK
