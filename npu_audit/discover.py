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
* With ``respect_gitignore``, ``.gitignore`` files are honoured: the walked folders' own (nested ones
  apply below their folder and win over outer ones) and, when the folder given lies inside a git
  work tree, those of its parent folders up to the work tree's root.
* Problems (missing arguments, unreadable folders, broken links, loops) are reported per path and the
  walk goes on. The result is sorted and each real file is listed once.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from pathspec import GitIgnoreSpec

__all__ = ["DEFAULT_EXCLUDES", "DiscoveredFile", "DiscoveryProblem", "discover"]


@dataclass(frozen=True)
class DiscoveredFile:
    path: Path  # path to open
    display: str  # as given on the command line, or joined below a given folder, with os.sep


@dataclass(frozen=True)
class DiscoveryProblem:
    display: str
    message: str


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

_PathArg = Union[str, "os.PathLike[str]", bytes]


# --------------------------------------------------------------------------------------------------
# Patterns


def _is_path_pattern(line: str) -> bool:
    """Whether a gitignore pattern is anchored or names a path (a ``/`` other than a trailing one)."""
    body = line.strip()
    if body.startswith("!"):
        body = body[1:]
    return "/" in body.rstrip("/")


class _Excluder:
    """Exclude patterns: name patterns checked on each component, path patterns on the relative path."""

    def __init__(self, patterns: Iterable[str]) -> None:
        lines = [p for p in (str(p).strip() for p in patterns) if p and not p.startswith("#")]
        name_lines = [p for p in lines if not _is_path_pattern(p)]
        self._names = GitIgnoreSpec.from_lines(name_lines) if name_lines else None
        self._paths = GitIgnoreSpec.from_lines(lines) if len(name_lines) != len(lines) else None
        self._cache: dict[str, bool] = {}

    def __bool__(self) -> bool:
        return self._names is not None or self._paths is not None

    def excluded(self, rel: str, name: str, is_dir: bool) -> bool:
        suffix = "/" if is_dir else ""
        if self._names is not None:
            key = name + suffix
            hit = self._cache.get(key)
            if hit is None:
                hit = self._cache[key] = self._names.match_file(key)
            if hit:
                return True
        return self._paths is not None and self._paths.match_file(rel + suffix)


