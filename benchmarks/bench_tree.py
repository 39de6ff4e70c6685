"""Speed figures for npu-audit on a generated model zoo. Prints figures; never fails on time.

    python benchmarks/bench_tree.py [--files 20000] [--dir /tmp/npu-zoo] [--keep]

The tree is generated deterministically (seeded): ordinary model code, ~7% NPU training scripts and
helper modules (configs built in helpers imported across modules, flags, NPURunConfig), Python 2
scripts and broken files (syntax errors), latin-1 files with coding cookies, binary files, a few large
generated files. Figures: `npu-audit --version`; the whole tree cold (no cache) and warm (cache); a
1,000-line NPU script; and the floor: building npu-audit's tree (CPython's ast, npu_audit.syntax) of only
the files npu-audit parses.
Targets (2 cores): tree <= 10 s cold, <= 1.5 s warm; 1,000-line script <= 100 ms; --version <= 0.2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MODEL_CODE = '''# -*- coding: utf-8 -*-
"""{doc}"""
import numpy as np
import tensorflow as tf

{consts}


class {cls}(object):
    """Layer stack for {name}."""

    def __init__(self, channels={ch}, depth={depth}, training=True):
        self.channels = channels
        self.depth = depth
        self.training = training
        self.weights = {{}}

    def conv_block(self, x, filters, kernel=3, stride=1, name="block"):
        with tf.variable_scope(name):
            x = tf.layers.conv2d(x, filters, kernel, strides=stride, padding="same", use_bias=False)
            x = tf.layers.batch_normalization(x, training=self.training)
            return tf.nn.relu(x)

{methods}

def build_{name}(inputs, num_classes={classes}):
    model = {cls}()
    x = inputs
    for i in range(model.depth):
        x = model.conv_block(x, model.channels * (2 ** (i // 4)), name="conv_%d" % i)
    x = tf.reduce_mean(x, axis=[1, 2])
    return tf.layers.dense(x, num_classes)
'''

METHOD = '''    def {m}(self, x, scale={s}):
        """{doc}"""
        y = x * scale + {b}
        for _ in range({r}):
            y = tf.nn.relu(y) - {c} * tf.reduce_mean(y)
        self.weights["{m}"] = y
        return y

'''

HELPER = '''import os
import tensorflow as tf
from npu_bridge.npu_init import *

PRECISION = "{precision}"
DUMP_ROOT = "/var/log/npu/{name}"


def npu_config(iterations_per_loop={ipl}, dump=False):
    config = tf.ConfigProto(allow_soft_placement=True)
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(PRECISION)
    custom_op.parameter_map["iterations_per_loop"].i = iterations_per_loop
    custom_op.parameter_map["{typo}"].b = True
    if dump:
        custom_op.parameter_map["enable_dump"].b = True
        custom_op.parameter_map["dump_path"].s = tf.compat.as_bytes(DUMP_ROOT)
        custom_op.parameter_map["dump_step"].s = tf.compat.as_bytes("{dump_step}")
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    return config
'''

TRAIN = '''import tensorflow as tf
from npu_bridge.npu_init import *
from {helper} import npu_config
from {model} import build_{name}

flags = tf.app.flags
flags.DEFINE_integer("iterations_per_loop", {ipl}, "loops")
flags.DEFINE_string("precision_mode", "{precision}", "mode")
FLAGS = flags.FLAGS


def main(_):
    config = npu_config(iterations_per_loop=FLAGS.iterations_per_loop, dump={dump})
    run_config = NPURunConfig(session_config=config, precision_mode=FLAGS.precision_mode,
                              iterations_per_loop={ipl2}, enable_data_pre_proc=True)
    with tf.Session(config=config) as sess:
        train_op = util.set_iteration_per_loop(sess, tf.no_op(), {ipl})
        sess.run(train_op)
    return build_{name}


if __name__ == "__main__":
    tf.app.run()
'''

PY2 = '''import os
print "training %s" % os.getcwd()
try:
    pass
except Exception, e:
    print e
'''


def words(rng, n):
    pool = ("resnet", "bert", "yolo", "mask", "deep", "wide", "lstm", "gru", "attn", "conv", "pool", "embed",
            "proj", "norm", "head", "neck", "stem", "block", "stage", "layer", "unit", "cell", "gate", "mix")
    return "_".join(rng.choice(pool) for _ in range(n))


def model_file(rng, name: str, target_bytes: int) -> str:
    methods = []
    size = 0
    i = 0
    while size < target_bytes:
        m = METHOD.format(m=f"{words(rng, 2)}_{i}", s=rng.randint(1, 9), b=rng.random(), r=rng.randint(1, 4),
                          c=round(rng.random(), 3), doc=words(rng, 6).replace("_", " "))
        methods.append(m)
        size += len(m)
        i += 1
    consts = "\n".join(f"{words(rng, 2).upper()}_{j} = {rng.randint(0, 10**6)}" for j in range(rng.randint(3, 12)))
    return MODEL_CODE.format(doc=words(rng, 8).replace("_", " "), consts=consts, cls=f"Net{name.title().replace('_', '')}",
                             name=name, ch=rng.choice((16, 32, 64)), depth=rng.randint(8, 50), methods="".join(methods),
                             classes=rng.choice((10, 100, 1000)))


def generate(root: Path, n_files: int, seed: int = 7) -> dict:
    rng = random.Random(seed)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    stats = {"files": 0, "bytes": 0, "npu": 0, "broken": 0}
    n_projects = max(1, n_files // 100)
    per_project = n_files // n_projects
    typos = ("hcom_paralel", "enable_data_pre_process", "use_offline", "hcom_parallel")
    for p in range(n_projects):
        proj = root / f"project {p:04d}" / "src"  # paths with spaces
        (proj / "models").mkdir(parents=True)
        (proj / "models" / "__init__.py").write_text("")
        npu_count = max(1, round(per_project * 0.07))
        written = 0
        for i in range(per_project - npu_count - 2):
            name = f"{words(rng, 1)}_{i}"
            text = model_file(rng, name, rng.choice((2000, 4000, 6000, 8000, 12000)))
            path = proj / "models" / f"{name}.py"
            if rng.random() < 0.01:
                path.write_bytes(("# -*- coding: latin-1 -*-\n# caf\u00e9 mod\u00e8le\n" + text).encode("latin-1"))
            else:
                path.write_text(text, encoding="utf-8")
            written += 1
        (proj / "legacy_py2.py").write_text(PY2)
        (proj / "data.bin.py").write_bytes(bytes(rng.randrange(256) for _ in range(4096)))
        stats["broken"] += 2
        helper = f"npu_utils_{p}"
        (proj / f"{helper}.py").write_text(HELPER.format(
            precision=rng.choice(("allow_mix_precision", "allow_fp32_to_fp16", "must_keep_origin_dtype")),
            name=f"proj{p}", ipl=rng.choice((1, 10, 100)), typo=rng.choice(typos),
            dump_step=rng.choice(("0|5|10", "0|5-3|10"))))
        for j in range(npu_count - 1):
            model_name = f"{words(rng, 1)}_{j}"
            (proj / "models" / f"{model_name}.py").write_text(model_file(rng, model_name, 3000))
            (proj / f"train_{j}.py").write_text(TRAIN.format(
                helper=helper, model=f"models.{model_name}", name=model_name, ipl=rng.choice((10, 100)),
                ipl2=rng.choice((10, 100)), precision=rng.choice(("allow_mix_precision", "force_fp32")),
                dump=rng.choice(("True", "False"))))
        stats["npu"] += npu_count
    for path in root.rglob("*.py"):
        stats["files"] += 1
        stats["bytes"] += path.stat().st_size
    return stats


def big_npu_script(lines: int = 1000) -> str:
    out = ["import tensorflow as tf", "from npu_bridge.npu_init import *", "", "config = tf.ConfigProto()",
           "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()",
           'custom_op.name = "NpuOptimizer"']
    keys = ("precision_mode_v2", "iterations_per_loop", "enable_dump", "dump_path", "op_debug_level", "hcom_parallel")
    i = 0
    while len(out) < lines:
        out.append(f"def layer_{i}(x, scale={i % 7 + 1}):")
        out.append(f"    y = x * scale + {i}")
        out.append("    return tf.nn.relu(y)")
        out.append("")
        if i % 10 == 0:
            out.append(f'custom_op.parameter_map["{keys[i // 10 % len(keys)]}"].i = {i}')
        i += 1
    out = out[:lines]
    while out and out[-1].startswith(("def ", "    y =")):
        out.pop()  # never end inside a function header
    return "\n".join(out) + "\n"


def timed(cmd, runs=1, env=None) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            print(f"  ! {' '.join(map(str, cmd))} exited {proc.returncode}: {proc.stderr[-500:]}")
    return times


def parse_floor(files: list[str], jobs: int) -> float:
    code = ("import sys\n"
            "from concurrent.futures import ProcessPoolExecutor\n"
            "from npu_audit import syntax\n"
            "def parse(p):\n"
            "    try:\n        syntax.parse_module(open(p, 'rb').read().decode('utf-8'))\n    except Exception:\n        pass\n"
            "if __name__ == '__main__':\n"
            "    files = open(sys.argv[1]).read().split('\\n')\n"
            "    with ProcessPoolExecutor(int(sys.argv[2])) as pool:\n        list(pool.map(parse, files, chunksize=8))\n")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "floor.py"
        script.write_text(code)
        listing = Path(tmp) / "files.txt"
        listing.write_text("\n".join(files))
        return min(timed([sys.executable, str(script), str(listing), str(jobs)], runs=2))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--jobs", type=int, default=0)
    args = ap.parse_args()
    base = Path(args.dir or tempfile.mkdtemp(prefix="npu-zoo-"))
    tree = base / "zoo"
    exe = [sys.executable, "-m", "npu_audit"]
    print(f"npu-audit benchmark — {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    start = time.perf_counter()
    stats = generate(tree, args.files)
    print(f"generated {stats['files']} files, {stats['bytes'] / 1e6:.1f} MB, {stats['npu']} NPU scripts/helpers, "
          f"{stats['broken']} broken/binary, in {time.perf_counter() - start:.1f} s at {tree}")

    version = timed(exe + ["--version"], runs=5)
    print(f"--version:                   {min(version) * 1000:7.0f} ms (best of 5)")

    cache = base / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    common = exe + [str(tree), "--format", "json", "-o", str(base / "report.json"), "--no-progress",
                    "--cache-dir", str(cache)] + (["--jobs", str(args.jobs)] if args.jobs else [])
    cold = timed(common)[0]
    report = json.loads((base / "report.json").read_text())
    summary = report["summary"]
    print(f"whole tree, cold (no cache): {cold:7.2f} s   ({summary['files']} files, {summary['files_parsed']} parsed, "
          f"{summary['findings']} findings)")
    warm = min(timed(common, runs=3))
    print(f"whole tree, warm (cache):    {warm:7.2f} s   (best of 3)")

    parsed_files = []
    from npu_audit import prefilter

    for path in tree.rglob("*.py"):
        raw = path.read_bytes()
        if prefilter.may_configure_npu(raw):
            parsed_files.append(str(path))
    jobs = args.jobs or os.cpu_count() or 1
    floor = parse_floor(parsed_files, jobs)
    print(f"floor: the trees of the {len(parsed_files)} marker files alone ({jobs} processes): {floor:5.2f} s")

    script = base / "big_npu_script.py"
    script.write_text(big_npu_script())
    single = min(timed(exe + [str(script), "--no-cache", "--jobs", "1", "--format", "json", "-o", str(base / "one.json")],
                       runs=5))
    from npu_audit.pipeline import Job, analyze_file
    from npu_audit.settings import Settings

    analyze_file(Job(file=str(script), display="big.py", roots=(str(base),), settings=Settings()))  # warm imports
    inproc = []
    for _ in range(5):
        t = time.perf_counter()
        analyze_file(Job(file=str(script), display="big.py", roots=(str(base),), settings=Settings()))
        inproc.append(time.perf_counter() - t)
    from npu_audit import syntax

    text = script.read_text()
    t = time.perf_counter()
    syntax.parse_module(text)
    parse_only = time.perf_counter() - t
    print(f"1,000-line NPU script:       {min(inproc) * 1000:7.0f} ms analysis in process (median "
          f"{statistics.median(inproc) * 1000:.0f} ms; its tree alone {parse_only * 1000:.0f} ms); "
          f"{single * 1000:.0f} ms as a CLI run")
    if not args.keep and not args.dir:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
