"""TensorFlow 2 scripts: npu_device.global_options() (issue 13).

The per-mistake findings are pinned by the annotated fixtures tests/fixtures/checks/*.tf2.py and
option-after-open.py (run by test_check_fixtures.py); here: the data against its source, every way a
script reaches the option object, a correct script that gets nothing, TF1 rules after enable_v1(),
the config view, fixes, and the editor helpers.
"""

from __future__ import annotations

import ast
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from npu_audit.extract.tf2 import KIND
from npu_audit.knowledge.loader import KnowledgeBaseError, load, rules_dir
from npu_audit.lsp.completion import completion_at
from npu_audit.lsp.hover import hover_at
from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings

TSV = Path("/work/shared/adapter/tf2_options.tsv")


def analyse(tmp_path, source: str, name: str = "train.py", configs: bool = False, **settings):
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    report = analyze_file(Job(file=str(path), display=name, roots=(str(tmp_path),), settings=Settings(**settings),
                              want_configs=configs))
    assert not report.internal_error, [f.message for f in report.findings]
    return report


def tf2_config(report) -> dict:
    found = [c for c in report.configs if c["kind"] == KIND]
    assert len(found) == 1, [c["kind"] for c in report.configs]
    return found[0]


def codes(report) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in report.findings)


# ---------------------------------------------------------------------------------------------
# the data


@pytest.mark.skipif(not TSV.is_file(), reason="the adapter facts are not mounted")
def test_every_adapter_option_is_in_the_table_with_its_values():
    table = load().tf2
    rows = list(csv.DictReader(TSV.open(encoding="utf-8"), delimiter="\t"))
    assert len(rows) == 75
    for row in rows:
        option = table.options[row["path"]]
        allowed = ast.literal_eval(row["allowed"])
        got = None if option.allowed is None else list(option.allowed) + ([None] if option.allow_none else [])
        assert got == allowed, row["path"]
        default = ast.literal_eval(row["default"])
        if isinstance(default, str):
            assert " ".join(default.split()) == option.default, row["path"]
        else:
            assert option.default == default and type(option.default) is type(default), row["path"]
        assert (row["kind"] == "deprecated") == (option.deprecation("current") is not None), row["path"]
        if row["kind"] == "deprecated":
            assert option.deprecation("current")["replacement"] == ast.literal_eval(row["replacement"])
        assert any(row["source"] in (c.adapter or "") for c in option.cite), row["path"]


def test_linked_options_agree_with_their_tf1_key():
    kb = load()
    for option in kb.tf2.options.values():
        if option.key is None:
            assert option.path not in kb.options, "a TF2-only option must not share a name with a TF1 key"
            continue
        spec = kb.options[option.key]
        for release in ("current", "legacy"):
            if not option.exists_in(release):
                continue  # assigning it raises ValueError there: unknown-option, not deprecated-option
            lifecycle = spec.lifecycle[release]
            deprecated = option.deprecation(release)
            # deprecated-option reads the TF1 lifecycle for both: the two tables must say the same
            assert (lifecycle.status == "deprecated") == (deprecated is not None), (option.path, release)
            if deprecated and deprecated["replacement"]:
                assert kb.tf2.options[deprecated["replacement"]].key == lifecycle.replacement


def test_loader_rejects_a_tf2_option_linked_to_an_unknown_key(tmp_path):
    import shutil

    rules = tmp_path / "rules"
    shutil.copytree(rules_dir(), rules)
    text = (rules / "tf2_options.toml").read_text(encoding="utf-8")
    (rules / "tf2_options.toml").write_text(text.replace('key = "dump_path"', 'key = "dump_pth"'), encoding="utf-8")
    load.cache_clear()
    try:
        with pytest.raises(KnowledgeBaseError, match="dump_pth"):
            load(str(rules))
    finally:
        load.cache_clear()


# ---------------------------------------------------------------------------------------------
# extraction


@pytest.mark.parametrize("prelude,obj", [
    ("import npu_device\n", "npu_device.global_options()"),
    ("import npu_device as npu\n", "npu.global_options()"),
    ("from npu_device import global_options\n", "global_options()"),
    ("from npu_device import global_options as options_of\n", "options_of()"),
])
def test_every_import_spelling_reaches_the_option_object(tmp_path, prelude, obj):
    report = analyse(tmp_path, prelude + f"{obj}.dump_config.dump_path = '/tmp/d'\n", configs=True)
    option = tf2_config(report)["entries"][0]["options"]["dump_config.dump_path"]
    assert option["value"] == "/tmp/d" and option["key"] == "dump_path" and option["line"] == 2


