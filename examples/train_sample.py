# A TF 1.x ResNet training script ported to Ascend, with the kind of session-option mistakes
# npu-audit finds. Run:  npu-audit examples/train_sample.py
import os

import tensorflow as tf
from npu_bridge.npu_init import *
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

flags = tf.app.flags
flags.DEFINE_integer("iterations_per_loop", 100, "iterations per sess.run on the device")
flags.DEFINE_string("dump_dir", "/var/log/npu/dump", "where overflow data goes")
flags.DEFINE_boolean("debug", False, "collect overflow data")
FLAGS = flags.FLAGS

PROFILING = '{"output": "/tmp/profiling", "training_trace": "on", "task_trace": "yes"}'


def build_session_config():
    config = tf.ConfigProto(allow_soft_placement=True)
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    custom_op.parameter_map["precision_mode_v2"].s = tf.compat.as_bytes("mixed_float16")
    custom_op.parameter_map["iterations_per_loop"].i = FLAGS.iterations_per_loop
    custom_op.parameter_map["hcom_paralel"].b = True
    custom_op.parameter_map["graph_memory_max_size"].s = tf.compat.as_bytes(str(26 * 1024 * 1024 * 1024))
    custom_op.parameter_map["dump_step"].s = tf.compat.as_bytes("0|5-3|10")
    custom_op.parameter_map["profiling_options"].s = tf.compat.as_bytes(PROFILING)
    custom_op.parameter_map["stream_max_parallel_num"].s = "DNN_VM_TF:10,DNN_V100:1"
    if FLAGS.debug:
        custom_op.parameter_map["enable_dump_debug"].b = True
        custom_op.parameter_map["dump_debug_mode"].s = tf.compat.as_bytes("all")
    custom_op.parameter_map["jit_compile"].b = False
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
    return config


def main(_):
    config = build_session_config()
    with tf.Session(config=config) as sess:
        train_op = util.set_iteration_per_loop(sess, tf.no_op(), 10)
        sess.run(train_op)


if __name__ == "__main__":
    tf.app.run()
