"""Extraction: every recognised form has a fixture in tests/fixtures/extract/ with its expected
effective config (<name>.expected.json, reviewed by hand; regenerate with NPU_AUDIT_UPDATE_GOLDEN=1
and review the diff)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures" / "extract"
CASES = sorted(p.stem for p in FIXTURES.glob("*.py"))


def extract(name: str) -> list[dict]:
    path = FIXTURES / f"{name}.py"
    display = f"{name}.py"
    report = analyze_file(Job(file=str(path), display=display, roots=(str(FIXTURES),), settings=Settings(),
                              want_configs=True, force_parse=True))
    assert not report.internal_error, report.findings
    return report.configs


def compact(configs: list[dict]) -> list[dict]:
    out = []
    for c in configs:
        entries = []
        for e in c["entries"]:
            options = {}
            for key, o in e["options"].items():
                options[key] = {
                    "value": o["value"],
                    "type": o["type"],
                    "field": o["field"],
                    "certainty": o["certainty"],
                    "origin": o["origin"],
                    **({"implicit": True} if o["implicit"] else {}),
                    **({"flag": o["flag"]} if o.get("flag") else {}),
                    **({"possible": [p["value"] for p in o["possible_values"]]} if len(o["possible_values"]) > 1 else {}),
                    "path": o["path"],
                    "line": o["line"],
                }
            entries.append({"name": e["name"], "npu": e["npu"], "kind": e["kind"], "line": e["line"],
                            "options": options, **({"hazards": e["hazards"]} if e["hazards"] else {})})
        out.append({"kind": c["kind"], "path": c["path"], "line": c["line"], "helpers": c["helpers"],
                    "facts": [(f["kind"], f["value"], f["line"]) for f in c["code_facts"]], "entries": entries})
    return json.loads(json.dumps(out))


@pytest.mark.parametrize("name", CASES)
def test_fixture_effective_config(name):
    got = compact(extract(name))
    expected_file = FIXTURES / f"{name}.expected.json"
    if os.environ.get("NPU_AUDIT_UPDATE_GOLDEN"):
        expected_file.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert expected_file.exists(), f"missing {expected_file.name}: run with NPU_AUDIT_UPDATE_GOLDEN=1 and review"
    assert got == json.loads(expected_file.read_text(encoding="utf-8"))


def options_of(configs, config_index=0, entry_index=0) -> dict:
    return configs[config_index]["entries"][entry_index]["options"]


def test_three_configs_for_three_devices():
    configs = extract("basic")
    assert [options_of(configs, i)["session_device_id"]["value"] for i in range(3)] == [0, 1, 7]
    assert configs[0]["rewrite_options"] == {"remapping": "RewriterConfig.OFF", "memory_optimization": "RewriterConfig.OFF"}


def test_values_are_resolved_like_a_reader_would():
    opts = options_of(extract("values"))
    assert opts["graph_memory_max_size"]["value"] == str(26 * 1024**3)
    assert opts["dump_path"]["value"] == "/home/dump/npu" and opts["dump_path"]["origin"] == "resolved"
    assert opts["iterations_per_loop"]["value"] == 10  # parameter default 2 * 5
    assert opts["precision_mode"]["origin"] == "resolved"  # read through a module constant
    assert opts["precision_mode_v2"]["origin"] == "literal"
    assert opts["work_path"]["origin"] == "unresolved" and opts["work_path"]["value"] is None  # never guessed


def test_flag_and_argparse_defaults_are_marked():
    opts = options_of(extract("flags_and_args"))
    assert opts["precision_mode"]["origin"] == "flag-default" and opts["precision_mode"]["flag"] == "precision_mode"
    assert opts["dump_path"]["value"] == "/tmp/dump" and opts["dump_path"]["flag"] == "dump_path"
    assert opts["graph_run_mode"]["value"] == 1 and opts["graph_run_mode"]["flag"] == "run_mode"


def test_branches_record_every_possible_value():
    opts = options_of(extract("branches"))
    pm = opts["precision_mode"]
    assert pm["certainty"] == "conditional" and pm["set_on_every_path"] is True
    assert [p["value"] for p in pm["possible_values"]] == ["allow_mix_precision", "must_keep_origin_dtype", "allow_fp32_to_fp16"]
    assert opts["enable_dump"]["certainty"] == "conditional" and opts["enable_dump"]["set_on_every_path"] is False
    assert opts["iterations_per_loop"]["value"] == 10 and len(opts["iterations_per_loop"]["writes"]) == 2
    assert opts["deterministic"]["value"] == 1  # loop over a literal list is unrolled


def test_helpers_classes_and_self_are_followed():
    configs = extract("helpers_and_classes")
    opts = options_of(configs)
    assert opts["precision_mode"]["value"] == "allow_mix_precision"
    assert opts["iterations_per_loop"]["value"] == 50
    assert opts["dump_path"]["value"] == "/data/dump"
    assert len(configs) == 1


def test_modules_of_the_tree_are_followed():
    configs = extract("uses_pkg")
    opts = options_of(configs)
    assert opts["precision_mode"]["value"] == "allow_mix_precision_fp16"
    assert opts["dump_path"]["value"] == "/data/npu_dump"
    assert opts["iterations_per_loop"]["value"] == 20
    assert opts["iterations_per_loop"]["path"] == os.path.join("pkg", "npu_setup.py")


def test_npurunconfig_wraps_session_config_and_marks_implicit_writes():
    configs = extract("npurunconfig")
    run = next(c for c in configs if c["kind"] == "NPURunConfig")
    assert [e["kind"] for e in run["entries"]] == ["custom_optimizer", "npurunconfig"]
    mine, estimator = run["entries"]
    assert mine["options"]["hcom_parallel"]["value"] is False
    assert estimator["options"]["hcom_parallel"]["implicit"] is True
    assert estimator["options"]["iterations_per_loop"]["value"] == 100
    assert estimator["options"]["dump_step"]["value"] == "0|5"
    assert "profiling_options" not in estimator["options"]  # not written with enable_profiling=False
    assert estimator["options"]["input_shape"]["value"] == "data:1,-1"  # positional DynamicInputConfig args


def test_strings_and_comments_are_not_code():
    opts = options_of(extract("strings_and_comments"))
    assert set(opts) == {"use_off_line"}


def test_in_out_pair_list_built_with_append():
    opts = options_of(extract("in_out_pair"))
    assert opts["in_out_pair"]["value"] == str([[["import/conv2d_1/convolution"],
                                                 ["import/conv2d_59/BiasAdd", "import/conv2d_67/BiasAdd"]]])


def test_code_facts_are_linked_to_the_session():
    configs = extract("code_facts")
    assert ("set_iteration_per_loop", 100) in [(f[0], f[1]) for f in compact(configs)[0]["facts"]]


def test_adapter_helpers_add_npu_entries():
    configs = extract("adapter_helpers")
    helpers = {tuple(c["helpers"]) for c in configs}
    assert ("npu_config_proto",) in helpers and ("set_keras_session_npu_config",) in helpers
    proto = next(c for c in configs if c["helpers"] == ["npu_config_proto"])
    assert proto["entries"][0]["npu"] is True  # npu_config_proto adds an NpuOptimizer entry


def test_tests_decided_by_literal_arguments_pick_one_branch(tmp_path):
    helper = (
        "import tensorflow as tf\n"
        "def make(device_id, mixed=True):\n"
        "    config = tf.ConfigProto()\n"
        "    op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        "    op.name = 'NpuOptimizer'\n"
        "    op.parameter_map['session_device_id'].i = device_id\n"
        "    if mixed:\n"
        "        op.parameter_map['precision_mode_v2'].s = b'mixed_float16'\n"
        "    return config\n"
    )
    (tmp_path / "called.py").write_text(helper + "a = make(0)\nb = make(1, mixed=False)\n")
    (tmp_path / "uncalled.py").write_text(helper)
    for name, expected in (("called.py", [{"always"}, set()]), ("uncalled.py", [{"conditional"}])):
        report = analyze_file(Job(file=str(tmp_path / name), display=name, roots=(str(tmp_path),), settings=Settings(),
                                  want_configs=True))
        got = [{o["certainty"] for k, o in c["entries"][0]["options"].items() if k == "precision_mode_v2"}
               for c in report.configs]
        assert got == expected, name


def test_inherited_configs_through_super(tmp_path):
    source = (
        "import tensorflow as tf\n"
        "class Base(object):\n"
        "    def __init__(self):\n"
        "        self.config = tf.ConfigProto()\n"
        "        self.op = self.config.graph_options.rewrite_options.custom_optimizers.add()\n"
        "        self.op.name = 'NpuOptimizer'\n"
        "class Child(Base):\n"
        "    def __init__(self, loops=5):\n"
        "        super(Child, self).__init__()\n"
        "        self.op.parameter_map['iterations_per_loop'].i = loops\n"
        "Child(20)\n"
    )
    (tmp_path / "inherit.py").write_text(source)
    report = analyze_file(Job(file=str(tmp_path / "inherit.py"), display="inherit.py", roots=(str(tmp_path),),
                              settings=Settings(), want_configs=True))
    (config,) = report.configs
    (entry,) = config["entries"]
    assert entry["npu"] is True and entry["options"]["iterations_per_loop"]["value"] == 20


def test_flag_dependent_conditional_expression_keeps_both_values(tmp_path):
    source = (
        "import tensorflow as tf\n"
        "tf.app.flags.DEFINE_boolean('bf16', False, '')\n"
        "FLAGS = tf.app.flags.FLAGS\n"
        "config = tf.ConfigProto()\n"
        "op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        "op.name = 'NpuOptimizer'\n"
        "op.parameter_map['precision_mode_v2'].s = tf.compat.as_bytes('mixed_bfloat16' if FLAGS.bf16 else 'mixed_fp16')\n"
    )
    (tmp_path / "cond.py").write_text(source)
    report = analyze_file(Job(file=str(tmp_path / "cond.py"), display="cond.py", roots=(str(tmp_path),),
                              settings=Settings(), want_configs=True))
    option = report.configs[0]["entries"][0]["options"]["precision_mode_v2"]
    assert [p["value"] for p in option["possible_values"]] == ["mixed_bfloat16", "mixed_fp16"]
    assert option["certainty"] == "conditional" and option["set_on_every_path"] is True
    bad = [f for f in report.findings if f.name == "invalid-value"]
    assert len(bad) == 1 and "mixed_fp16" in bad[0].message and "may happen" in bad[0].message


def _extract_with(kb, tmp_path, source):
    from npu_audit.extract.extraction import extract_configs
    from npu_audit.parse import parse_module
    from npu_audit.source import read_source

    path = tmp_path / "script.py"
    path.write_text(source)
    module = parse_module(read_source(path, "script.py"))
    return extract_configs("script.py", path, module, source.encode(), kb, [tmp_path], text=source)


def test_one_more_api_name_is_a_data_change_only(tmp_path, monkeypatch):
    """rules/tf_api.toml names the calls the extractor knows: a copy of the rules with one more alias of
    an existing kind (a helper a newer adapter release adds) is recognised with no change of code."""
    import shutil

    from npu_audit.knowledge import loader

    monkeypatch.setenv("NPU_AUDIT_NO_KB_SNAPSHOT", "1")
    rules = tmp_path / "rules"
    shutil.copytree(loader.rules_dir(), rules)
    table = rules / "tf_api.toml"
    text = table.read_text(encoding="utf-8")
    assert 'names = ["npu_config_proto"]' in text
    table.write_text(text.replace('names = ["npu_config_proto"]', 'names = ["npu_config_proto", "make_npu_config"]'),
                     encoding="utf-8")
    source = "from npu_bridge.npu_init import make_npu_config\nconfig = make_npu_config()\n"
    work = tmp_path / "work"
    work.mkdir()
    assert _extract_with(loader.load(), work, source).configs == []  # the shipped table does not know it
    kb = loader.load(str(rules))
    assert kb.tf_api.lookup("make_npu_config", "npu_bridge.npu_init.make_npu_config").kind == "npu-helper"
    (config,) = _extract_with(kb, work, source).configs
    assert config.kind == "ConfigProto" and config.helpers == ["make_npu_config"]
    assert [e.kind for e in config.entries] == ["helper-default"]


def test_every_kind_of_the_api_table_has_a_handler_and_names_are_unique():
    from npu_audit.extract import api
    from npu_audit.knowledge import tf_api
    from npu_audit.knowledge.validation import KnowledgeBaseError

    assert set(api.HANDLERS) == set(tf_api.KINDS) | {"runconfig-object"}
    entry = {"kind": "session", "names": ["Session"], "note": "x"}
    with pytest.raises(KnowledgeBaseError, match="named twice"):
        tf_api.from_data({"api": [], "python": [entry, entry]})
    with pytest.raises(KnowledgeBaseError, match="not one of"):
        tf_api.from_data({"api": [], "python": [dict(entry, kind="no-such-kind")]})
    with pytest.raises(KnowledgeBaseError, match="has no role"):
        tf_api.from_data({"api": [], "python": [dict(entry, roles={"main": "x"})]})
    with pytest.raises(KnowledgeBaseError, match="cite"):
        tf_api.from_data({"api": [{"kind": "session", "names": ["S"]}]})
