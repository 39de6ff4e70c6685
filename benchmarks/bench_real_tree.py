"""Speed figures for npu-audit on a real tree. Prints figures; never fails on time.

The yardstick is the public tree Ascend/ModelZoo-TensorFlow at commit a2c3332a (19,138 .py files).
Build it outside this repository (its code is never committed here), e.g. from a clone:

    git -C ModelZoo-TensorFlow archive a2c3332a6cea24b56ab936a746b994c89c8fc7f8 -- '*.py' | tar -x -C /tmp/zoo

then:

    python benchmarks/bench_real_tree.py /tmp/zoo [--runs 3] [--skip-cold] [--json figures.json]

Figures (medians of --runs runs; each a whole process, as a user runs it), after the machine (CPU model,
cores, Python):
- ``npu-audit --version``;
- one small real NPU script from the command line (the first file of the tree, in path order, with an
  NPU marker and 40-60 lines), without cache;
- the whole tree cold (``--no-cache``): wall seconds, CPU seconds (user + system, workers included),
  files, files parsed, files holding an NPU marker
  (the byte prefilter's count), peak resident memory of the largest process (a worker), and from ``--timings``
  the idle tail (the longest of the phases': the first worker out of work to the last one done) and the idle
  core-seconds (cores x wall - CPU);
- the whole tree warm (a cache filled by a first run): unchanged (the run's whole result is reused), and
  as a command not run before (``--exclude`` of a folder that does not exist: the entries per file answer,
  as in a run after an edit, less the edited file's analysis).
Targets (issue "Scale", 2 cores): cold <= 10 s (must <= 30 s), parsed <= 1.3 x marker files, warm <=
1.5 s, one file <= 0.3 s, --version <= 0.2 s, peak memory per worker <= 400 MB. The language server's
latency is measured by benchmarks/bench_lsp.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


#: Runs of each short measurement (``--version``, the one-file check).
SHORT_RUNS = 15


def run_timed(cmd: list[str], cwd: str | None = None) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall seconds, peak RSS in MB of the largest process of this run, result). The command runs under a
    small Python process that reads its children's peak memory; the wall time is taken in that process around
    the command alone, so the timer's own start is not in it."""
    code = (
        "import resource, subprocess, sys, time\n"
        "started = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
        "wall = time.perf_counter() - started\n"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "sys.stderr.buffer.write(p.stderr)\n"
        "sys.stdout.buffer.write(p.stdout)\n"
        "sys.stderr.write('\\n@@cpu %.2f @@wall %.4f\\n' % (usage.ru_utime + usage.ru_stime, wall))\n"
        "sys.stderr.write('\\n@@peak %d @@rc %d\\n' % (usage.ru_maxrss, p.returncode))\n"
    )
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True, cwd=cwd)
    wall = time.perf_counter() - started
    tail = done.stderr.rsplit("@@peak", 1)[-1].split()
    peak_kb = int(tail[0]) if tail and tail[0].isdigit() else 0
    inner = done.stderr.rsplit("@@wall", 1)[-1].split()
    try:
        wall = float(inner[0])
    except (IndexError, ValueError):
        pass  # (the wrapper did not get that far: the time around it)
    return wall, peak_kb / 1024, done


def cpu_seconds(done: subprocess.CompletedProcess) -> float:
    """User + system CPU seconds of a :func:`run_timed` run, its worker processes included: on a machine
    whose speed drifts, what a run cost is easier to compare than its wall time."""
    tail = done.stderr.rsplit("@@cpu", 1)[-1].split()
    try:
        return float(tail[0])
    except (IndexError, ValueError):
        return float("nan")


def exit_code(done: subprocess.CompletedProcess) -> int | None:
    """The exit code of the command a :func:`run_timed` run ran (its wrapper's own is 0 when it got that far);
    None when the wrapper did not say."""
    tail = done.stderr.rsplit("@@rc", 1)[-1].split()
    return int(tail[0]) if tail and tail[0].lstrip("-").isdigit() else None


def idle_figures(done: subprocess.CompletedProcess) -> tuple[float, float]:
    """(the longest idle tail of the run's phases, its idle core-seconds), read from ``--timings``' lines on
    stderr (npu_audit.timings); NaN when they are missing."""
    tails = [float(m) for m in re.findall(r"idle tail ([\d.]+) s", done.stderr)]
    core = re.search(r"idle core time: ([\d.]+) of", done.stderr)
    return (max(tails) if tails else 0.0), (float(core.group(1)) if core else float("nan"))


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``; else what the platform module knows): figures of one
    machine say little without it (the same code ran 1.6 x slower on one 2-core machine than on another)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine() -> str:
    return f"{cpu_model()}, {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def npu_audit(*args: str) -> list[str]:
    return [sys.executable, "-m", "npu_audit", *args]


