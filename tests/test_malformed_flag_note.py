"""malformed-value names the flag a value is built from only when the malformed part comes from the
flag's default (sample-2026 id 60: a literal "L2" field next to a profiling path flag)."""

from __future__ import annotations

from tests.examples import findings_of

HEAD = '''import argparse
import tensorflow as tf
from npu_bridge.npu_init import *

parser = argparse.ArgumentParser()
parser.add_argument("--out", default="/tmp/prof")
parser.add_argument("--steps", default="0|5-3")
args = parser.parse_args()
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
'''


def _malformed(tmp_path, body):
    return [f.message for f in findings_of(tmp_path, HEAD + body) if f.name == "malformed-value"]


def test_a_literal_part_next_to_a_flag_is_not_blamed_on_the_flag(tmp_path):
    (message,) = _malformed(tmp_path, '''custom_op.parameter_map["profiling_mode"].b = True
custom_op.parameter_map["profiling_options"].s = tf.compat.as_bytes('{"output":"' + args.out + '","L2":"on"}')
''')
    assert "unknown profiling field 'L2'" in message and "flag" not in message


def test_a_malformed_part_from_the_flag_default_names_the_flag(tmp_path):
    (message,) = _malformed(tmp_path, '''custom_op.parameter_map["enable_dump"].b = True
custom_op.parameter_map["dump_path"].s = b"/tmp/dump"
custom_op.parameter_map["dump_step"].s = tf.compat.as_bytes(args.steps + "|10")
''')
    assert "at '5-3'" in message and "(this is the default of flag 'steps'; the real run may override it)" in message


def test_a_flag_default_computed_into_the_value_still_names_the_flag(tmp_path):
    (message,) = _malformed(tmp_path, '''custom_op.parameter_map["enable_dump"].b = True
custom_op.parameter_map["dump_path"].s = b"/tmp/dump"
custom_op.parameter_map["dump_step"].s = tf.compat.as_bytes(args.steps.replace("0|", "1|"))
''')
    assert "(this is the default of flag 'steps'" in message