class _Ignores:
    """The ``.gitignore`` files that apply to one folder, innermost last: (folder prefix, spec)."""

    __slots__ = ("levels",)

    def __init__(self, levels: tuple[tuple[str, GitIgnoreSpec], ...] = ()) -> None:
        self.levels = levels

    def with_level(self, prefix: str, spec: GitIgnoreSpec) -> _Ignores:
        return _Ignores(self.levels + ((prefix, spec),))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` (relative to the walked root, "/"-separated) is ignored; innermost file wins."""
        path = rel + "/" if is_dir else rel
        for prefix, spec in reversed(self.levels):
            if prefix:
                if not path.startswith(prefix):
                    continue
                sub = path[len(prefix) :]
            else:
                sub = path
            include = _check(spec, sub)
            if include is not None:
                return include
        return False


def _check(spec: GitIgnoreSpec, path: str) -> bool | None:
    """True: ignored; False: re-included by a negation; None: no pattern matches."""
    check = getattr(spec, "check_file", None)
    if check is not None:
        return check(path).include
    return True if spec.match_file(path) else None  # pragma: no cover - pathspec < 0.12


# --------------------------------------------------------------------------------------------------
# Displays and identities


def _safe_display(text: str) -> str:
    """Undecodable bytes in file names (surrogate escapes) shown as ``\\xNN``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    return text


def _as_given(arg: _PathArg) -> str:
    text = os.fsdecode(os.fspath(arg))
    if os.altsep:
        text = text.replace(os.altsep, os.sep)
    return text


def _root_prefix(given: str) -> str:
    """What displays below a folder given as ``given`` start with ("" for the current folder)."""
    stripped = given.rstrip(os.sep)
    if not stripped:  # "/" (or "//")
        return os.sep
    if stripped == os.curdir:
        return ""
    drive, rest = os.path.splitdrive(stripped)
    if drive and not rest:  # "C:" -- relative to that drive's current folder
        return stripped
    return stripped + os.sep


def _identity(st: os.stat_result, path: str) -> tuple:
    if st.st_ino:
        return (st.st_dev, st.st_ino)
    return ("path", os.path.normcase(os.path.realpath(path)))  # pragma: no cover - filesystems without inodes


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.EACCES or isinstance(exc, PermissionError):
        return "permission denied"
    if exc.errno == errno.ENOENT:
        return "no such file or directory"
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    reason = exc.strerror or str(exc) or type(exc).__name__
    return reason[:1].lower() + reason[1:]


# --------------------------------------------------------------------------------------------------
# The walk


@dataclass
class _Dir:
    path: str  # to open
    rel: str  # relative to the root, "/"-separated, "" for the root
    ancestors: frozenset  # identities of the enclosing folders (loop detection)
    ignores: _Ignores
    via_symlink: bool


class _Walker:
    def __init__(self, excluder: _Excluder, respect_gitignore: bool) -> None:
        self.excluder = excluder
        self.respect_gitignore = respect_gitignore
        self.visited: set[tuple] = set()
        # identity -> (preference, DiscoveredFile); preference: (reached via a symlink, sort key)
        self.files: dict[tuple, tuple[tuple, DiscoveredFile]] = {}
        self.problems: list[DiscoveryProblem] = []

    # files ------------------------------------------------------------------------------------------

    def add_file(self, path: str, display: str, st: os.stat_result, via_symlink: bool) -> None:
        shown = _safe_display(display)
        key = _identity(st, path)
        preference = (via_symlink, _sort_key(shown))
        current = self.files.get(key)
        if current is None or preference < current[0]:
            self.files[key] = (preference, DiscoveredFile(path=Path(path), display=shown))

    def problem(self, display: str, message: str) -> None:
        self.problems.append(DiscoveryProblem(display=_safe_display(display), message=message))

    # folders ----------------------------------------------------------------------------------------

    def walk_root(self, path: str, given: str, st: os.stat_result) -> None:
        prefix = _root_prefix(given)
        root_id = _identity(st, path)
        ancestors = frozenset(_real_ancestors(path)) | {root_id}
        ignores = _Ignores()
        if self.respect_gitignore:
            ignores = _parent_gitignores(path, self)
        if root_id in self.visited:
            return
        self.visited.add(root_id)
        real: list[_Dir] = [_Dir(path, "", ancestors, ignores, False)]
        deferred: list[tuple[_Dir, str]] = []  # symlinked folders, walked after the real ones
        while real or deferred:
            if real:
                self._walk_dir(real.pop(), prefix, real, deferred)
                continue
            # the link with the smallest display first, so that the outcome does not depend on order
            index = min(range(len(deferred)), key=lambda i: _sort_key(deferred[i][1]))
            folder, link_display = deferred.pop(index)
            try:
                st_target = os.stat(folder.path)
            except OSError as exc:
                self.problem(link_display, f"{_os_reason(exc)}, skipped")
                continue
            target = _identity(st_target, folder.path)
            if target in folder.ancestors:
                self.problem(link_display, "symlink loop (it points to an enclosing folder), skipped")
                continue
            if target in self.visited:
                continue  # already walked through its real path or another link
            self.visited.add(target)
            folder.ancestors = folder.ancestors | {target}
            self._walk_dir(folder, prefix, real, deferred)

    def _walk_dir(
        self, folder: _Dir, prefix: str, real: list[_Dir], deferred: list[tuple[_Dir, str]]
    ) -> None:
        if folder.rel:
            display_dir = prefix + folder.rel.replace("/", os.sep)
        else:
            display_dir = prefix if prefix in ("", os.sep) else prefix[: -len(os.sep)]
            display_dir = display_dir or os.curdir
        try:
            with os.scandir(folder.path) as it:
                entries = []
                try:
                    for entry in it:
                        entries.append(entry)
                except OSError as exc:
                    self.problem(display_dir, f"{_os_reason(exc)}: could not list the whole folder")
        except PermissionError:
            self.problem(display_dir, "permission denied: cannot list folder")
            return
        except FileNotFoundError:
            self.problem(display_dir, "folder vanished during the scan")
            return
        except OSError as exc:
            self.problem(display_dir, f"cannot list folder: {_os_reason(exc)}")
            return
        entries.sort(key=lambda e: e.name)

        ignores = folder.ignores
        if self.respect_gitignore and any(e.name == ".gitignore" for e in entries):
            spec = _read_gitignore(os.path.join(folder.path, ".gitignore"), self, prefix, folder.rel)
            if spec is not None:
                ignores = ignores.with_level(folder.rel + "/" if folder.rel else "", spec)

        subdirs: list[_Dir] = []
        for entry in entries:
            name = entry.name
            rel = folder.rel + "/" + name if folder.rel else name
            display = prefix + rel.replace("/", os.sep)
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()  # follows symlinks; False for broken links and loops
            except OSError as exc:
                self.problem(display, f"{_os_reason(exc)}, skipped")
                continue
            if is_link and not is_dir:
                try:
                    os.stat(entry.path)
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        self.problem(display, "symlink loop, skipped")
                    elif name.endswith(".py"):
                        self.problem(display, "broken symbolic link, skipped")
                    continue
            if is_dir:
                if self.excluder.excluded(rel, name, True) or ignores.ignored(rel, True):
                    continue
                child = _Dir(entry.path, rel, folder.ancestors, ignores, folder.via_symlink or is_link)
                if is_link:
                    deferred.append((child, display))
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError as exc:
                    self.problem(display, f"{_os_reason(exc)}, skipped")
                    continue
                ident = _identity(st, entry.path)
                if ident in self.visited:
                    continue
                self.visited.add(ident)
                child.ancestors = folder.ancestors | {ident}
                subdirs.append(child)
                continue
            if not name.endswith(".py"):
                continue
            try:
                if not entry.is_file():  # FIFOs, sockets, devices
                    continue
                st = entry.stat()  # follows symlinks: the identity of the real file
            except OSError as exc:
                self.problem(display, f"{_os_reason(exc)}, skipped")
                continue
            if self.excluder.excluded(rel, name, False) or ignores.ignored(rel, False):
                continue
            self.add_file(entry.path, display, st, folder.via_symlink or is_link)
        # depth first, in name order
        real.extend(reversed(subdirs))
        # (deferred symlinked folders are walked once no real folder is left)


def _sort_key(display: str) -> tuple:
    return tuple(display.split(os.sep))


def _real_ancestors(path: str) -> list[tuple]:
    """Identities of the real folders enclosing ``path`` (a link to one of them would loop)."""
    found = []
    current = os.path.realpath(path)
    while True:
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
        try:
            found.append(_identity(os.stat(current), current))
        except OSError:
            break
    return found


def _read_gitignore(path: str, walker: _Walker, prefix: str, rel: str) -> GitIgnoreSpec | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(1024 * 1024)
    except OSError as exc:
        shown = prefix + (rel + "/" if rel else "") + ".gitignore"
        walker.problem(
            shown.replace("/", os.sep),
            f"cannot read .gitignore ({_os_reason(exc)}); its patterns are not applied",
        )
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.decode("utf-8", "replace").splitlines()
    try:
        return GitIgnoreSpec.from_lines(lines)
    except Exception as exc:  # a malformed pattern must not stop the run
        shown = prefix + (rel + "/" if rel else "") + ".gitignore"
        walker.problem(
            shown.replace("/", os.sep), f"invalid .gitignore ({exc}); its patterns are not applied"
        )
        return None


def _parent_gitignores(root: str, walker: _Walker) -> _Ignores:
    """The ``.gitignore`` files of the folders above ``root`` inside the same git work tree."""
    absolute = os.path.abspath(root)
    chain = []
    current = absolute
    for _ in range(256):
        parent = os.path.dirname(current)
        if os.path.lexists(os.path.join(current, ".git")):
            break
        if parent == current:
            return _Ignores()  # not inside a git work tree
        chain.append(parent)
        current = parent
    else:  # pragma: no cover
        return _Ignores()
    levels: list[tuple[str, GitIgnoreSpec]] = []
    for folder in reversed(chain):  # outermost first
        path = os.path.join(folder, ".gitignore")
        if not os.path.isfile(path):
            continue
        spec = _read_gitignore(path, walker, folder + os.sep, "")
        if spec is None:
            continue
        # patterns of an outer .gitignore apply to paths relative to its folder: the root-relative
        # paths tested are looked up as "<root relative to that folder>/<path>"
        below = os.path.relpath(absolute, folder).replace(os.sep, "/")
        levels.append(("", _Prefixed(spec, below + "/")))
    return _Ignores(tuple(levels))


class _Prefixed:
    """An outer ``.gitignore`` (of a folder above the root) seen from the root."""

    def __init__(self, spec: GitIgnoreSpec, prefix: str) -> None:
        self._spec = spec
        self._prefix = prefix

    def check_file(self, path: str):
        return self._spec.check_file(self._prefix + path)

    def match_file(self, path: str) -> bool:  # pragma: no cover - pathspec < 0.12
        return self._spec.match_file(self._prefix + path)


# --------------------------------------------------------------------------------------------------


def discover(
    paths: Iterable[_PathArg],
    exclude: Iterable[str] = (),
    respect_gitignore: bool = True,
    default_excludes: Iterable[str] = DEFAULT_EXCLUDES,
) -> tuple[list[DiscoveredFile], list[DiscoveryProblem]]:
    """The files to analyse below ``paths`` (sorted, each real file once) and the problems met."""
    exclude = [exclude] if isinstance(exclude, str) else list(exclude)
    user_excluder = _Excluder(exclude)
    walk_excluder = _Excluder(list(default_excludes) + exclude)
    walker = _Walker(walk_excluder, respect_gitignore)
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    for arg in paths:
        given = _as_given(arg)
        path = os.fsdecode(os.fspath(arg))
        try:
            st = os.stat(path)
        except OSError as exc:
            walker.problem(given, _missing_message(path, exc))
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
        walker.add_file(path, given, st, via_symlink=False)
    files = sorted((entry[1] for entry in walker.files.values()), key=lambda f: _sort_key(f.display))
    problems = sorted(set(walker.problems), key=lambda p: (_sort_key(p.display), p.message))
    return files, problems


def _explicit_excluded(excluder: _Excluder, rel: str, name: str) -> bool:
    """An explicit file is excluded when its path or one of its components matches."""
    parts = [p for p in rel.split("/") if p not in ("", ".", "..")]
    partial = ""
    for i, part in enumerate(parts):
        partial = partial + "/" + part if partial else part
        if excluder.excluded(partial, part, i < len(parts) - 1):
            return True
    return excluder.excluded(rel, name, False)


def _missing_message(path: str, exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        try:
            if os.path.islink(path):
                return "broken symbolic link (its target does not exist)"
        except (OSError, ValueError):
            pass
        return "no such file or directory"
    if exc.errno == errno.ELOOP:
        return "symlink loop, skipped"
    if exc.errno == errno.ENOTDIR:
        return "no such file or directory (a parent is not a folder)"
    return _os_reason(exc)
