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
"""

from __future__ import annotations

import codecs
import errno
import gc
import os
import posixpath
import re
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Union

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = ["DEFAULT_EXCLUDES", "DiscoveredFile", "DiscoveryProblem", "discover"]


@dataclass(frozen=True)
class DiscoveredFile:
    """A file discover() found to analyse."""

    path: Path  # path to open
    display: str  # as given on the command line, or joined below a given folder, with os.sep


@dataclass(frozen=True)
class DiscoveryProblem:
    """A path discover() could not take (missing, unreadable, a broken link, a symlink loop); the run reports it as
    an unreadable-file finding."""

    display: str
    message: str
    hint: Optional[str] = None  # what to do about it
    severity: Optional[str] = None  # None: the rule's (an error); "info" for a loop that hides no file


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


class _Matcher:
    """A ``GitIgnoreSpec`` with an exact shortcut: most paths match none of its patterns, which the
    patterns' own regular expressions say far quicker than the spec does (then joined into one for
    a spec used often, when they are plain enough to be joined safely). Whatever one of them
    matches goes through the spec."""

    __slots__ = ("spec", "_normalize", "_check_file", "_searches", "_joined", "_uses")

    _JOIN_AFTER = 256  # uses before joining (joining costs about what 300 uses save)

    def __init__(self, spec: GitIgnoreSpec) -> None:
        from pathspec.util import normalize_file

        self.spec = spec
        self._normalize = normalize_file  # what the spec matches its patterns against
        self._check_file = getattr(spec, "check_file", None)
        self._searches = _pattern_searches(spec)  # None: no shortcut
        self._joined = None  # the joined expression's search, once built (False: none possible)
        self._uses = 0

    def _none_matches(self, path: str) -> bool:
        """True when certainly none of the patterns matches ``path``; False: the spec decides."""
        joined = self._joined
        if joined is None:
            searches = self._searches
            if searches is None:
                return False
            self._uses += 1
            if self._uses < self._JOIN_AFTER:
                path = self._normalize(path)
                for search in searches:
                    if search(path) is not None:
                        return False
                return True
            joined = self._joined = _joined_search(self.spec)
        return joined is not False and joined(self._normalize(path)) is None

    def check(self, path: str) -> bool | None:
        """True: ignored; False: re-included by a negation; None: no pattern matches."""
        if self._none_matches(path):
            return None
        if self._check_file is not None:
            return self._check_file(path).include
        return True if self.spec.match_file(path) else None  # pragma: no cover - pathspec < 0.12

    def match(self, path: str) -> bool:
        if self._none_matches(path):
            return False
        return self.spec.match_file(path)


def _pattern_searches(spec: GitIgnoreSpec) -> list | None:
    """The ``search`` of each active pattern's expression (pathspec matches a path when one of them
    finds it), or None when a pattern is not a plain regular expression."""
    searches = []
    for pattern in spec.patterns:
        if pattern.include is None:  # comments, blank lines: the spec skips them too
            continue
        regex = getattr(pattern, "regex", None)
        if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str):
            return None  # pragma: no cover - not a pathspec we know
        searches.append(regex.search)
    return searches


_ANY_FOLDER = "^(?:.+/)?"  # how gitignore patterns without a "/" start: in any folder
_DIR_GROUP = "(?P<ps_d>"  # pathspec's one named group (was it matched as a folder?)
_EXTENSION = re.compile(r"\(\?(?!:)")  # "(?" other than "(?:" (inline flags, look-arounds...)
_WARNS = ("[[", "--", "&&", "~~", "||")  # in a set, re warns about them: pathspec did already


def _joined_search(spec: GitIgnoreSpec):
    """The ``search`` of one expression matching what at least one of the spec's patterns matches
    (``search`` as pathspec's patterns use), or False when the patterns cannot be joined safely."""
    try:
        common: list[str] = []  # bodies after _ANY_FOLDER: joined behind a single _ANY_FOLDER
        others: list[str] = []
        flags = None
        for pattern in spec.patterns:
            if pattern.include is None:  # comments, blank lines: the spec skips them too
                continue
            regex = getattr(pattern, "regex", None)
            if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str):
                return False  # pragma: no cover - not a pathspec we know
            if flags is None:
                flags = regex.flags
            names = regex.groupindex
            text = regex.pattern
            if (
                regex.flags != flags
                or flags & re.VERBOSE
                or regex.groups != len(names)
                or any(name != "ps_d" for name in names)
                or text.count(_DIR_GROUP) != len(names)
                or any(sequence in text for sequence in _WARNS)
            ):
                return False
            text = text.replace(_DIR_GROUP, "(?:")  # the same group, without a name to clash
            if _EXTENSION.search(text):
                return False
            body = text[len(_ANY_FOLDER) :]
            if text.startswith(_ANY_FOLDER) and body[:1] not in ("?", "*", "+", "{") and _is_sequence(body):
                common.append(body)  # "^(?:.+/)?A|^(?:.+/)?B" matches what "^(?:.+/)?(?:A|B)" does
            else:
                others.append(text)
        if flags is None:  # no pattern at all
            return _no_match
        alternatives = [f"(?:{text})" for text in others]
        if common:
            alternatives.insert(0, _ANY_FOLDER + "(?:" + "|".join(f"(?:{body})" for body in common) + ")")
        joined = re.compile("|".join(alternatives), flags)
        if joined.groups:  # pragma: no cover - excluded above
            return False
        return joined.search
    except Exception:  # pragma: no cover - whatever goes wrong, the spec alone decides
        return False


