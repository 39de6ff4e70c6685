"""The knowledge base in rules/: schema (enforced by the loader), internal consistency, and agreement
with the sources in ../shared (adapter keys.tsv, the docs' own configuration examples)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from npu_audit.knowledge import grammars
from npu_audit.knowledge.loader import KnowledgeBaseError, load, rules_dir
from npu_audit.knowledge.model import RELEASES

SHARED = Path(__file__).resolve().parents[2] / "shared"
KB = load()


def in_domain(domain, value) -> bool:
    kind = domain.kind
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "enum":
        return value in domain.values
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "int-range":
        if isinstance(value, str):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            return False
        low_ok = domain.min is None or (value > domain.min if domain.min_exclusive else value >= domain.min)
        return low_ok and (domain.max is None or value <= domain.max)
    if kind == "grammar":
        return isinstance(value, str) and not grammars.check(domain.grammar, value)
    return isinstance(value, str)


def test_every_adapter_key_once_with_its_field():
    assert len(KB.options) == 106
    tsv = SHARED / "adapter" / "keys.tsv"
    if not tsv.exists():
        pytest.skip(f"{tsv} not found (the adapter facts live in ../shared next to the repository)")
    rows = [line.split("\t") for line in tsv.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]
    assert {r[0]: r[1] for r in rows} == {k: o.field for k, o in KB.options.items()}


def test_documented_keys_cite_their_docs():
    docs = SHARED / "docs"
    if not docs.exists():
        pytest.skip(f"{docs} not found")
    cited = {k for k, o in KB.options.items() if any(c.doc and c.doc.startswith("session-options") for c in o.cite)}
    assert len(cited) == 83
    for spec in KB.options.values():
        for c in spec.cite:
            if c.doc:
                assert (docs / c.doc).exists(), f"{spec.key} cites a missing doc {c.doc}"
                if c.heading:
                    assert c.heading in (docs / c.doc).read_text(encoding="utf-8"), f"{spec.key}: heading {c.heading!r}"


def test_defaults_values_and_overrides_lie_in_their_domains():
    for spec in KB.options.values():
        for release in RELEASES:
            view = spec.for_release(release)
            if view.default is not None:
                assert in_domain(view.domain, view.default), (spec.key, release, view.default)
        for d in spec.defaults:
            if spec.domain.kind in ("enum", "bool", "int-range", "int"):
                ok = in_domain(spec.domain, d.value) or any(
                    in_domain(spec.for_release(r).domain, d.value) for r in RELEASES)
                assert ok, (spec.key, d.value)
        for fact in spec.values:
            domains = [spec.for_release(r).domain for r in (fact.releases or RELEASES)]
            if spec.domain.kind == "enum":
                assert any(fact.value in d.values for d in domains), (spec.key, fact.value)
                for other in (fact.same_as, fact.preferred):
                    if other is not None:
                        assert other in spec.domain.values, (spec.key, other)


def test_relations_and_migrations_name_valid_options_and_values():
    for rel in KB.relations:
        assert rel.keys and set(rel.keys) <= set(KB.options), rel.id
        assert rel.subject in KB.options
    pm = KB.migrations["precision_mode_v2"]
    v1, v2 = KB.options["precision_mode"].domain.values, KB.options["precision_mode_v2"].domain.values
    assert {row.old for row in pm.rows} == set(v1), "every precision_mode value has a migration row"
    for row in pm.rows:
        if row.exact:
            assert row.new in v2, row
        else:
            assert row.note, "a value without exact equivalent says why"
    assert {(r.old, r.new) for r in pm.rows if r.exact} >= {
        ("allow_mix_precision", "mixed_float16"), ("allow_mix_precision_fp16", "mixed_float16"),
        ("allow_mix_precision_bf16", "mixed_bfloat16"), ("must_keep_origin_dtype", "origin"), ("force_fp16", "fp16"),
        ("force_fp32", "cube_fp16in_fp32out"), ("cube_fp16in_fp32out", "cube_fp16in_fp32out")}
    assert {r.old for r in pm.rows if not r.exact} == {"allow_fp32_to_fp16", "allow_fp32_to_bf16"}
    engines = KB.migrations["stream_engine_names"]
    assert {(r.old, r.new) for r in engines.rows} == {("DNN_VM_TF", "DNN_VM_AICPU"), ("DNN_V100", "AIcoreEngine")}


def test_relations_the_issue_lists_are_encoded():
    kinds = {(r.kind, r.subject, tuple(sorted(set(r.keys) - {r.subject}))) for r in KB.relations}
    subjects = {r.subject for r in KB.relations}
    for needed in ("modify_mixlist", "enable_dump", "enable_dump_debug", "optypelist_for_implmode", "compile_hybrid_mode",
                   "experimental_accelerate_train_mode", "stream_sync_timeout", "op_select_implmode"):
        assert needed in subjects, needed
    assert any(k == "together" and set(o) | {s} == {"input_shape", "dynamic_dims", "dynamic_node_type"}
               for k, s, o in kinds)
    assert any(r.kind == "excludes" and {"precision_mode", "precision_mode_v2"} <= set(r.keys) for r in KB.relations)
    assert any(r.kind == "excludes" and {"enable_dump", "enable_dump_debug"} <= set(r.keys) for r in KB.relations)


def test_npurunconfig_mapping_covers_the_config_objects():
    rc = KB.runconfig
    assert set(rc.objects) >= {"DumpConfig", "ProfilingConfig", "MemoryConfig", "DynamicInputConfig", "ExperimentalConfig"}
    assert [p.name for p in rc.objects["DynamicInputConfig"].params] == [
        "input_shape", "dynamic_dims", "dynamic_node_type", "compile_hybrid_mode"]
    assert rc.kwargs["precision_mode"].key == "precision_mode" and rc.kwargs["dump_config"].object == "DumpConfig"
    routes = {r.kwarg for r in KB.options["precision_mode_v2"].routes}
    assert "precision_mode_v2" in routes


DOC_EXAMPLE = re.compile(r'custom_op\.parameter_map\[(["\'])(?P<key>\w+)\1\]\.(?P<field>[bis])\s*=\s*(?P<value>.+)$')


def doc_examples(name: str):
    path = SHARED / "docs" / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    text = path.read_text(encoding="utf-8")
    text = text.replace("=\n    tf.compat.as_bytes(", "= tf.compat.as_bytes(")  # examples wrapped over two lines
    for line in text.splitlines():
        m = DOC_EXAMPLE.search(line.strip())
        if m:
            yield m.group("key"), m.group("field"), m.group("value").strip()


def _literal(expr: str):
    import ast

    m = re.fullmatch(r"tf\.compat\.as_bytes\(\s*(.+?)\s*\)", expr)
    inner = m.group(1) if m else expr
    try:
        return ast.literal_eval(inner)
    except (ValueError, SyntaxError):
        return None  # str(...) expressions and the like


@pytest.mark.parametrize("doc,release", [("session-options.en.txt", "current"), ("session-options.legacy.zh.txt", "legacy")])
def test_the_docs_own_examples_are_accepted(doc, release):
    seen = 0
    for key, field, expr in doc_examples(doc):
        spec = KB.options[key]
        view = spec.for_release(release)
        assert field == view.field, f"{doc}: {key} is written with .{field}"
        value = _literal(expr)
        if value is None:
            continue
        if isinstance(value, bytes):
            value = value.decode()
        if view.domain.kind in ("path", "dir", "string"):
            continue
        assert in_domain(view.domain, value), f"{doc}: example {key} = {value!r} rejected by {view.domain.describe()}"
        seen += 1
    assert seen > 30


def test_loader_rejects_broken_rules(tmp_path):
    import shutil

    broken = tmp_path / "rules"
    shutil.copytree(rules_dir(), broken)
    text = (broken / "options" / "basic.toml").read_text(encoding="utf-8")
    (broken / "options" / "basic.toml").write_text(text.replace('field = "i"', 'field = "x"', 1), encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match="basic.toml"):
        load.__wrapped__(str(broken))
    shutil.copyfile(rules_dir() / "options" / "basic.toml", broken / "options" / "basic.toml")
    rel = (broken / "relations.toml").read_text(encoding="utf-8")
    (broken / "relations.toml").write_text(rel.replace('subject = "enable_dump"', 'subject = "enable_dumb"', 1),
                                           encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match="enable_dumb"):
        load.__wrapped__(str(broken))


def test_release_views_differ_where_the_docs_do():
    assert KB.options["jit_compile"].for_release("legacy").field == "b"
    assert KB.options["jit_compile"].for_release("current").field == "s"
    assert KB.options["enable_exception_dump"].for_release("legacy").default == 0
    assert KB.options["enable_exception_dump"].for_release("current").default == 2
    assert KB.options["graph_memory_max_size"].lifecycle["current"].status == "no-effect"
    # Auto Tune is gone from the current docs (operator tuning is AOE's aoe_mode "2"): deprecated there
    assert KB.options["auto_tune_mode"].lifecycle["current"].status == "deprecated"
    assert KB.options["auto_tune_mode"].lifecycle["current"].replacement == "aoe_mode"
    assert KB.options["auto_tune_mode"].lifecycle["legacy"].status == "supported"
    assert KB.options["op_select_implmode"].lifecycle["current"].replacement == "op_precision_mode"
    assert KB.options["precision_mode"]._replace().key == "precision_mode"
