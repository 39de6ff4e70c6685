"""Relations judged per run: a companion whose value on a run comes from a wrong-field write yields no
relation finding there (the adapter fails on that write first, or reads nothing from it: wrong-field
reports it), and a relation hit names the conditions of the run on which it happens."""

from __future__ import annotations

from pathlib import Path

from tests.examples import findings_of

FIXTURE = Path(__file__).parent / "fixtures" / "checks" / "missing-companion.overwrites.py"
MIXLIST = ("modify_mixlist edits the block/trust lists of automatic mixed precision, so it needs a mixed-precision "
           "mode. The adapter rejects it unless precision_mode is allow_mix_precision(_fp16/_bf16), or, when "
           "precision_mode is absent, precision_mode_v2 is mixed_float16/mixed_bfloat16/mixed_hif8; it also rejects "
           "it when neither option is written")
REJECTED = ("'precision_mode' is read from .s, not .b: the adapter reads .s, finds an empty value and rejects it: "
            "the session fails to start")


def test_an_overwrite_reported_as_wrong_field_yields_no_relation_finding_and_hits_name_their_run(tmp_path):
    source = FIXTURE.read_text(encoding="utf-8")
    found = sorted((f.line, f.code, f.severity, f.message) for f in findings_of(tmp_path, source)
                   if f.code in ("NPU102", "NPU201"))
    assert found == [
        (29, "NPU102", "error", REJECTED + " [may happen: if opts.trace]"),
        (45, "NPU201", "error", MIXLIST + ' [may happen: if opts.trace; if opts.custom_lists and '
                                          'opts.amp_mode == "allow_mix_precision"]'),
        (55, "NPU102", "error", REJECTED),
        (65, "NPU201", "error", MIXLIST),
    ]


def test_a_wrong_field_switch_does_not_make_its_gated_options_reported_again(tmp_path):
    # enable_dump written with .i: wrong-field says the adapter reads nothing from it; the dump path it
    # would gate is not reported a second time as having no effect
    source = ('import tensorflow as tf\nfrom npu_bridge.npu_init import *\n\nconfig = tf.ConfigProto()\n'
              'op = config.graph_options.rewrite_options.custom_optimizers.add()\nop.name = "NpuOptimizer"\n'
              'op.parameter_map["enable_dump"].i = 1\nop.parameter_map["dump_path"].s = b"/tmp/dump"\n'
              'op.parameter_map["dump_step"].s = b"0|5"\n')
    found = sorted((f.line, f.code) for f in findings_of(tmp_path, source) if f.code in ("NPU102", "NPU201", "NPU302"))
    assert found == [(7, "NPU102")]


def test_the_text_of_a_guard_is_never_taken_from_a_freed_node_with_the_same_id():
    # the cache of guard texts is keyed by id(node); ids are reused once a node of a file analysed
    # earlier is freed, so an entry left by another node must not be returned (it made conflicts under
    # two flags flip between info and warning depending on the files analysed before)
    import npu_audit.syntax as cst
    from npu_audit.checks import conditions
    from npu_audit.extract.model import BranchStep

    test = cst.parse_expression("FLAGS.use_dump")
    step = BranchStep(node_id=1, arm=0, kind="if", has_else=False, description="if FLAGS.use_dump", node=test)
    conditions._TEST_TEXT[id(test)] = (cst.parse_expression("FLAGS.other"), "FLAGS.other")
    assert conditions.test_text(step) == "FLAGS.use_dump"
    assert conditions.test_text(step) == "FLAGS.use_dump"
