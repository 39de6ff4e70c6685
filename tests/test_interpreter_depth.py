"""How deep the interpreter reads: a value passed down a chain of helper functions, each calling the next
from inside nested ``if`` blocks, reaches the write at the bottom. The interpreter recurses in Python for
every call and every block it enters, so the Python frames it spends per level bound the code it can read
before Python's recursion limit ends the read (then the write at the bottom is not seen)."""

from __future__ import annotations

import sys

from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings


def nested_helpers(levels: int, ifs: int) -> str:
    """A script whose ``helper0`` calls ``helper1`` ... down to ``helper<levels-1>``, each call inside
    ``ifs`` nested flag tests, the last helper writing the precision mode it was passed."""
    lines = ["import tensorflow as tf", "tf.app.flags.DEFINE_integer('n', 0, '')", "FLAGS = tf.app.flags.FLAGS", ""]
    for level in range(levels):
        lines.append(f"def helper{level}(config, mode):")
        for depth in range(ifs):
            lines.append("    " * (depth + 1) + f"if FLAGS.n > {depth}:")
        inner = "    " * (ifs + 1)
        if level + 1 < levels:
            lines.append(inner + f"helper{level + 1}(config, mode)")
        else:
            lines.append(inner + "op = config.graph_options.rewrite_options.custom_optimizers.add()")
            lines.append(inner + "op.name = 'NpuOptimizer'")
            lines.append(inner + "op.parameter_map['precision_mode_v2'].s = tf.compat.as_bytes(mode)")
        lines.append("")
    lines += ["config = tf.ConfigProto()", "helper0(config, 'mixed_fp16')", ""]
    return "\n".join(lines)


def test_a_value_passed_through_ten_helpers_in_twenty_nested_ifs_each_is_checked(tmp_path):
    # 10 call levels of 20 nested ifs: about 450 Python frames of the interpreter (2 per if, 5 per call),
    # within Python's default limit of 1000 with room for the caller's frames
    assert sys.getrecursionlimit() == 1000
    (tmp_path / "deep.py").write_text(nested_helpers(10, 20))
    report = analyze_file(Job(file=str(tmp_path / "deep.py"), display="deep.py", roots=(str(tmp_path),),
                              settings=Settings(), want_configs=True))
    option = report.configs[0]["entries"][0]["options"]["precision_mode_v2"]
    assert option["value"] == "mixed_fp16"
    bad = [f for f in report.findings if f.name == "invalid-value"]
    assert len(bad) == 1 and "mixed_fp16" in bad[0].message
