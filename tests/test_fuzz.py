"""Property tests: no exception escapes, extraction is deterministic, --fix output parses and is idempotent.

The default run is short; `tox -e fuzz` (NPU_AUDIT_FUZZ_EXAMPLES=2000) runs the slow-marked longer ones.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import libcst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npu_audit.fix import fix_file
from npu_audit.knowledge.loader import load
from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings

LONG = int(os.environ.get("NPU_AUDIT_FUZZ_EXAMPLES", "0"))
FAST = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=LONG or 300, deadline=None, suppress_health_check=list(HealthCheck))

KEYS = sorted(load().options)
FIELDS = ("b", "i", "s", "f", "list")
VALUE_EXPR = st.one_of(
    st.booleans().map(repr),
    st.integers(min_value=-(2**40), max_value=2**40).map(repr),
    st.text(max_size=30).map(repr),
    st.text(max_size=30).map(lambda t: f"tf.compat.as_bytes({t!r})"),
    st.binary(max_size=20).map(repr),
    st.sampled_from(["FLAGS.mode", "args.x", "os.getenv('X')", "None", "1.5", "[1, 2]", "str(26 * 1024)",
                     "f'{MODE}'", "'%s' % MODE", "MODE.encode()", "{'a': 1}"]),
)


@st.composite
def npu_scripts(draw):
    lines = ["import os", "import tensorflow as tf", "from npu_bridge.npu_init import *", "MODE = 'allow_mix_precision'",
             "config = tf.ConfigProto()", "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()",
             f"custom_op.name = {draw(st.sampled_from(['NpuOptimizer', 'NPUOptimizer', 'x']))!r}"]
    for _ in range(draw(st.integers(min_value=1, max_value=12))):
        key = draw(st.one_of(st.sampled_from(KEYS), st.text(min_size=1, max_size=12)))
        line = f"custom_op.parameter_map[{key!r}].{draw(st.sampled_from(FIELDS))} = {draw(VALUE_EXPR)}"
        if draw(st.booleans()) and draw(st.booleans()):
            line = f"if FLAGS.x:\n    {line}"
        lines.append(line)
    if draw(st.booleans()):
        kw = draw(st.sampled_from(["precision_mode", "iterations_per_loop", "enable_dump", "bogus_kw", "jit_compile"]))
        lines.append(f"run_config = NPURunConfig(session_config=config, {kw}={draw(VALUE_EXPR)})")
    return "\n".join(lines) + "\n"


def analyse_text(text: str, folder: str, name: str = "fuzz.py", force: bool = True):
    path = Path(folder) / name
    path.write_text(text, encoding="utf-8")
    job = Job(file=str(path), display=name, roots=(folder,), settings=Settings(), want_configs=True, force_parse=force)
    return job, analyze_file(job)


def check_script(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        job, first = analyse_text(text, folder)
        assert not first.internal_error, [f.message for f in first.findings]
        _, second = analyse_text(text, folder)
        assert [f.message for f in first.findings] == [f.message for f in second.findings]
        assert first.configs == second.configs
        fx = fix_file(job, first, unsafe=True)
        fixed = fx.fixed.decode("utf-8")
        libcst.parse_module(fixed)
        Path(job.file).write_bytes(fx.fixed)
        again = fix_file(job, analyze_file(job), unsafe=True)
        assert not again.applied, [f.message for f in again.applied]


@FAST
@given(npu_scripts())
def test_npu_scripts_never_crash_and_fixes_are_stable(text):
    check_script(text)


@pytest.mark.slow
@SLOW
@given(npu_scripts())
def test_npu_scripts_long(text):
    check_script(text)


def _random_programs():
    import hypothesmith

    return hypothesmith.from_grammar(auto_target=False)


@FAST
@given(st.deferred(_random_programs))
def test_random_programs_never_crash(text):
    with tempfile.TemporaryDirectory() as folder:
        _, report = analyse_text(text, folder)
        assert not report.internal_error, [f.message for f in report.findings]


@pytest.mark.slow
@SLOW
@given(st.deferred(_random_programs))
def test_random_programs_long(text):
    with tempfile.TemporaryDirectory() as folder:
        _, report = analyse_text(text, folder)
        assert not report.internal_error, [f.message for f in report.findings]


@FAST
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash(data):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "blob.py"
        path.write_bytes(b"custom_op.parameter_map['k'].s = 1\n" + data)
        report = analyze_file(Job(file=str(path), display="blob.py", roots=(folder,), settings=Settings()))
        assert not report.internal_error, [f.message for f in report.findings]


def _check_slice_of(text: str) -> None:
    """A slice of any program that CPython reads is a program CPython and libcst read, with the same lines,
    each kept line unchanged and each dropped run replaced by a stand-in at the same place."""
    import ast
    import warnings

    from npu_audit.extract.demand import HelperText
    from npu_audit.slicing import slice_text
    from npu_audit.text import split_lines_keepends

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
    seeded = "import tensorflow as tf\nconfig = tf.ConfigProto()\n" + text
    for source in (text, seeded):
        try:
            source_tree = ast.parse(source) if source is seeded else tree
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        result = slice_text(source, source_tree)
        helper = HelperText(source, source_tree)
        texts = [helper.text_of(helper.first_part([])), helper.text_of(helper.first_part(list(helper.definitions)[:1]))]
        if result is not None:
            texts.append(result.text)
        for result_text in texts:
            before, after = split_lines_keepends(source), split_lines_keepends(result_text)
            assert len(before) == len(after)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(result_text)
            libcst.parse_module(result_text)
            for old, new in zip(before, after):
                assert new == old or new.strip() in ("", "pass", '"""')


@FAST
@given(st.deferred(_random_programs))
def test_slices_of_random_programs_are_programs(text):
    _check_slice_of(text)


@pytest.mark.slow
@SLOW
@given(st.deferred(_random_programs))
def test_slices_of_random_programs_long(text):
    _check_slice_of(text)
