"""Where an import statement leads: a module name resolved to a file of the analysed tree.

One rule, shared by the interpreter (``extract.project.Project.resolve``, which asks the file system)
and by the pipeline's choice of which files without NPU markers to parse (``second_phase.feeders``, which
asks the set of discovered files), so that both agree on what a script really imports:

- ``from .m import x`` (``level`` dots): ``m`` below the importing file's folder (one folder up per
  extra dot);
- ``import a.b``: as the script's own interpreter finds it: ``a/b.py`` or ``a/b/__init__.py`` next to
  the importing file, then in each ancestor folder that is still inside an analysis root (a project
  run from its top folder), then below each root.

No heavy imports here: the pipeline calls this in the main process.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from typing import Callable, Optional

IsFile = Callable[[str], bool]
_SEP = os.sep
_INIT = os.sep + "__init__.py"


def inside(path: str, roots: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``roots`` or lies below one (plain string test on absolute paths)."""
    for root in roots:
        if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
            return True
    return False


def _candidate(base: str, parts: list[str], is_file: IsFile, roots: tuple[str, ...]) -> Optional[str]:
    target = base.rstrip(_SEP) + _SEP + _SEP.join(parts) if parts else base
    options = (target + ".py", target + _INIT) if parts else (target + _INIT,)
    for candidate in options:
        if is_file(candidate) and inside(candidate, roots):
            return candidate
    return None


def resolve_module(dotted: str, level: int, from_dir: str, roots: tuple[str, ...], is_file: IsFile) -> Optional[str]:
    """File of module ``dotted`` imported with ``level`` leading dots from a file in ``from_dir``.

    ``from_dir`` and ``roots`` are absolute, normalised folder paths; ``is_file`` tells whether a
    path is a file of the tree. Returns ``None`` for modules outside the tree (the standard library,
    installed packages, or files that do not exist).
    """
    parts = [p for p in dotted.split(".") if p]
    if level:
        base = from_dir
        for _ in range(level - 1):
            base = os.path.dirname(base)
        return _candidate(base, parts, is_file, roots)
    for base in _searched(from_dir, roots):
        found = _candidate(base, parts, is_file, roots)
        if found is not None:
            return found
    return None


_listings: dict[str, frozenset[str]] = {}
_modules: dict[str, frozenset[str]] = {}  # folder -> _module_names (from the same listing)
_reachable: dict[tuple[str, tuple[str, ...]], frozenset[str]] = {}  # (from_dir, roots) -> names (_found_nowhere)
_resolved: dict[tuple[str, int, str, tuple[str, ...]], Optional[str]] = {}
_MAX_ENTRIES = 100_000

FolderState = tuple[Optional[list], Optional[str]]  # (size, mtime, ctime) or None, digest or None
#: A folder's stat taken less than this long after its last change does not vouch for its listing (a
#: change within the file system's timestamp resolution would keep it).
RECENT_SECONDS = 3


def listed_python_file(path: str) -> bool:
    """Whether ``path`` is a ``.py`` file, answered from one listing of its folder per process.

    Resolving one import asks for two candidate paths in every folder from the importer up to the
    root; a file system ``stat`` for each (most of them missing) was a fifth of a run's time. The
    listings hold ``.py`` names only and live until ``forget()`` (the language server calls it
    before each analysis, since files may come and go while it runs).
    """
    folder, name = os.path.split(path)
    names = _listings.get(folder)
    if names is None:
        names = _list(folder)
    return name in names


def _list(folder: str) -> frozenset[str]:
    names, state, modules = _scan(folder)
    if len(_listings) > _MAX_ENTRIES:
        _listings.clear()
        _states.clear()
        _missing.clear()
        _modules.clear()
        _reachable.clear()
    _listings[folder] = names
    _states[folder] = state
    _modules[folder] = modules
    return names


def _module_names(folder: str) -> frozenset[str]:
    """The names an absolute import can start with to find something in ``folder``: its ``.py`` files
    without the suffix, and its subfolders."""
    names = _modules.get(folder)
    if names is None:
        _list(folder)
        names = _modules[folder]
    return names


