"""npu-audit's record classes: the standard library's ``dataclass``, with the methods it writes compiled once
per Python instead of at every start.

For each class, ``dataclasses`` writes its methods (``__init__``, ``__repr__``, ``__eq__``; for a frozen class
``__setattr__``, ``__delattr__`` and ``__hash__``; the ordering methods when asked) as Python source and
compiles it when the class is created. A one-file run creates 87 such classes, and compiling their ~370
methods was a fifth of the run (README, "Performance"). :func:`dataclass` is ``dataclasses.dataclass``
itself: while it runs, the name ``exec`` that ``dataclasses`` calls with each text (all of Python 3.9-3.13
do) is bound in that module to :func:`exec_compiled`, which runs the code compiled from the same text, by
the same Python, as the builtin ``exec`` would compile it there (no ``__future__`` flags: ``dont_inherit``),
kept in the user's cache folder (``methods-<python>-O<level>.marshal``, npu_audit.user_cache). So the classes are
those ``dataclasses`` builds (``tests/test_records.py`` compares code, annotations and signatures). A text
not kept yet is compiled and kept; the file is written, once, when a process that compiled something ends
(a run's worker processes compile nothing: the run loads the analysis code before it starts them,
``pipeline._in_workers``). The file is named by the interpreter's version and optimisation level, and starts
with a header naming this format, the bytecode's magic number and a checksum of the rest: a file that does
not match is ignored and replaced, and a missing, damaged or unwritable one only costs the compiling.
``NPU_AUDIT_NO_CODE_CACHE=1`` turns the file off. The tree's node classes (npu_audit.syntax) write their
``__init__`` too and run it through :func:`exec_compiled`.
"""

from __future__ import annotations

import dataclasses
import marshal
import os
import sys
from _thread import RLock  # (threading's RLock, without importing threading at every start)
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any, Optional

from npu_audit import user_cache

#: Bumped whenever what the file holds for a text changes (1: compiled with this module's __future__ flags).
_FORMAT = 2
_BINDING = RLock()  # one binding of dataclasses' ``exec`` at a time (classes built in several threads)
_UNBOUND = object()

if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:

    def dataclass(cls=None, /, **params):
        """``dataclasses.dataclass(cls, **params)``, its generated methods' code taken from the cache."""
        if cls is None:
            return lambda later: dataclass(later, **params)
        namespace = vars(dataclasses)
        with _BINDING:
            previous = namespace.get("exec", _UNBOUND)
            namespace["exec"] = exec_compiled  # (a module global hides the builtin from that module's code)
            try:
                return dataclasses.dataclass(cls, **params)
            finally:
                if previous is _UNBOUND:
                    del namespace["exec"]
                else:
                    namespace["exec"] = previous


#: More texts than npu-audit's classes have (~450 methods): entries of older versions are dropped then.
_MAX_KEPT = 2000

_codes: Optional[dict[str, CodeType]] = None  # text -> its code, read from the file at first use
_used: set[str] = set()  # the texts this process ran
_compiled: list[str] = []  # the texts this process compiled (not in the file)
_written = 0  # how many of them the file holds (written by :func:`save`)


def exec_compiled(source: Any, globals: dict, locals: Optional[dict] = None) -> None:
    """``exec(source, globals, locals)`` as the builtin runs it, a text run as its code from the cache
    (compiled and kept if new)."""
    if isinstance(source, str):
        codes = _cached_codes()
        code = codes.get(source)
        if code is None:
            # (dont_inherit: compiled as the builtin compiles it for its caller, not with this module's flags)
            code = codes[source] = compile(source, "<string>", "exec", dont_inherit=True)
            if not _compiled:
                import atexit

                atexit.register(save)
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
    folder = user_cache.folder()
    if folder is None:
        return None
    return folder / f"methods-{tag}-{sys.hexversion:x}-O{sys.flags.optimize}.marshal"


def _header() -> bytes:
    """What the file starts with before the checksum: this format, the bytecode's magic number (which also
    tells apart development builds that share a version number) and the optimisation level."""
    external = sys.modules.get("_frozen_importlib_external")  # (always loaded: importlib.util costs 5 ms)
    magic = getattr(external, "MAGIC_NUMBER", None)
    if not isinstance(magic, bytes):
        from importlib.util import MAGIC_NUMBER

        magic = MAGIC_NUMBER
    return b"npu-audit methods %d %s %d\n" % (_FORMAT, magic.hex().encode(), sys.flags.optimize)


def _checksum(body: bytes) -> bytes:
    import zlib

    return zlib.crc32(body).to_bytes(4, "big")


def _cached_codes() -> dict[str, CodeType]:
    global _codes
    if _codes is None:
        loaded: dict[str, CodeType] = {}
        path = _cache_file()
        if path is not None:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
                header = _header()
                start = len(header) + 4
                if data.startswith(header) and data[len(header):start] == _checksum(data[start:]):
                    table = marshal.loads(data[start:])
                    if isinstance(table, dict):
                        loaded = {text: code for text, code in table.items()
                                  if isinstance(text, str) and isinstance(code, CodeType)}
            except Exception:  # noqa: BLE001 - (marshal may raise SystemError too) the file only saves time
                loaded = {}
        _codes = loaded
    return _codes


def save() -> None:
    """Write the cache with what this process compiled, if anything since it last wrote (at exit, and when a
    long-running process has created its classes: the language server, which an editor may stop without
    exit handlers). Atomically: a reader sees the old file or the new one. When it has grown past
    ``_MAX_KEPT`` texts, only those this process ran are kept."""
    global _written
    path = _cache_file()
    compiled = len(_compiled)
    if path is None or compiled == _written or _codes is None:
        return
    _written = compiled
    keep = _codes if len(_codes) <= _MAX_KEPT else {text: _codes[text] for text in list(_used) if text in _codes}
    try:
        body = marshal.dumps(keep)
    except ValueError:  # (an object marshal cannot write: the cache only saves time)
        return
    user_cache.write(path, _header() + _checksum(body) + body)
