"""Finding the files to analyse below the paths given on the command line.

Rules:

* A file given explicitly is analysed whatever its extension, unless it matches one of the user's
  ``exclude`` patterns (the default excludes and ``.gitignore`` files do not apply to files named
  explicitly: whoever names ``build/gen.py`` wants it analysed).
* Folders are walked recursively (iteratively, so deep trees cannot exhaust the stack) and only
  ``*.py`` files are taken. Symlinked files are followed. Symlinked folders are followed too, after
  all real folders, and a folder already walked is never walked again: the real path of a file wins
  over a path through a symlink, and a symlink to an enclosing folder (a loop) is reported and skipped.
* Exclude patterns (the defaults plus ``exclude``) are gitignore-style globs, matched against each path
  component name and -- patterns containing a ``/`` -- against the path relative to the folder given.
* With a settings resolver, each project's own ``exclude`` (``[tool.npu-audit]`` of the nearest
  pyproject.toml at or above a folder, found above the folders given and while walking) applies to
  its files, matched against the path relative to the project root: ``cd proj && npu-audit .`` and
  ``npu-audit proj`` find the same files. Its ``respect-gitignore`` decides for its files too.
* With ``respect_gitignore``, ``.gitignore`` files are honoured: the walked folders' own (nested ones
  apply below their folder and win over outer ones) and, when the folder given lies inside a git
  work tree, those of its parent folders up to the work tree's root.
* Problems (missing arguments, unreadable folders, broken links, loops) are reported per path and the
  walk goes on. A symlink loop met while walking hides no file (a link to an enclosing folder leads to a
  folder walked anyway; links that lead to each other lead to nothing): it is an info, which does not fail
  the run, unless the link is named ``*.py`` (a module that cannot be read, as a broken ``*.py`` link).
  The result is sorted and each real file is listed once.

The work is split along what it does: :mod:`.walk` walks the folders (:class:`~.walk._Walker`),
:mod:`.patterns` decides what exclude patterns and ``.gitignore`` files leave out, and :mod:`.paths` says
how a path is shown, what identifies a file and what to do about a path that cannot be read.
"""

from __future__ import annotations

import gc
import os
import posixpath
import stat
from collections.abc import Iterable

from npu_audit.discover.paths import _as_given, _missing, _PathArg, _sort_key
from npu_audit.discover.patterns import _ANY_FOLDER as _ANY_FOLDER
from npu_audit.discover.patterns import _DIR_GROUP as _DIR_GROUP
from npu_audit.discover.patterns import _Excluder, _explicit_excluded, _path_excluded
from npu_audit.discover.patterns import _joined_search as _joined_search
from npu_audit.discover.patterns import _Matcher as _Matcher
from npu_audit.discover.patterns import _pattern_searches as _pattern_searches
from npu_audit.discover.walk import DiscoveredFile, DiscoveryProblem, _Walker

__all__ = ["DEFAULT_EXCLUDES", "DiscoveredFile", "DiscoveryProblem", "discover"]
# (the names imported "as" themselves are the patterns' internals the tests read from this module)

DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".tox",
    ".nox",
    ".venv",
    "venv",
    "__pycache__",
    "node_modules",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "build",
    "dist",
    "site-packages",
    ".eggs",
    "*.egg-info",
)


def discover(
    paths: Iterable[_PathArg],
    exclude: Iterable[str] = (),
    respect_gitignore: bool = True,
    default_excludes: Iterable[str] = DEFAULT_EXCLUDES,
    settings=None,
) -> tuple[list[DiscoveredFile], list[DiscoveryProblem]]:
    """The files to analyse below ``paths`` (sorted, each real file once) and the problems met.

    ``exclude`` (the command line's) is matched relative to each folder given. ``settings``, a
    :class:`npu_audit.settings.SettingsResolver`, adds each project's ``exclude`` (matched relative to
    the project root) and decides ``respect-gitignore`` per project; without it
    ``respect_gitignore`` applies everywhere."""
    # A big tree makes tens of thousands of lasting objects and no reference cycles: the cyclic
    # garbage collector would only walk them again and again (a quarter of the time), so it pauses.
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        return _discover(paths, exclude, respect_gitignore, default_excludes, settings)
    finally:
        if collecting:
            gc.enable()


def _discover(
    paths: Iterable[_PathArg],
    exclude: Iterable[str],
    respect_gitignore: bool,
    default_excludes: Iterable[str],
    settings=None,
) -> tuple[list[DiscoveredFile], list[DiscoveryProblem]]:
    exclude = [exclude] if isinstance(exclude, str) else list(exclude)
    user_excluder = _Excluder(exclude)
    walker = _Walker(list(default_excludes) + exclude, respect_gitignore, settings)
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    for arg in paths:
        given = _as_given(arg)
        path = os.fsdecode(os.fspath(arg))
        try:
            st = os.stat(path)
        except OSError as exc:
            walker.problem(given, *_missing(path, exc))
            continue
        if stat.S_ISDIR(st.st_mode):
            walker.walk_root(path, given, st)
            continue
        rel = given.replace(os.sep, "/")
        while rel.startswith("./"):
            rel = rel[2:]
        name = os.path.basename(given.rstrip(os.sep)) or given
        if user_excluder and _explicit_excluded(user_excluder, rel, name):
            continue
        if settings is not None:
            project_excluder, project_rel, _ = walker.project_of(os.path.dirname(path) or os.curdir)
            if project_excluder and _path_excluded(project_excluder, posixpath.join(project_rel, name), False):
                continue
        walker.add_file(path, given, st, via_symlink=False)
    found = list(walker.files.values())
    order = [file.display.replace(os.sep, "\0") for file in found]  # _sort_key(file.display)
    files = [found[i] for i in sorted(range(len(found)), key=order.__getitem__)]
    problems = sorted(set(walker.problems), key=lambda p: (_sort_key(p.display), p.message))
    return files, problems
