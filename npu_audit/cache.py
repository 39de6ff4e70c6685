"""Result cache: unchanged files cost a stat on the next run, an unchanged run one look-up.

One SQLite database per cache folder (stdlib, safe under concurrent runs: every write is one short
transaction and readers never see a half-written entry).

An entry per file is keyed by the working directory, the file's path and the analysis roots. It holds
the file's size/mtime/ctime and content hash, the same of every helper module its analysis read, the
imports the analysis resolved against the file system with the folders whose entries decide them (each
with its stat and a digest of its ``.py`` files and subfolders), and the result. It is valid only for
the same npu-audit version, knowledge base and settings; a file whose stat changed is compared by its
content, a folder whose stat changed by its digest, and when that changed too the imports are resolved
again and must lead to the same files.

A whole run's results are kept too (``run_snapshot``, ``run_results``, ``put_run_results``), under a
key that names everything the run read: npu-audit and its knowledge base, the working directory, the
command (paths, roots, options) and, for every file found, its path, how it is shown, its settings
and its stat (size, mtime, inode, ctime) taken before it was analysed; the helper modules and other
files the analyses read are checked by their stat when the entry is used, the folders where their
imports were looked for by their stat or else their digest.

Every entry carries a MAC (HMAC-SHA-256 with this user's key, :func:`npu_audit.user_cache.secret_key`) over
everything it asserts, its key included: the folder may be committed to the audited repository or restored
from a shared CI cache, and an entry its user did not write is ignored (the run analyses the file and
rewrites the entry) and counted for :func:`notes`. Without a key nothing is cached (:func:`open_cache`
returns None), and a cache folder, database file or ``.gitignore`` that is a link is refused: nothing is
read or written through a link that can lead out of the cache folder.

A stat is trusted only when it is older than ``RACY_SECONDS`` at the time it was taken (a file changed
again within the file system's timestamp resolution would keep it): a run with a file that recent is
not kept whole, and a recent file or folder is kept in its entry without its stat (its content or
digest decides next time).
"""

from __future__ import annotations

import gc
import hashlib
import hmac
import json
import os
import sqlite3
import stat as stat_module
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Optional

from npu_audit import __version__, user_cache
from npu_audit.findings import FileReport, Finding
from npu_audit.imports import RECENT_SECONDS, listed_state

SCHEMA = 8  # 4: from-imports listed with their names; parsed files carry their NPU exports;
#             5: plain keys, a clean file's imports one per line (a warm run reads 19,000 of them);
#             6: change times, roots in the key, the imports an analysis resolved and the folders they depend on
#             7: parsed files carry the files their option values come from (caller_inputs)
#             8: every entry carries a MAC made with the user's key (an older, unsigned database is not read)

