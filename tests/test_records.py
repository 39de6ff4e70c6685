"""npu_audit.records: the standard library's dataclasses, their generated methods compiled once per Python
and kept in the user's cache folder (a fifth of a one-file run was compiling them)."""

from __future__ import annotations

import dataclasses
import inspect
import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from npu_audit import records
from npu_audit.records import dataclass

ROOT = Path(__file__).resolve().parent.parent

# What a one-file run imports (the classes it creates), then how many method texts it compiled, as JSON.
_START = (
    "import json, npu_audit.records as r, npu_audit.cli, npu_audit.pipeline, npu_audit.checks, "
    "npu_audit.knowledge.loader, npu_audit.extract.extraction, npu_audit.parse, npu_audit.slicing\n"
    "from npu_audit.knowledge.model import Citation\n"
    "print(json.dumps([r.compiled_in_this_process(), repr(Citation(doc='d', heading=None, adapter=None, note=None))]))\n"
)


def _start(cache_home: Path, **env: str) -> tuple[int, str, str]:
    environment = {k: v for k, v in os.environ.items() if k != "NPU_AUDIT_NO_CODE_CACHE"}
    environment.update(XDG_CACHE_HOME=str(cache_home), PYTHONPATH=str(ROOT), **env)
    done = subprocess.run([sys.executable, "-c", _START], capture_output=True, text=True, env=environment, check=True)
    compiled, shown = json.loads(done.stdout)
    return compiled, shown, done.stderr


def _methods_files(cache_home: Path) -> list[Path]:
    return sorted((cache_home / "npu-audit").glob("methods-*.marshal"))


def _twins(**params):
    """The same class built by records.dataclass and by dataclasses.dataclass."""
    def body():
        class Shape:
            """A record with every kind of field npu-audit uses."""

            name: str
            size: int = 3
            tags: list = dataclasses.field(default_factory=list)
            note: str = dataclasses.field(default="", repr=False, compare=False)
            seen: int = dataclasses.field(default=0, init=False, repr=False, compare=False)
        return Shape

    return dataclass(**params)(body()), dataclasses.dataclass(**params)(body())


_METHODS = ("__init__", "__repr__", "__eq__", "__setattr__", "__delattr__", "__hash__", "__lt__", "__ge__")


@pytest.mark.parametrize("params", [{}, {"frozen": True}, {"order": True}, {"unsafe_hash": True}, {"eq": False}])
def test_a_records_methods_are_the_standard_librarys(params):
    ours, theirs = _twins(**params)
    for method in _METHODS:
        mine, std = ours.__dict__.get(method), theirs.__dict__.get(method)
        assert (mine is None) == (std is None), method
        if callable(mine):  # the same code (flags, names, constants, lines) and the same annotations
            assert mine.__code__ == std.__code__, method
            assert mine.__annotations__ == std.__annotations__, method
    assert inspect.signature(ours) == inspect.signature(theirs)
    assert str(inspect.signature(ours)) == "(name: 'str', size: 'int' = 3, tags: 'list' = <factory>, note: 'str' = '') -> None"


@pytest.mark.parametrize("frozen", [False, True])
def test_a_record_behaves_as_a_dataclass(frozen):
    ours, _ = _twins(frozen=frozen)
    a, b = ours("x", tags=["t"], note="left out"), ours("x", tags=["t"])
    assert a == b and repr(a).endswith("Shape(name='x', size=3, tags=['t'])") and a.seen == 0
    assert [f.name for f in dataclasses.fields(a)] == ["name", "size", "tags", "note", "seen"]
    assert dataclasses.replace(a, size=4).size == 4 and dataclasses.is_dataclass(a)
    assert ours("y").tags is not ours("y").tags  # a fresh default per instance
    if frozen:
        assert hash(ours("x", tags=("t",))) == hash(ours("x", tags=("t",), note="not compared"))
        with pytest.raises(dataclasses.FrozenInstanceError):
            a.size = 5  # type: ignore[misc]
    else:
        a.size = 5
        assert a.size == 5 and ours.__hash__ is None


