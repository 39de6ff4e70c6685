"""What a cold run costs in machine instructions, on a fixed sample of a real tree: a figure that does not
drift with the machine's speed. Prints figures; never fails on cost.

Wall and CPU seconds on the project's machines drift by up to two times within an hour (docs/performance.md,
"Method"), so two versions compared by time need many paired runs and still differ by 10-20%
between pairs. Valgrind's callgrind counts the instructions a run executes: the same code on the same
files gives the same count to about 0.1%, whatever else the machine does. The count is not time (a
cache miss costs more than an addition), so it complements paired timings and
``bench_real_tree.py``; it does not replace them.

The sample: the folders of the tree that hold a file with an NPU marker (the byte prefilter's), in path
order, every ``--every``-th of them (a folder inside another one picked is left out), each analysed
whole, so that both phases (files with a marker, and the files that feed them) are in it in about the
proportions of the whole tree. Under callgrind a run is about 50 times slower: the default sample (every
50th folder) takes a minute or two.

    python benchmarks/bench_instructions.py TREE [--every 50] [--one-root] [--vs OTHER_CHECKOUT]

Named one by one, the sample's folders are as many roots (imports are resolved below each), and a cost
paid per root and file weighs more than on a run over one tree. ``--one-root`` links the folders into
one temporary folder and analyses that instead: one root, as a whole-tree run has. The folders above a
sample folder in the tree are then not searched for imports (on the default sample: 29 files parsed
instead of 31), so such a count compares only with another taken with the option.

``--vs``: also run the npu-audit of another checkout (a ``git worktree`` of an older commit) on the same
sample, both at once (one core each), and print the ratio. Both checkouts are byte-compiled first (a
start that compiles npu-audit's modules costs about a fifth of the sample). Needs ``valgrind`` on the
PATH; without it, says so and exits with 2.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def sample_folders(tree: Path, every: int) -> list[Path]:
    """Every ``every``-th folder (in path order) holding a ``.py`` file with an NPU marker, less those
    inside a folder already picked."""
    from npu_audit.prefilter import may_configure_npu

    folders: set[Path] = set()
    for path in tree.rglob("*.py"):
        if not path.is_file() or path.parent in folders:
            continue
        try:
            if may_configure_npu(path.read_bytes()):
                folders.add(path.parent)
        except OSError:
            continue
    picked: list[Path] = []
    for folder in sorted(folders)[::every]:
        if not any(folder.is_relative_to(p) for p in picked):
            picked.append(folder)
    return picked


def count(code: Path, tree: Path, folders: list[Path]) -> tuple[int, int, int]:
    """(instructions, files, findings) of ``npu-audit --no-cache --isolated --jobs 1`` from checkout
    ``code`` on ``folders`` (relative to ``tree``, where it runs), under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               sys.executable, "-m", "npu_audit", "--no-cache", "--isolated", "--jobs", "1",
               "--format", "json", "-o", str(out), *[str(f.relative_to(tree)) for f in folders]]
        env = dict(os.environ, PYTHONPATH=str(code))
        done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
        found = _COLLECTED.findall(done.stderr)
        if not found or not out.exists():
            raise SystemExit(f"the run of {code} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        report = json.loads(out.read_text())
    summary = report.get("summary", {})
    return int(found[-1]), int(summary.get("files", 0)), len(report.get("diagnostics", []))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--every", type=int, default=50, help="every n-th folder with an NPU marker (default 50)")
    parser.add_argument("--vs", type=Path, help="another checkout of npu-audit to compare with")
    parser.add_argument("--one-root", action="store_true",
                        help="analyse the sample linked into one folder (one root, as a whole-tree run)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: no instruction counts on this machine", file=sys.stderr)
        return 2
    tree = args.tree.resolve()
    folders = sample_folders(tree, max(1, args.every))
    print(f"sample: {len(folders)} folders of {tree} (every {args.every}th folder with an NPU marker)")
    codes = [ROOT] + ([args.vs.resolve()] if args.vs else [])
    for code in codes:  # (a checkout without bytecode compiles its modules at every start: ~20% more)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(code / "npu_audit")], check=True)
    with tempfile.TemporaryDirectory() as linked:
        where, named = tree, folders
        if args.one_root:
            sample = Path(linked) / "sample"
            sample.mkdir()
            for i, folder in enumerate(folders):  # (numbered: two sample folders may share a name)
                (sample / f"{i:03d}-{folder.name}").symlink_to(folder, target_is_directory=True)
            where, named = Path(linked), [sample]
            print(f"analysed under one root: {sample} (links to the {len(folders)} folders)")
        with ThreadPoolExecutor(max_workers=len(codes)) as pool:
            results = list(pool.map(lambda code: count(code, where, named), codes))
    for code, (instructions, files, findings) in zip(codes, results):
        print(f"{code}: {instructions / 1e9:.3f} G instructions ({files} files, {findings} findings)")
    if args.vs:
        print(f"ratio {ROOT.name} / {args.vs.name}: {results[0][0] / results[1][0]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
