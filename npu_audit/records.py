"""npu-audit's record classes: the standard library's ``dataclass``, with the methods it writes compiled once
per Python instead of at every start.

For each class, ``dataclasses`` writes ``__init__``, ``__repr__``, ``__eq__`` (and, for a frozen class,
``__setattr__``, ``__delattr__`` and ``__hash__``) as Python source and compiles it when the class is
created. A one-file run creates 87 such classes, and compiling their ~370 methods was a fifth of the
run (README, "Performance"). :func:`dataclass` is ``dataclasses.dataclass`` itself: while it runs, the name
``exec`` that ``dataclasses`` calls with each text (all of Python 3.9-3.13 do) is bound in that module to
:func:`exec_compiled`, which runs the code compiled from the same text by the same Python, kept in the
user's cache folder (``methods-<python>.marshal``, npu_audit.user_cache). Same text, same interpreter: the
classes are exactly those ``dataclasses`` builds. A text not kept yet is compiled and kept; the file is
written, once, when a process that compiled something ends. A missing, unreadable or unwritable file only
costs the compiling. ``NPU_AUDIT_NO_CODE_CACHE=1`` turns the file off. The tree's node classes
(npu_audit.syntax) write their ``__init__`` the same way and run it through :func:`exec_compiled` too.
"""

from __future__ import annotations

import dataclasses
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any, Optional

from npu_audit import user_cache

if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:

    def dataclass(cls=None, /, **params):
        """``dataclasses.dataclass(cls, **params)``, its generated methods' code taken from the cache."""
        if cls is None:
            return lambda later: dataclass(later, **params)
        namespace = vars(dataclasses)
        namespace["exec"] = exec_compiled  # (a module global hides the builtin from that module's code)
        try:
            return dataclasses.dataclass(cls, **params)
        finally:
            namespace.pop("exec", None)


#: More texts than npu-audit's classes have (~450 methods): entries of older versions are dropped then.
_MAX_KEPT = 2000

_codes: Optional[dict[str, CodeType]] = None  # text -> its code, read from the file at first use
_used: set[str] = set()  # the texts this process ran
_compiled: list[str] = []  # the texts this process compiled (not in the file)


def exec_compiled(source: Any, globals: Optional[dict] = None, locals: Optional[dict] = None) -> None:
    """``exec(source, globals, locals)``, a text run as its code from the cache (compiled and kept if new).
    Also for code npu-audit writes out itself at start-up (npu_audit.syntax: each node class's ``__init__``)."""
    if globals is None:  # (exec's own default: the caller's namespaces; dataclasses always passes them)
        caller = sys._getframe(1)
        globals, locals = caller.f_globals, caller.f_locals if locals is None else locals
    if isinstance(source, str):
        codes = _cached_codes()
        code = codes.get(source)
        if code is None:
            code = codes[source] = compile(source, "<string>", "exec")
            if not _compiled:
                import atexit

                atexit.register(_save)
            _compiled.append(source)
        _used.add(source)
        source = code
    exec(source, globals, locals)


def compiled_in_this_process() -> int:
    """How many method texts this process had to compile (0 once the cache holds every class it creates)."""
    return len(_compiled)


def _cache_file() -> Optional[Path]:
    tag = sys.implementation.cache_tag  # (None: an interpreter that does not cache bytecode)
    if tag is None or os.environ.get("NPU_AUDIT_NO_CODE_CACHE"):
        return None
    return user_cache.folder() / f"methods-{tag}-{sys.hexversion:x}.marshal"


def _cached_codes() -> dict[str, CodeType]:
    global _codes
    if _codes is None:
        _codes = {}
        path = _cache_file()
        if path is not None:
            try:
                with open(path, "rb") as handle:
                    loaded = marshal.loads(handle.read())
            except (OSError, EOFError, ValueError, TypeError):
                loaded = None
            if isinstance(loaded, dict):
                _codes = {text: code for text, code in loaded.items()
                          if isinstance(text, str) and isinstance(code, CodeType)}
    return _codes


def _save() -> None:
    """Write the cache with what this process compiled (at exit; atomically: a reader sees the old file or
    the new one). When it has grown past ``_MAX_KEPT`` texts, only those this process ran are kept."""
    path = _cache_file()
    if path is None or not _compiled or _codes is None:
        return
    keep = _codes if len(_codes) <= _MAX_KEPT else {text: _codes[text] for text in _used if text in _codes}
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(temp, "wb") as handle:
            handle.write(marshal.dumps(keep))
        os.replace(temp, path)
    except (OSError, ValueError):  # (ValueError: marshal; the cache only saves time)
        try:
            os.unlink(temp)
        except OSError:
            pass
