"""The result cache cannot change a result, and never writes through a link.

In CI the audited repository is written by whoever opened the pull request, and ``.npu-audit-cache/``
lives inside it: a test here plays that author. A database edited to claim that files are clean (or
re-signed with the author's own key) hides no finding; a cache folder, database or ``.gitignore`` that is
a link makes the run refuse the cache rather than write where the link leads; a cache that cannot be used
is said once on stderr and never changes the exit code.
"""

from __future__ import annotations

import glob
import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import time

import pytest

import npu_audit.cache

REPO = pathlib.Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "train_sample.py"
IGNORED = "cache entries in .npu-audit-cache that were not written by this user (their signatures do not match)"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="symbolic links and file modes are POSIX here")


@pytest.fixture
def project(tmp_path) -> pathlib.Path:
    """A checkout holding the sample script, modified long ago (a run over it is kept whole)."""
    root = tmp_path / "checkout"
    root.mkdir()
    shutil.copy(SAMPLE, root / "train.py")
    past = time.time() - 3600
    os.utime(root / "train.py", (past, past))
    return root


def audit(project: pathlib.Path, cache_home: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home))
    env.pop("NPU_AUDIT_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-m", "npu_audit", "--no-progress", "--format", "json", *args, "."],
                          capture_output=True, text=True, env=env, cwd=project)


def findings(done: subprocess.CompletedProcess) -> list[tuple]:
    assert done.returncode in (0, 1), done.stderr
    return sorted((d["code"], d["line"], d["column"]) for d in json.loads(done.stdout)["diagnostics"])


def cache_lines(done: subprocess.CompletedProcess) -> list[str]:
    return [line for line in done.stderr.splitlines() if "cache" in line]


def claim_clean(folder: pathlib.Path, resign: bytes | None = None) -> int:
    """Edit every result database in ``folder`` to say that every file is clean and no run found anything
    (``resign``: and sign the edited rows with that key, as their author would with his own); how many
    rows were edited."""
    edited = 0
    for path in glob.glob(str(folder / "results-v*.sqlite3")):
        db = sqlite3.connect(path)
        columns = [row[1] for row in db.execute("PRAGMA table_info(entries)")]
        for row in db.execute(f"SELECT {', '.join(columns)} FROM entries").fetchall():
            entry = dict(zip(columns, row))
            entry.update(report="C", text=None)
            if resign is not None:
                entry["mac"] = npu_audit.cache._mac(
                    resign, b"entries", entry["key"], entry["token"], entry["size"], entry["mtime"], entry["ctime"],
                    entry["hash"], entry["deps"], entry["folders"], entry["report"], entry["text"], entry["rmac"])
            db.execute(f"UPDATE entries SET {', '.join(f'{c} = ?' for c in columns)} WHERE key = ?",
                       [*entry.values(), entry["key"]])
            edited += 1
        run_columns = [row[1] for row in db.execute("PRAGMA table_info(run_results)")]
        for row in db.execute(f"SELECT {', '.join(run_columns)} FROM run_results").fetchall():
            run = dict(zip(run_columns, row))
            value = json.loads(run["value"])
            value.update(reports=[], parsed=[])
            run["value"] = json.dumps(value)
            if resign is not None:
                run["mac"] = npu_audit.cache._mac(resign, b"run_results", run["key"], run["command"], run["value"],
                                                  run["texts"])
            db.execute(f"UPDATE run_results SET {', '.join(f'{c} = ?' for c in run_columns)} WHERE key = ?",
                       [*run.values(), run["key"]])
            edited += 1
        db.commit()
        db.close()
    return edited


def test_a_database_edited_to_claim_no_findings_hides_none(project, tmp_path):
    home = tmp_path / "home"
    expected = findings(audit(project, home, "--no-cache"))
    assert len(expected) == 13
    for _ in range(2):  # (the second run comes whole from the cache)
        done = audit(project, home)
        assert findings(done) == expected and not cache_lines(done)
    assert claim_clean(project / ".npu-audit-cache") >= 2
    done = audit(project, home)
    assert findings(done) == expected
    assert done.returncode == 1
    notes = cache_lines(done)
    assert len(notes) == 1 and IGNORED in notes[0] and "they are rewritten" in notes[0], done.stderr
    # the run rewrote the entries it ignored: the next run trusts them again, and says nothing
    done = audit(project, home)
    assert findings(done) == expected and not cache_lines(done)