def _no_match(path: str) -> None:
    return None


def _is_sequence(expression: str) -> bool:
    """Whether a regular expression is not empty, has balanced parentheses and no "|" outside
    them: "^(?:.+/)?" followed by it is that prefix followed by the expression."""
    depth = 0
    i, end = 0, len(expression)
    while i < end:
        char = expression[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":  # a set: "]" right after "[" or "[^" is a member, escapes are skipped
            i += 1
            if expression.startswith("^", i):
                i += 1
            if expression.startswith("]", i):
                i += 1
            while i < end and expression[i] != "]":
                i += 2 if expression[i] == "\\" else 1
            if i >= end:
                return False
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return False
        elif char == "|" and depth == 0:
            return False
        i += 1
    return depth == 0 and end > 0


class _Excluder:
    """Exclude patterns: name patterns checked on each component, path patterns on the relative path."""

    def __init__(self, patterns: Iterable[str]) -> None:
        lines = [p for p in (str(p).strip() for p in patterns) if p and not p.startswith("#")]
        name_lines = [p for p in lines if not _is_path_pattern(p)]
        self._names: _Matcher | None = None
        self._paths: _Matcher | None = None
        if lines:  # (the pattern library is loaded only when there are patterns)
            from pathspec import GitIgnoreSpec

            self._names = _Matcher(GitIgnoreSpec.from_lines(name_lines)) if name_lines else None
            self._paths = _Matcher(GitIgnoreSpec.from_lines(lines)) if len(name_lines) != len(lines) else None
        # name (+ "/" for a folder) -> excluded by a name pattern; None without name patterns
        self.names: dict[str, bool] | None = {} if self._names is not None else None
        self.paths = self._paths.match if self._paths is not None else None  # rel (+ "/") -> bool

    def __bool__(self) -> bool:
        return self._names is not None or self._paths is not None

    def excluded(self, rel: str, name: str, is_dir: bool) -> bool:
        suffix = "/" if is_dir else ""
        if self.names is not None and self.name_excluded(name + suffix):
            return True
        return self.paths is not None and self.paths(rel + suffix)

    def name_excluded(self, key: str) -> bool:
        hit = self.names.get(key)
        if hit is None:
            hit = self.names[key] = self._names.match(key)
        return hit


class _Ignores:
    """The ``.gitignore`` files that apply to one folder, innermost last: (folder prefix, matcher)."""

    __slots__ = ("levels",)

    def __init__(self, levels: tuple[tuple[str, _Matcher | _Prefixed], ...] = ()) -> None:
        self.levels = levels

    def with_level(self, prefix: str, matcher: _Matcher) -> _Ignores:
        return _Ignores(self.levels + ((prefix, matcher),))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` (relative to the walked root, "/"-separated) is ignored; innermost file wins."""
        path = rel + "/" if is_dir else rel
        for prefix, matcher in reversed(self.levels):
            if prefix:
                if not path.startswith(prefix):
                    continue
                sub = path[len(prefix) :]
            else:
                sub = path
            include = matcher.check(sub)
            if include is not None:
                return include
        return False


# --------------------------------------------------------------------------------------------------
# Displays and identities


_FS_UTF8 = codecs.lookup(sys.getfilesystemencoding()).name == "utf-8"


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
# Paths of the files found


def _plain_child(parent: Path, name: str, path: str) -> Path:
    return Path(path)


def _parsed_child_factory():
    """Python < 3.12 parses every ``Path(str)`` eagerly (the bulk of a big walk's cost): a child of an
    already parsed folder is built from its parts instead. Used only when it builds exactly what
    ``Path(os.path.join(folder, name))`` builds; Python 3.12+ constructs paths lazily anyway."""
    if sys.version_info >= (3, 12):
        return None
    try:

        def child(parent: Path, name: str, path: str) -> Path:
            return parent._from_parsed_parts(parent._drv, parent._root, parent._parts + [name])

        for folder in (os.sep, os.curdir, os.path.join("a b", "c"), os.path.join(os.sep, "x", "y z")):
            for name in ("n.py", "caf\udce9.py", "..py", ".hidden"):
                parent = Path(folder)
                built, expected = child(parent, name, ""), Path(os.path.join(folder, name))
                if not (
                    type(built) is type(expected)
                    and built == expected
                    and str(built) == str(expected)
                    and built.parts == expected.parts
                    and hash(built) == hash(expected)
                    and built.parent == parent
                    and built.name == name
                ):
                    return None  # pragma: no cover - a pathlib that differs
    except Exception:  # pragma: no cover - a pathlib without these internals
        return None
    return child


_child_path = _parsed_child_factory() or _plain_child


# --------------------------------------------------------------------------------------------------
# The walk


@dataclass
class _Dir:
    """A folder waiting to be walked, with what applies below it (ignore files, its project) and how it was reached."""

    path: str  # to open
    rel: str  # relative to the root, "/"-separated, "" for the root
    ancestors: frozenset  # identities of the enclosing folders (loop detection)
    ignores: _Ignores
    via_symlink: bool
    parsed: Path  # Path(path)
    dev: int = -1  # st_dev of the folder, once stat-ed
    # the folder's project (settings from a pyproject.toml with [tool.npu-audit]): its exclude
    # patterns, and this folder's path relative to the project root ("/"-separated, "" at the root)
    project_excluder: _Excluder | None = None
    project_rel: str = ""
    gitignore: bool = True  # whether .gitignore files apply here


_entry_name = attrgetter("name")


class _Walker:
    def __init__(self, exclude: list[str], respect_gitignore: bool, settings=None) -> None:
        self._exclude = exclude  # the patterns of :attr:`excluder`, compiled when a folder is first walked
        self._excluder: _Excluder | None = None
        self.respect_gitignore = respect_gitignore
        self.settings = settings  # a SettingsResolver (per-project exclude and respect-gitignore), or None
        self.project_excluders: dict[str, _Excluder | None] = {}  # project root -> its exclude patterns
        self.visited: set[tuple] = set()
        self.files: dict[tuple, DiscoveredFile] = {}  # identity -> the file listed
        self.linked: set[tuple] = set()  # identities whose listed file was reached through a symlink
        self.problems: list[DiscoveryProblem] = []
        self.gitignores: dict[bytes, _Matcher | str] = {}  # content -> compiled, or why it is not

    @property
    def excluder(self) -> _Excluder:
        """The exclude patterns of the walk (the defaults and the command line's). Compiled on first use:
        a run on files named one by one walks no folder, and loading the pattern library (pathspec) was
        25 ms of a one-file run."""
        if self._excluder is None:
            self._excluder = _Excluder(self._exclude)
        return self._excluder

    # files ------------------------------------------------------------------------------------------

    def add_file(self, path: str, display: str, st: os.stat_result, via_symlink: bool) -> None:
        shown = _safe_display(display)
        key = _identity(st, path)
        if self.prefer(key, via_symlink, shown):
            self.files[key] = DiscoveredFile(Path(path), shown)

    def prefer(self, key: tuple, via_symlink: bool, shown: str) -> bool:
        """Whether a file seen as ``shown`` is listed rather than the one already seen (if any) with
        the same identity: the real path of a file wins over paths through symlinks, then the
        smallest display."""
        current = self.files.get(key)
        if current is None:
            if via_symlink:
                self.linked.add(key)
            return True
        current_via = key in self.linked
        if (via_symlink, _sort_key(shown)) < (current_via, _sort_key(current.display)):
            if current_via and not via_symlink:
                self.linked.discard(key)
            return True
        return False

    def problem(self, display: str, message: str, hint: Optional[str] = None, severity: Optional[str] = None) -> None:
        self.problems.append(DiscoveryProblem(display=_safe_display(display), message=message, hint=hint,
                                              severity=severity))

    # projects ---------------------------------------------------------------------------------------

    def project_excluder(self, settings) -> _Excluder | None:
        root = settings.root
        if root not in self.project_excluders:
            excluder = _Excluder(settings.exclude) if settings.exclude else None
            self.project_excluders[root] = excluder if excluder else None
        return self.project_excluders[root]

    def project_of(self, path: str):
        """(excluder, path of ``path`` relative to its project root, respect .gitignore) for a folder
        given on the command line: the settings of the nearest project at or above it."""
        absolute = os.path.abspath(path)
        settings = self.settings.for_dir(absolute)
        if settings.root is None:
            return None, "", settings.respect_gitignore
        rel = os.path.relpath(absolute, settings.root).replace(os.sep, "/")
        return self.project_excluder(settings), "" if rel == "." else rel, settings.respect_gitignore

    # folders ----------------------------------------------------------------------------------------

    def walk_root(self, path: str, given: str, st: os.stat_result) -> None:
        prefix = _root_prefix(given)
        root_id = _identity(st, path)
        ancestors = frozenset(_real_ancestors(path)) | {root_id}
        project_excluder, project_rel, gitignore = None, "", self.respect_gitignore
        if self.settings is not None:
            project_excluder, project_rel, gitignore = self.project_of(path)
            if project_excluder and project_rel and _path_excluded(project_excluder, project_rel, True):
                return  # the folder lies in a part of its project that the project excludes
        ignores = _Ignores()
        if gitignore:
            ignores = _parent_gitignores(path, self)
        if root_id in self.visited:
            return
        self.visited.add(root_id)
        real: list[_Dir] = [_Dir(path, "", ancestors, ignores, False, Path(path), st.st_dev, project_excluder,
                                 project_rel, gitignore)]
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
                self.problem(link_display, f"{_os_reason(exc)}, skipped", _access_hint(exc))
                continue
            target = _identity(st_target, folder.path)
            if target in folder.ancestors:
                self.problem(link_display, "symlink loop (it points to an enclosing folder), skipped",
                             _enclosing_link_hint(), severity="info")
                continue
            if target in self.visited:
                continue  # already walked through its real path or another link
            self.visited.add(target)
            folder.ancestors = folder.ancestors | {target}
            folder.dev = st_target.st_dev
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
                    self.problem(display_dir, f"{_os_reason(exc)}: could not list the whole folder",
                                 _access_hint(exc))
        except PermissionError as exc:
            self.problem(display_dir, "permission denied: cannot list folder", _access_hint(exc))
            return
        except FileNotFoundError:
            self.problem(display_dir, "folder vanished during the scan", _access_hint(code=errno.ENOENT))
            return
        except OSError as exc:
            self.problem(display_dir, f"cannot list folder: {_os_reason(exc)}", _access_hint(exc))
            return
        entries.sort(key=_entry_name)

        ignores = folder.ignores
        project_excluder, project_rel, gitignore = folder.project_excluder, folder.project_rel, folder.gitignore
        if self.settings is not None and folder.rel and "pyproject.toml" in map(_entry_name, entries):
            settings = self.settings.in_dir(os.path.abspath(folder.path))
            if settings is not None:  # a project of its own: its settings apply from here down
                project_excluder, project_rel = self.project_excluder(settings), ""
                if settings.respect_gitignore != gitignore:
                    gitignore = settings.respect_gitignore
                    ignores = _Ignores()
                    if gitignore:  # every .gitignore of the work tree that applies here, as for a root
                        base = folder.rel + "/"
                        ignores = _Ignores(tuple((base, m) for _, m in _parent_gitignores(folder.path, self).levels))
        if gitignore and ".gitignore" in map(_entry_name, entries):
            matcher = _read_gitignore(os.path.join(folder.path, ".gitignore"), self, prefix, folder.rel)
            if matcher is not None:
                ignores = ignores.with_level(folder.rel + "/" if folder.rel else "", matcher)

        # per folder, not per entry: the checks that apply, how names are shown and related to the root
        excluder = self.excluder
        excluded = excluder.excluded if excluder else None
        names_excluded = excluder.names  # the name patterns' verdicts so far (a cache)
        paths_excluded = excluder.paths
        ignored = ignores.ignored if ignores.levels else None
        rel_base = folder.rel + "/" if folder.rel else ""
        project_excluded = project_excluder.excluded if project_excluder else None
        project_base = project_rel + "/" if project_rel else ""
        display_base = display_dir + os.sep if folder.rel else prefix  # display = display_base + name
        # _safe_display(display_base + name) is shown_base + _safe_display(name): display_base ends
        # with a separator (or is "", or "C:"), an ASCII character that UTF-8 decodes on its own
        shown_base = _safe_display(display_base)
        via = folder.via_symlink
        dev = folder.dev
        parsed = folder.parsed
        files = self.files
        # A file's identity is (st_dev, st_ino). The folder's first file is stat-ed: when its
        # (st_dev, st_ino) is the folder's st_dev and the inode number the listing gave (d_ino, free
        # on POSIX), so are the other files': no stat per file. Otherwise (Windows, some FUSE or
        # overlay file systems, an unsearchable folder...) every file of the folder is stat-ed.
        hinted: bool | None = None

        subdirs: list[_Dir] = []
        for entry in entries:
            name = entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()  # follows symlinks; False for broken links, raises for loops
            except OSError as exc:
                self.problem(display_base + name, f"{_os_reason(exc)}, skipped", _access_hint(exc),
                             severity=_loop_severity(exc, name))
                continue
            if is_dir:
                rel = rel_base + name
                if (
                    (excluded is not None and excluded(rel, name, True))
                    or (ignored is not None and ignored(rel, True))
                    or (project_excluded is not None and project_excluded(project_base + name, name, True))
                ):
                    continue
                child = _Dir(
                    entry.path,
                    rel,
                    folder.ancestors,
                    ignores,
                    via or is_link,
                    _child_path(parsed, name, entry.path),
                    project_excluder=project_excluder,
                    project_rel=project_base + name,
                    gitignore=gitignore,
                )
                if is_link:
                    deferred.append((child, display_base + name))
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError as exc:
                    self.problem(display_base + name, f"{_os_reason(exc)}, skipped", _access_hint(exc))
                    continue
                ident = _identity(st, entry.path)
                if ident in self.visited:
                    continue
                self.visited.add(ident)
                child.ancestors = folder.ancestors | {ident}
                child.dev = st.st_dev
                subdirs.append(child)
                continue
            if is_link:  # to a file, or broken, or a loop
                try:
                    st = os.stat(entry.path)
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        self.problem(display_base + name, "symlink loop, skipped", _access_hint(code=errno.ELOOP),
                                     severity=_loop_severity(exc, name))
                    elif name.endswith(".py"):
                        self.problem(display_base + name, "broken symbolic link, skipped",
                                     _access_hint(code=errno.ENOENT, link=True))
                    continue
                if not name.endswith(".py") or not stat.S_ISREG(st.st_mode):  # FIFOs, sockets, devices
                    continue
                key = _identity(st, entry.path)
                file_via = True
            else:
                if not name.endswith(".py"):
                    continue
                try:
                    if not entry.is_file():  # FIFOs, sockets, devices
                        continue
                    if hinted:
                        key = (dev, entry.inode())
                    else:
                        st = entry.stat()
                        key = _identity(st, entry.path)
                        if hinted is None:
                            hinted = bool(st.st_ino) and st.st_dev == dev and st.st_ino == entry.inode()
                except OSError as exc:
                    self.problem(display_base + name, f"{_os_reason(exc)}, skipped", _access_hint(exc))
                    continue
                file_via = via
            if names_excluded is not None:  # excluder.excluded(rel, name, False), inlined
                hit = names_excluded.get(name)
                if hit or (hit is None and excluder.name_excluded(name)):
                    continue
            if (paths_excluded is not None and paths_excluded(rel_base + name)) or (
                ignored is not None and ignored(rel_base + name, False)
            ):
                continue
            if project_excluded is not None and project_excluded(project_base + name, name, False):
                continue
            if name.isascii():
                shown = shown_base + name
            elif _FS_UTF8:
                shown = shown_base + _safe_display(name)
            else:  # pragma: no cover - names not in UTF-8: shown as a whole
                shown = _safe_display(display_base + name)
            if (key not in files and not file_via) or self.prefer(key, file_via, shown):
                files[key] = DiscoveredFile(_child_path(parsed, name, entry.path), shown)
        # depth first, in name order
        real.extend(reversed(subdirs))
        # (deferred symlinked folders are walked once no real folder is left)


def _loop_severity(exc: OSError, name: str) -> Optional[str]:
    """The severity of a link met while walking that cannot be followed (``exc``): "info" for links that
    lead to each other (a loop: there is no file or folder behind them to miss), unless the link is named
    ``*.py`` (a module that cannot be read, an error as a broken ``*.py`` link); None (the rule's, an
    error) for anything else."""
    return "info" if exc.errno == errno.ELOOP and not name.endswith(".py") else None


def _sort_key(display: str) -> str:
    """Sorts like the tuple of ``display``'s components: the separator replaced by a character that
    sorts before any other and that no path holds."""
    return display.replace(os.sep, "\0")


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


def _read_gitignore(path: str, walker: _Walker, prefix: str, rel: str) -> _Matcher | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(1024 * 1024)
    except OSError as exc:
        shown = prefix + (rel + "/" if rel else "") + ".gitignore"
        walker.problem(
            shown.replace("/", os.sep),
            f"cannot read .gitignore ({_os_reason(exc)}); its patterns are not applied",
            ("make the .gitignore readable for the user that runs npu-audit" if isinstance(exc, PermissionError)
             else "remove or repair the .gitignore") + "; until then, --exclude can leave out what it lists",
        )
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    compiled = walker.gitignores.get(data)  # identical .gitignore files are compiled once
    if compiled is None:
        from pathspec import GitIgnoreSpec

        lines = data.decode("utf-8", "replace").splitlines()
        try:
            compiled = _Matcher(GitIgnoreSpec.from_lines(lines))
        except Exception as exc:  # a malformed pattern must not stop the run
            compiled = f"invalid .gitignore ({exc}); its patterns are not applied"
        walker.gitignores[data] = compiled
    if isinstance(compiled, str):
        shown = prefix + (rel + "/" if rel else "") + ".gitignore"
        walker.problem(shown.replace("/", os.sep), compiled,
                       "remove or correct the pattern (git skips it and applies the file's other patterns); until "
                       "then, --exclude can leave out what the file lists")
        return None
    return compiled


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
    levels: list[tuple[str, _Prefixed]] = []
    for folder in reversed(chain):  # outermost first
        path = os.path.join(folder, ".gitignore")
        if not os.path.isfile(path):
            continue
        matcher = _read_gitignore(path, walker, folder + os.sep, "")
        if matcher is None:
            continue
        # patterns of an outer .gitignore apply to paths relative to its folder: the root-relative
        # paths tested are looked up as "<root relative to that folder>/<path>"
        below = os.path.relpath(absolute, folder).replace(os.sep, "/")
        levels.append(("", _Prefixed(matcher, below + "/")))
    return _Ignores(tuple(levels))


class _Prefixed:
    """An outer ``.gitignore`` (of a folder above the root) seen from the root."""

    __slots__ = ("_matcher", "_prefix")

    def __init__(self, matcher: _Matcher, prefix: str) -> None:
        self._matcher = matcher
        self._prefix = prefix

    def check(self, path: str) -> bool | None:
        return self._matcher.check(self._prefix + path)


# --------------------------------------------------------------------------------------------------


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


def _explicit_excluded(excluder: _Excluder, rel: str, name: str) -> bool:
    """An explicit file is excluded when its path or one of its components matches."""
    parts = [p for p in rel.split("/") if p not in ("", ".", "..")]
    partial = ""
    for i, part in enumerate(parts):
        partial = partial + "/" + part if partial else part
        if excluder.excluded(partial, part, i < len(parts) - 1):
            return True
    return excluder.excluded(rel, name, False)


def _path_excluded(excluder: _Excluder, rel: str, is_dir: bool) -> bool:
    """Whether ``rel`` ("/"-separated, relative to the patterns' root, inside it) or one of the
    folders holding it is excluded."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    partial = ""
    for i, part in enumerate(parts):
        partial = partial + "/" + part if partial else part
        if excluder.excluded(partial, part, is_dir or i < len(parts) - 1):
            return True
    return False


def _access_hint(exc: Optional[OSError] = None, code: Optional[int] = None, link: bool = False) -> str:
    """What to do about a path the walk cannot read (``exc``, or an error number)."""
    from npu_audit.source import access_hint

    return access_hint(exc if exc is not None else OSError(code, os.strerror(code or 0)), link=link)


def _enclosing_link_hint() -> str:
    from npu_audit.source import LEAVE_OUT

    return f"nothing is missed (the folder it points to is checked); to silence this, remove the link or {LEAVE_OUT}"


def _missing(path: str, exc: OSError) -> tuple[str, str]:
    """The message and hint for a path named on the command line that cannot be opened."""
    from npu_audit.source import is_link

    if exc.errno == errno.ENOENT and is_link(path):
        return "broken symbolic link (its target does not exist)", _access_hint(exc, link=True)
    if exc.errno == errno.ENOENT:
        return "no such file or directory", "check the path"
    if exc.errno == errno.ENOTDIR:
        return "no such file or directory (a parent is not a folder)", "check the path"
    if exc.errno == errno.ELOOP:
        return "symlink loop, skipped", _access_hint(exc)
    return _os_reason(exc), _access_hint(exc)
