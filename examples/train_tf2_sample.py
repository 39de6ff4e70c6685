# A TensorFlow 2 (Keras) training script ported to Ascend with npu_device, with the kind of option
# mistakes npu-audit finds. Run:  npu-audit examples/train_tf2_sample.py
import argparse

import npu_device as npu
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=5)
parser.add_argument("--dump_dir", default="/var/log/npu/dump")
parser.add_argument("--dump", action="store_true", help="dump operator outputs of a few steps")
args = parser.parse_args()


def configure_npu():
    options = npu.global_options()
    options.precision_mode = "allow_mix_precision"
    options.graph_run_mode = "1"
    options.op_compiler_cache_mod = "enable"
    if args.dump:
        options.dump_config.enable_dump = True
        options.dump_config.dump_path = args.dump_dir
        options.dump_config.dump_step = "0|10-5|20"


def build_model():
    return tf.keras.Sequential([
        tf.keras.layers.Flatten(input_shape=(28, 28)),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(10),
    ])


def main():
    configure_npu()
    npu.open().as_default()
    npu.global_options().memory_config.atomic_clean_policy = 1
    (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
    model = build_model()
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x_train / 255.0, y_train, epochs=args.epochs, batch_size=64)


if __name__ == "__main__":
    main()
