"""Findings folded into another check's finding on the same write (``checks.FOLDED_INTO``) and inline
suppressions: folding never makes a suppression unused, and suppressing one of the two findings leaves
the other as it is alone (issue 12 cause 7; sample-2026 ids 64/65)."""

from __future__ import annotations

import pytest

from npu_audit.checks.rules import FLAG_PRELUDE, PRELUDE
from tests.examples import findings_of

WRITE = 'custom_op.parameter_map["precision_mode"].s = b"allow_mix_precision"'
V2 = "precision_mode is superseded by precision_mode_v2: write precision_mode_v2 = 'mixed_float16'"
ASIDE = "; if you keep precision_mode, write its newer name 'allow_mix_precision_fp16' instead of 'allow_mix_precision' (the same mode)"
RENAME = ("'allow_mix_precision' is the old name of 'allow_mix_precision_fp16' for 'precision_mode' "
          "(allow_mix_precision_fp16 is the newer, clearer name for the same float16 mixed precision)")


def _shown(tmp_path, code):
    return sorted((f.code, f.message) for f in findings_of(tmp_path, code) if f.code in ("NPU306", "NPU501")
                  or f.name == "unused-suppression")


@pytest.mark.parametrize("comment,expected", [
    ("", [("NPU501", V2 + ASIDE)]),
    ("  # npu-audit: ignore[NPU306]", [("NPU501", V2)]),
    ("  # npu-audit: ignore[renamed-value]", [("NPU501", V2)]),
    ("  # npu-audit: ignore[NPU501]", [("NPU306", RENAME)]),
    ("  # npu-audit: ignore[NPU306, prefer-precision-mode-v2]", []),
    ("  # npu-audit: ignore", []),
    ("  # npu-audit: ignore[NPU303]",  # (a suppression that is unused is still reported)
     [("NPU004", "unused suppression: nothing to ignore for NPU303 on this line"), ("NPU501", V2 + ASIDE)]),
])
def test_suppressing_either_finding_of_a_fold(tmp_path, comment, expected):
    assert _shown(tmp_path, PRELUDE + WRITE + comment + "\n") == expected


def test_suppression_on_the_first_line_of_a_multi_line_write(tmp_path):
    code = (PRELUDE + 'custom_op.parameter_map["precision_mode"].s = (  # npu-audit: ignore[NPU306]\n'
            '    b"allow_mix_precision")\n')
    assert _shown(tmp_path, code) == [("NPU501", V2)]


def test_the_folded_finding_keeps_its_fix_when_the_migration_has_none(tmp_path):
    # precision_mode_v2 is written too: no migration fix, but the rename the message offers is still safe
    code = PRELUDE + WRITE + '\ncustom_op.parameter_map["precision_mode_v2"].s = b"mixed_float16"\n'
    (f,) = [f for f in findings_of(tmp_path, code) if f.code in ("NPU306", "NPU501")]
    assert f.code == "NPU501" and f.message == V2 + ASIDE
    assert f.fix is not None and f.fix.applicability == "safe" and f.fix.message == "Write 'allow_mix_precision_fp16'"


def test_a_flag_default_compared_elsewhere_is_named_wherever_the_comparison_is(tmp_path):
    (tmp_path / "opts.py").write_text('def mixed(args):\n    return args.precision_mode in ("allow_mix_precision",)\n')
    code = (FLAG_PRELUDE + 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(args.precision_mode)'
            '  # npu-audit: ignore[NPU501]\n')
    (f,) = [f for f in findings_of(tmp_path, code) if f.code == "NPU306"]
    assert f.fix is None and "which" not in f.message  # another module's comparison is not read: plain rename advice
    code += "if args.precision_mode != 'allow_mix_precision':\n    pass\n"
    (f,) = [f for f in findings_of(tmp_path, code) if f.code == "NPU306"]
    assert f.fix is None and "flag 'precision_mode', which line 12 compares with 'allow_mix_precision'" in f.message
    assert "comparison at line 12" in f.hint


def test_a_literal_written_at_the_option_is_not_a_flag_default(tmp_path):
    code = (FLAG_PRELUDE + WRITE + "  # npu-audit: ignore[NPU501]\n"
            "if args.precision_mode == 'allow_mix_precision':\n    pass\n")
    (f,) = [f for f in findings_of(tmp_path, code) if f.code == "NPU306"]
    assert f.message == RENAME and f.fix is not None and f.fix.applicability == "safe"


DEPRECATED_IN_INFERENCE = (PRELUDE + 'custom_op.parameter_map["graph_run_mode"].i = 0\n'
                           'custom_op.parameter_map["enable_data_pre_proc"].b = True{comment}\n')


@pytest.mark.parametrize("comment,codes", [
    ("", ["NPU301"]),  # one finding: the scenario is a clause of the deprecation (sample-seed7 id 63)
    ("  # npu-audit: ignore[NPU303]", ["NPU301"]),
    ("  # npu-audit: ignore[NPU301]", ["NPU303"]),
])
def test_a_deprecated_option_written_for_the_other_scenario_is_one_finding(tmp_path, comment, codes):
    found = [f for f in findings_of(tmp_path, DEPRECATED_IN_INFERENCE.format(comment=comment))
             if f.code in ("NPU301", "NPU303", "NPU004")]
    assert [f.code for f in found] == codes
    if not comment:
        assert "documented for training only, but this config is for online inference" in found[0].message
