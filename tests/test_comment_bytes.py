"""A file whose only bytes that are not UTF-8 sit in comments is still analysed (CPython imports it), and the
encoding problem is reported at the severity that follows (npu_audit.source, lenient reading)."""

from __future__ import annotations

from npu_audit.checks.rules import PRELUDE
from npu_audit.fix import fix_file
from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings

# a GBK comment ("Chinese"); the bytes are not UTF-8
GBK_COMMENT = b"# \xd6\xd0\xce\xc4\n"


def _run(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    job = Job(file=str(path), display=name, roots=(str(tmp_path),), settings=Settings())
    return job, analyze_file(job)


def test_a_module_without_npu_markers_gets_an_info(tmp_path):
    _, report = _run(tmp_path, "loader.py", b"import numpy as np\n\n" + GBK_COMMENT + b"def load():\n    return np.zeros(3)\n")
    (finding,) = report.findings
    assert (finding.code, finding.severity, finding.line, finding.column) == ("NPU002", "info", 3, 3)
    assert "importing the file as a module works" in finding.message


def test_the_npu_config_of_such_a_file_is_checked_at_the_right_positions(tmp_path):
    data = (PRELUDE.encode() + GBK_COMMENT
            + b'custom_op.parameter_map["precison_mode"].s = tf.compat.as_bytes("allow_mix_precision")  # \xa3\xac\n')
    _, report = _run(tmp_path, "model.py", data)
    codes = [(f.code, f.severity, f.line, f.column) for f in report.findings]
    assert ("NPU002", "info", 7, 3) in codes
    assert ("NPU101", "error", 8, 25) in codes  # the misspelt key, where an editor shows it


def test_a_syntax_error_is_still_reported_next_to_the_note(tmp_path):
    _, report = _run(tmp_path, "old.py", PRELUDE.encode() + GBK_COMMENT + b'print "x"\n')
    assert sorted((f.code, f.severity) for f in report.findings) == [("NPU001", "error"), ("NPU002", "info")]


def test_bytes_in_a_string_still_stop_the_analysis(tmp_path):
    _, report = _run(tmp_path, "model.py", PRELUDE.encode() + b'name = "\xd6\xd0"\n')
    (finding,) = report.findings
    assert (finding.code, finding.severity) == ("NPU002", "error")


def test_fixes_never_rewrite_the_comment_bytes(tmp_path):
    """The fix engine reads the file strictly: writing the text back would put U+FFFD in place of the user's
    bytes, so it fixes nothing in such a file and says why."""
    data = (PRELUDE.encode() + GBK_COMMENT
            + b'custom_op.parameter_map["local_rank_id"].i = 7  # npu-audit: ignore[out-of-range]\n')
    job, report = _run(tmp_path, "model.py", data)
    assert any(f.code == "NPU004" and f.fix is not None for f in report.findings)  # fixable in principle
    result = fix_file(job, report, unsafe=True)
    assert not result.changed and not result.applied
    assert result.problems and "not valid utf-8" in result.problems[0]