def small_script(tree: Path) -> Path | None:
    from npu_audit.prefilter import may_configure_npu

    for path in sorted(tree.rglob("*.py")):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if 40 <= data.count(b"\n") <= 60 and may_configure_npu(data):
            return path
    return None


def marker_files(tree: Path) -> tuple[int, int]:
    from npu_audit.prefilter import may_configure_npu

    total = marked = 0
    for path in tree.rglob("*.py"):
        total += 1
        try:
            marked += may_configure_npu(path.read_bytes())
        except OSError:
            pass
    return total, marked


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def byte_compile() -> None:
    """Compile npu-audit's modules to bytecode first, as an installed package has them: where
    PYTHONDONTWRITEBYTECODE is set, a module edited since its last compile is compiled again at every
    start (with four modules edited, a one-file check took 0.31 s instead of 0.28 s, medians of 6 pairs)."""
    import npu_audit

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(npu_audit.__file__).parent)], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-cold", action="store_true", help="only --version, one file and warm runs")
    parser.add_argument("--jobs", type=int, default=0, help="--jobs for npu-audit (0: all cores)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    tree = args.tree.resolve()
    figures: dict = {"machine": machine(), "cpu_model": cpu_model()}
    print(f"machine: {figures['machine']}; tree: {tree}")
    byte_compile()

    total, marked = marker_files(tree)
    figures.update(files=total, marker_files=marked)
    print(f"tree: {total} .py files, {marked} with an NPU marker")

    # (short runs: 15 of them at least, as docs/performance.md's method asks, since one slow run moves a median of 5)
    short_runs = max(SHORT_RUNS, args.runs)
    walls = [run_timed(npu_audit("--version"))[0] for _ in range(short_runs)]
    figures["version_s"] = median(walls)
    print(f"--version: median {figures['version_s']:.3f} s of {short_runs} ({min(walls):.3f}-{max(walls):.3f} s)")

    script = small_script(tree)
    if script is not None:
        walls = [run_timed(npu_audit("--no-cache", "--isolated", str(script)))[0] for _ in range(short_runs)]
        figures["one_file_s"] = median(walls)
        lines = script.read_bytes().count(b"\n")
        print(f"one {lines}-line script ({script.relative_to(tree)}): median {figures['one_file_s']:.3f} s of "
              f"{short_runs} ({min(walls):.3f}-{max(walls):.3f} s)")

    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    if not args.skip_cold:
        walls, cpus, peaks, parsed, tails, idles = [], [], [], [], [], []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as out:
                report = os.path.join(out, "r.json")
                wall, peak, done = run_timed(npu_audit("--no-cache", "--isolated", "--timings", "--format", "json",
                                                       "-o", report, *jobs, "."), cwd=str(tree))
                with open(report, encoding="utf-8") as handle:
                    summary = json.load(handle)["summary"]
            walls.append(wall)
            cpus.append(cpu_seconds(done))
            peaks.append(peak)
            parsed.append(summary["files_parsed"])
            tail, idle = idle_figures(done)
            tails.append(tail)
            idles.append(idle)
            print(f"  cold run: {wall:.1f} s ({cpus[-1]:.1f} CPU-s), {summary['files']} files, "
                  f"{summary['files_parsed']} parsed, {summary['findings']} findings, peak {peak:.0f} MB; "
                  f"idle tail {tail:.2f} s, idle core time {idle:.1f} s")
        figures.update(cold_s=median(walls), cold_cpu_s=median(cpus), files_parsed=int(median(parsed)),
                       peak_mb=max(peaks), idle_tail_s=median(tails), idle_core_s=median(idles))
        print(f"whole tree cold: median {figures['cold_s']:.1f} s ({figures['cold_cpu_s']:.1f} CPU-s); parsed {figures['files_parsed']} "
              f"({figures['files_parsed'] / max(1, marked):.2f} x marker files); peak {figures['peak_mb']:.0f} MB; "
              f"idle tail {figures['idle_tail_s']:.2f} s, idle core time {figures['idle_core_s']:.1f} s "
              "(--timings: docs/performance.md)")

    with tempfile.TemporaryDirectory() as cache:
        first, _, _ = run_timed(npu_audit("--cache-dir", cache, "--isolated", "--format", "json", *jobs, "."), cwd=str(tree))
        walls = [run_timed(npu_audit("--cache-dir", cache, "--isolated", "--format", "json", *jobs, "."),
                           cwd=str(tree))[0] for _ in range(args.runs)]
        per_file = [run_timed(npu_audit("--cache-dir", cache, "--isolated", "--format", "json", "--exclude",
                                        f"no-such-folder-{i}", *jobs, "."), cwd=str(tree))[0] for i in range(args.runs)]
    figures.update(fill_s=first, warm_s=median(walls), warm_per_file_s=median(per_file))
    print(f"whole tree warm: median {figures['warm_s']:.2f} s (filling the cache took {first:.1f} s); "
          f"as a new command (entries per file): median {figures['warm_per_file_s']:.2f} s")
    print(f"this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
