"""Worker processes that die (out-of-memory killer, a crash in native code) cost one file, never the run."""

from __future__ import annotations

import faulthandler
import json
import multiprocessing
import os
import signal

import pytest

from npu_audit import pipeline
from npu_audit.cli import main
from npu_audit.pipeline import Job, RunOptions, analyze_file
from npu_audit.settings import Settings

# The crash is injected by replacing a function in this process; workers see it only when forked.
pytestmark = pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="needs forked workers")

SCRIPT = '''import tensorflow as tf
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["iterations_per_loop"].i = {n}
custom_op.parameter_map["precison_mode"].s = tf.compat.as_bytes("allow_mix_precision")
'''


def _killing(victim: str, sig: int = signal.SIGKILL):
    """``pipeline._analyze`` that kills its own process on the file named ``victim``."""
    real = pipeline._analyze

    def analyze(job: Job):
        if os.path.basename(job.file) == victim:
            faulthandler.disable()  # pytest's handler would print the crash of the worker
            os.kill(os.getpid(), sig)
        return real(job)

    return analyze


def _scripts(folder, count: int) -> list[Job]:
    jobs = []
    for n in range(count):
        path = folder / f"train_{n:02d}.py"
        path.write_text(SCRIPT.format(n=n + 1))
        jobs.append(Job(file=str(path), display=path.name, roots=(str(folder),), settings=Settings()))
    return jobs


def test_the_file_whose_worker_died_gets_an_internal_error_and_every_other_file_its_report(tmp_path, monkeypatch):
    jobs = _scripts(tmp_path, 40)  # 40 files on 2 workers: train_17.py shares a chunk of 3 (15-17)
    expected = [analyze_file(job).to_dict() for job in jobs]
    monkeypatch.setattr(pipeline, "_analyze", _killing("train_17.py"))
    seen = []
    reports = pipeline._execute(jobs, RunOptions(jobs=2, progress=lambda done, total: seen.append((done, total))))
    assert [r.path for r in reports] == [j.display for j in jobs]
    for job, report, before in zip(jobs, reports, expected):
        if job.display == "train_17.py":
            assert report.internal_error
            [finding] = report.findings
            assert finding.name == "internal-error" and finding.code == "NPU003"
            assert "worker process died while analysing this file" in finding.message
            assert "SIGKILL" in finding.message and "out-of-memory" in finding.message
        else:
            assert report.to_dict() == before, job.display
    assert seen[-1] == (40, 40) and len(seen) == 41  # every file counted once


def test_a_crash_in_native_code_is_named(tmp_path, monkeypatch):
    jobs = _scripts(tmp_path, 3)
    monkeypatch.setattr(pipeline, "_analyze", _killing("train_01.py", signal.SIGSEGV))
    reports = pipeline._execute(jobs, RunOptions(jobs=2))
    assert [r.internal_error for r in reports] == [False, True, False]
    assert "killed by SIGSEGV" in reports[1].findings[0].message


def test_the_command_line_reports_the_lost_file_and_exits_2(tmp_path, monkeypatch):
    _scripts(tmp_path, 6)
    out = tmp_path / "report.json"
    monkeypatch.setattr(pipeline, "_analyze", _killing("train_03.py"))
    code = main(["--no-cache", "--jobs", "2", "--format", "json", "-o", str(out), str(tmp_path)])
    assert code == 2
    data = json.loads(out.read_text())
    by_file: dict[str, list[str]] = {}
    for d in data["diagnostics"]:
        by_file.setdefault(os.path.basename(d["path"]), []).append(d["name"])
    assert by_file.pop("train_03.py") == ["internal-error"]
    assert sorted(by_file) == [f"train_{n:02d}.py" for n in (0, 1, 2, 4, 5)]
    assert all("unknown-option" in names for names in by_file.values())


def test_work_is_handed_out_in_chunks_that_shrink_towards_the_end():
    from npu_audit.workers import _chunks

    pending = list(range(5, 2005))
    chunks = _chunks(pending, 2)
    assert [i for chunk in chunks for i in chunk] == pending  # every item once, in order
    sizes = [len(c) for c in chunks]
    assert sizes[0] == 32 and max(sizes) == 32 and sizes == sorted(sizes, reverse=True)
    assert sizes[-8:] == [1] * 8  # the last items go one by one: no worker is left with a long last chunk
    assert _chunks([], 2) == [] and _chunks([7], 4) == [[7]]


def test_the_files_of_one_project_go_to_one_worker_together_largest_projects_first():
    from npu_audit.workers import _folder_chunks

    # three projects of 25, 10 and 5 files, a 60-file folder whose subfolders hold 30 each, listed mixed up
    folders = ([("zoo", "big", f"part{n % 2}") for n in range(60)] + [("zoo", "a")] * 25 + [("zoo", "b")] * 10
               + [("zoo", "c", "src")] * 5)
    pending = list(range(len(folders)))[::-1]
    chunks = _folder_chunks(pending, 2, folders)
    assert sorted(i for chunk in chunks for i in chunk) == sorted(pending)  # every item once
    projects = [{folders[i] for i in chunk} for chunk in chunks]
    assert all(len(p) == 1 for p in projects)  # a chunk holds one folder tree's files
    assert [len(c) for c in chunks] == [30, 30, 25, 10, 5]  # largest first: the workers finish together
    assert [next(iter(p)) for p in projects][:3] == [("zoo", "big", "part0"), ("zoo", "big", "part1"), ("zoo", "a")]
    # a folder too large for one chunk is cut into parts of the limit (here 32 items)
    flat = _folder_chunks(list(range(100)), 2, [("x",)] * 100)
    assert [len(c) for c in flat] == [32, 32, 32, 4] and [i for c in flat for i in c] == list(range(100))