#: The whole-run entries kept (the last commands run with this cache folder, one entry each).
RUNS_KEPT = 4
#: A stat whose modification time is less than this old when it is taken does not vouch for the content.
RACY_SECONDS = RECENT_SECONDS
_RACY_NS = RACY_SECONDS * 1_000_000_000
_RUN_FORMAT = 1  # of a whole-run entry's value
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: The files the database consists of, besides the database itself (SQLite's journal, WAL and shared memory).
_COMPANIONS = ("-wal", "-shm", "-journal")

_notes: list[str] = []  # what this process has to say about its caches, each once (see notes())
_ignored: dict[str, int] = {}  # cache folder -> entries whose MAC did not match


def default_cache_dir() -> str:
    return os.environ.get("NPU_AUDIT_CACHE_DIR") or ".npu-audit-cache"


def database_name() -> str:
    """The name of the database file in a cache folder (it names the schema: another schema's is not read)."""
    return f"results-v{SCHEMA}.sqlite3"


def open_cache(folder: str) -> Optional[Cache]:
    """The result cache in ``folder``, ready to use, or None when this run must not use one (a note for
    :func:`notes` says why): no trustworthy key to sign entries with, the folder, the database (or its
    journal, WAL or shared-memory file) or the folder's ``.gitignore`` is a link, or the folder cannot be
    created, written or opened. A run without a cache finds what a run with one finds."""
    key = user_cache.secret_key()
    if key is None:
        if not user_cache.was_refused():
            where = user_cache.folder()
            place = f"{where / user_cache.KEY_NAME}" if where is not None else "the user's cache folder (no home folder)"
            _note(f"the result cache in {folder} is not used in this run: there is no key to sign its entries with "
                  f"({place} could not be created; set XDG_CACHE_HOME to a folder of your own that can be written)")
        return None
    cache = Cache(folder, key)
    if cache._connect() is None:
        _note(f"the result cache in {folder} is not used in this run: {cache.disabled_reason}")
        return None
    return cache


def notes() -> list[str]:
    """What the caches of this process have to say (a cache refused or turned off and why, entries ignored
    because their MAC did not match), each once: the notes not taken by an earlier call. The caller prints
    them on stderr; none of them is an error (a run without a cache finds the same)."""
    taken = list(_notes)
    _notes.clear()
    for folder, count in _ignored.items():
        if count:
            one = count == 1
            taken.append(f"ignored {count} cache {'entry' if one else 'entries'} in {folder} that {'was' if one else 'were'}"
                         f" not written by this user ({'its signature does' if one else 'their signatures do'} not match);"
                         f" {'it is' if one else 'they are'} rewritten")
    _ignored.clear()
    return taken


def _note(text: str) -> None:
    if text not in _notes:
        _notes.append(text)


def _field(value) -> bytes:
    """One field of what a MAC covers, unambiguous among the others: its type and length in front. A value
    of a type the cache never writes (a float or a text where an integer was: a database edited by hand)
    gives a field no MAC the cache made covers."""
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        return b"s%d:" % len(data) + data
    if value is None:
        return b"n"
    if type(value) is int:
        return b"i%d" % value
    if isinstance(value, bytes):
        return b"b%d:" % len(value) + value
    return b"?"


def _mac(key: bytes, table: bytes, *values) -> bytes:
    """The MAC of one row of ``table``: every column it asserts, its key first."""
    return user_cache.sign(key, table + b"\0" + b"\0".join([_field(v) for v in values]))


def _matches(mac, expected: bytes) -> bool:
    return isinstance(mac, bytes) and hmac.compare_digest(mac, expected)


def _link_problem(path: Path, folder: bool = False) -> Optional[str]:
    """Why ``path`` must not be used by the cache (it is a link), or None (it is none, or does not exist).
    ``folder``: ``path`` is the cache folder itself."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat_module.S_ISLNK(info.st_mode):
        return None
    what = ("remove the link (npu-audit creates the folder), or give --cache-dir the folder it leads to" if folder
            else "remove it (npu-audit creates what it needs)")
    return f"{path} is a symbolic link, and the cache never reads or writes through a link (it could lead anywhere); {what}"


def _stat(path: str) -> Optional[list]:
    """What an entry per file remembers of a file: size, mtime, ctime (None: there is none)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _trusted(stat: Optional[list], taken_ns: int) -> Optional[list]:
    """``stat`` (as ``_stat``), or [None, None, None] when it was too recent when taken to vouch for anything."""
    if stat is not None and stat[1] is not None and stat[1] > taken_ns - _RACY_NS:
        return [None, None, None]
    return stat


def _snapshot(path: str) -> Optional[tuple[int, int, int, int]]:
    """What a whole-run entry remembers of a file: size, mtime, inode, ctime (None: no such file)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


@dataclass(frozen=True)
class RunSnapshot:
    """The key of a whole run's entry, taken before the run analysed anything."""

    key: str
    command: str  # the command alone (an older entry of the same command is replaced)
    started_ns: int  # when the stats were taken
    racy: bool  # a file was modified too recently for its stat to vouch for its content


def _digest(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


class Cache:
    """The result cache in one folder; use :func:`open_cache`, which says why a run cannot use one. ``key``:
    what signs the entries (by default this user's :func:`npu_audit.user_cache.secret_key`; without one
    nothing is read or written)."""

    def __init__(self, folder: str, key: Optional[bytes] = None):
        self.folder = Path(folder)
        self._key = key if key is not None else user_cache.secret_key()
        self._db: Optional[sqlite3.Connection] = None
        self._token: Optional[str] = None
        self._rows: Optional[dict] = None
        self._deps_seen: dict[tuple, bool] = {}
        self._tokens: dict = {}  # (settings, want_configs, force_parse) -> the token's prefix
        self._before: dict[str, Optional[tuple]] = {}  # file -> its _snapshot, taken before the run analysed it
        self._started = time.time_ns()
        self._folder_stats: dict[str, Optional[list]] = {}  # folder -> its _stat, taken once in a run
        # the folders the entries used or kept in this run depend on, with the (stat, digest) that vouch for
        # them; a whole run is kept only when all of them are known and agree
        self._watched: dict[str, tuple] = {}
        self._unsure = False
        self._renewed: list[tuple[str, str]] = []  # (folders, key) of entries whose folders are rewritten
        self.disabled_reason: Optional[str] = None  # why the cache is not used (any more) in this run
        if self._key is None:
            self.disabled_reason = "there is no key to sign its entries with"

    def _connect(self) -> Optional[sqlite3.Connection]:
        if self.disabled_reason:  # (not used, or not any more: an error said why)
            return None
        if self._db is not None:
            return self._db
        database = self.folder / database_name()
        for path in (self.folder, database, *[Path(f"{database}{end}") for end in _COMPANIONS],
                     self.folder / ".gitignore"):
            problem = _link_problem(path, path == self.folder)
            if problem:
                self.disabled_reason = problem
                return None
        if self.folder.exists() and not self.folder.is_dir():
            self.disabled_reason = (f"{self.folder} is not a folder (give --cache-dir a folder, or remove the file, "
                                    "or run with --no-cache)")
            return None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _create(self.folder / ".gitignore", b"# created by npu-audit\n*\n")
            db = sqlite3.connect(str(database), timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, token TEXT NOT NULL, size INTEGER,"
                       " mtime INTEGER, ctime INTEGER, hash TEXT, deps TEXT NOT NULL, folders TEXT NOT NULL,"
                       " resolutions TEXT NOT NULL, report TEXT NOT NULL, text TEXT, rmac BLOB, mac BLOB)")
            db.execute("CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, value TEXT NOT NULL, mac BLOB)")
            db.execute("CREATE TABLE IF NOT EXISTS run_results (key TEXT PRIMARY KEY, command TEXT NOT NULL,"
                       " value TEXT NOT NULL, texts TEXT NOT NULL, mac BLOB)")
            db.execute("CREATE TABLE IF NOT EXISTS run_texts (key TEXT PRIMARY KEY, text TEXT NOT NULL, mac BLOB)")
            self._db = db
        except (OSError, sqlite3.Error) as exc:
            self.disabled_reason = _why_not(self.folder, exc)
            self._db = None
        return self._db

    def _failed(self, exc: Exception) -> None:
        """Stop using the cache for the rest of the run after an error writing it, and say so once."""
        self.disabled_reason = _why_not(self.folder, exc)
        _note(f"the result cache in {self.folder} is not used for the rest of this run: {self.disabled_reason}")

    def _ignore(self) -> None:
        """Count an entry whose MAC does not match: it is treated as missing (and rewritten by this run)."""
        name = str(self.folder)
        _ignored[name] = _ignored.get(name, 0) + 1

    def tool_token(self) -> str:
        """What every entry depends on besides its file: cache schema, npu-audit version, knowledge base."""
        if self._token is None:
            from npu_audit.knowledge.loader import load

            self._token = f"{SCHEMA}|{__version__}|{load().fingerprint}"
        return self._token

    def run_fact(self, key: str) -> Optional[str]:
        """A fact about a whole run stored under ``key`` (which must name everything it depends on)."""
        db = self._connect()
        if db is None:
            return None
        try:
            row = db.execute("SELECT value, mac FROM runs WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        if row is None:
            return None
        if not _matches(row[1], _mac(self._key, b"runs", key, row[0])):
            self._ignore()
            return None
        return row[0]

    def put_run_fact(self, key: str, value: str) -> None:
        db = self._connect()
        if db is None:
            return
        try:
            db.execute("DELETE FROM runs")  # one run's facts are kept: the last one
            db.execute("INSERT OR REPLACE INTO runs (key, value, mac) VALUES (?, ?, ?)",
                       (key, value, _mac(self._key, b"runs", key, value)))
        except sqlite3.Error as exc:
            self._failed(exc)

    # whole runs -----------------------------------------------------------------------------------

    def run_snapshot(self, command: str, files: list[tuple]) -> RunSnapshot:
        """The key of a run over ``files`` ((path to open, path to show, settings) each) with every file's
        stat taken now, before the analysis; ``command`` names, as text, what else the run's results depend
        on (paths given, roots, options)."""
        started = self._started = time.time_ns()
        command = f"{self.tool_token()}\0{os.getcwd()}\0{len(files)}\0{command}"
        tokens: dict[int, int] = {}  # id(settings) -> its number in ``settings`` (a run shares a few)
        settings: list[str] = []
        lines = []
        newest = 0
        before = self._before
        stat = os.stat
        for file, display, file_settings in files:
            number = tokens.get(id(file_settings))
            if number is None:
                number = tokens[id(file_settings)] = len(settings)
                settings.append(file_settings.cache_token())
            try:
                st = stat(file)
            except OSError:
                before[file] = None
                shown = "-"
            else:
                before[file] = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
                shown = f"{st.st_size} {st.st_mtime_ns} {st.st_ino} {st.st_ctime_ns}"
                if st.st_mtime_ns > newest:
                    newest = st.st_mtime_ns
            # (no field holds a NUL, the last one no line break: the text names one list of files)
            lines.append(f"{file}\0{display}\0{number}\0{shown}")
        lines.append("\0".join(settings))
        lines.append(command)
        text = "\n".join(lines).encode("utf-8", "surrogatepass")
        return RunSnapshot(key="run|" + hashlib.sha256(text).hexdigest(),
                           command=hashlib.sha256(command.encode("utf-8", "surrogatepass")).hexdigest(),
                           started_ns=started, racy=newest > started - _RACY_NS)

    def run_results(self, snapshot: RunSnapshot, files: list[tuple]) -> Optional[list[FileReport]]:
        """The reports of the run ``snapshot`` names (one per file of ``files``, in order), when a run with
        the same key was kept and what its analyses read besides the run's files is unchanged. The reports
        hold what a run's report shows (findings, texts, configs, parsed); what only the run itself needed
        (imports, NPU exports, dependencies, content hashes) is not kept."""
        # Tens of thousands of lasting objects and no reference cycles: the cyclic collector would only
        # walk them, and the run's, again and again.
        collecting = gc.isenabled()
        if collecting:
            gc.disable()
        try:
            return self._run_results(snapshot, files)
        finally:
            if collecting:
                gc.enable()

    def _run_results(self, snapshot: RunSnapshot, files: list[tuple]) -> Optional[list[FileReport]]:
        db = self._connect()
        if db is None:
            return None
        try:
            row = db.execute("SELECT command, value, texts, mac FROM run_results WHERE key = ?",
                             (snapshot.key,)).fetchone()
        except sqlite3.Error:
            return None
        if row is None:
            return None
        if not _matches(row[3], _mac(self._key, b"run_results", snapshot.key, row[0], row[1], row[2])):
            self._ignore()
            return None
        row = row[1:]
        try:
            data = json.loads(row[0])
            if data["v"] != _RUN_FORMAT or data["files"] != len(files):
                return None
            for path, stat in data["deps"]:
                now = _snapshot(path)
                if (list(now) if now is not None else None) != stat:
                    return None
            for folder, stat, digest in data["folders"]:
                if not self._folder_shows(folder, stat, digest):
                    return None
            reports: list[Optional[FileReport]] = [None] * len(files)
            for i in data["parsed"]:
                reports[i] = FileReport(path=files[i][1], parsed=True)
            kept = data["reports"]
            texts = self._texts([text for _, _, text in kept if isinstance(text, list)])
            for i, report, text in kept:
                if isinstance(text, list):  # kept with the texts of the whole runs, by content
                    report["text"] = texts[text[0]]
                else:
                    report["text"] = text
                reports[i] = FileReport.from_dict(report)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, sqlite3.Error):
            return None
        return [report if report is not None else FileReport(path=file[1]) for report, file in zip(reports, files)]

    def put_run_results(self, snapshot: RunSnapshot, files: list[tuple], results: list[FileReport]) -> None:
        """Keep the reports of a run (``results``: one per file of ``files``) under ``snapshot``'s key, unless
        a file of the run was modified too recently, an analysis failed (it is retried next time) or the
        folders where imports were looked for did not stay put. The entry replaces the one of the same
        command; the last ``RUNS_KEPT`` are kept. The texts shown with findings are kept once for all of them,
        by content (a run after an edit writes the edited file's text only)."""
        if snapshot.racy or self._unsure or any(r.internal_error for r in results):
            return
        # the files the analyses read, besides the run's own (the key holds their stat, taken before)
        cwd = os.getcwd()
        own = {os.path.normpath(os.path.join(cwd, file)) for file, _, _ in files}
        deps = []
        for path in sorted({str(p) for r in results for p in r.dependencies} - own):
            st = _snapshot(path)
            if st is not None and st[1] > snapshot.started_ns - _RACY_NS:
                return
            deps.append([path, st])
        # where their imports were looked for, as the entries per file vouched for them in this run
        folders = [[folder, *self._watched[folder]] for folder in sorted(self._watched)]
        parsed = []
        reports = []
        texts: dict[str, str] = {}  # (the source shown with findings, kept once for all whole runs, by content)
        for i, (report, (_, display, _)) in enumerate(zip(results, files)):
            if report.findings or report.configs or report.text is not None or report.path != display:
                text: object = report.text
                if report.text is not None and report.content_hash:
                    text = [f"{report.content_hash}|{SCHEMA}|{__version__}"]
                    texts[text[0]] = report.text
                reports.append([i, {"path": report.path, "findings": [_finding_dict(f) for f in report.findings],
                                    "configs": report.configs, "parsed": report.parsed, "internal_error": False},
                                text])
            elif report.parsed:
                parsed.append(i)
        value = json.dumps({"v": _RUN_FORMAT, "files": len(files), "deps": deps, "folders": folders, "parsed": parsed,
                            "reports": reports})
        db = self._connect()
        if db is None:
            return
        names = json.dumps(sorted(texts))
        key = self._key
        with _transaction(db, self):
            db.execute("DELETE FROM run_results WHERE command = ? OR key = ?", (snapshot.command, snapshot.key))
            db.execute("INSERT INTO run_results (key, command, value, texts, mac) VALUES (?, ?, ?, ?, ?)",
                       (snapshot.key, snapshot.command, value, names,
                        _mac(key, b"run_results", snapshot.key, snapshot.command, value, names)))
            db.execute("DELETE FROM run_results WHERE rowid NOT IN"
                       " (SELECT rowid FROM run_results ORDER BY rowid DESC LIMIT ?)", (RUNS_KEPT,))
            # (replacing what is there: a text with the same key but not this user's MAC is not kept)
            db.executemany("INSERT OR REPLACE INTO run_texts (key, text, mac) VALUES (?, ?, ?)",
                           [(name, text, _mac(key, b"run_texts", name, text)) for name, text in texts.items()])
            used = set()
            for (names,) in db.execute("SELECT texts FROM run_results"):
                used.update(json.loads(names))
            db.executemany("DELETE FROM run_texts WHERE key = ?",
                           [(key,) for (key,) in db.execute("SELECT key FROM run_texts").fetchall() if key not in used])

    def _texts(self, refs: list[list]) -> dict[str, str]:
        """The texts the whole runs keep under these keys."""
        db = self._connect()
        if db is None or not refs:
            return {}
        keys = sorted({key for key, in refs})
        found: dict[str, str] = {}
        secret = self._key
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            for key, text, mac in db.execute(
                    f"SELECT key, text, mac FROM run_texts WHERE key IN ({', '.join('?' * len(chunk))})", chunk):
                if _matches(mac, _mac(secret, b"run_texts", key, text)):
                    found[key] = text
                else:  # (missing: the whole run is not used)
                    self._ignore()
        return found

    # folders where imports were looked for ----------------------------------------------------------

    def _folder_shows(self, folder: str, stat: Optional[list], digest: Optional[str]) -> bool:
        """Whether ``folder`` still shows what an entry saw: the same stat, or else the same ``.py`` files
        and subfolders (a report or a log written there changes the first, not the second). Notes what
        vouches for it now."""
        now = self._folder_stats.get(folder, False)
        if now is False:
            now = self._folder_stats[folder] = _stat(folder)
        if stat is not None and stat[0] is not None and now == stat:
            self._vouch(folder, stat, digest)
            return True
        state = listed_state(folder)
        if digest is not None and state[1] == digest:
            self._vouch(folder, *state)
            return True
        return False

    def _vouch(self, folder: str, stat: Optional[list], digest: Optional[str]) -> None:
        known = self._watched.get(folder)
        if known is None:
            self._watched[folder] = (stat, digest)
        elif known[1] != digest:  # the folder changed during the run
            self._unsure = True

    def _same_answers(self, key: str, folders: list) -> bool:
        """Whether the imports an entry's analysis resolved against the file system still lead where they did
        (asked when a folder they depend on has other ``.py`` files or subfolders: most such changes are
        unrelated). The folders are listed first, so that what vouches for them is older than the answers."""
        from npu_audit.imports import resolve_in_tree

        states = {folder: listed_state(folder) for folder, _, _ in folders}
        db = self._connect()
        if db is None:
            return False
        try:
            row = db.execute("SELECT resolutions, rmac FROM entries WHERE key = ?", (key,)).fetchone()
            kept = self._rows.get(key) if self._rows is not None else None
            # (the entry's MAC, checked when it was read, covers this MAC of its resolutions)
            if kept is None or row[1] != kept[9] or not _matches(row[1], _mac(self._key, b"resolutions", key, row[0])):
                self._ignore()
                return False
            for roots, asked in json.loads(row[0]).items():
                roots = tuple(roots.split("\1")) if roots else ()
                for dotted, level, from_dir, answer in asked:
                    if resolve_in_tree(dotted, level, from_dir, roots) != answer:
                        return False
        except (sqlite3.Error, TypeError, ValueError, AttributeError):
            return False
        for folder, state in states.items():
            self._vouch(folder, *state)
        folders_now = json.dumps([[folder, *state] for folder, state in states.items()])
        token, size, mtime, ctime, digest, deps, _, report, text, rmac, _ = kept
        self._renewed.append((folders_now, _mac(self._key, b"entries", key, token, size, mtime, ctime, digest, deps,
                                                folders_now, report, text, rmac), key))
        return True

    # entries per file ------------------------------------------------------------------------------

    def _run_token(self, job) -> str:
        key = (job.settings, job.want_configs, job.force_parse)
        prefix = self._tokens.get(key)
        if prefix is None:
            prefix = self._tokens[key] = (f"{self.tool_token()}|{job.settings.cache_token()}|{job.want_configs}|"
                                          f"{job.force_parse}")
        return f"{prefix}|{job.display}"

    _cwd = None

    def _entry_key(self, job) -> str:
        if self._cwd is None:
            self._cwd = os.getcwd()
        # relative paths are relative to the working directory, which is part of the key; imports are
        # resolved below the roots
        return f"{self._cwd}\0{job.file}\0{job.display}\0{job.force_parse:d}\0{chr(1).join(job.roots)}"

    def get(self, job) -> Optional[FileReport]:
        if job.source_bytes is not None:
            return None
        rows = self._all_rows()
        if rows is None:
            return None
        key = self._entry_key(job)
        row = rows.get(key)
        if row is None:
            return None
        token, size, mtime, ctime, digest, deps, folders, report, text, rmac, mac = row
        if token != self._run_token(job):
            return None
        if not _matches(mac, _mac(self._key, b"entries", key, token, size, mtime, ctime, digest, deps, folders, report,
                                  text, rmac)):
            self._ignore()
            return None
        before = self._before.get(job.file)  # (the run's stat of the file, when it took one)
        if before is None or size is None or [before[0], before[1], before[3]] != [size, mtime, ctime]:
            if not self._fresh(job.file, [size, mtime, ctime], digest):
                return None
        if deps:
            for dep in json.loads(deps):
                if not self._dependency_fresh(dep["path"], dep["stat"], dep["hash"]):
                    return None
        if folders:
            watched = json.loads(folders)
            if not all([self._folder_shows(*folder) for folder in watched]) and not self._same_answers(key, watched):
                return None
        try:
            if report.startswith("C"):  # a clean file npu-audit did not need to parse
                return FileReport(path=job.display, imports=report[1:].split("\n") if len(report) > 1 else [],
                                  content_hash=digest)
            data = json.loads(report[1:])
            data["text"] = text
            found = FileReport.from_dict(data)
        except (KeyError, TypeError, ValueError):
            return None
        return found

    def _all_rows(self) -> Optional[dict]:
        """Every entry, read with one query the first time (a warm run looks up thousands of files)."""
        if self._rows is None:
            db = self._connect()
            if db is None:
                return None
            try:
                self._rows = {row[0]: row[1:] for row in db.execute(
                    "SELECT key, token, size, mtime, ctime, hash, deps, folders, report, text, rmac, mac FROM entries")}
            except sqlite3.Error:
                return None
        return self._rows

    def _dependency_fresh(self, path: str, stat: Optional[list], digest: Optional[str]) -> bool:
        """``_fresh`` for a helper module, answered once per run (many scripts read the same helpers)."""
        key = (path, tuple(stat) if stat else None, digest)
        known = self._deps_seen.get(key)
        if known is None:
            known = self._deps_seen[key] = self._fresh(path, stat, digest)
        return known

    @staticmethod
    def _fresh(path: str, stat: Optional[list], digest: Optional[str]) -> bool:
        now = _stat(path)
        if now is None:
            return digest is None
        if stat is not None and stat[0] is not None and now == stat:
            return True
        return _digest(path) == digest

    def put(self, job, report: FileReport) -> None:
        if job.source_bytes is not None or report.internal_error:
            return
        db = self._connect()
        if db is None:
            return
        if job.file not in self._before:
            stat = _trusted(_stat(job.file), time.time_ns())
        else:  # the stat the run took before the analysis
            before = self._before[job.file]
            stat = _trusted([before[0], before[1], before[3]] if before is not None else None, self._started)
        stat = stat or [None, None, None]
        deps = []
        for path in report.dependencies:
            taken = time.time_ns()
            deps.append({"path": path, "stat": _trusted(_stat(path), taken), "hash": _digest(path)})
        asked: dict[str, list] = {}
        for dotted, level, from_dir, roots, answer in report.resolutions or ():
            asked.setdefault("\1".join(roots), []).append([dotted, level, from_dir, answer])
        folders = report.watched_folders or []  # [folder, stat, digest] as the analysis saw them, before it looked
        for folder, fstat, fdigest in folders:
            self._vouch(folder, fstat, fdigest)
        key = self._entry_key(job)
        digest = report.content_hash or _digest(job.file)
        token = self._run_token(job)
        deps_text = json.dumps(deps) if deps else ""
        folders_text = json.dumps(folders) if folders else ""
        asked_text = json.dumps(asked) if asked else ""
        encoded = _encode_report(report)
        secret = self._key
        rmac = _mac(secret, b"resolutions", key, asked_text)
        mac = _mac(secret, b"entries", key, token, stat[0], stat[1], stat[2], digest, deps_text, folders_text, encoded,
                   report.text, rmac)
        try:
            db.execute("INSERT OR REPLACE INTO entries (key, token, size, mtime, ctime, hash, deps, folders, resolutions,"
                       " report, text, rmac, mac) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (key, token, stat[0], stat[1], stat[2], digest, deps_text, folders_text, asked_text, encoded,
                        report.text, rmac, mac))
        except sqlite3.Error as exc:
            self._failed(exc)

    def put_many(self, pairs) -> None:
        db = self._connect()
        if db is None:
            return
        with _transaction(db, self):
            for job, report in pairs:
                self.put(job, report)
            for folders, mac, key in self._renewed:  # entries whose folders changed but not their imports' answers
                db.execute("UPDATE entries SET folders = ?, mac = ? WHERE key = ?", (folders, mac, key))
            self._renewed.clear()


@contextmanager
def _transaction(db: sqlite3.Connection, cache: Optional[Cache] = None) -> Iterator[None]:
    """One transaction: committed when the block ends, rolled back on an SQLite error (which is not raised:
    a cache that cannot write only costs the next run its time; ``cache`` stops writing and says why once)."""
    try:
        db.execute("BEGIN")
        yield
        db.execute("COMMIT")
    except sqlite3.Error as exc:
        try:
            db.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        if cache is not None and not cache.disabled_reason:
            cache._failed(exc)


def _create(path: Path, data: bytes) -> None:
    """Create ``path`` with ``data`` unless it exists; never through a link (O_NOFOLLOW, O_EXCL)."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666)
    except FileExistsError:
        return
    try:
        os.write(descriptor, data)
    finally:
        os.close(descriptor)


def _why_not(folder: Path, exc: Exception) -> str:
    """Why the cache in ``folder`` cannot be used, and what to do, from the error that says so."""
    if isinstance(exc, OSError):
        what = exc.strerror or str(exc)
        where = f" ({exc.filename})" if exc.filename else ""
        return (f"{what}{where}; give --cache-dir a folder this user can write, or run with --no-cache")
    return (f"its database cannot be used ({exc}); remove {folder / database_name()} or give --cache-dir another "
            "folder, or run with --no-cache")


_FINDING_FIELDS = tuple(f.name for f in fields(Finding))


def _finding_dict(finding: Finding) -> dict:
    """``dataclasses.asdict(finding)`` as JSON writes it (tuples as lists), a tenth of its time."""
    out = {name: getattr(finding, name) for name in _FINDING_FIELDS}
    out["related"] = [vars(r) for r in finding.related]
    fix = finding.fix
    if fix is not None:
        out["fix"] = {"applicability": fix.applicability, "message": fix.message, "edits": [vars(e) for e in fix.edits],
                      "new_files": fix.new_files}
    return out


def _encode_report(report: FileReport) -> str:
    """A report as its entry keeps it: a clean file's imports, or the JSON of the rest (the text has a column
    of its own, which a whole-run entry refers to)."""
    if not report.findings and not report.parsed and not report.configs and not report.internal_error:
        return "C" + "\n".join(report.imports)  # (module names: never a line break)
    data = report.to_dict()
    data["text"] = None
    return "J" + json.dumps(data)