def test_entries_signed_with_another_users_key_are_ignored(project, tmp_path):
    """The author of the repository runs npu-audit with his own key, edits the entries to claim no findings
    and signs them again: they fool his own runs, not a run with another user's key."""
    theirs, ours = tmp_path / "their-home", tmp_path / "our-home"
    expected = findings(audit(project, ours, "--no-cache"))
    assert findings(audit(project, theirs)) == expected
    key = (theirs / "npu-audit" / "secret.key").read_bytes()
    assert claim_clean(project / ".npu-audit-cache", resign=key) >= 2
    assert findings(audit(project, theirs)) == []  # (a complete forgery, for the key that signed it)
    done = audit(project, ours)
    assert findings(done) == expected
    assert len(cache_lines(done)) == 1 and IGNORED in done.stderr


def test_a_dangling_gitignore_link_in_the_cache_folder_creates_nothing(project, tmp_path):
    folder = project / ".npu-audit-cache"
    folder.mkdir()
    target = tmp_path / "outside" / "planted"
    target.parent.mkdir()
    (folder / ".gitignore").symlink_to(target)
    expected = findings(audit(project, tmp_path / "home", "--no-cache"))
    done = audit(project, tmp_path / "home")
    assert findings(done) == expected and done.returncode == 1
    assert not target.exists() and not os.listdir(target.parent)
    notes = cache_lines(done)
    assert len(notes) == 1, done.stderr
    assert ".npu-audit-cache/.gitignore is a symbolic link" in notes[0] and "remove it" in notes[0]
    assert sorted(os.listdir(folder)) == [".gitignore"]  # (no database either: the cache is not used)


def test_a_cache_folder_that_is_a_link_is_refused(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".npu-audit-cache").symlink_to(elsewhere)
    expected = findings(audit(project, tmp_path / "home", "--no-cache"))
    done = audit(project, tmp_path / "home")
    assert findings(done) == expected
    assert os.listdir(elsewhere) == []
    notes = cache_lines(done)
    assert len(notes) == 1 and ".npu-audit-cache is a symbolic link" in notes[0], done.stderr
    assert "remove the link" in notes[0]


@pytest.mark.parametrize("end", ["", "-wal", "-shm", "-journal"])
def test_a_database_file_that_is_a_link_is_refused(project, tmp_path, end):
    folder = project / ".npu-audit-cache"
    folder.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    name = f"results-v{npu_audit.cache.SCHEMA}.sqlite3{end}"
    (folder / name).symlink_to(elsewhere / "db")
    expected = findings(audit(project, tmp_path / "home", "--no-cache"))
    done = audit(project, tmp_path / "home")
    assert findings(done) == expected
    assert os.listdir(elsewhere) == []
    notes = cache_lines(done)
    assert len(notes) == 1 and f".npu-audit-cache/{name} is a symbolic link" in notes[0], done.stderr
    assert (folder / name).is_symlink()


def test_a_file_given_as_cache_folder_is_said_once(project, tmp_path):
    (tmp_path / "a-file").write_text("not a folder\n")
    expected = findings(audit(project, tmp_path / "home", "--no-cache"))
    for where, why in ((tmp_path / "a-file", "is not a folder"), (tmp_path / "a-file" / "below", "Not a directory")):
        done = audit(project, tmp_path / "home", "--cache-dir", str(where))
        assert findings(done) == expected and done.returncode == 1
        notes = cache_lines(done)
        assert len(notes) == 1, done.stderr
        assert f"the result cache in {where} is not used in this run" in notes[0] and why in notes[0]
        assert "--cache-dir" in notes[0]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes any folder")
