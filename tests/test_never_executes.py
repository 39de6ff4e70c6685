"""npu-audit never imports or executes the code it analyses (nor files referenced by options)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings

SIDE_EFFECT = """
import pathlib
pathlib.Path({marker!r}).write_text("executed")
"""

SCRIPT = """
import tensorflow as tf
import npu_helpers
from npu_helpers import make_config
""" + SIDE_EFFECT + """
config = make_config()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["dump_path"].s = tf.compat.as_bytes({dump!r})
custom_op.parameter_map["modify_mixlist"].s = tf.compat.as_bytes({mixlist!r})
"""

HELPER = SIDE_EFFECT + """
import tensorflow as tf

def make_config():
    return tf.ConfigProto()
"""


def make_tree(tmp_path: Path):
    markers = [tmp_path / "script_ran", tmp_path / "helper_ran"]
    mixlist = tmp_path / "ops_info.json"
    mixlist.write_text("{}")
    os.chmod(mixlist, 0)  # a referenced file is never opened (root could read it anyway; see the atime check)
    (tmp_path / "train.py").write_text(SCRIPT.format(marker=str(markers[0]), dump=str(tmp_path / "dump"),
                                                     mixlist=str(mixlist)))
    (tmp_path / "npu_helpers.py").write_text(HELPER.format(marker=str(markers[1])))
    return markers, mixlist


def test_analysis_in_process_never_executes(tmp_path):
    markers, _ = make_tree(tmp_path)
    before = set(sys.modules)
    report = analyze_file(Job(file=str(tmp_path / "train.py"), display="train.py", roots=(str(tmp_path),),
                              settings=Settings(), want_configs=True))
    assert report.parsed and report.configs, "the script was analysed"
    assert not any(m.exists() for m in markers)
    assert "npu_helpers" not in sys.modules and "train" not in set(sys.modules) - before


def test_cli_never_executes_scripts_or_opens_referenced_files(tmp_path):
    markers, mixlist = make_tree(tmp_path)
    before = os.stat(mixlist).st_atime_ns
    proc = subprocess.run([sys.executable, "-m", "npu_audit", "--no-cache", str(tmp_path), "--show-config",
                           "--format", "json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "modify_mixlist" in proc.stdout
    assert not any(m.exists() for m in markers)
    assert not (tmp_path / "dump").exists()
    assert os.stat(mixlist).st_atime_ns == before
