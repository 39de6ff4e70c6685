"""The walk of the folders given (:mod:`npu_audit.discover`): each folder listed once, real folders before
symlinked ones, with the exclude patterns, ``.gitignore`` files and project settings that apply below it.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Optional

from npu_audit.discover.paths import (
    _FS_UTF8,
    _access_hint,
    _child_path,
    _enclosing_link_hint,
    _identity,
    _loop_severity,
    _os_reason,
    _real_ancestors,
    _root_prefix,
    _safe_display,
    _sort_key,
)
from npu_audit.discover.patterns import _Excluder, _Ignores, _Matcher, _path_excluded, _Prefixed


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
