"""Where the CPU of a whole run goes, by stage, from a py-spy profile of every process of the run.

    py-spy record --subprocesses --rate 200 --format raw -o PROFILE -- npu-audit --no-cache --format json TREE
    python benchmarks/stages.py PROFILE [--cpu SECONDS]

py-spy (a sampling profiler, ``pip install py-spy``) writes one line per distinct stack with its sample
count. Each sample is given to one stage, from the frames on its stack: the main process (discovery, the
second-phase decision, rendering), and in the workers, for the first phase and the second phase
(``analyze_feeders_ahead``) apart, reading and the byte prefilter, the slice, CPython's parse and the
syntax tree of the file, the interpreter over the file (and its reading of functions nobody calls),
helper modules (their parse, the building of their parts, running their top level and their
definitions), the file's NPU names, the checks. Samples of threads that wait (a worker's parent watch,
the pool's queues) are counted apart and left out of the shares. ``--cpu`` (the run's user + system
seconds, measured without the profiler) turns the shares into CPU seconds. Figures only; no verdict.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

_LINE = re.compile(r":\d+\)$")
_WAITING = ("watch (npu_audit/workers.py", "Condition.wait (threading.py)", "select (selectors.py")


def stage(frames: list[str], main: bool) -> str:
    """The stage a sample belongs to (``frames``: its stack, outermost first, without line numbers;
    ``main``: whether it is the run's own process rather than a worker)."""
    stack = ";".join(frames)
    if any(w in stack for w in _WAITING) or ("wait_result_broken_or_wakeup" in stack and "recv" not in stack):
        return "waiting"
    if main:
        for marker, name in (("discover (", "discovery"), ("_feeders_of_run", "second-phase decision"),
                             ("render", "render")):
            if marker in stack:
                return f"main process: {name}"
        return "main process: start, settings, workers' results"
    if ";feeders (" in stack:
        return "worker: second-phase choice per chunk"
    if "_analyze (" not in stack:
        return "worker: start, collector, results"
    phase = "2nd phase" if "analyze_feeders_ahead" in stack else "1st phase"
    if "extract_configs" in stack:
        if "load_module" in stack:
            if "_helper_text" in stack:
                return f"{phase}: helper modules: CPython parse"
            if "Project.load" in stack:
                return f"{phase}: helper modules: read, build parts"
            if "_read_definitions" in stack.rsplit("run_module", 1)[-1]:
                return f"{phase}: helper modules: run definitions read on demand"
            return f"{phase}: helper modules: run top level (and what it calls)"
        if "run_standalone" in stack:
            return f"{phase}: interpreter: functions nobody calls"
        return f"{phase}: interpreter: the file"
    for marker, name in (("slice_text", "slice"), ("python_tree", "file: CPython parse"),
                         ("parse_module", "file: syntax tree"), ("npu_exports", "file: NPU names"),
                         ("check_extraction", "checks"), ("caller_inputs", "caller inputs")):
        if marker in stack:
            return f"{phase}: {name}"
    for marker, name in (("read_source", "read and decode"), ("may_configure_npu", "byte prefilter"),
                         ("_imports_of", "import scan")):
        if marker in stack:
            return f"every file: {name}"
    return f"{phase}: hash, report"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profile", help="py-spy --format raw output of a whole run (--subprocesses)")
    ap.add_argument("--cpu", type=float, default=None, help="the run's CPU seconds, to print shares as seconds")
    args = ap.parse_args()
    counts: Counter[str] = Counter()
    with open(args.profile, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if not stack or not n.isdigit():
                continue
            frames = stack.split(";")
            processes = [f for f in frames if f.startswith("process ")]
            code = [_LINE.sub(")", f) for f in frames if not f.startswith("process ")]
            counts[stage(code, main=len(processes) <= 1)] += int(n)
    busy = sum(v for k, v in counts.items() if k != "waiting")
    if not busy:
        raise SystemExit("no samples of npu-audit's code in the profile: was it recorded with --subprocesses?")
    print(f"{busy} samples at work, {counts['waiting']} waiting (left out)")
    for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        if name == "waiting":
            continue
        seconds = f"  {args.cpu * n / busy:5.1f} CPU-s" if args.cpu else ""
        print(f"{100 * n / busy:5.1f} %{seconds}  {name}")


if __name__ == "__main__":
    main()
