"""Tests for npu_audit.knowledge.grammars."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npu_audit.knowledge import grammars as g
from npu_audit.knowledge.grammars import (
    GRAMMARS,
    GrammarProblem,
    check,
    parse_accelerate_train_mode,
    parse_dynamic_dims,
    parse_input_shape,
    parse_profiling_options,
)

EXPECTED_NAMES = {
    "dump_step",
    "input_shape",
    "dynamic_dims",
    "dynamic_inputs_shape_range",
    "profiling_options",
    "stream_max_parallel_num",
    "aicore_num",
    "experimental_accelerate_train_mode",
    "local_device_list",
    "auto_multistream_parallel_mode",
    "comma_list",
    "trimmed_comma_list",
    "space_list",
    "in_out_pair",
}
PRODUCTS = (None, "atlas-training", "atlas-inference", "atlas-a2", "atlas-a3")

VALID = [(name, text) for name, gr in GRAMMARS.items() for text in gr.examples_valid]
INVALID = [(name, text) for name, gr in GRAMMARS.items() for text in gr.examples_invalid]


def spans(name, text, product=None):
    return [(p.start, p.end) for p in check(name, text, product)]


def one(name, text, product=None) -> GrammarProblem:
    problems = check(name, text, product)
    assert len(problems) == 1, problems
    return problems[0]


def _well_formed(problems, text):
    assert isinstance(problems, list)
    for p in problems:
        assert isinstance(p, GrammarProblem)
        assert 0 <= p.start <= p.end <= len(text), (p, text)
        assert p.message and not p.message.endswith("."), p


# --- registry --------------------------------------------------------------------------------------------


def test_registry_names():
    assert set(GRAMMARS) == EXPECTED_NAMES
    for name, gr in GRAMMARS.items():
        assert gr.name == name
        assert gr.summary and "\n" not in gr.summary
        assert gr.examples_valid and gr.examples_invalid


def test_unknown_grammar_raises_keyerror():
    with pytest.raises(KeyError):
        check("no_such_grammar", "x")


@pytest.mark.parametrize("name,text", VALID)
def test_examples_valid(name, text):
    for product in PRODUCTS:
        assert check(name, text, product) == [], (product, check(name, text, product))


@pytest.mark.parametrize("name,text", INVALID)
def test_examples_invalid(name, text):
    problems = check(name, text)
    assert problems
    _well_formed(problems, text)


@pytest.mark.parametrize(
    "name,text",
    [
        ("dump_step", "0|5|10"),
        ("dump_step", "0|3-5|10"),
        ("input_shape", "data:1,1,40,-1;label:1,-1;mask:-1,-1"),
        ("dynamic_dims", "20,20,1,1;40,40,2,2;80,60,4,4"),
        (
            "dynamic_inputs_shape_range",
            "getnext:[128 ,3~5, 2~128, -1],[64 ,3~5, 2~128, -1];data:[128 ,3~5, 2~128, -1]",
        ),
        ("dynamic_inputs_shape_range", "getnext:[3,3,4,10],[-1,3,2~1000,-1],[-1,-1,-1,-1]"),
        ("dynamic_inputs_shape_range", "getnext:[3~5],[3~6]"),
        ("dynamic_inputs_shape_range", "data:[3~5],[3~6]"),
        (
            "profiling_options",
            '{"output":"/tmp/profiling","training_trace":"on","fp_point":"","bp_point":""}',
        ),
        ("profiling_options", '{"aic_metrics":"Custom:0x49,0x8,0x15,0x1b,0x64,0x10"}'),
        ("stream_max_parallel_num", "DNN_VM_AICPU:10,AIcoreEngine:1"),
        ("stream_max_parallel_num", "DNN_VM_TF:10,DNN_V100:1"),
        ("aicore_num", "2|4"),
        ("experimental_accelerate_train_mode", "fast|step|0.9"),
        ("experimental_accelerate_train_mode", "fast|loss|1.05"),
        ("local_device_list", "0,1"),
        ("auto_multistream_parallel_mode", "cv"),
        ("comma_list", "ScopeLayerNormPass,ScopeClipBoxesPass"),
        ("comma_list", "Pooling,SoftmaxV2"),
        ("space_list", "nodename1 nodename2 nodename3"),
        ("in_out_pair", "[[['a', 'b'], ['c']]]"),
    ],
)
def test_docs_examples_are_listed_and_valid(name, text):
    assert text in GRAMMARS[name].examples_valid
    assert check(name, text) == []


def test_bytes_input_is_accepted():
    assert check("dump_step", b"0|5|10") == []


# --- dump_step -------------------------------------------------------------------------------------------


def test_dump_step_downward_range():
    p = one("dump_step", "0|5-3|10")
    assert (p.start, p.end) == (2, 5)
    assert p.message == "range 5-3 must go upwards (N < M)"


def test_dump_step_equal_range_and_empty_items():
    assert spans("dump_step", "3-3") == [(0, 3)]
    p = one("dump_step", "0||5")
    assert (p.start, p.end) == (1, 3) and "empty iteration" in p.message
    p = one("dump_step", "0|5|")
    assert (p.start, p.end) == (3, 4) and "trailing '|'" in p.message


def test_dump_step_item_limit():
    assert check("dump_step", "|".join(map(str, range(100)))) == []
    text = "|".join(map(str, range(101)))
    p = one("dump_step", text)
    assert p.start == text.rindex("|") + 1 and "at most 100" in p.message


def test_dump_step_separator_hint_and_negative():
    assert "'|'" in one("dump_step", "0,5").message
    assert "negative" in one("dump_step", "-1").message
    assert spans("dump_step", "1|a|2") == [(2, 3)]


# --- input_shape / dynamic_dims --------------------------------------------------------------------------


def test_input_shape_points_at_dim():
    text = "data:1,1,40,-1;label:1,x"
    p = one("input_shape", text)
    assert text[p.start : p.end] == "x"
    p = one("input_shape", "data:1,-2")
    assert (p.start, p.end) == (7, 9) and "-1" in p.message


def test_input_shape_items():
    p = one("input_shape", "data:1;label")
    assert (p.start, p.end) == (7, 12) and "':'" in p.message
    assert spans("input_shape", "data:") == [(5, 5)]
    assert spans("input_shape", ":1") == [(0, 0)]
    assert "twice" in one("input_shape", "a:1;a:2").message
    assert check("input_shape", "x:0") == []


def test_parse_input_shape():
    assert parse_input_shape("data:1,1,40,-1;label:1,-1") == [("data", [1, 1, 40, -1]), ("label", [1, -1])]
    assert parse_input_shape("data:1,1,40,-1;label:1,-1;mask:-1,-1")[2] == ("mask", [-1, -1])
    assert parse_input_shape("x:0") == [("x", [0])]
    assert parse_input_shape("data:1,,2") is None
    assert parse_input_shape("") is None


def test_dynamic_dims():
    p = one("dynamic_dims", "20,20;40,-4")
    assert (p.start, p.end) == (9, 11) and "negative" in p.message
    assert spans("dynamic_dims", "1;;2") == [(1, 3)]


def test_parse_dynamic_dims():
    assert parse_dynamic_dims("20,20,1,1;40,40,2,2") == [[20, 20, 1, 1], [40, 40, 2, 2]]
    assert parse_dynamic_dims("20,20,1,1;40,40,2,2;80,60,4,4")[2] == [80, 60, 4, 4]
    assert parse_dynamic_dims("1,a") is None
    assert parse_dynamic_dims("") is None


# --- dynamic_inputs_shape_range --------------------------------------------------------------------------


def test_shape_range_unknown_section_suggests():
    p = one("dynamic_inputs_shape_range", "GetNext:[3~5]")
    assert (p.start, p.end) == (0, 7) and "did you mean 'getnext'" in p.message


def test_shape_range_space_before_bracket():
    p = one("dynamic_inputs_shape_range", "getnext:[3~5], [3~6]")
    assert (p.start, p.end) == (14, 15) and "space" in p.message
    p = one("dynamic_inputs_shape_range", "data: [1]")
    assert (p.start, p.end) == (5, 6)


def test_shape_range_dims():
    text = "getnext:[128 ,3~5, 9~2, -1]"
    p = one("dynamic_inputs_shape_range", text)
    assert text[p.start : p.end] == "9~2" and "a <= b" in p.message
    text = "data:[1, x ]"
    p = one("dynamic_inputs_shape_range", text)
    assert text[p.start : p.end] == "x"
    assert check("dynamic_inputs_shape_range", "data:[ ]") == []
    assert check("dynamic_inputs_shape_range", "data:[3~3]") == []
    assert spans("dynamic_inputs_shape_range", "data:[1") == [(7, 7)]


# --- profiling_options -----------------------------------------------------------------------------------


def test_profiling_json_syntax_error_offset():
    text = '{"output":"/tmp" "training_trace":"on"}'
    p = one("profiling_options", text)
    assert p.start == text.index('"training_trace"') and p.message.startswith("invalid JSON")
    text = '{"output":"/tmp",}'
    p = one("profiling_options", text)
    assert text[p.start : p.end] == ","
    p = one("profiling_options", '{"output": }')
    assert p.start == 11 and "invalid JSON" in p.message


def test_profiling_syntax_error_matches_json_module():
    for text in ['{"a": [1, 2,]}', '{"a": tru}', '{"a": "x\\q"}', '{"a": 1', '{"a" 1}']:
        with pytest.raises(json.JSONDecodeError) as info:
            json.loads(text)
        p = check("profiling_options", text)[0]
        assert p.message.startswith("invalid JSON")
        assert abs(p.start - info.value.pos) <= 1, (text, p, info.value.pos)


def test_profiling_empty_means_default():
    assert check("profiling_options", "") == []
    assert check("profiling_options", "  {  }  ") == []
    assert check("profiling_options", " ")


def test_profiling_unknown_field_did_you_mean():
    text = '{"output":"/tmp","trainig_trace":"on"}'
    p = one("profiling_options", text)
    assert text[p.start : p.end] == '"trainig_trace"'
    assert "did you mean 'training_trace'" in p.message
    p = one("profiling_options", '{"zzz":"on"}')
    assert "unknown profiling field 'zzz'" == p.message


def test_profiling_value_offsets():
    text = '{"output":"/tmp", "task_time":"l2"}'
    p = one("profiling_options", text)
    assert text[p.start : p.end] == "l2" and "'l0'" in p.message
    text = '{"training_trace": true}'
    p = one("profiling_options", text)
    assert text[p.start : p.end] == "true"
    text = '{"ge_api":"on"}'
    assert "ge_api" in one("profiling_options", text).message


def test_profiling_value_offsets_non_ascii():
    text = '{"output":"/données/\\u00e9\\ud83d\\ude00x\\t", "aicpu":"ön"}'
    problems = check("profiling_options", text)
    assert [text[p.start : p.end] for p in problems] == ["\\t", "ön"]
    text = '{"output":"/tmp/😀","hccl":"yes"}'
    p = one("profiling_options", text)
    assert text[p.start : p.end] == "yes"


def test_profiling_output_control_chars():
    for esc in ("\\n", "\\f", "\\r", "\\b", "\\t", "\\u000b", "\\u007F"):
        text = '{"output":"/tmp/a' + esc + 'b"}'
        p = one("profiling_options", text)
        assert text[p.start : p.end] == esc, esc


def test_profiling_storage_limit():
    assert check("profiling_options", '{"storage_limit":"4294967295MB"}') == []
    assert "outside" in one("profiling_options", '{"storage_limit":"4294967296MB"}').message
    assert "outside" in one("profiling_options", '{"storage_limit":"199MB"}').message
    assert "unit" in one("profiling_options", '{"storage_limit":"200"}').message
    text = '{"storage_limit":"200 MB"}'
    p = one("profiling_options", text)
    assert text[p.start : p.end] == " "
    text = '{"storage_limit":"200GB"}'
    p = one("profiling_options", text)
    assert text[p.start : p.end] == "GB"
    assert one("profiling_options", '{"storage_limit":200}')


def test_profiling_aic_metrics_custom():
    assert check("profiling_options", '{"aic_metrics":"Custom:1,0x6E,110,0X1"}') == []
    text = '{"aic_metrics":"Custom:0x49,0x6F"}'
    p = one("profiling_options", text)
    assert text[p.start : p.end] == "0x6F"
    text = '{"aic_metrics":"Custom:0x49,zz"}'
    assert text[slice(*spans("profiling_options", text)[0])] == "zz"
    assert check("profiling_options", '{"aic_metrics":"Custom:' + ",".join(["1"] * 8) + '"}') == []
    assert check("profiling_options", '{"aic_metrics":"Custom:' + ",".join(["1"] * 9) + '"}')
    assert check("profiling_options", '{"aic_metrics":"Custom:"}')


def test_profiling_frequencies_numbers_or_strings():
    for value in ("50", '"50"', "1", '"100"'):
        assert check("profiling_options", '{"dvpp_freq":' + value + "}") == []
    for value in ("0", '"101"', "true", "1.5", '"1.0"', '"x"', "null", '"-1"'):
        assert check("profiling_options", '{"dvpp_freq":' + value + "}"), value
    assert check("profiling_options", '{"sys_interconnection_freq":51}')
    assert check("profiling_options", '{"host_sys_usage_freq":"50"}') == []
    assert check("profiling_options", '{"instr_profiling_freq":30000}') == []
    assert check("profiling_options", '{"instr_profiling_freq":30001}')


def test_profiling_host_sys():
    assert check("profiling_options", '{"host_sys":"cpu"}') == []
    assert check("profiling_options", '{"host_sys_usage":"mem,cpu"}') == []
    text = '{"host_sys_usage":"cpu,,mem"}'
    assert text[slice(*spans("profiling_options", text)[0])] == ",,"
    assert "twice" in one("profiling_options", '{"host_sys":"cpu,cpu"}').message


def test_profiling_product_aic_metrics():
    text = '{"aic_metrics":"L2Cache"}'
    for product in ("atlas-training", "atlas-inference"):
        p = one("profiling_options", text, product)
        assert text[p.start : p.end] == "L2Cache" and "not supported" in p.message
    for product in (None, "atlas-a2", "atlas-a3"):
        assert check("profiling_options", text, product) == []
    assert check("profiling_options", '{"aic_metrics":"MemoryAccess"}', "atlas-training")
    assert check("profiling_options", '{"aic_metrics":"MemoryAccess"}', "atlas-a3") == []


def test_profiling_product_fields():
    text = '{"sys_io_sampling_freq":10}'
    assert check("profiling_options", text, "atlas-inference")
    assert check("profiling_options", text, "atlas-training") == []
    text = '{"instr_profiling":"on"}'
    for product in ("atlas-training", "atlas-a2", "atlas-a3"):
        p = one("profiling_options", text, product)
        assert text[p.start : p.end] == '"instr_profiling"'
    assert check("profiling_options", text, "atlas-inference") == []
    assert check("profiling_options", text, None) == []
    text = '{"instr_profiling_freq":1000}'
    assert check("profiling_options", text, "atlas-training")
    assert check("profiling_options", text, "atlas-a2") == []


def test_profiling_instr_freq_mutual_exclusion():
    text = '{"instr_profiling_freq":1000,"task_time":"on","l2":"off","fp_point":"","aicpu":"on"}'
    for product in ("atlas-a2", "atlas-a3"):
        problems = check("profiling_options", text, product)
        assert [text[p.start : p.end] for p in problems] == ['"task_time"', '"aicpu"']
        assert all("mutually exclusive" in p.message for p in problems)
    assert check("profiling_options", text, "atlas-inference") == []
    assert check("profiling_options", text, None) == []


def test_profiling_not_an_object():
    p = one("profiling_options", '"output"')
    assert "JSON object" in p.message and (p.start, p.end) == (0, 8)


def test_parse_profiling_options():
    assert parse_profiling_options('{"output":"/tmp","training_trace":"on"}') == {
        "output": "/tmp",
        "training_trace": "on",
    }
    # field domain problems do not stop parsing (cross-field rules need the dict)
    assert parse_profiling_options('{"training_trace":"maybe"}') == {"training_trace": "maybe"}
    assert parse_profiling_options("") == {}
    assert parse_profiling_options("{") is None
    assert parse_profiling_options("[1]") is None


def test_profiling_fields_cover_docs():
    for field in (
        "output",
        "storage_limit",
        "hccl",
        "aic_metrics",
        "host_sys_usage_freq",
        "instr_profiling_freq",
    ):
        assert field in g.PROFILING_FIELDS
    assert g.PROFILING_DEPRECATED_FIELDS["hccl"] == "task_time"


# --- stream_max_parallel_num / aicore_num / accelerate ---------------------------------------------------


def test_stream_max_parallel_num():
    text = "DNN_VM_AICPU:10,AICoreEngine:1"
    p = one("stream_max_parallel_num", text)
    assert text[p.start : p.end] == "AICoreEngine" and "did you mean 'AIcoreEngine'" in p.message
    text = "DNN_VM_AICPU:0"
    p = one("stream_max_parallel_num", text)
    assert text[p.start : p.end] == "0"
    # upper bounds are not enforced
    assert check("stream_max_parallel_num", "DNN_VM_TF:99,DNN_V100:50") == []
    assert g.LEGACY_ENGINES == {"DNN_VM_TF": "DNN_VM_AICPU", "DNN_V100": "AIcoreEngine"}
    assert "twice" in one("stream_max_parallel_num", "DNN_VM_TF:1,DNN_VM_AICPU:2").message


def test_aicore_num():
    assert spans("aicore_num", "2|0") == [(2, 3)]
    assert spans("aicore_num", "2") == [(1, 1)]
    assert "'|'" in one("aicore_num", "2,4").message


def test_accelerate_train_mode():
    text = "fast|step|0.95"
    p = one("experimental_accelerate_train_mode", text)
    assert text[p.start : p.end] == "0.95" and "[0.2, 0.9]" in p.message
    text = "fast|loss|1.6"
    assert "[1.01, 1.5]" in one("experimental_accelerate_train_mode", text).message
    p = one("experimental_accelerate_train_mode", "fats|step")
    assert (p.start, p.end) == (0, 4) and "did you mean 'fast'" in p.message
    p = one("experimental_accelerate_train_mode", "fast|Step")
    assert (p.start, p.end) == (5, 9)


def test_parse_accelerate_train_mode():
    assert parse_accelerate_train_mode("fast|step|0.9") == ("fast", "step", 0.9)
    assert parse_accelerate_train_mode("fast|loss|1.05") == ("fast", "loss", 1.05)
    assert parse_accelerate_train_mode("fast|step") == ("fast", "step", None)
    assert parse_accelerate_train_mode("fast1|loss") == ("fast1", "loss", None)
    assert parse_accelerate_train_mode("fast|step|2") is None
    assert parse_accelerate_train_mode("fast") is None


# --- remaining grammars ----------------------------------------------------------------------------------


def test_local_device_list():
    assert spans("local_device_list", "0,1,x") == [(4, 5)]
    assert spans("local_device_list", "0,1,") == [(3, 4)]


def test_auto_multistream_parallel_mode():
    assert spans("auto_multistream_parallel_mode", "MainStream:65") == [(11, 13)]
    assert "did you mean 'LoadBalance'" in one("auto_multistream_parallel_mode", "loadbalance").message
    assert check("auto_multistream_parallel_mode", "LoadBalance:64") == []


def test_comma_list_messages():
    p = one("comma_list", "a, b")
    assert (p.start, p.end) == (2, 3) and "space" in p.message
    p = one("comma_list", "a,,b")
    assert "empty item" in p.message
    p = one("comma_list", "a ,b")
    assert (p.start, p.end) == (1, 2)


def test_space_list_messages():
    assert spans("space_list", "a  b") == [(1, 3)]
    assert spans("space_list", "a,b") == [(1, 2)]


def test_in_out_pair():
    text = "[[['a', 'b'], 'c']]"
    p = one("in_out_pair", text)
    assert text[p.start : p.end] == "'c'" and "out_nodes" in p.message
    text = "[[['é😀', 'b'], [3]]]"
    p = one("in_out_pair", text)
    assert text[p.start : p.end] == "3"
    text = "  [[['a'],\n ['b', None]]]"
    p = one("in_out_pair", text)
    assert text[p.start : p.end] == "None"
    assert check("in_out_pair", "[[['a'], ['b']]] x")
    assert check("in_out_pair", "[" * 500 + "]" * 500)  # too deep / not pairs: reported, no exception


# --- robustness ------------------------------------------------------------------------------------------

ALPHABET = "0123456789-|,;:[]~ {}\"'\\abcdefgilmnoprstuxyzABCDEFMNOPSUV._\n\té😀"


def _text_strategy():
    examples = [t for gr in GRAMMARS.values() for t in gr.examples_valid + gr.examples_invalid]
    mutated = st.tuples(st.sampled_from(examples), st.integers(0, 200), st.text(ALPHABET, max_size=4)).map(
        lambda t: t[0][: t[1]] + t[2] + t[0][t[1] + len(t[2]) // 2 :]
    )
    return st.one_of(st.text(), st.text(ALPHABET), mutated)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(GRAMMARS)), text=_text_strategy(), product=st.sampled_from(PRODUCTS))
def test_never_raises(name, text, product):
    # call the grammar function directly: the safety net in check() must not hide bugs
    problems = GRAMMARS[name].check(text, product)
    _well_formed(problems, text)
    assert check(name, text, product) == problems


@settings(max_examples=300, deadline=None)
@given(text=_text_strategy())
def test_parsers_never_raise(text):
    parse_input_shape(text)
    parse_dynamic_dims(text)
    parse_profiling_options(text)
    parse_accelerate_train_mode(text)


@settings(max_examples=200, deadline=None)
@given(
    obj=st.dictionaries(
        st.sampled_from(sorted(g.PROFILING_FIELDS) + ["bogus", "é😀"]),
        st.one_of(st.text(ALPHABET, max_size=8), st.integers(-5, 40000), st.booleans(), st.none()),
        max_size=6,
    ),
    ensure_ascii=st.booleans(),
    product=st.sampled_from(PRODUCTS),
)
def test_profiling_problems_point_inside_json(obj, ensure_ascii, product):
    text = json.dumps(obj, ensure_ascii=ensure_ascii)
    problems = g._check_profiling(text, product)
    _well_formed(problems, text)
    for p in problems:
        assert not p.message.startswith("invalid JSON")
        assert p.end > p.start or p.message.startswith("aic_metrics 'Custom:'")