def test_names_groups_helpers_flags_setattr_and_one_object_per_process(tmp_path):
    (tmp_path / "npu_setup.py").write_text(
        "import npu_device as npu\n\n\ndef set_precision(mode):\n    npu.global_options().precision_mode_v2 = mode\n",
        encoding="utf-8")
    source = (
        "import argparse\n"
        "import npu_device as npu\n"
        "from npu_setup import set_precision\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--dump_path', default='/home/dump')\n"
        "args = parser.parse_args()\n"
        "opts = npu.global_options()\n"                       # 7: the object bound to a name
        "dump = opts.dump_config\n"                           # 8: a group bound to a name
        "dump.enable_dump = True\n"                           # 9
        "dump.dump_path = args.dump_path\n"                   # 10: an argparse default
        "setattr(opts, 'graph_run_mode', 1)\n"                # 11
        "def configure(o):\n"
        "    o.memory_config.atomic_clean_policy = 1\n"       # 13: through a parameter
        "configure(npu.global_options())\n"
        "set_precision('mixed_float16')\n"                    # 15: a helper of another module
        "npu.open().as_default()\n"                           # 16
    )
    report = analyse(tmp_path, source, configs=True)
    config = tf2_config(report)
    options = config["entries"][0]["options"]
    assert options["dump_config.enable_dump"]["line"] == 9
    assert options["dump_config.dump_path"]["origin"] == "flag-default"
    assert options["dump_config.dump_path"]["value"] == "/home/dump"
    assert options["graph_run_mode"]["value"] == 1
    assert options["memory_config.atomic_clean_policy"]["via"] == "global_options().memory_config.atomic_clean_policy"
    assert options["precision_mode_v2"]["value"] == "mixed_float16"
    assert options["precision_mode_v2"]["path"] == "npu_setup.py"
    assert [(o["line"], o["certainty"]) for o in config["opens"]] == [(16, "always")]
    assert not report.findings, [(f.line, f.code, f.message) for f in report.findings]


CORRECT = '''\
import argparse

import npu_device as npu
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--data_dump_flag", type=int, default=0)
parser.add_argument("--data_dump_path", default="/home/test/dump")
args = parser.parse_args()


def npu_config():
    options = npu.global_options()
    if args.data_dump_flag:
        options.dump_config.enable_dump = True
        options.dump_config.dump_path = args.data_dump_path
        options.dump_config.dump_mode = "all"
    options.graph_run_mode = 0  # online inference: the dynamic-dims profiles below are for inference
    options.precision_mode_v2 = "mixed_float16"
    options.modify_mixlist = "/home/test/ops_info.json"
    options.experimental.multi_branches_config.input_shape = "data:-1,224,224,3"
    options.experimental.multi_branches_config.dynamic_dims = "1;8;16"
    options.experimental.multi_branches_config.dynamic_node_type = "0"
    options.memory_config.atomic_clean_policy = 1
    options.op_compiler_cache_mode = "force"
    options.op_compiler_cache_dir = "/home/test/kernel_meta"
    npu.open().as_default()


if __name__ == "__main__":
    npu_config()
    model = tf.keras.Sequential()
'''


def test_a_correct_tf2_script_gets_no_finding(tmp_path):
    report = analyse(tmp_path, CORRECT, configs=True)
    assert report.parsed and not report.findings, [(f.line, f.code, f.message) for f in report.findings]
    assert len(tf2_config(report)["entries"][0]["options"]) == 12


def test_each_mistake_in_one_script(tmp_path):
    source = (
        "import npu_device as npu\n"
        "o = npu.global_options()\n"
        "o.precison_mode = 'allow_fp32_to_fp16'\n"          # 3 unknown option
        "o.enable_dump = True\n"                            # 4 wrong group
        "o.dump_config.enable_dump = 'True'\n"              # 5 "True" for a bool
        "o.op_debug_level = 1\n"                            # 6 deprecated
        "o.precision_mode = 'allow_mix_precision'\n"        # 7 precision_mode...
        "o.precision_mode_v2 = 'mixed_float16'\n"           # 8 ...with precision_mode_v2
        "o.experimental.multi_branches_config.input_shape = 'data:-1,3'\n"  # 9 without its companions
        "npu.open().as_default()\n"
        "o.dump_config.dump_path = '/home/dump'\n"          # 11 after open()
        "o.dump_config.dump_step = '0|5-3'\n"              # 12 malformed (and after open())
    )
    report = analyse(tmp_path, source)
    got = codes(report)
    for expected in [(3, "NPU101"), (4, "NPU101"), (5, "NPU104"), (6, "NPU301"), (7, "NPU202"), (7, "NPU501"),
                     (9, "NPU201"), (11, "NPU307"), (12, "NPU106"), (12, "NPU307")]:
        assert expected in got, (expected, got)
    assert all(f.certainty == "always" for f in report.findings if f.code != "NPU302")


