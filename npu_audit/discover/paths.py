"""Paths and what the walk says about them (:mod:`npu_audit.discover`): how a path is shown, a file's
identity, the ``Path`` of a file found, and the reasons and hints of the problems met.
"""

from __future__ import annotations

import codecs
import errno
import os
import sys
from pathlib import Path
from typing import Optional, Union

_PathArg = Union[str, "os.PathLike[str]", bytes]


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


def paths_from_list(data: bytes) -> list[str]:
    """The paths of a path list (``--files-from``), in order: one path per line (``\\n`` or ``\\r\\n``),
    or, when the list holds a NUL byte, one per NUL-terminated entry (``git ls-files -z``,
    ``find -print0``: the only way to list a name that holds a newline). An entry is the path exactly as
    written, spaces included; blank entries are skipped. There are no comments: ``#`` starts a file name
    like any other character. Bytes that are not valid in the file system's encoding are kept as the
    same bytes (``os.fsdecode``), so that every name a list can hold can be opened."""
    if b"\0" in data:
        entries = data.split(b"\0")
    else:
        entries = [line[:-1] if line.endswith(b"\r") else line for line in data.split(b"\n")]
    return [os.fsdecode(entry) for entry in entries if entry.strip()]
