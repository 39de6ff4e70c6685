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
            assert finding.hint.startswith("if it ran out of memory, split the file or leave the path out")
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


def test_a_few_files_of_one_project_are_shared_among_the_workers():
    """Fewer files than a chunk holds (a second phase of four files of one project) are not all handed to one
    worker while the other waits: each worker gets an equal share."""
    from npu_audit.workers import _folder_chunks

    chunks = _folder_chunks([0, 1, 2, 3], 2, [("zoo", "edvr", "tools")] * 4)
    assert [len(c) for c in chunks] == [2, 2] and sorted(i for c in chunks for i in c) == [0, 1, 2, 3]
    assert _folder_chunks([5], 2, [("zoo",)] * 6) == [[5]]


def test_every_chunk_a_worker_ran_is_timed(tmp_path):
    from npu_audit.workers import run_in_workers

    results: dict[int, object] = {}
    chunks = []
    items = [0.0] * 40
    run_in_workers(abs, items, list(range(40)), 2, results.__setitem__, lambda i, how: None,
                   files=[str(tmp_path / f"p{i % 4}" / "a.py") for i in range(40)], timed=chunks.append)
    assert len(results) == 40
    assert sum(chunk.items for chunk in chunks) == 40
    assert all(chunk.worker != os.getpid() and chunk.started <= chunk.ended for chunk in chunks)


NPU_HELPER = '''import tensorflow as tf


def session_config(steps):
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["iterations_per_loop"].i = steps
    return config
'''


def _run_killing_in_second_phase(tree, out, alone_calls) -> None:
    """(in a forked child: a regression that kills the process running the run must not kill pytest)
    npu-audit over ``tree`` where the second-phase analysis of train.py kills its process."""
    from npu_audit import workers

    real_analyze, real_alone = pipeline._analyze, workers._alone

    def analyze(job: Job):
        if job.force_parse and os.path.basename(job.file) == "train.py":
            faulthandler.disable()
            os.kill(os.getpid(), signal.SIGKILL)
        return real_analyze(job)

    def alone(*args):
        with open(alone_calls, "a") as f:
            f.write("x")
        return real_alone(*args)

    pipeline._analyze, workers._alone = analyze, alone
    os._exit(main(["--no-cache", "--isolated", "--jobs", "2", "--format", "json", "-o", str(out), str(tree)]))


def test_a_file_whose_second_phase_analysis_kills_its_worker_costs_that_file_only(tmp_path):
    """train.py has no NPU marker but passes a value into an NPU helper: the worker analyses it right
    after its project (pipeline.analyze_feeders_ahead), and that analysis kills the worker. The file is
    blamed (not its chunk, whose files would each be run in a process of their own), the second phase
    runs it in a worker again (not in the run's own process), and the run reports it as lost."""
    proj, other = tmp_path / "tree" / "proj", tmp_path / "tree" / "other"
    proj.mkdir(parents=True)
    other.mkdir()
    (proj / "npu_cfg.py").write_text(NPU_HELPER)
    (proj / "train.py").write_text("import tensorflow as tf\nfrom npu_cfg import session_config\n\n"
                                   "sess = tf.Session(config=session_config(0))\n")
    for folder, count in ((proj, 20), (other, 40)):  # (proj: one chunk of 22 files)
        for n in range(count):
            (folder / f"util_{n:02d}.py").write_text(f"VALUE = {n}\n")
    out, alone_calls = tmp_path / "report.json", tmp_path / "alone_calls"
    alone_calls.write_text("")
    child = multiprocessing.get_context("fork").Process(
        target=_run_killing_in_second_phase, args=(tmp_path / "tree", out, alone_calls))
    child.start()
    child.join(120)
    assert child.exitcode == 2  # (a file was lost; -9 if the run's own process was killed)
    report = json.loads(out.read_text())
    by_name = {}
    for d in report["diagnostics"]:
        by_name.setdefault(os.path.basename(d["path"]), []).append(d["name"])
    assert by_name == {"train.py": ["internal-error"]}
    assert report["summary"]["files"] == 62
    # run alone: train.py's first phase after the death ahead, then its second phase (and at most the file
    # the other worker was analysing when the pool broke)
    assert len(alone_calls.read_text()) <= 3