def test_late_writes_follow_branches_and_helpers_nobody_calls(tmp_path):
    source = (
        "import npu_device as npu\n"
        "import os\n"
        "if os.getenv('OPEN_EARLY'):\n"
        "    npu.open()\n"
        "npu.global_options().precision_mode_v2 = 'origin'\n"     # 5: after open() on one path
        "def library_helper():\n"
        "    npu.global_options().hcom_parallel = False\n"        # 7: nobody calls it: order unknown
        "def other_helper():\n"
        "    npu.open()\n"
        "    npu.global_options().deterministic = 1\n"            # 10: after the open() of the same helper
    )
    report = analyse(tmp_path, source)
    late = {f.line: f for f in report.findings if f.code == "NPU307"}
    assert set(late) == {5, 10}
    assert late[5].certainty == "conditional" and "may happen" in late[5].message
    assert late[10].certainty == "always"


def test_tf1_rules_apply_after_enable_v1(tmp_path):
    source = (
        "import npu_device\n"
        "import tensorflow as tf\n"
        "npu_device.compat.enable_v1()\n"
        "config = tf.compat.v1.ConfigProto()\n"
        "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        "custom_op.name = 'NpuOptimizer'\n"
        "custom_op.parameter_map['precision_mode'].s = 'allow_mix_precision'\n"   # 7: bytes-required
        "custom_op.parameter_map['enable_dump'].b = True\n"                       # 8: no dump_path
        "custom_op.parameter_map['iterations_per_loop'].s = tf.compat.as_bytes('10')\n"  # 9: wrong field
        "sess = tf.compat.v1.Session(config=config)\n"
    )
    report = analyse(tmp_path, source, configs=True)
    assert {(7, "NPU103"), (8, "NPU201"), (9, "NPU102")} <= set(codes(report))
    assert [c["kind"] for c in report.configs] == ["ConfigProto"]


# ---------------------------------------------------------------------------------------------
# outputs and fixes


def run_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "npu_audit", "--no-cache", *args], capture_output=True, text=True,
                          cwd=cwd)


def test_show_config_json_and_text(tmp_path):
    (tmp_path / "train.py").write_text(CORRECT, encoding="utf-8")
    done = run_cli("--show-config", "--format", "json", "train.py", cwd=tmp_path)
    config = json.loads(done.stdout)["configs"][0]
    assert config["kind"] == "global_options" and config["opens"][0]["line"] == 27
    assert config["opens"][0]["through"][0]["callee"] == "npu_config"
    option = config["entries"][0]["options"]["dump_config.enable_dump"]
    assert option["key"] == "enable_dump" and option["field"] is None and option["certainty"] == "conditional"
    text = run_cli("--show-config", "--product", "a2", "train.py", cwd=tmp_path).stdout
    assert "TensorFlow 2 config npu_device.global_options()" in text
    assert "read by npu_device.open() at train.py:27" in text
    assert "op_compiler_cache_mode" in text and "adapter" in text  # the TF2 adapter's default, not set here


def test_findings_in_every_format(tmp_path):
    (tmp_path / "t.py").write_text("import npu_device as npu\nnpu.global_options().enable_dump = True\n",
                                   encoding="utf-8")
    for fmt in ("json", "sarif", "github", "lsp"):
        out = run_cli("--format", fmt, "t.py", cwd=tmp_path).stdout
        assert "NPU101" in out and "dump_config" in out, fmt


def test_fixes_are_exact_idempotent_and_opt_in(tmp_path):
    source = (
        "import npu_device as npu\n"
        "npu.global_options().precision_mode = 'must_keep_origin_dtype'\n"
        "npu.global_options().enable_dump = True\n"
        "npu.global_options().dump_config.dump_path = '/home/dump'\n"
        "npu.open().as_default()\n"
    )
    script = tmp_path / "t.py"
    script.write_text(source, encoding="utf-8")
    run_cli("--fix", "t.py", cwd=tmp_path)
    safe = script.read_text(encoding="utf-8")
    assert "precision_mode_v2 = 'origin'" in safe  # the documented exact row of the migration table
    assert "npu.global_options().enable_dump = True" in safe  # unsafe: not without --unsafe-fixes
    run_cli("--fix", "--unsafe-fixes", "t.py", cwd=tmp_path)
    fixed = script.read_text(encoding="utf-8")
    assert "npu.global_options().dump_config.enable_dump = True" in fixed
    ast.parse(fixed)
    run_cli("--fix", "--unsafe-fixes", "t.py", cwd=tmp_path)
    assert script.read_text(encoding="utf-8") == fixed
    assert run_cli("t.py", cwd=tmp_path).returncode == 0


