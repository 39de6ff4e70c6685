"""Golden and contract tests for the output stage (npu_audit.render).

Every format is rendered from ONE fixed RunReport (``make_report``) and compared with a golden file
in tests/golden/. Regenerate them after an intended change with::

    NPU_AUDIT_UPDATE_GOLDEN=1 python -m pytest tests/test_render.py

and review the diff. Rules are small fake Rule subclasses, so these tests do not depend on the
real rule set.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import npu_audit
from npu_audit.checks.base import Invalid, Rule
from npu_audit.findings import Edit, FileReport, Finding, Fix, Related, RunReport
from npu_audit.render import FORMATS, lsp, render, sarif, source_lines, text
from npu_audit.render import github as gh

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("NPU_AUDIT_UPDATE_GOLDEN") == "1"
SARIF_SCHEMA = Path(__file__).resolve().parent / "schemas" / "sarif-schema-2.1.0.json"  # OASIS; see schemas/README.md


# -- the fixed report ---------------------------------------------------------------------------


class SyntaxErrorRule(Rule):
    code, name, severity = "NPU001", "syntax-error", "error"
    summary = "The file cannot be parsed."
    what = "Reports files that are not valid Python."
    why = "npu-audit cannot check options in a file it cannot parse."


class UnknownOptionRule(Rule):
    code, name, severity = "NPU101", "unknown-option", "error"
    summary = "An NPU option name the adapter does not know."
    what = "Checks every `parameter_map` key against the options of the selected CANN release."
    why = "The adapter rejects unknown options and the session fails to start."
    # structured examples like a real rule's (never run: the rule is a fake; no expected findings, so the
    # help text shows only the two snippets)
    invalid = (Invalid('custom_op.parameter_map["precison_mode"].s = b"allow_fp32_to_fp16"\n', ()),)
    valid = ('custom_op.parameter_map["precision_mode"].s = b"allow_fp32_to_fp16"\n',)
    fix_safety = "Safe: only the misspelt key is replaced."


class DumpWithoutPathRule(Rule):
    code, name, severity = "NPU301", "dump-without-path", "warning"
    summary = "Dumping is enabled without a dump path."
    what = "Checks that `enable_dump` comes with `dump_path`."
    why = "Without a path no dump is written."


class DeprecatedOptionRule(Rule):
    code, name, severity = "NPU401", "deprecated-option", "info"
    summary = "An option deprecated in the selected release."
    what = "Reports deprecated options."
    why = "Deprecated options are removed in later releases."
    fix_safety = "Unsafe: removing the option can change behaviour on older releases."
    tags = ("deprecated",)


class RedundantOptionRule(Rule):
    code, name, severity = "NPU402", "redundant-option", "info"
    summary = "An option set to its default value."
    what = "Reports options set to the value they have anyway."
    why = "Noise: the line does nothing."
    fix_safety = "Safe: the default applies without the line."
    tags = ("unnecessary",)


class FusionSwitchRule(Rule):
    code, name, severity = "NPU501", "fusion-switch-file", "warning"
    summary = "A session without a fusion switch file."
    what = "Reports sessions whose fusion passes are not configured."
    why = "Default fusion passes can slow some models down."


class NeverReportedRule(Rule):
    code, name, severity = "NPU999", "never-reported", "warning"
    summary = "A rule without results in the fixture."
    what = "Proves SARIF describes every rule, not only the reported ones."
    why = "Viewers show documentation for all rules."


RULES = tuple(cls() for cls in (SyntaxErrorRule, UnknownOptionRule, DumpWithoutPathRule, DeprecatedOptionRule,
                                RedundantOptionRule, FusionSwitchRule, NeverReportedRule))

TRAIN = (
    "import tensorflow as tf\n"                                                                # 1
    "\n"                                                                                       # 2
    "# 配置 NPU 会话 😀\n"                                                                      # 3
    "config = tf.compat.v1.ConfigProto()\n"                                                    # 4
    "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"               # 5
    'custom_op.name = "NpuOptimizer"\n'                                                        # 6
    'custom_op.parameter_map["precison_mode"].s = tf.compat.as_bytes("allow_fp32_to_fp16")\n'  # 7
    'x = "日本😀"; custom_op.parameter_map["enable_dump"].b = True\n'                           # 8
    "if x:\n"                                                                                  # 9
    '\tcustom_op.parameter_map["mix_compile_mode"].b = True\n'                                 # 10
    "sess = tf.compat.v1.Session(\n"                                                           # 11
    "    config=config)\n"                                                                     # 12
    'custom_op.parameter_map["enable_data_pre_proc"].b = False\n'                              # 13
    'custom_op.parameter_map["variable_format_optimize"].b = True\n'                           # 14
)
EMOJI_LINE = 8


def _col(line_no: int, needle: str) -> tuple[int, int]:
    """1-based character columns [start, end) of ``needle`` on line ``line_no`` of TRAIN."""
    line = source_lines(TRAIN)[line_no - 1]
    start = line.index(needle) + 1
    return start, start + len(needle)


def _finding(rule: Rule, line: int, cols: tuple[int, int], message: str, *, path="train.py", end_line=None, **kw) -> Finding:
    return Finding(path=path, line=line, column=cols[0], end_line=end_line or line, end_column=cols[1], code=rule.code,
                   name=rule.name, severity=kw.pop("severity", rule.severity), message=message, tags=rule.tags, **kw)


def make_report() -> RunReport:
    unknown, dump, deprecated, redundant, fusion, syntax = (UnknownOptionRule(), DumpWithoutPathRule(), DeprecatedOptionRule(),
                                                            RedundantOptionRule(), FusionSwitchRule(), SyntaxErrorRule())
    key = _col(7, '"precison_mode"')
    train_findings = [
        _finding(unknown, 7, key, 'Unknown option "precison_mode"', hint='did you mean "precision_mode"?',
                 option="precison_mode",
                 fix=Fix("safe", 'Replace with "precision_mode"', (Edit(7, key[0] + 1, 7, key[1] - 1, "precision_mode"),))),
        _finding(dump, EMOJI_LINE, _col(EMOJI_LINE, 'custom_op.parameter_map["enable_dump"]'),
                 "may: enable_dump is set but dump_path is not, so no dump is written", option="enable_dump",
                 certainty="conditional", related=(Related("train.py", 5, 1, "NPU optimizer created here"),)),
        _finding(deprecated, 10, _col(10, '"mix_compile_mode"'), '"mix_compile_mode" is deprecated since 7.0 (100% removed in 8.0)',
                 option="mix_compile_mode",
                 fix=Fix("unsafe", 'Remove "mix_compile_mode"', (Edit(10, 1, 11, 1, ""),))),
        _finding(fusion, 11, (_col(11, "tf.compat")[0], 19), "Session created without a fusion_switch_file", end_line=12,
                 hint="write the fusion passes to a file: switches set elsewhere are ignored",
                 fix=Fix("safe", "Add fusion_switch.cfg and point fusion_switch_file at it",
                         (Edit(11, 1, 11, 1, 'custom_op.parameter_map["fusion_switch_file"].s = b"fusion_switch.cfg"\n'),),
                         new_files=(("fusion_switch.cfg", '{"Switch": {"GraphFusion": {}, "UBFusion": {}}}\n'),))),
        _finding(redundant, 13, _col(13, '"enable_data_pre_proc"'), '"enable_data_pre_proc" is already False by default',
                 option="enable_data_pre_proc", fix=Fix("safe", "Remove the line", (Edit(13, 1, 14, 1, ""),))),
        _finding(dump, 14, _col(14, '"variable_format_optimize"'), "variable_format_optimize is ignored while dumping",
                 option="variable_format_optimize", severity="warning"),
    ]
    broken = [
        _finding(syntax, 3, (5, 6), "Cannot parse: invalid syntax", path="legacy/broken.py"),
    ]
    return RunReport(
        files=[
            FileReport(path="train.py", findings=train_findings, text=TRAIN, parsed=True),
            FileReport(path="legacy/broken.py", findings=broken, text=None, parsed=False),
        ],
        settings={"release": "8.0.RC1", "select": ["ALL"], "target": "tensorflow-1.15"},
    )


# -- golden machinery ---------------------------------------------------------------------------


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """Run in a fresh folder so absolute paths and URIs do not depend on the machine."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _normalise(output: str, workdir: Path) -> str:
    for prefix in {workdir.resolve().as_uri(), workdir.as_uri()}:
        output = output.replace(prefix, "file:///WORKDIR")
    return output


