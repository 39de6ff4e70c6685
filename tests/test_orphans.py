"""Worker processes end when npu-audit itself is killed (``kill -9`` by a CI time-out or the out-of-memory
killer): none is left behind holding its memory, whether it was analysing a file or waiting for work."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads the processes from /proc")


def _state(pid: int) -> str | None:
    """The state letter of process ``pid`` ("R", "S", "Z", ...), None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2]


def _gone(pid: int) -> bool:
    return _state(pid) in (None, "Z", "X")  # (a zombie has ended: only its exit status is left)


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def _kill_main_and_check_workers(main: subprocess.Popen, workers: int) -> None:
    """Wait until ``main`` runs ``workers`` children and they are at work, kill it with SIGKILL, and check
    that every one of them ends within a few seconds."""
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while len(seen) < workers:
            assert main.poll() is None, "npu-audit ended before its workers could be seen"
            assert time.monotonic() < deadline, f"only {len(seen)} worker processes appeared"
            seen = {pid for pid in _children(main.pid) if not _gone(pid)}
            time.sleep(0.05)
        time.sleep(1.0)  # at work (or waiting for work) by now
        seen |= _children(main.pid)
        os.kill(main.pid, signal.SIGKILL)
        main.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not all(_gone(pid) for pid in seen):
            time.sleep(0.1)
        left = sorted(pid for pid in seen if not _gone(pid))
        assert not left, f"worker processes {left} outlived npu-audit"
    finally:
        for pid in seen:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)
        if main.poll() is None:
            main.kill()
            main.wait()


HELPER = """
def build_config_{i}(flag=False):
    config = tf.ConfigProto(allow_soft_placement=True)
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["iterations_per_loop"].i = {i}
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    if flag:
        custom_op.parameter_map["enable_dump_debug"].b = True
    return config
"""


def test_workers_end_when_npu_audit_is_killed_during_a_run(tmp_path):
    # 60 files of 150 NPU functions: a tenth of a second or more to analyse each
    text = "import tensorflow as tf\n" + "".join(HELPER.format(i=i) for i in range(150))
    for n in range(60):
        (tmp_path / f"train_{n:02d}.py").write_text(text)
    main = subprocess.Popen([sys.executable, "-m", "npu_audit", "--no-cache", "--jobs", "2", "--format", "json",
                             str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _kill_main_and_check_workers(main, 2)


def test_a_worker_waiting_for_work_and_one_busy_in_a_long_item_both_end(tmp_path):
    # three items on two workers: one worker sleeps in the last item for a minute, the other has nothing
    # left to do and waits for work
    script = tmp_path / "pool.py"
    script.write_text(textwrap.dedent("""
        import time
        from npu_audit.workers import run_in_workers

        if __name__ == "__main__":
            run_in_workers(time.sleep, [0.0, 0.0, 60.0], [0, 1, 2], 2, lambda i, result: None,
                           lambda i, how: None)
    """))
    main = subprocess.Popen([sys.executable, str(script)], cwd=os.getcwd(),
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    _kill_main_and_check_workers(main, 2)
