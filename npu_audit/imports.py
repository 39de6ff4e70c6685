"""Where an import statement leads: a module name resolved to a file of the analysed tree.

One rule, shared by the interpreter (``extract.project.Project.resolve``, which asks the file system)
and by the pipeline's choice of which files without NPU markers to parse (``pipeline._feeders``, which
asks the set of discovered files), so that both agree on what a script really imports:

- ``from .m import x`` (``level`` dots): ``m`` below the importing file's folder (one folder up per
  extra dot);
- ``import a.b``: as the script's own interpreter finds it: ``a/b.py`` or ``a/b/__init__.py`` next to
  the importing file, then in each ancestor folder that is still inside an analysis root (a project
  run from its top folder), then below each root.

No heavy imports here: the pipeline calls this in the main process.
"""

from __future__ import annotations

import os
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
    base = from_dir
    seen = set()
    while base not in seen:
        seen.add(base)
        found = _candidate(base, parts, is_file, roots)
        if found is not None:
            return found
        parent = os.path.dirname(base)
        if parent == base or not inside(parent, roots):
            break
        base = parent
    for root in roots:
        found = _candidate(root, parts, is_file, roots)
        if found is not None:
            return found
    return None


_listings: dict[str, frozenset[str]] = {}
_resolved: dict[tuple[str, int, str, tuple[str, ...]], Optional[str]] = {}
_MAX_ENTRIES = 100_000


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
        try:
            with os.scandir(folder) as entries:
                names = frozenset(e.name for e in entries if e.name.endswith(".py") and _is_file(e))
        except OSError:
            names = frozenset()
        if len(_listings) > _MAX_ENTRIES:
            _listings.clear()
        _listings[folder] = names
    return name in names


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def resolve_in_tree(dotted: str, level: int, from_dir: str, roots: tuple[str, ...]) -> Optional[str]:
    """``resolve_module`` against the file system, each answer kept for the rest of the process
    (until ``forget()``)."""
    key = (dotted, level, from_dir, roots)
    try:
        return _resolved[key]
    except KeyError:
        pass
    if len(_resolved) > _MAX_ENTRIES:
        _resolved.clear()
    found = _resolved[key] = resolve_module(dotted, level, from_dir, roots, listed_python_file)
    return found


def forget() -> None:
    """Drop the folder listings and resolutions read so far (the tree may have changed)."""
    _listings.clear()
    _resolved.clear()


def split_relative(name: str) -> tuple[str, int]:
    """``..pkg.m`` -> (``pkg.m``, 2)."""
    stripped = name.lstrip(".")
    return stripped, len(name) - len(stripped)
