"""One module per rule. Each defines one Rule subclass with its documentation and examples."""

PRELUDE = '''import tensorflow as tf
from npu_bridge.npu_init import *

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
'''

#: PRELUDE with an argparse flag --precision_mode (default "allow_mix_precision") before it: the
#: example's own lines start at line 11
FLAG_PRELUDE = '''import argparse
import tensorflow as tf
from npu_bridge.npu_init import *

parser = argparse.ArgumentParser()
parser.add_argument("--precision_mode", default="allow_mix_precision")
args = parser.parse_args()
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
'''
