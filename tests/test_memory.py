"""What an analysis leaves behind: nothing the cycle collector has to find. Objects that point at each other
are freed only by its walk, whose cost grows with them (on the real tree, 190 000 such objects per 35 files
made it a tenth of a run); a process analysing many files freezes what an analysis leaves without that walk
(except after a long analysis: pipeline.analyze_in_batch), so cycles an analysis left would stay for the rest
of the run."""

from __future__ import annotations

import gc
import shutil
from pathlib import Path

import pytest

from npu_audit.findings import FileReport
from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures" / "extract"


def _analysed_twice(job: Job) -> tuple[FileReport, list[str]]:
    """The report of a second analysis of ``job`` and the type names of the objects it left to the cycle
    collector (the first run fills the process's caches: they live on)."""
    analyze_file(job)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        report = analyze_file(job)
        gc.collect()
        return report, [type(o).__name__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


@pytest.mark.parametrize("name", ["helpers_and_classes.py", "uses_pkg.py", "flags_and_args.py", "branches.py"])
def test_an_analysis_leaves_no_reference_cycles(tmp_path, name):
    shutil.copy(FIXTURES / name, tmp_path / name)
    shutil.copytree(FIXTURES / "pkg", tmp_path / "pkg")
    job = Job(file=str(tmp_path / name), display=name, roots=(str(tmp_path),), settings=Settings(), force_parse=True)
    report, left = _analysed_twice(job)
    assert report.parsed and report.findings is not None
    assert len(left) < 60, sorted(set(left))


@pytest.mark.parametrize("sliced", [True, False], ids=["sliced", "whole"])
def test_objects_that_point_at_themselves_are_unlinked(tmp_path, monkeypatch, sliced):
    """Classes defined in a function body and instances holding each other (made by a call, or for the methods
    of a class the script never instantiates) made reference cycles that only the collector could free (on
    the real tree, 84,000 objects from 88 files; the largest, a whole module's tree held by a nested class).
    Read whole too: the slice leaves out the statements that make some of them."""
    if not sliced:
        monkeypatch.setenv("NPU_AUDIT_NO_SLICE", "1")
    name = "self_linked.py"
    shutil.copy(Path(__file__).parent / "fixtures" / "memory" / name, tmp_path / name)
    job = Job(file=str(tmp_path / name), display=name, roots=(str(tmp_path),), settings=Settings())
    report, left = _analysed_twice(job)
    assert report.parsed and "precision_mode" in {f.option for f in report.findings}, [f.name for f in report.findings]
    assert left == [], sorted(set(left))


def test_after_a_long_analysis_the_collector_runs_before_what_it_left_is_frozen(monkeypatch):
    """A worker freezes what an analysis leaves (the helper trees it keeps for the next files) without
    collecting first: the collection found next to nothing and cost a twentieth of a run. After an
    analysis that took longer than ``COLLECT_AFTER_SECONDS``, where much may have been allocated, the
    collector runs first, so that cyclic garbage of a big file does not stay for the rest of the run."""
    import weakref

    from npu_audit import pipeline

    class Node:
        pass

    left: list[weakref.ref] = []

    def analysis_leaving_a_cycle(job):
        a, b = Node(), Node()
        a.other, b.other = b, a
        left.append(weakref.ref(a))
        return FileReport(path=job.display, parsed=True)

    monkeypatch.setattr(pipeline, "analyze_file", analysis_leaving_a_cycle)
    job = Job(file="t.py", display="t.py", roots=(".",), settings=Settings())
    try:
        monkeypatch.setattr(pipeline, "COLLECT_AFTER_SECONDS", 3600.0)  # short: frozen as it is
        pipeline.analyze_in_batch(job)
        assert left[-1]() is not None
        monkeypatch.setattr(pipeline, "COLLECT_AFTER_SECONDS", -1.0)  # long: collected first
        pipeline.analyze_in_batch(job)
        assert left[-1]() is None
    finally:
        gc.unfreeze()