def test_explain_a_tf2_path(tmp_path):
    text = run_cli("--explain", "global_options().dump_config.dump_mode", cwd=tmp_path).stdout
    assert "NpuDumpConfig" in text and "'input', 'output', 'all'" in text and "parameter_map key: dump_mode" in text
    data = json.loads(run_cli("--explain", "auto_tune_mode", "--format", "json", cwd=tmp_path).stdout)
    assert data["kind"] == "option"  # the TF1 key wins for a bare name both tables know
    data = json.loads(run_cli("--explain", "global_options().auto_tune_mode", "--format", "json", cwd=tmp_path).stdout)
    assert data["kind"] == "tf2" and data["removed"]["instead"] == "aoe_config.aoe_mode"


# ---------------------------------------------------------------------------------------------
# editor


EDITOR = ("import npu_device as npu\n"
          "npu.global_options().dump_config.dump_mode = 'al'\n"
          "npu.global_options().dump_co\n"
          "npu.global_options().enable_dump = True\n")


def test_hover_on_global_options_chains():
    kb = load()
    group, span = hover_at(kb, "current", EDITOR, 1, 25)
    assert "NpuDumpConfig" in group and (span.start, span.end) == (21, 32)
    option, _ = hover_at(kb, "current", EDITOR, 1, 36)
    assert "global_options().dump_config.dump_mode" in option and "'input', 'output', 'all'" in option
    value, _ = hover_at(kb, "current", EDITOR, 1, 47)
    assert "rejected" in value and "ValueError" in value and "'all'" in value
    unknown, _ = hover_at(kb, "current", EDITOR, 3, 25)
    assert "Unknown option" in unknown and "global_options().dump_config.enable_dump" in unknown


def test_completion_on_global_options_chains():
    kb = load()
    items = completion_at(kb, "current", EDITOR, 2, 28)
    labels = [i["label"] for i in items]
    assert "dump_config" in labels and "precision_mode_v2" in labels and "auto_tune_mode" not in labels
    assert items[0]["textEdit"]["range"]["start"] == {"line": 2, "character": 21}
    deprecated = next(i for i in items if i["label"] == "op_debug_level")
    assert deprecated["tags"] == [1]
    dump = completion_at(kb, "current", "npu.global_options().dump_config.\n", 0, 33)
    assert {i["label"] for i in dump} == set(kb.tf2.members("dump_config", "current"))
    values = completion_at(kb, "current", EDITOR, 1, 47)
    assert [i["label"] for i in values] == ["input", "output", "all"]


def test_relation_messages_speak_tf2(tmp_path):
    report = analyse(tmp_path, "import npu_device as npu\n"
                               "npu.global_options().profiling_config.profiling_options = '{\"output\": \"/tmp/p\"}'\n"
                               "npu.global_options().experimental.multi_branches_config.dynamic_dims = '1;2'\n")
    gated = next(f for f in report.findings if f.code == "NPU302")
    assert "profiling_config.enable_profiling" in gated.message and "profiling_mode" not in gated.message
    assert gated.hint.startswith("add global_options().profiling_config.enable_profiling = True")
    trio = next(f for f in report.findings if f.code == "NPU201")
    assert "TF2 adapter passes these options on unchecked" in trio.message and "entry" not in trio.hint


def test_an_option_the_tf2_object_no_longer_has_is_reported_once(tmp_path):
    """auto_tune_mode is deprecated for TF1 in the current release, but the current TF2 object has no such
    attribute: assigning it raises ValueError, which is the one finding (not also deprecated-option)."""
    script = tmp_path / "train.py"
    script.write_text('import npu_device\nopts = npu_device.global_options()\nopts.auto_tune_mode = "RL,GA"\n'
                      "npu_device.open().as_default()\n", encoding="utf-8")
    from npu_audit.pipeline import Job, analyze_file
    from npu_audit.settings import Settings

    report = analyze_file(Job(file=str(script), display="train.py", roots=(str(tmp_path),), settings=Settings()))
    assert [(f.name, f.line) for f in report.findings] == [("unknown-option", 3)]
    assert "raises ValueError" in report.findings[0].message

