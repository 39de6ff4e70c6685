"""npu_audit.records: the standard library's dataclasses, their generated methods compiled once per Python
and kept in the user's cache folder (a fifth of a one-file run was compiling them)."""

from __future__ import annotations

import dataclasses
import json
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


def _twins(frozen: bool):
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

    return dataclass(frozen=frozen)(body()), dataclasses.dataclass(frozen=frozen)(body())


@pytest.mark.parametrize("frozen", [False, True])
def test_a_record_is_the_standard_librarys_dataclass(frozen):
    ours, theirs = _twins(frozen)
    for method in ("__init__", "__repr__", "__eq__", "__setattr__", "__delattr__", "__hash__"):
        mine, std = ours.__dict__.get(method), theirs.__dict__.get(method)
        assert (mine is None) == (std is None), method
        if mine is not None:  # the same code, compiled from the same text by the same Python
            assert mine.__code__.co_code == std.__code__.co_code, method
            assert mine.__code__.co_consts == std.__code__.co_consts, method
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
    with pytest.raises(TypeError):  # a field without a default after one with a default
        @dataclass
        class Wrong:
            """Refused by dataclasses."""

            first: int = 1
            second: int  # type: ignore[misc]

    assert "exec" not in vars(dataclasses)  # the builtin again for every other dataclass of the process

    @dataclass
    class Right:
        """Built after the refused one."""

        value: int = 2

    assert Right() == Right(2) and "exec" not in vars(dataclasses)


def test_a_second_start_compiles_no_generated_method(tmp_path):
    compiled, shown, err = _start(tmp_path)
    assert compiled > 200 and not err  # the first start compiles them all and keeps them
    assert len(_methods_files(tmp_path)) == 1
    again, shown_again, err = _start(tmp_path)
    assert again == 0 and not err
    assert shown_again == shown == "Citation(doc='d', heading=None, adapter=None, note=None)"


def test_a_damaged_cache_file_is_rebuilt(tmp_path):
    _start(tmp_path)
    (kept,) = _methods_files(tmp_path)
    kept.write_bytes(b"\x00not marshal data" * 10)
    compiled, shown, err = _start(tmp_path)
    assert compiled > 200 and not err and shown.startswith("Citation(")
    assert _start(tmp_path)[0] == 0  # written anew


def test_an_unwritable_cache_folder_only_costs_the_compiling(tmp_path):
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("x")
    for _ in range(2):
        compiled, shown, err = _start(blocked)
        assert compiled > 200 and not err and shown.startswith("Citation(")


def test_the_cache_file_can_be_turned_off(tmp_path):
    compiled, _, _ = _start(tmp_path, NPU_AUDIT_NO_CODE_CACHE="1")
    assert compiled > 200 and not (tmp_path / "npu-audit").exists()


def test_the_file_keeps_only_what_a_process_used_once_it_has_grown_too_large(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("NPU_AUDIT_NO_CODE_CACHE", raising=False)
    stale = {f"def old_{i}(): pass": compile(f"def old_{i}(): pass", "<string>", "exec")
             for i in range(records._MAX_KEPT)}
    monkeypatch.setattr(records, "_codes", dict(stale))
    monkeypatch.setattr(records, "_used", set())
    monkeypatch.setattr(records, "_compiled", [])
    monkeypatch.setattr("atexit.register", lambda function: None)
    _twins(frozen=True)
    records._save()
    import marshal

    (written,) = _methods_files(tmp_path)
    kept = marshal.loads(written.read_bytes())
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
