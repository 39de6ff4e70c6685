"""``npu-audit --timings``: where a run's time went, on stderr, and what its figures mean (npu_audit.timings)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from npu_audit.timings import ChunkTime, PhaseTime, RunTimings

NPU_SCRIPT = '''import tensorflow as tf
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["precison_mode"].s = tf.compat.as_bytes("allow_mix_precision")
'''


def _chunk(worker: int, started: float, ended: float) -> ChunkTime:
    return ChunkTime(worker=worker, started=started, ended=ended, cpu=ended - started, items=1)


def test_the_idle_tail_runs_from_the_first_worker_out_of_work_to_the_last_one_done():
    phase = PhaseTime(name="first phase", files=4, workers=2, started=10.0, ended=18.5)
    phase.chunks += [_chunk(1, 10.0, 12.0), _chunk(2, 10.0, 13.0), _chunk(1, 12.0, 15.0), _chunk(2, 13.0, 18.0)]
    assert phase.idle_tail() == 3.0  # worker 1 out of work at 15, worker 2 done at 18
    assert phase.busy() == [8.0, 5.0]


def test_a_worker_that_got_no_work_waits_from_the_phase_start():
    phase = PhaseTime(name="second phase", files=1, workers=2, started=10.0, ended=14.0)
    phase.chunks.append(_chunk(1, 10.5, 14.0))
    assert phase.idle_tail() == 4.0
    assert phase.busy() == [3.5, 0.0]
    alone = PhaseTime(name="first phase", files=3, workers=1, started=0.0, ended=2.0)
    alone.chunks.append(_chunk(1, 0.0, 2.0))
    assert alone.idle_tail() == 0.0  # one worker waits for nobody


def test_workers_cpu_falls_back_on_what_each_worker_counted():
    # (workers a fork server started are not this process's children: the system counts none of their CPU)
    clock = RunTimings()
    phase = PhaseTime(name="first phase", files=3, workers=2, started=0.0, ended=9.0)
    phase.chunks += [ChunkTime(1, 0.0, 4.0, 4.0, 1, cpu_so_far=4.5), ChunkTime(2, 0.0, 8.0, 8.0, 1, cpu_so_far=8.5),
                     ChunkTime(1, 4.0, 9.0, 5.0, 1, cpu_so_far=9.5)]
    clock.phases.append(phase)
    clock.finish()
    assert clock.cpu_workers == 18.0  # the last count of each worker: 9.5 + 8.5


def test_a_phase_whose_worker_died_gives_no_idle_tail():
    phase = PhaseTime(name="first phase", files=4, workers=2, started=0.0, ended=5.0)
    phase.chunks += [_chunk(1, 0.0, 1.0), _chunk(2, 0.0, 1.0), _chunk(3, 2.0, 3.0), _chunk(4, 2.0, 5.0)]
    clock = RunTimings(started=0.0)
    clock.phases.append(phase)
    clock.ended = 5.0
    line = clock.render().splitlines()[1]
    assert line.endswith("a worker died and the workers were started again: no idle tail")


def test_render_lists_the_steps_and_phases_in_the_order_they_ran():
    clock = RunTimings(started=100.0)
    clock.steps.append(("start (3 files found, settings read)", 100.0, 100.5))
    phase = PhaseTime(name="first phase", files=3, workers=2, started=100.5, ended=102.0)
    phase.chunks += [_chunk(7, 100.6, 101.0), _chunk(8, 100.6, 102.0)]
    clock.phases.append(phase)
    clock.steps.append(("report", 102.0, 102.25))
    clock.ended, clock.cpu_here, clock.cpu_workers = 102.25, 0.5, 1.75
    lines = clock.render().splitlines()
    assert lines[0].startswith("timings: 2.25 s wall, 2.25 CPU-s (this process 0.50, workers 1.75)")
    assert lines[1] == "  start (3 files found, settings read): 0.50 s"
    assert lines[2] == ("  first phase: 3 files, 1.50 s in 2 worker processes; busy 1.40, 0.40 s, "
                        "1.80 CPU-s on files; idle tail 1.00 s")
    assert lines[3] == "  report: 0.25 s"
    cores = os.cpu_count() or 1
    assert lines[4] == (f"  idle core time: {max(0.0, cores * 2.25 - 2.25):.2f} of {cores * 2.25:.2f} core-seconds "
                        f"({100 * max(0.0, cores * 2.25 - 2.25) / (cores * 2.25):.0f} %)")


def _npu_audit(*args, cwd):
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "npu_audit", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def test_timings_go_to_stderr_and_leave_the_report_as_it_is(tmp_path):
    for project in ("alpha", "beta"):
        (tmp_path / project).mkdir()
        for n in range(3):
            (tmp_path / project / f"train_{n}.py").write_text(NPU_SCRIPT)
        (tmp_path / project / "util.py").write_text("def helper():\n    return 1\n")
    plain = _npu_audit("--no-cache", "--jobs", "2", "--format", "json", ".", cwd=tmp_path)
    timed = _npu_audit("--no-cache", "--jobs", "2", "--format", "json", "--timings", ".", cwd=tmp_path)
    assert plain.returncode == timed.returncode == 1
    assert plain.stderr == ""
    assert json.loads(timed.stdout)["diagnostics"] == json.loads(plain.stdout)["diagnostics"]
    lines = timed.stderr.splitlines()
    wall = float(re.match(r"timings: ([\d.]+) s wall, [\d.]+ CPU-s", lines[0]).group(1))
    assert lines[1].startswith("  start (8 files found, settings read): ")
    phase = next(line for line in lines if line.startswith("  first phase: 8 files, "))
    assert "in 2 worker processes" in phase
    busy = [float(b) for b in re.search(r"busy ([\d., ]+) s,", phase).group(1).split(", ")]
    tail = float(re.search(r"idle tail ([\d.]+) s", phase).group(1))
    assert len(busy) == 2 and all(0 <= b <= wall for b in busy) and 0 <= tail <= wall
    assert lines[-2].startswith("  report: ") and lines[-1].startswith("  idle core time: ")
    # the steps account for the run: their seconds add up to its wall time (to the rounding of each)
    seconds = [float(re.search(r"(?:: |, )([\d.]+) s(?: in|$)", line).group(1)) for line in lines[1:-1]]
    assert abs(sum(seconds) - wall) <= 0.01 * len(seconds) + 0.02


def test_a_run_in_this_process_says_so(tmp_path):
    (tmp_path / "train.py").write_text(NPU_SCRIPT)
    done = _npu_audit("--no-cache", "--jobs", "1", "--timings", "train.py", cwd=tmp_path)
    assert done.returncode == 1 and "precison_mode" in done.stdout
    assert "  first phase: 1 file, " in done.stderr and " in this process" in done.stderr


def test_a_warm_run_and_a_script_from_stdin_name_their_steps(tmp_path):
    (tmp_path / "train.py").write_text(NPU_SCRIPT)
    os.utime(tmp_path / "train.py", (1_700_000_000, 1_700_000_000))  # (a file changed just now is not trusted)
    cache = tmp_path / "cache"
    first = _npu_audit("--cache-dir", cache, "--timings", ".", cwd=tmp_path)
    again = _npu_audit("--cache-dir", cache, "--timings", ".", cwd=tmp_path)
    assert first.stdout == again.stdout and "first phase" in first.stderr
    assert "first phase" not in again.stderr
    assert "  the last run's results, unchanged, read from the cache: " in again.stderr
    env = dict(os.environ, NO_COLOR="1")
    piped = subprocess.run([sys.executable, "-m", "npu_audit", "--timings", "-"], input=NPU_SCRIPT,
                           capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert piped.returncode == 1 and "  the script read from stdin, analysed: " in piped.stderr