def _searched(from_dir: str, roots: tuple[str, ...]) -> tuple[str, ...]:
    """The folders an absolute import from ``from_dir`` is looked for in, in order: ``from_dir`` and the
    folders above it while they are inside ``roots``, then the roots. Once per folder and process (the
    paths alone decide it; every import of a file asks it)."""
    key = (from_dir, roots)
    found = _searched_folders.get(key)
    if found is None:
        out = []
        base = from_dir
        while base not in out:
            out.append(base)
            parent = os.path.dirname(base)
            if parent == base or not inside(parent, roots):
                break
            base = parent
        if len(_searched_folders) > _MAX_ENTRIES:
            _searched_folders.clear()
        found = _searched_folders[key] = tuple(out + [root for root in roots if root not in out])
    return found


_searched_folders: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}


def _found_nowhere(dotted: str, level: int, from_dir: str, roots: tuple[str, ...]) -> bool:
    """Whether an absolute import surely finds no file of the tree: its first name is neither a module nor
    a subfolder of any folder it is looked for in. Most imports (numpy, os, tensorflow) are answered
    here, from one set of names per folder, without trying two paths in each folder."""
    first = dotted.partition(".")[0]
    if level or not first:
        return False
    key = (from_dir, roots)
    names = _reachable.get(key)
    if names is None:
        found: set[str] = set()
        for folder in _searched(from_dir, roots):
            found |= _module_names(folder)
        names = _reachable[key] = frozenset(found)
    return first not in names


