"""A failure of npu-audit on one file is a finding for that file, the run goes on, and exits 2."""

from __future__ import annotations

from npu_audit.checks.rules.unknown_option import UnknownOption
from npu_audit.findings import RunReport
from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings

SCRIPT = '''import tensorflow as tf
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["precison_mode"].s = b"x"
'''


def test_internal_error_becomes_a_finding_and_exit_2(tmp_path, monkeypatch):
    bad = tmp_path / "bad.py"
    bad.write_text(SCRIPT)
    good = tmp_path / "good.py"
    good.write_text("x = 1\n")

    def boom(self, ctx):
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setattr(UnknownOption, "check", boom)
    reports = [analyze_file(Job(file=str(p), display=p.name, roots=(str(tmp_path),), settings=Settings()))
               for p in (bad, good)]
    failed = reports[0]
    assert failed.internal_error
    (finding,) = failed.findings
    assert finding.code == "NPU003" and finding.name == "internal-error"
    assert "ZeroDivisionError: simulated bug" in finding.message and ".py:" in finding.message  # where it failed
    assert "the file was not checked, the other files were" in finding.message
    assert finding.hint.startswith("please report this") and "--exclude" in finding.hint
    assert not reports[1].internal_error
    assert RunReport(files=reports).exit_code() == 2
