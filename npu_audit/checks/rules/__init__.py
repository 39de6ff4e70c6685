"""One module per rule. Each defines one Rule subclass with its documentation and examples."""

PRELUDE = '''import tensorflow as tf
from npu_bridge.npu_init import *

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
'''