def _scan(folder: str) -> tuple[frozenset[str], FolderState, frozenset[str]]:
    """The ``.py`` files of ``folder``, and its state: its stat taken before the listing, and a digest of
    the names an import can find in it (its ``.py`` files and its subfolders); None for what cannot be read."""
    try:
        st = os.stat(folder)
    except FileNotFoundError:  # (most folders an import is looked for in do not exist)
        # What vouches for the absence is the state of the existing folder above (its subfolders): it must
        # be older than the check, so when it is listed only now, the absence is checked again after it.
        parent = os.path.dirname(folder)
        above = _existing_folder(parent) if parent != folder else folder
        if above not in _states and above != folder:
            _list(above)
            if os.path.lexists(folder):  # (created meanwhile)
                return _scan(folder)
        _missing.add(folder)
        return frozenset(), (None, None), frozenset()
    except OSError:
        stat: Optional[list] = None
    else:
        stat = [st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        if st.st_mtime_ns > time.time_ns() - RECENT_SECONDS * 1_000_000_000:
            stat = None
    files = []
    names = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if name.endswith(".py") and _is_file(entry):
                    files.append(name)
                    names.append(name)
                elif _is_dir(entry):
                    names.append(name + "/")
    except OSError:
        return frozenset(), (stat, None), frozenset()
    names.sort()
    digest = hashlib.sha256("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()
    return frozenset(files), (stat, digest), frozenset(name[:-3] if name.endswith(".py") else name[:-1] for name in names)


def folder_state(folder: str) -> FolderState:
    """``folder``'s state read now (see ``_scan``)."""
    return _scan(folder)[1]


def listed_state(folder: str) -> FolderState:
    """``folder``'s state when this process listed it (listing it now if it has not yet): what vouches for
    the answers ``resolve_in_tree`` gives from that listing."""
    state = _states.get(folder)
    if state is None:
        _list(folder)
        state = _states[folder]
    return state


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def resolve_in_tree(dotted: str, level: int, from_dir: str, roots: tuple[str, ...]) -> Optional[str]:
    """``resolve_module`` against the file system, each answer kept for the rest of the process
    (until ``forget()``). While ``record()`` is on, every question and its answer are noted, with the
    folders that decide it."""
    key = (dotted, level, from_dir, roots)
    if _journal is not None:
        found = _journal.get(key, _ASK)
        if found is _ASK:
            found = _journal[key] = _watched(key)[0]
        return found
    try:
        return _resolved[key]
    except KeyError:
        pass
    if len(_resolved) > _MAX_ENTRIES:
        _resolved.clear()
    found = _resolved[key] = None if _found_nowhere(*key) else resolve_module(
        dotted, level, from_dir, roots, listed_python_file)
    return found


# What an analysis asked ``resolve_in_tree``, for the result cache: it checks that the answers still hold
# before reusing the analysis's result (a module added next to a script can hide the one its import found).
_journal: Optional[dict] = None
_ASK = object()
_watches: dict[tuple[str, int, str, tuple[str, ...]], tuple[Optional[str], frozenset[str]]] = {}
_folder_sets: dict[frozenset[str], frozenset[str]] = {}


def _watched(key: tuple[str, int, str, tuple[str, ...]]) -> tuple[Optional[str], frozenset[str]]:
    """The answer to ``key`` and the folders whose entries decide it: for every path tried, the deepest
    existing folder holding it. An answer changes only when a file or folder is added, removed or renamed
    in one of them, which shows in their states (read when first listed, with the listing the answer used)."""
    known = _watches.get(key)
    if known is None and _found_nowhere(*key):
        # (no folder searched holds the first name: each path tried would be in one of them, which
        # exist, so those are the folders that decide the answer)
        folders = frozenset(_existing_folder(folder) for folder in _searched(key[2], key[3]))
        known = _watches[key] = (None, _folder_sets.setdefault(folders, folders))
    if known is None:
        tried: list[str] = []

        def is_file(path: str) -> bool:
            tried.append(path)
            return listed_python_file(path)

        found = resolve_module(*key, is_file)
        folders = frozenset(_existing_folder(os.path.dirname(path)) for path in tried)
        folders = _folder_sets.setdefault(folders, folders)  # (questions from one folder share most of them)
        for folder in folders:
            if folder not in _states:
                _list(folder)
        if len(_watches) > _MAX_ENTRIES:
            _watches.clear()
            _folder_sets.clear()
        known = _watches[key] = (found, folders)
    return known


def record() -> None:
    """Start noting the questions ``resolve_in_tree`` answers (see ``recorded``)."""
    global _journal
    _journal = {}


def recorded() -> tuple[list[tuple[str, int, str, tuple[str, ...], Optional[str]]], list[list]]:
    """The questions answered since ``record()``, each once, as (dotted, level, from_dir, roots, answer),
    and the folders that decide them with their states, as [folder, stat, digest]; stops noting them."""
    global _journal
    asked, _journal = _journal or {}, None
    watched: set[str] = set()
    for key in asked:
        watched.update(_watched(key)[1])
    return [(*key, answer) for key, answer in asked.items()], [[folder, *listed_state(folder)] for folder in sorted(watched)]


_existing: dict[str, str] = {}
_states: dict[str, FolderState] = {}  # folder -> its state when it was listed
_missing: set[str] = set()  # folders found missing when listed


def _existing_folder(folder: str) -> str:
    """``folder`` if it is a folder, else the deepest existing folder above it (one check per folder)."""
    known = _existing.get(folder)
    if known is None:
        parent = os.path.dirname(folder)
        state = _states.get(folder)
        if state is not None and state[1] is not None:  # listed: a folder
            there = True
        else:
            there = folder not in _missing and os.path.isdir(folder)
        known = folder if there or parent == folder else _existing_folder(parent)
        if len(_existing) > _MAX_ENTRIES:
            _existing.clear()
        _existing[folder] = known
    return known


def real_folders(folders: tuple[str, ...]) -> tuple[str, ...]:
    """``os.path.realpath`` of each of ``folders``, kept until ``forget()``: a run's roots are the same for
    every file it analyses, and resolving them again for each file cost a tenth of a run given many folders."""
    found = _real_folders.get(folders)
    if found is None:
        found = _real_folders[folders] = tuple(os.path.realpath(folder) for folder in folders)
    return found


_real_folders: dict[tuple[str, ...], tuple[str, ...]] = {}


def generation() -> int:
    """How many times :func:`forget` was called: what was derived from the tree under an older number
    may no longer hold (``slicing.TreeReach`` keeps its answers for one generation)."""
    return _generation[0]


_generation = [0]


def forget() -> None:
    """Drop the folder listings and resolutions read so far (the tree may have changed)."""
    _generation[0] += 1
    _real_folders.clear()
    _listings.clear()
    _modules.clear()
    _reachable.clear()
    _resolved.clear()
    _existing.clear()
    _states.clear()
    _watches.clear()
    _folder_sets.clear()
    _missing.clear()


def split_relative(name: str) -> tuple[str, int]:
    """``..pkg.m`` -> (``pkg.m``, 2)."""
    stripped = name.lstrip(".")
    return stripped, len(name) - len(stripped)