def test_the_standard_library_is_left_as_it_was_even_when_a_class_is_refused():
    vars(dataclasses)["exec"] = exec  # (someone else's binding is put back as it was)
    try:
        with pytest.raises(TypeError):  # a field without a default after one with a default
            @dataclass
            class Wrong:
                """Refused by dataclasses."""

                first: int = 1
                second: int  # type: ignore[misc]

        assert vars(dataclasses)["exec"] is exec
    finally:
        del vars(dataclasses)["exec"]

    @dataclass
    class Right:
        """Built after the refused one."""

        value: int = 2

    assert Right() == Right(2) and "exec" not in vars(dataclasses)  # the builtin again for every other dataclass


def test_a_second_start_compiles_no_generated_method(tmp_path):
    compiled, shown, err = _start(tmp_path)
    assert compiled > 100 and not err  # the first start compiles them all and keeps them
    assert len(_methods_files(tmp_path)) == 1
    again, shown_again, err = _start(tmp_path)
    assert again == 0 and not err
    assert shown_again == shown == "Citation(doc='d', heading=None, adapter=None, note=None)"


def test_a_parallel_run_keeps_the_classes_its_analysis_creates(tmp_path):
    """Worker processes end without exit handlers: the run creates the analysis's classes before it starts
    them, and keeps their compiled methods itself."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (project / name).write_text(
            "import tensorflow as tf\n"
            "config = tf.ConfigProto()\n"
            "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
            'custom_op.name = "NpuOptimizer"\n'
            'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n'
            "sess = tf.Session(config=config)\n", encoding="utf-8")
    cache = tmp_path / "cache"
    environment = {k: v for k, v in os.environ.items() if k != "NPU_AUDIT_NO_CODE_CACHE"}
    environment.update(XDG_CACHE_HOME=str(cache), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "npu_audit", str(project), "--jobs", "2", "--no-cache",
                           "--format", "json"], capture_output=True, text=True, env=environment)
    assert json.loads(done.stdout)["summary"]["files_parsed"] == 3, done.stderr
    check = ("import npu_audit.records as r\nfrom npu_audit.pipeline import load_analysis_code\n"
             "load_analysis_code()\nprint(r.compiled_in_this_process())\n")
    after = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=environment, check=True)
    assert after.stdout.strip() == "0"


def test_a_language_server_stopped_without_exit_handlers_has_kept_its_classes(tmp_path):
    """Editors often end the server abruptly: it keeps what it compiled once its analysis code is loaded."""
    environment = {k: v for k, v in os.environ.items() if k != "NPU_AUDIT_NO_CODE_CACHE"}
    environment.update(XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    server = ("import os\nfrom npu_audit.lsp.analysis import Engine\nengine = Engine()\n"
              "engine.executor.shutdown(wait=True)\nos._exit(0)\n")
    subprocess.run([sys.executable, "-c", server], env=environment, check=True)
    check = ("import npu_audit.records as r\nfrom npu_audit.pipeline import load_analysis_code\n"
             "load_analysis_code()\nprint(r.compiled_in_this_process())\n")
    after = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=environment, check=True)
    assert after.stdout.strip() == "0"


def test_a_run_stopped_without_exit_handlers_once_its_analysis_code_is_loaded_has_kept_its_classes(tmp_path):
    """A command-line run loads the analysis code before its workers start; a run killed after that (a CI
    job's time-out sends a signal, which runs no exit handler) has kept what it compiled."""
    environment = {k: v for k, v in os.environ.items() if k != "NPU_AUDIT_NO_CODE_CACHE"}
    environment.update(XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    killed = "import os\nfrom npu_audit.pipeline import load_analysis_code\nload_analysis_code()\nos._exit(0)\n"
    subprocess.run([sys.executable, "-c", killed], env=environment, check=True)
    check = ("import npu_audit.records as r\nfrom npu_audit.pipeline import load_analysis_code\n"
             "load_analysis_code()\nprint(r.compiled_in_this_process())\n")
    after = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=environment, check=True)
    assert after.stdout.strip() == "0"


@pytest.mark.parametrize("damage", ["garbage", "truncated", "one byte changed", "another format"])
def test_a_damaged_or_foreign_cache_file_is_rebuilt(tmp_path, damage):
    fresh = _start(tmp_path / "fresh")[0]
    _start(tmp_path)
    (kept,) = _methods_files(tmp_path)
    data = kept.read_bytes()
    if damage == "garbage":
        data = b"\x00not marshal data" * 10
    elif damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "one byte changed":  # (marshal loads some such changes, and the code crashes when it runs)
        middle = len(data) // 2
        data = data[:middle] + bytes([data[middle] ^ 0x10]) + data[middle + 1:]
    else:  # what an older npu-audit wrote under this name (its code compiled differently)
        data = data.replace(b"npu-audit methods 2 ", b"npu-audit methods 1 ", 1)
    kept.write_bytes(data)
    compiled, shown, err = _start(tmp_path)
    assert compiled == fresh and not err and shown.startswith("Citation(")
    assert _start(tmp_path)[0] == 0  # written anew


def test_an_unwritable_cache_folder_only_costs_the_compiling(tmp_path):
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("x")
    first = _start(tmp_path / "fresh")[0]
    for _ in range(2):
        compiled, shown, err = _start(blocked)
        assert compiled == first and not err and shown.startswith("Citation(")


def test_a_cache_folder_relative_to_where_it_runs_is_never_used(tmp_path, monkeypatch):
    """What such a folder holds would come from the project being audited, and it is loaded as code."""
    from npu_audit import user_cache

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", "cache")  # relative: ignored, as the XDG specification says
    assert user_cache.folder() == tmp_path / "home" / ".cache" / "npu-audit"
    monkeypatch.setattr(user_cache.os.path, "expanduser", lambda path: path)  # no home folder known
    assert user_cache.folder() is None
    compiled, _, err = _start(Path("cache"))  # (the started process gets the relative value too)
    assert compiled > 100 and not err and not (tmp_path / "cache").exists()


def test_the_cache_file_can_be_turned_off(tmp_path):
    for _ in range(2):
        compiled, _, _ = _start(tmp_path, NPU_AUDIT_NO_CODE_CACHE="1")
        assert compiled > 100 and not (tmp_path / "npu-audit").exists()


def test_the_file_keeps_only_what_a_process_used_once_it_has_grown_too_large(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("NPU_AUDIT_NO_CODE_CACHE", raising=False)
    stale = {f"def old_{i}(): pass": compile(f"def old_{i}(): pass", "<string>", "exec")
             for i in range(records._MAX_KEPT)}
    monkeypatch.setattr(records, "_codes", dict(stale))
    monkeypatch.setattr(records, "_used", set())
    monkeypatch.setattr(records, "_compiled", [])
    monkeypatch.setattr(records, "_written", 0)
    monkeypatch.setattr("atexit.register", lambda function: None)
    _twins(frozen=True)
    records.save()

    (written,) = _methods_files(tmp_path)
    kept = marshal.loads(written.read_bytes()[len(records._header()) + 4:])
    assert kept and not any(text.startswith("def old_") for text in kept)
    assert set(kept) == records._used


def test_every_record_class_of_the_package_is_built_through_records():
    """A class built by ``dataclasses.dataclass`` directly would compile its methods at every start again."""
    import ast

    direct = []
    for path in sorted((ROOT / "npu_audit").rglob("*.py")):
        if path.name == "records.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "dataclasses" and any(
                    alias.name == "dataclass" for alias in node.names):
                direct.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            elif isinstance(node, ast.Attribute) and node.attr == "dataclass" and isinstance(node.value, ast.Name) \
                    and node.value.id == "dataclasses":
                direct.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not direct, "use `from npu_audit.records import dataclass`: " + ", ".join(direct)
