"""What npu-audit reads from the user's cache folder is data it signed itself, never code.

The folder can be inside the audited repository (``XDG_CACHE_HOME`` set to a folder of a CI checkout) or
restored from a shared CI cache, so a test here plays the repository's author: every file it plants must
neither run nor change a finding."""

from __future__ import annotations

import json
import os
import pathlib
import pickle
import stat
import subprocess
import sys

import pytest

from npu_audit import user_cache
from npu_audit.knowledge import loader

REPO = pathlib.Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "train_sample.py"
PACKAGE = REPO / "npu_audit"


class _Marker:
    """Unpickling this creates the file named by its argument."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.path),))


def _run(cache_home: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home))
    env.pop("NPU_AUDIT_NO_KB_SNAPSHOT", None)
    return subprocess.run(
        [sys.executable, "-m", "npu_audit", "--no-cache", "--format", "json", *args, str(SAMPLE)],
        capture_output=True, text=True, env=env, cwd=REPO,
    )


def _findings(done: subprocess.CompletedProcess) -> list[tuple]:
    assert done.returncode in (0, 1), done.stderr
    return sorted((d["code"], d["line"], d["column"], d["message"]) for d in json.loads(done.stdout)["diagnostics"])


def _snapshot_path(cache_home: pathlib.Path, monkeypatch) -> pathlib.Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    monkeypatch.delenv("NPU_AUDIT_NO_KB_SNAPSHOT", raising=False)
    path = loader._snapshot_path(loader.rules_dir())
    assert path is not None
    return path


@pytest.fixture(scope="module")
def clean_findings(tmp_path_factory) -> list[tuple]:
    return _findings(_run(tmp_path_factory.mktemp("clean-cache")))


def test_a_planted_pickle_at_the_snapshot_path_does_not_run(tmp_path, monkeypatch, clean_findings):
    cache_home = tmp_path / "cache"
    marker = tmp_path / "code-ran"
    snapshot = _snapshot_path(cache_home, monkeypatch)
    snapshot.parent.mkdir(parents=True)
    planted = pickle.dumps(_Marker(str(marker)))
    snapshot.write_bytes(planted)
    # (and under the names a pickle or marshal cache would have, for good measure)
    snapshot.with_suffix(".pickle").write_bytes(planted)
    (snapshot.parent / f"methods-{sys.implementation.cache_tag}-O0.marshal").write_bytes(planted)
    assert _findings(_run(cache_home)) == clean_findings
    assert not marker.exists()


def test_a_forged_snapshot_cannot_hide_a_finding(tmp_path, monkeypatch, clean_findings):
    """A snapshot of the documents with every option removed, written as a well-formed JSON snapshot but
    signed with another key (or not at all), is ignored: the findings stay."""
    cache_home = tmp_path / "cache"
    assert _findings(_run(cache_home)) == clean_findings  # writes the genuine snapshot and the key
    snapshot = _snapshot_path(cache_home, monkeypatch)
    genuine = snapshot.read_bytes()
    documents = json.loads(genuine[user_cache.MAC_BYTES:])
    assert any(name.startswith("options/") for name in documents)
    forged = json.dumps({k: ({} if k.startswith("options/") else v) for k, v in documents.items()}).encode()
    for blob in (forged, user_cache.signed(os.urandom(user_cache.KEY_BYTES), forged)):
        snapshot.write_bytes(blob)
        assert _findings(_run(cache_home)) == clean_findings
    # the run replaced the forgery with a snapshot signed by this user's key
    assert snapshot.read_bytes() == genuine


@pytest.mark.skipif(sys.platform == "win32", reason="file modes and owners are POSIX")
def test_a_key_others_can_read_is_refused(tmp_path, clean_findings):
    cache_home = tmp_path / "cache"
    folder = cache_home / "npu-audit"
    folder.mkdir(parents=True)
    key = folder / user_cache.KEY_NAME
    key.write_bytes(os.urandom(user_cache.KEY_BYTES))
    key.chmod(0o644)  # (what a file checked out by git looks like)
    done = _run(cache_home)
    assert _findings(done) == clean_findings
    assert not list(folder.glob("kb-*")), "nothing is cached under a key others can read"
    assert str(key) in done.stderr and "600" in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges on Windows")
def test_a_key_that_is_a_link_is_refused(tmp_path, clean_findings):
    cache_home = tmp_path / "cache"
    folder = cache_home / "npu-audit"
    folder.mkdir(parents=True)
    elsewhere = tmp_path / "their.key"
    elsewhere.write_bytes(os.urandom(user_cache.KEY_BYTES))
    elsewhere.chmod(0o600)
    (folder / user_cache.KEY_NAME).symlink_to(elsewhere)
    done = _run(cache_home)
    assert _findings(done) == clean_findings
    assert not list(folder.glob("kb-*"))
    assert "link" in done.stderr


def test_a_new_key_is_private(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    user_cache._key_memo.clear()
    try:
        key = user_cache.secret_key()
    finally:
        user_cache._key_memo.clear()
    assert key is not None and len(key) == user_cache.KEY_BYTES
    info = (tmp_path / "npu-audit" / user_cache.KEY_NAME).stat()
    assert stat.S_IMODE(info.st_mode) == 0o600


def test_signed_data_round_trips_and_anything_else_is_refused():
    key = os.urandom(user_cache.KEY_BYTES)
    blob = user_cache.signed(key, b'{"a": 1}')
    assert user_cache.unsigned(key, blob) == b'{"a": 1}'
    assert user_cache.unsigned(os.urandom(user_cache.KEY_BYTES), blob) is None
    assert user_cache.unsigned(key, blob[:-1]) is None
    assert user_cache.unsigned(key, b"short") is None


def test_the_package_never_unpickles_unmarshals_or_runs_loaded_code():
    """A guard on the sources: no pickle or marshal module, no code-object rewriting, no rebinding of a
    name inside another module (multiprocessing's own pipes between npu-audit's processes are not disk)."""
    forbidden = ("import pickle", "import marshal", "from pickle", "from marshal", "__code__", "co_stacksize",
                 "vars(dataclasses)", "types.CodeType")
    offenders = [
        f"{path.relative_to(REPO)}: {needle}"
        for path in PACKAGE.rglob("*.py")
        for needle in forbidden
        if needle in path.read_text(encoding="utf-8")
    ]
    assert not offenders
