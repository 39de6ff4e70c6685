"""Differential tests: real TensorFlow is the oracle for what npu-audit says about a script.

Runs only where TensorFlow is installed (`tox -e tensorflow`, `.ci/tensorflow-oracle`); the oracle
(tests/tf_oracle.py) executes the project's own fixtures and rule examples in a subprocess (npu-audit
itself never executes analysed code).

1. Extraction: for the self-contained extraction fixtures, the parameter_map npu-audit extracts
   statically equals the one real TensorFlow builds.
2. Script-time exceptions: for every fixture and example that writes to a parameter_map (the check
   fixtures, the extraction fixtures, the rules' examples and their fixed texts, the relations'
   examples, and the conversions below), each write runs against a real ``tf.compat.v1.ConfigProto()``.
   Where npu-audit knows the value written, its claim must match: a finding on the write that says it
   raises (bytes-required: ``.s`` given a str; invalid-value: ``.i = True``, ``.b = 1.5``, ...) when
   and only when protobuf raises, with the exception type the finding names; the value npu-audit
   resolved must be the value the script computes; and a write that wrong-field reports (the adapter
   reads another field of the AttrValue oneof) must leave the other fields empty, which is what the
   adapter then reads.

Set NPU_AUDIT_ORACLE_SUMMARY to a file name to have the figures written there as JSON.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from npu_audit.checks import all_rules
from npu_audit.checks.rules import PRELUDE
from npu_audit.knowledge.loader import load
from npu_audit.pipeline import Job, analyze_file
from tests.examples import settings_of
from tests.test_extract import FIXTURES, extract

pytestmark = pytest.mark.tensorflow
tf = pytest.importorskip("tensorflow", reason="the differential test needs the optional tensorflow extra")

HERE = Path(__file__).parent
ORACLE = HERE / "tf_oracle.py"
SELF_CONTAINED = ["basic", "intermediate_names", "values", "in_out_pair", "strings_and_comments", "helpers_and_classes"]


def oracle(name: str) -> list[dict]:
    proc = subprocess.run([sys.executable, str(ORACLE), str(FIXTURES / f"{name}.py")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("ORACLE:"))
    return json.loads(line[len("ORACLE:"):])


@pytest.mark.parametrize("name", SELF_CONTAINED)
def test_static_extraction_matches_tensorflow(name):
    real = oracle(name)
    static = [c for c in extract(name) if c["kind"] == "ConfigProto"]
    assert len(static) == len(real)
    for s_config, r_config in zip(static, real):
        assert len(s_config["entries"]) == len(r_config["entries"])
        for s_entry, r_entry in zip(s_config["entries"], r_config["entries"]):
            assert s_entry["name"] == r_entry["name"]
            expected = r_entry["parameter_map"]
            got = {k: [o["field"], o["value"]] for k, o in s_entry["options"].items()
                   if o["certainty"] == "always" and o["origin"] != "unresolved"}
            unresolved = {k for k, o in s_entry["options"].items() if o["origin"] == "unresolved"}
            assert set(got) | unresolved == set(expected)
            for key, value in got.items():
                assert value == expected[key], key


# ---------------------------------------------------------------------------------------------
# script-time exceptions

#: The tf.compat conversions npu-audit evaluates statically (rules/tf_api.toml, kind "convert"), in
#: writes: the value npu-audit resolves must be what TensorFlow computes, and a conversion TensorFlow
#: refuses must not get a value.
CONVERSIONS = PRELUDE + '''custom_op.parameter_map["dump_path"].s = tf.compat.as_bytes("/home/test/dump")
custom_op.parameter_map["dump_step"].s = tf.compat.as_bytes(tf.compat.as_str(b"0|5|10"))
custom_op.parameter_map["dump_mode"].s = tf.compat.as_bytes(tf.compat.as_text(b"all"))
custom_op.parameter_map["op_select_implmode"].s = tf.compat.as_bytes(tf.compat.as_str_any(b"high_precision"))
custom_op.parameter_map["precision_mode"].s = tf.compat.as_str(b"allow_mix_precision")
custom_op.parameter_map["op_compiler_cache_dir"].s = tf.compat.as_bytes(tf.compat.as_str_any(7))
custom_op.parameter_map["debug_dir"].s = tf.compat.as_bytes(tf.compat.as_str(7))
custom_op.parameter_map["graph_memory_max_size"].s = tf.compat.as_bytes(str(26 * 1024 ** 3))
custom_op.parameter_map["variable_memory_max_size"].s = tf.compat.as_bytes(tf.compat.as_text(5))
custom_op.parameter_map["iterations_per_loop"].i = int(tf.compat.as_str(b"10"))
'''

#: Writes whose Python type protobuf checks, field by field, beside each other in one script: what each
#: one raises is independent of the others (a oneof overwrite, ``.b`` then ``.s``, raises nothing).
FIELD_TYPES = PRELUDE + '''custom_op.parameter_map["precision_mode"].s = "allow_mix_precision"
custom_op.parameter_map["op_debug_level"].i = True
custom_op.parameter_map["op_debug_level"].i = "1"
custom_op.parameter_map["op_debug_level"].i = 1.0
custom_op.parameter_map["op_debug_level"].i = None
custom_op.parameter_map["enable_dump"].b = 1.5
custom_op.parameter_map["enable_dump"].b = "True"
custom_op.parameter_map["enable_dump"].b = None
custom_op.parameter_map["enable_dump"].b = 1
custom_op.parameter_map["enable_dump"].b = 0
custom_op.parameter_map["dump_path"].s = 5
custom_op.parameter_map["dump_path"].s = None
custom_op.parameter_map["dump_path"].s = b"/home/test/dump"
custom_op.parameter_map["iterations_per_loop"].i = -1
custom_op.parameter_map["hcom_parallel"].b = True
custom_op.parameter_map["hcom_parallel"].s = b"1"
custom_op.parameter_map["hcom_parallel"].i = 1
custom_op.parameter_map["precision_mode"].b = True
custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"
custom_op.parameter_map["iterations_per_loop"].i = 2 ** 63
custom_op.parameter_map["iterations_per_loop"].i = -2 ** 63
custom_op.parameter_map["iterations_per_loop"].f = "1"
custom_op.parameter_map["iterations_per_loop"].f = 1
custom_op.parameter_map["fork_stream_mode"].i = True
custom_op.parameter_map["fork_stream_mode"].s = "fast"
'''


def _sources() -> dict[str, str]:
    """name -> text of every source with a parameter_map write."""
    out: dict[str, str] = {}
    for folder in (HERE / "fixtures" / "checks", FIXTURES):
        for path in sorted(folder.glob("*.py")):
            out[f"{folder.name}/{path.name}"] = path.read_text(encoding="utf-8")
    for rule in all_rules():
        for i, example in enumerate(rule.invalid):
            if isinstance(example.code, str):
                out[f"{rule.name}/invalid-{i}"] = example.code
            if example.fixed is not None:
                out[f"{rule.name}/invalid-{i}-fixed"] = example.fixed
        for i, text in enumerate(rule.valid):
            if isinstance(text, str):
                out[f"{rule.name}/valid-{i}"] = text
    for rel in load().relations:
        for i, example in enumerate(rel.examples):
            head = (f"# npu-audit-test: release={example.release}\n" if example.release else "") + PRELUDE
            out[f"relation/{rel.id}-{i}"] = head + example.code
    out["oracle/conversions"] = CONVERSIONS
    out["oracle/field-types"] = FIELD_TYPES
    return {name: text for name, text in out.items() if isinstance(text, str) and "parameter_map" in text}


SOURCES = _sources()
#: an exception a finding says the write raises at script time
RAISES = re.compile(r"\b(TypeError|ValueError)\b")
#: a claim that holds from one protobuf release on: (the words of the message that say so, the first major
#: version that raises). A bool in .i: protobuf 7.36 raises TypeError, 6.33.6 stores it as an int.
VERSIONED = ("protobuf 6.33 and older", 7)
PROTOBUF = int(__import__("google.protobuf", fromlist=["__version__"]).__version__.split(".")[0])
#: an inline suppression comment: the findings it names are not reported, so no claim is made
SUPPRESSION = re.compile(r"#\s*npu-audit:\s*ignore", re.IGNORECASE)
#: the type names of the oracle's records that npu-audit's --show-config JSON spells otherwise
NAMES = {"NoneType": "none"}
#: the rule whose claim is about the oneof: the adapter reads another, empty field
WRONG_FIELD = "NPU102"


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    """The oracle's records and npu-audit's analysis of every source, compared write by write."""
    folder = tmp_path_factory.mktemp("oracle")
    paths = {}
    for i, (name, text) in enumerate(SOURCES.items()):
        path = folder / f"source_{i}" / "script.py"
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
        paths[name] = path
    request = folder / "request.json"
    request.write_text(json.dumps({"sources": {name: str(p) for name, p in paths.items()}}), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(ORACLE), "--requests", str(request)], capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("ORACLE:"))
    records = json.loads(line[len("ORACLE:"):])["sources"]
    out = {name: compare(paths[name], SOURCES[name], records[name]) for name in SOURCES}
    _write_summary(out)
    return out


def _static_writes(configs: list[dict], path: Path) -> list[dict]:
    writes = []
    for config in configs:
        for entry in config["entries"]:
            for option in entry["options"].values():
                for w in option["writes"]:
                    if w["via"] == "parameter_map" and not w["implicit"] and w["path"] == path.name:
                        writes.append(w)
    return writes


def compare(path: Path, text: str, records: list[dict]) -> dict:
    """For one source: each write's verdict, and the disagreements (what npu-audit claims vs what runs)."""
    report = analyze_file(Job(file=str(path), display=path.name, roots=(str(path.parent),),
                              settings=settings_of(text), want_configs=True))
    assert not report.internal_error, report.findings
    writes = _static_writes(report.configs, path)
    lines = text.splitlines()
    counts: Counter = Counter()
    disagreements: list[str] = []
    unchecked: list[str] = []  # writes left out of the comparison, and why
    for rec in records:
        span = range(rec["line"], rec["end_line"] + 1)
        where = f"line {rec['line']}"
        if rec["outcome"] not in ("ok", "raises", "value-raises"):
            counts["not evaluable by the oracle"] += 1
            unchecked.append(f"{where}: the oracle cannot run it ({rec.get('exception') or rec['outcome']}: "
                             f"{rec.get('message', 'a call outside the allow-list')})")
            continue
        counts["writes executed"] += 1
        if any(SUPPRESSION.search(lines[n - 1]) for n in span):
            counts["suppressed in the source (no claim)"] += 1
            continue
        static = [w for w in writes if w["line"] in span and w["field"] == rec["field"]]
        findings = [f for f in report.findings if f.line in span]
        claimed = {m for f in findings for m in RAISES.findall(f.message)
                   if not (VERSIONED[0] in f.message and PROTOBUF < VERSIONED[1])}
        if not static:
            counts["not extracted by npu-audit"] += 1
            unchecked.append(f"{where}: npu-audit extracts no .{rec['field']} write here")
            continue
        resolved = [w for w in static if w["origin"] != "unresolved"]
        if len(resolved) < len(static) or len({(w["type"], json.dumps(w["value"])) for w in static}) != 1:
            if claimed:
                disagreements.append(f"{where}: npu-audit claims {sorted(claimed)} about a value it does not know")
            counts["value unknown to npu-audit (no claim)"] += 1
            unchecked.append(f"{where}: npu-audit does not know the value (the script computes {rec.get('value')})")
            continue
        w = static[0]
        if w["origin"] == "flag-default" and w["value"] is None:
            counts["flag without a default (no claim)"] += 1
            unchecked.append(f"{where}: the value is flag '{w['flag']}', whose default None the real run may override")
            continue
        counts["writes compared"] += 1
        real = rec["exception"] if rec["outcome"] in ("raises", "value-raises") else None
        said = sorted(claimed)
        ok = True
        if rec["outcome"] == "value-raises":
            ok = False
            disagreements.append(f"{where}: npu-audit resolves the value to {w['value']!r} ({w['type']}), but "
                                 f"computing it raises {real}: {rec['message']}")
        elif said != ([real] if real else []):
            ok = False
            disagreements.append(f"{where}: .{rec['field']} = {rec['value'][1]!r} ({rec['value'][0]}): protobuf "
                                 f"{'raises ' + real + ': ' + rec['message'] if real else 'accepts it'}; "
                                 f"npu-audit says {'it raises ' + ', '.join(said) if said else 'nothing about a raise'}")
        if "value" in rec and [w["type"], w["value"]] != [NAMES.get(rec["value"][0], rec["value"][0]), rec["value"][1]]:
            ok = False
            disagreements.append(f"{where}: npu-audit resolves the value to {w['value']!r} ({w['type']}), the "
                                 f"script computes {rec['value'][1]!r} ({rec['value'][0]})")
        if any(f.code == WRONG_FIELD for f in findings) and rec["outcome"] == "ok":
            counts["wrong-field writes checked"] += 1
            if not (rec["holds"] == rec["field"] and rec["others_empty"]):
                ok = False
                disagreements.append(f"{where}: after .{rec['field']} = ..., the AttrValue holds {rec['holds']} and "
                                     "its other fields are not all empty")
        if real:
            counts["raises (both agree)" if ok else "raises"] += 1
        counts["agreements" if ok else "disagreements"] += 1
    return {"counts": counts, "disagreements": disagreements, "unchecked": unchecked}


def _write_summary(out: dict) -> None:
    target = os.environ.get("NPU_AUDIT_ORACLE_SUMMARY")
    if not target:
        return
    total: Counter = Counter()
    for verdict in out.values():
        total.update(verdict["counts"])
    summary = {"sources": len(out), **dict(total),
               "disagreement list": [f"{name}: {d}" for name, v in out.items() for d in v["disagreements"]],
               "not compared": [f"{name}: {d}" for name, v in out.items() for d in v["unchecked"]]}
    Path(target).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_script_time_claims_match_tensorflow(verdicts, name):
    assert verdicts[name]["disagreements"] == []


def test_the_oracle_runs_the_writes_that_raise(verdicts):
    """The comparison is not vacuous: the oracle ran writes of every kind, and protobuf refused some."""
    total: Counter = Counter()
    for verdict in verdicts.values():
        total.update(verdict["counts"])
    assert total["writes compared"] >= 200
    assert total["raises (both agree)"] >= 10
    assert total["wrong-field writes checked"] >= 10