def _check_golden(name: str, output: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(output, encoding="utf-8", newline="\n")
        return
    assert path.exists(), f"missing golden file {path}; run with NPU_AUDIT_UPDATE_GOLDEN=1 to create it"
    assert output == path.read_text(encoding="utf-8"), f"{name} differs from the golden file (NPU_AUDIT_UPDATE_GOLDEN=1 regenerates)"


@pytest.mark.parametrize(
    "golden, fmt, options",
    [
        ("text.txt", "text", {}),
        ("text_color.txt", "text", {"color": True}),
        ("text_statistics.txt", "text", {"statistics": True}),
        ("json.json", "json", {}),
        ("lsp.json", "lsp", {}),
        ("sarif.json", "sarif", {}),
        ("github.txt", "github", {}),
    ],
)
def test_golden(workdir, golden, fmt, options):
    output = render(make_report(), fmt, rules=RULES, **options)
    _check_golden(golden, _normalise(output, workdir))


# -- all formats agree --------------------------------------------------------------------------


def _findings_by_format(workdir) -> dict[str, list[tuple[str, int]]]:
    report = make_report()
    out = {}
    txt = render(report, "text", rules=RULES)
    out["text"] = [(m.group(2), int(m.group(1))) for m in re.finditer(r"^\S+?:(\d+):\d+: (NPU\d+) \[", txt, re.M)]
    stats = render(report, "text", rules=RULES, statistics=True)
    out["statistics"] = sorted((m.group(2), int(m.group(1))) for m in re.finditer(r"^\s*(\d+)  (NPU\d+)", stats, re.M))
    data = json.loads(render(report, "json", rules=RULES))
    out["json"] = [(d["code"], d["line"]) for d in data["diagnostics"]]
    data = json.loads(render(report, "lsp", rules=RULES))
    out["lsp"] = [(d["code"], d["range"]["start"]["line"] + 1) for f in data["files"] for d in f["diagnostics"]]
    data = json.loads(render(report, "sarif", rules=RULES))
    out["sarif"] = [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in data["runs"][0]["results"]]
    gh_out = render(report, "github", rules=RULES)
    out["github"] = [(m.group(3), int(m.group(2))) for m in re.finditer(r"^::(\w+) file=[^,]*,line=(\d+),.*?title=(NPU\d+) ", gh_out, re.M)]
    return out


def test_all_formats_carry_the_same_findings(workdir):
    report = make_report()
    expected = sorted((f.code, f.line) for f in report.findings)
    assert len(expected) == 7
    by_format = _findings_by_format(workdir)
    for fmt, found in by_format.items():
        if fmt == "statistics":  # counts per code
            continue
        assert sorted(found) == expected, fmt
    counts = {}
    for code, _ in expected:
        counts[code] = counts.get(code, 0) + 1
    assert sorted(by_format["statistics"]) == sorted((code, n) for code, n in counts.items())


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_report(workdir, fmt):
    out = render(RunReport([]), fmt, rules=RULES)
    assert out.endswith("\n") or out == ""
    if fmt == "text":
        assert out == "No problems found (0 files checked).\n"
    elif fmt == "concise":
        assert out == ""
    elif fmt != "github":
        json.loads(out)


def test_render_dispatch():
    assert FORMATS == ("text", "concise", "json", "lsp", "sarif", "github")
    with pytest.raises(ValueError, match="unknown output format"):
        render(make_report(), "xml", rules=RULES)


# -- text ---------------------------------------------------------------------------------------


def _one(severity: str, *, fix=None) -> Finding:
    return Finding("a.py", 1, 1, 1, 2, "NPU101", "unknown-option", severity, "m", fix=fix)


@pytest.mark.parametrize(
    "findings, files, expected",
    [
        ([], 1, "No problems found (1 file checked)."),
        ([], 3, "No problems found (3 files checked)."),
        ([_one("error")], 1, "Found 1 error, 0 warnings, 0 infos in 1 file (1 file checked)."),
        ([_one("error"), _one("error"), _one("warning"), _one("info")], 2,
         "Found 2 errors, 1 warning, 1 info in 1 file (2 files checked)."),
        ([_one("info"), _one("info"), _one("warning"), _one("warning")], 1,
         "Found 0 errors, 2 warnings, 2 infos in 1 file (1 file checked)."),
    ],
)
def test_text_summary_plural(findings, files, expected):
    reports = [FileReport("a.py", findings=list(findings), text="x = 1\n")] + [FileReport(f"b{i}.py") for i in range(files - 1)]
    out = render(RunReport(reports), "text", rules=RULES)
    assert out.splitlines()[-1] == expected


def test_text_fixable_summary():
    safe, unsafe = Fix("safe", "s", ()), Fix("unsafe", "u", ())
    out = render(RunReport([FileReport("a.py", findings=[_one("error", fix=safe)])]), "text", rules=RULES)
    assert out.splitlines()[-1] == "1 fixable with `npu-audit --fix`."
    findings = [_one("error", fix=safe), _one("error", fix=safe), _one("warning", fix=unsafe)]
    out = render(RunReport([FileReport("a.py", findings=findings)]), "text", rules=RULES)
    assert out.splitlines()[-1] == "2 fixable with `npu-audit --fix` (1 more with --unsafe-fixes)."


def test_text_color_switch():
    report = make_report()
    plain = render(report, "text", rules=RULES)
    assert "\x1b" not in plain
    assert "\x1b" not in render(report, "text", rules=RULES, statistics=True)
    colored = render(report, "text", rules=RULES, color=True)
    assert "\x1b[31m" in colored and "\x1b[33m" in colored and "\x1b[34m" in colored and "\x1b[36m" in colored
    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == plain


def test_text_marker_alignment():
    line = source_lines(TRAIN)[EMOJI_LINE - 1]
    start, end = _col(EMOJI_LINE, 'custom_op.parameter_map["enable_dump"]')
    shown, mark = text.marker(line, start, end)
    # 'x = "' (5 cells) + 日本😀 (3 wide characters, 6 cells) + '"; ' (3 cells)
    assert mark == " " * 14 + "^" * (end - start)
    # a tab expands the same way in the source line and under it
    shown, mark = text.marker("\tx = 1", 2, 3)
    assert (shown, mark) == ("    x = 1", "    ^")
    shown, mark = text.marker("ab\tx", 4, 5)
    assert (shown, mark) == ("ab  x", "    ^")
    # end on another line: to the end of the line; empty ranges get one caret
    assert text.marker("abcdef", 3, None)[1] == "  ^^^^"
    assert text.marker("abc", 2, 2)[1] == " ^"


def test_text_unreadable_file_has_no_source():
    out = render(make_report(), "text", rules=RULES)
    block = out.split("legacy/broken.py:3:5: NPU001 [syntax-error] Cannot parse: invalid syntax\n", 1)[1]
    assert block.startswith("\n")  # the next thing is the blank separator line, not a gutter


def test_text_control_characters_are_not_printed():
    report = RunReport([FileReport("a.py", [Finding("a.py", 1, 1, 1, 2, "NPU101", "unknown-option", "error", "m")],
                                   text="x = '\x1b[2J'\n")])
    assert "\x1b" not in render(report, "text", rules=RULES)


def test_text_without_source():
    out = render(make_report(), "text", rules=RULES, show_source=False)
    assert " | " not in out and "= hint: did you mean" in out


# -- json ---------------------------------------------------------------------------------------


def test_json_contract():
    data = json.loads(render(make_report(), "json", rules=RULES))
    assert list(data) == ["version", "tool", "settings", "diagnostics", "files", "summary"]
    assert data["files"] == [{"path": r.path, "parsed": r.parsed} for r in sorted(make_report().files, key=lambda r: r.path)]
    assert data["version"] == 1
    assert data["tool"] == {"name": "npu-audit", "version": npu_audit.__version__}
    first = data["diagnostics"][0]
    assert list(first) == ["path", "line", "column", "end_line", "end_column", "code", "name", "severity", "message",
                           "hint", "option", "certainty", "tags", "related", "fix"]
    assert data["summary"] == make_report().summary()
    emoji = next(d for d in data["diagnostics"] if d["line"] == EMOJI_LINE)
    assert emoji["column"] == 12  # characters, not UTF-16 units or bytes
    assert '"日本😀"' not in render(make_report(), "json", rules=RULES)  # the source is not embedded...
    assert "会话" not in render(make_report(), "json", rules=RULES)


def test_json_keeps_unicode():
    report = RunReport([FileReport("数据.py", [Finding("数据.py", 1, 1, 1, 2, "NPU101", "unknown-option", "error", "未知 😀")])])
    out = render(report, "json", rules=RULES)
    assert "未知 😀" in out and "数据.py" in out and out.endswith("}\n")


# -- lsp ----------------------------------------------------------------------------------------


def test_utf16_columns():
    line = 'x = "日本😀"; custom_op.parameter_map["k"]'
    col = line.index("custom_op") + 1
    assert col == 12
    assert lsp.to_utf16_column(line, col) == 12  # 😀 is two UTF-16 code units
    assert lsp.from_utf16_column(line, 12) == col
    assert lsp.to_utf16_column(line, 1) == 0
    assert lsp.to_utf16_column(line, 8) == 7 and lsp.to_utf16_column(line, 9) == 9  # before/after 😀
    assert lsp.from_utf16_column(line, 8) == 8  # inside the surrogate pair: that character
    for c in range(1, len(line) + 3):
        assert lsp.from_utf16_column(line, lsp.to_utf16_column(line, c)) == c


def test_lsp_emoji_line_offsets(workdir):
    data = json.loads(render(make_report(), "lsp", rules=RULES))
    train = next(f for f in data["files"] if f["path"] == "train.py")
    diag = next(d for d in train["diagnostics"] if d["code"] == "NPU301" and d["range"]["start"]["line"] == EMOJI_LINE - 1)
    # custom_op is character 11 (0-based) but UTF-16 offset 12; the range ends 38 characters later
    assert diag["range"] == {"start": {"line": 7, "character": 12}, "end": {"line": 7, "character": 50}}
    assert diag["relatedInformation"][0]["location"]["range"]["start"] == {"line": 4, "character": 0}
    assert train["uri"] == (workdir / "train.py").resolve().as_uri()


def test_lsp_diagnostic_shape(workdir):
    data = json.loads(render(make_report(), "lsp", rules=RULES))
    train = next(f for f in data["files"] if f["path"] == "train.py")
    by_code = {d["code"]: d for d in train["diagnostics"]}
    unknown = by_code["NPU101"]
    assert list(unknown) == ["range", "severity", "code", "codeDescription", "source", "message", "data"]
    assert unknown["severity"] == 1 and unknown["source"] == "npu-audit"
    assert unknown["codeDescription"]["href"] == UnknownOptionRule().help_uri
    assert unknown["message"] == 'Unknown option "precison_mode"\nhint: did you mean "precision_mode"?'
    assert unknown["data"]["fix"]["applicability"] == "safe"
    assert by_code["NPU401"]["tags"] == [2] and by_code["NPU401"]["severity"] == 3
    assert by_code["NPU402"]["tags"] == [1]
    assert by_code["NPU301"]["severity"] == 2 and "tags" not in by_code["NPU301"]
    assert data["version"] == 1


def test_lsp_validates_with_lsprotocol(workdir):
    types = pytest.importorskip("lsprotocol.types")
    converters = pytest.importorskip("lsprotocol.converters")
    converter = converters.get_converter()
    data = json.loads(render(make_report(), "lsp", rules=RULES))
    n = 0
    for f in data["files"]:
        for d in f["diagnostics"]:
            converter.structure(d, types.Diagnostic)
            n += 1
        for a in f["codeActions"]:
            action = converter.structure(a, types.CodeAction)
            assert action.edit is not None
    assert n == 7


def test_lsp_code_actions(workdir):
    report = make_report()
    train = report.files[0]
    uri = lsp.uri_of("train.py")
    by_code = {f.code: f for f in train.findings}
    (action,) = lsp.code_actions(by_code["NPU101"], train, uri)
    assert action["kind"] == "quickfix" and action["isPreferred"] is True
    assert action["title"] == 'Replace with "precision_mode"'
    edit = action["edit"]["changes"][uri][0]
    assert edit == {"range": {"start": {"line": 6, "character": 25}, "end": {"line": 6, "character": 38}}, "newText": "precision_mode"}
    (unsafe,) = lsp.code_actions(by_code["NPU401"], train, uri)
    assert unsafe["title"].endswith(" (unsafe)") and unsafe["isPreferred"] is False
    assert lsp.code_actions(by_code["NPU301"], train, uri) == []
    # a fix creating a file: documentChanges with a non-overwriting CreateFile
    (create,) = lsp.code_actions(by_code["NPU501"], train, uri)
    kinds = [c.get("kind", "edit") for c in create["edit"]["documentChanges"]]
    assert kinds == ["create", "edit", "edit"]
    assert create["edit"]["documentChanges"][0]["options"] == {"overwrite": False, "ignoreIfExists": False}
    (workdir / "fusion_switch.cfg").write_text("{}", encoding="utf-8")
    (existing,) = lsp.code_actions(by_code["NPU501"], train, uri)
    assert "changes" in existing["edit"]  # existing files are never touched


def test_lsp_fix_all_merges_safe_non_overlapping(workdir):
    line = "custom_op.parameter_map['abc'].s = b'x'\n"
    a = Finding("f.py", 1, 25, 1, 30, "NPU101", "unknown-option", "error", "a", fix=Fix("safe", "A", (Edit(1, 26, 1, 29, "xyz"),)))
    b = Finding("f.py", 1, 26, 1, 28, "NPU101", "unknown-option", "error", "b", fix=Fix("safe", "B", (Edit(1, 27, 1, 28, "q"),)))
    c = Finding("f.py", 1, 36, 1, 40, "NPU301", "dump-without-path", "warning", "c", fix=Fix("safe", "C", (Edit(1, 37, 1, 38, "y"),)))
    d = Finding("f.py", 1, 1, 1, 2, "NPU401", "deprecated-option", "info", "d", fix=Fix("unsafe", "D", (Edit(1, 1, 2, 1, ""),)))
    fr = FileReport("f.py", [d, c, b, a], text=line)
    action = lsp.fix_all_action(fr, "file:///f.py")
    assert action["kind"] == "source.fixAll.npu-audit"
    assert [e["newText"] for e in action["edit"]["changes"]["file:///f.py"]] == ["xyz", "y"]  # b overlaps a, d is unsafe
    assert [x["message"] for x in action["diagnostics"]] == ["a", "c"]
    assert lsp.fix_all_action(FileReport("f.py", [d], text=line), "file:///f.py") is None


def test_lsp_suppress_action():
    f = Finding("f.py", 1, 6, 1, 7, "NPU101", "unknown-option", "error", "m")
    fr = FileReport("f.py", [f], text='x = "😀"; y = 1\n')
    action = lsp.suppress_action(f, fr, "file:///f.py")
    assert action["title"] == "Suppress unknown-option on this line" and action["kind"] == "quickfix"
    (edit,) = action["edit"]["changes"]["file:///f.py"]
    assert edit == {"range": {"start": {"line": 0, "character": 15}, "end": {"line": 0, "character": 15}},
                    "newText": " # npu-audit: ignore[unknown-option]"}
    fr = FileReport("f.py", [f], text="y = 1  # npu-audit: ignore[dump-without-path]\n")
    (edit,) = lsp.suppress_action(f, fr, "file:///f.py")["edit"]["changes"]["file:///f.py"]
    assert edit["newText"] == ", unknown-option" and edit["range"]["start"] == {"line": 0, "character": 44}
    fr = FileReport("f.py", [f], text="y = 1  # npu-audit: ignore[unknown-option]\n")
    assert lsp.suppress_action(f, fr, "file:///f.py") is None
    fr = FileReport("f.py", [f], text="y = 1  # NPU-AUDIT: ignore\n")  # a bare ignore covers everything
    assert lsp.suppress_action(f, fr, "file:///f.py") is None
    fr = FileReport("f.py", [f], text="y = 1 + \\\n    2\n")  # no comment after a line continuation
    assert lsp.suppress_action(f, fr, "file:///f.py") is None


# -- sarif --------------------------------------------------------------------------------------


def test_sarif_validates_against_schema(workdir):
    import jsonschema  # a test dependency (extra "test"): never skipped
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    data = json.loads(render(make_report(), "sarif", rules=RULES))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    errors = sorted(cls(schema).iter_errors(data), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


def test_sarif_contents(workdir):
    data = json.loads(render(make_report(), "sarif", rules=RULES))
    (run,) = data["runs"]
    assert data["version"] == "2.1.0" and run["columnKind"] == "unicodeCodePoints"
    driver = run["tool"]["driver"]
    assert driver["semanticVersion"] == npu_audit.__version__
    assert [r["id"] for r in driver["rules"]] == [r.code for r in RULES]  # every rule, also unreported ones
    unknown = driver["rules"][1]
    assert unknown["help"]["markdown"] == UnknownOptionRule().documentation()
    assert "```" not in unknown["help"]["text"] and "#" not in unknown["help"]["text"].splitlines()[0]
    assert run["invocations"][0]["executionSuccessful"] is True
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert re.fullmatch(r"[0-9a-f]{16}:\d+", result["partialFingerprints"]["primaryLocationLineHash"])
    locations = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert locations == {"train.py", "legacy/broken.py"}


def test_sarif_uri_relative_to_root(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "repo").mkdir()
    report = RunReport([FileReport("repo/src dir/a.py", [Finding("repo/src dir/a.py", 1, 1, 1, 2, "NPU101", "unknown-option", "error", "m")])])
    data = sarif.to_dict(report, RULES, root=str(tmp_path / "repo"))
    loc = data["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": "src%20dir/a.py", "uriBaseId": "%SRCROOT%"}
    outside = sarif.to_dict(RunReport([FileReport("../x.py", [Finding("../x.py", 1, 1, 1, 2, "NPU101", "unknown-option", "error", "m")])]),
                            RULES, root=str(tmp_path))
    loc = outside["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": (tmp_path.parent / "x.py").as_uri()}


def _fingerprints(text_: str, lines: list[int]) -> list[str]:
    findings = [Finding("a.py", n, 1, n, 2, "NPU101", "unknown-option", "error", "m") for n in lines]
    data = sarif.to_dict(RunReport([FileReport("a.py", findings, text=text_)]), RULES)
    return [r["partialFingerprints"]["primaryLocationLineHash"] for r in data["runs"][0]["results"]]


def test_sarif_fingerprints_stable_when_lines_move():
    before = _fingerprints("a = 1\nb  =  2\nb = 2\n", [2, 3])
    after = _fingerprints("\n\n# moved\na = 1\n    b = 2\nb = 2\n", [5, 6])
    assert before == after
    assert before[0].endswith(":1") and before[1].endswith(":2") and before[0][:16] == before[1][:16]
    assert _fingerprints("c = 3\n", [1])[0][:16] != before[0][:16]


# -- github -------------------------------------------------------------------------------------


def test_github_escaping():
    assert gh.escape_data("100% a:b,c\r\nd") == "100%25 a:b,c%0D%0Ad"
    assert gh.escape_property("100% a:b,c\r\nd") == "100%25 a%3Ab%2Cc%0D%0Ad"
    f = Finding("dir,x/a:b.py", 3, 2, 3, 5, "NPU101", "unknown-option", "warning", "50% off: a, b\nnext", hint="h")
    assert gh.annotation(f) == ("::warning file=dir%2Cx/a%3Ab.py,line=3,col=2,endLine=3,endColumn=5,"
                                "title=NPU101 unknown-option::50%25 off: a, b%0Anext%0Ahint: h")


def test_github_commands(workdir):
    out = render(make_report(), "github", rules=RULES)
    lines = out.splitlines()
    assert len(lines) == 7 and out.endswith("\n")
    assert {line.split(" ", 1)[0] for line in lines} == {"::error", "::warning", "::notice"}
    multi = next(line for line in lines if "NPU501" in line)
    assert "col=" not in multi and "endColumn=" not in multi and "endLine=12" in multi
