"""Peak memory and time of npu-audit on generated huge NPU files (docs/performance.md).

    python benchmarks/huge_files.py [--keep DIR] [--sizes 0.5,1.4,4.8,10.4]

Generates two kinds of file per size (in MB): ``helpers_<size>.py``, thousands of functions that each
build an NPU session config, and ``table_<size>.py``, a literal table with one config at the end. Each
is checked alone (``--jobs 1 --no-cache``) in a child process; its peak resident memory comes from
``wait4``. Files above the parse budget are refused with an ``unreadable-file`` finding, before anything is
built from them (npu_audit.parse.too_large_to_parse): the refusal costs about what reading the file costs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HELPER = '''
def build_config_{i}(flag=False):
    config = tf.ConfigProto(allow_soft_placement=True)
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["use_off_line"].b = True
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    custom_op.parameter_map["iterations_per_loop"].i = {n}
    custom_op.parameter_map["hcom_parallel"].b = True
    if flag:
        custom_op.parameter_map["enable_dump_debug"].b = True
        custom_op.parameter_map["dump_path"].s = tf.compat.as_bytes("/tmp/dump_{i}")
    return config
'''

TABLE_CONFIG = '''
def build_config():
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["precison_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    return config
'''

HEADER = "import tensorflow as tf\nfrom npu_bridge.npu_init import *\n"


def helpers(size: int) -> str:
    parts, total, i = [HEADER], len(HEADER), 0
    while total < size:
        part = HELPER.format(i=i, n=i % 100 + 1)
        parts.append(part)
        total += len(part)
        i += 1
    return "".join(parts)


def table(size: int) -> str:
    parts, total, i = [HEADER, "\nTABLE = [\n"], 0, 0
    while total < size:
        row = f"    ({i}, 'name_{i}', {i * 0.5}, [{i}, {i + 1}, {i + 2}], {{'k': {i}}}),\n"
        parts.append(row)
        total += len(row)
        i += 1
    parts += ["]\n", TABLE_CONFIG]
    return "".join(parts)


def measure(path: Path) -> tuple[float, float, list[str]]:
    """Peak resident memory (MB), wall time (s) and the finding codes of one run."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "npu_audit", "--no-cache", "--jobs", "1", "--format", "json",
                             "--max-file-size", str(path.stat().st_size + 1), str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read() if proc.stdout else b""
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    wall = time.perf_counter() - started
    codes = [d["code"] for d in json.loads(out)["diagnostics"]] if out else ["no report"]
    return usage.ru_maxrss / 1024, wall, codes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.5,1.4,4.8,10.4", help="file sizes in MB, comma-separated")
    parser.add_argument("--keep", metavar="DIR", help="write the files here (default: a temporary folder)")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="npu-audit-huge-"))
    folder.mkdir(parents=True, exist_ok=True)
    from npu_audit.parse import nesting_estimate

    print(f"{'file':<22} {'MB':>6} {'tokens':>9} {'peak MB':>8} {'seconds':>8}  findings")
    for size in (float(s) for s in args.sizes.split(",")):
        for kind, make in (("helpers", helpers), ("table", table)):
            path = folder / f"{kind}_{size:g}.py"
            text = make(int(size * 1e6))
            path.write_text(text)
            tokens = nesting_estimate(text).tokens if len(text) < 8_000_000 else -1
            peak, wall, codes = measure(path)
            shown = ", ".join(sorted(set(codes)))
            print(f"{path.name:<22} {len(text) / 1e6:6.2f} {tokens:9,} {peak:8.0f} {wall:8.1f}  {len(codes)} ({shown})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
