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


def inside(path: str, roots: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``roots`` or lies below one (plain string test on absolute paths)."""
    for root in roots:
        if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
            return True
    return False


def _candidate(base: str, parts: list[str], is_file: IsFile, roots: tuple[str, ...]) -> Optional[str]:
    target = os.path.join(base, *parts) if parts else base
    options = (target + ".py", os.path.join(target, "__init__.py")) if parts else (os.path.join(target, "__init__.py"),)
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


def split_relative(name: str) -> tuple[str, int]:
    """``..pkg.m`` -> (``pkg.m``, 2)."""
    stripped = name.lstrip(".")
    return stripped, len(name) - len(stripped)