def test_a_cache_folder_that_cannot_be_written_is_said_once(project, tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        expected = findings(audit(project, tmp_path / "home", "--no-cache"))
        done = audit(project, tmp_path / "home", "--cache-dir", str(folder))
    finally:
        folder.chmod(0o755)
    assert findings(done) == expected
    notes = cache_lines(done)
    assert len(notes) == 1 and "not used in this run" in notes[0], done.stderr


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc, where no folder can be created")
def test_a_cache_folder_that_cannot_be_created_is_said_once(project, tmp_path):
    expected = findings(audit(project, tmp_path / "home", "--no-cache"))
    done = audit(project, tmp_path / "home", "--cache-dir", "/proc/npu-audit-cache")
    assert findings(done) == expected and done.returncode == 1
    notes = cache_lines(done)
    assert len(notes) == 1 and "the result cache in /proc/npu-audit-cache is not used in this run" in notes[0]
    assert "give --cache-dir a folder this user can write, or run with --no-cache" in notes[0]


def test_without_a_key_nothing_is_cached(project, tmp_path):
    """A home whose cache folder cannot hold a key: the run says why once and uses no result cache at all."""
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    expected = findings(audit(project, tmp_path / "home", "--no-cache"))
    done = audit(project, home)
    assert findings(done) == expected
    assert not (project / ".npu-audit-cache").exists()
    notes = cache_lines(done)
    assert len(notes) == 1 and "secret.key" in notes[0], done.stderr


def test_an_entry_without_a_signature_is_not_read(tmp_path, monkeypatch):
    """In process: a row whose MAC is missing or made with another key is a miss, and counted once."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "train.py"
    shutil.copy(SAMPLE, script)
    key = os.urandom(32)
    cache = npu_audit.cache.Cache(str(tmp_path / "c"), key)
    cache.put_run_fact("fact", "[1]")
    assert npu_audit.cache.Cache(str(tmp_path / "c"), key).run_fact("fact") == "[1]"
    npu_audit.cache.notes()
    assert npu_audit.cache.Cache(str(tmp_path / "c"), os.urandom(32)).run_fact("fact") is None
    db = sqlite3.connect(str(tmp_path / "c" / npu_audit.cache.database_name()))
    db.execute("UPDATE runs SET mac = NULL")
    db.commit()
    assert npu_audit.cache.Cache(str(tmp_path / "c"), key).run_fact("fact") is None
    notes = npu_audit.cache.notes()
    assert len(notes) == 1 and notes[0].startswith("ignored 2 cache entries in ")
    assert npu_audit.cache.notes() == []
    # a value of another type than the cache wrote is never covered by its MAC (and does not crash)
    assert npu_audit.cache._mac(key, b"runs", "fact", 15) != npu_audit.cache._mac(key, b"runs", "fact", "15")
    assert npu_audit.cache._mac(key, b"runs", "fact", 1.5) != npu_audit.cache._mac(key, b"runs", "fact", "1.5")


@pytest.mark.parametrize("database", ["tables", "garbage"])
def test_a_database_of_another_shape_is_said_once_and_changes_nothing(project, tmp_path, database):
    """A database planted under the current name with tables of its own (or not a database at all): the
    run finds what it finds without a cache, says once that the cache is not used, and does not crash."""
    folder = project / ".npu-audit-cache"
    folder.mkdir()
    path = folder / npu_audit.cache.database_name()
    if database == "tables":
        db = sqlite3.connect(str(path))
        db.execute("CREATE TABLE entries (key TEXT PRIMARY KEY, report TEXT)")
        db.execute("CREATE TABLE runs (key TEXT PRIMARY KEY, value REAL, mac BLOB)")
        db.execute("INSERT INTO runs VALUES ('feeders', 1.5, x'00')")
        db.commit()
        db.close()
    else:
        path.write_text("not a database\n")
    expected = findings(audit(project, tmp_path / "home", "--no-cache"))
    done = audit(project, tmp_path / "home")
    assert findings(done) == expected and done.returncode == 1
    notes = cache_lines(done)
    assert len(notes) == 1 and "its database cannot be used" in notes[0] and f"remove .npu-audit-cache/{path.name}" in notes[0]
