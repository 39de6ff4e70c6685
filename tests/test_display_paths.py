"""A helper module above the analysed script's folder is named in findings the way the user named the
folder, whatever folder npu-audit runs in: reports of one tree compare from run to run and across CI
machines."""

from __future__ import annotations

from npu_audit.cli import main

HELPER = '''\
import tensorflow as tf


def configure(mode):
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(mode)
    return config
'''
SCRIPT = '''\
import tensorflow as tf
from common.cfg import configure

with tf.Session(config=configure("fast")) as sess:
    pass
'''


def test_a_helper_above_the_script_is_named_from_the_folder_given(tmp_path, monkeypatch, capsys):
    (tmp_path / "proj" / "common").mkdir(parents=True)
    (tmp_path / "proj" / "models").mkdir()
    (tmp_path / "proj" / "common" / "__init__.py").write_text("")
    (tmp_path / "proj" / "common" / "cfg.py").write_text(HELPER)
    (tmp_path / "proj" / "models" / "train.py").write_text(SCRIPT)
    outputs = []
    for cwd, given in ((tmp_path, "proj"), (tmp_path / "proj" / "models", str(tmp_path / "proj"))):
        monkeypatch.chdir(cwd)
        main(["--no-cache", "--format", "concise", given])
        outputs.append(capsys.readouterr().out)
    assert "(set by configure() in proj/common/cfg.py)" in outputs[0], outputs[0]
    assert f"(set by configure() in {tmp_path}/proj/common/cfg.py)" in outputs[1], outputs[1]
