"""benchmarks/growth.py: the parts it measures are whole model folders, nested and the same on every machine,
and it prints the machine's CPU model and one row per part (run on a tiny tree: the figures are not checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import growth  # noqa: E402

SCRIPT = 'import tensorflow as tf\nfrom helpers import cfg\nsess = tf.Session(config=cfg())\n'


def _tree(root: Path) -> Path:
    for i in range(12):
        model = root / "TensorFlow" / "built-in" / "cv" / f"Model{i}_for_TensorFlow"
        (model / "src").mkdir(parents=True)
        (model / "src" / "helpers.py").write_text("import os\n")
        for j in range(i % 3 + 1):
            (model / "src" / f"train{j}.py").write_text(SCRIPT)
    other = root / "TensorFlow" / "contrib" / "nlp" / "bert" / "deep" / "er"  # no _for_: 4 levels down
    other.mkdir(parents=True)
    (other / "a.py").write_text("import os\n")
    (root / "TensorFlow" / "contrib" / "nlp" / "bert" / "b.py").write_text("import os\n")
    (root / "setup.py").write_text("import os\n")  # too shallow: a unit of its own
    return root


def test_units_keep_model_folders_whole(tmp_path):
    units = growth.model_units(_tree(tmp_path))
    assert units["TensorFlow/built-in/cv/Model4_for_TensorFlow"] == 3  # helpers.py with its two scripts
    assert units["TensorFlow/contrib/nlp/bert"] == 2
    assert units["setup.py"] == 1
    assert sum(units.values()) == 12 + sum(i % 3 + 1 for i in range(12)) + 3


def test_parts_are_nested_prefixes_of_a_fixed_order(tmp_path):
    units = growth.model_units(_tree(tmp_path))
    order = growth.ordered(units)
    assert order == growth.ordered(dict(reversed(list(units.items()))))  # not the walk's order
    shares = growth.parts(order, units)
    assert [label for label, _ in shares] == ["1/8", "1/4", "1/2", "whole"]
    total = sum(units.values())
    for (_, small), (_, big), (num, den) in zip(shares, shares[1:], growth.SHARES):
        assert big[: len(small)] == small
        assert sum(units[k] for k in small) * den >= total * num
    assert shares[-1][1] == order


def test_growth_prints_cpu_model_and_a_row_per_part(tmp_path):
    tree = _tree(tmp_path / "tree")
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "growth.py"), str(tree), "--jobs", "1"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("machine: ") and "cores" in lines[0]
    rows = [line.split() for line in lines if line.split()[:1] in (["1/8"], ["1/4"], ["1/2"], ["whole"])]
    assert [row[0] for row in rows] == ["1/8", "1/4", "1/2", "whole"]
    assert int(rows[-1][2]) == sum(growth.model_units(tree).values())  # the whole tree's files, per npu-audit
