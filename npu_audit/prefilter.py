"""Cheap byte-level tests run on every file before (and instead of) parsing.

:func:`may_configure_npu` decides which files can hold NPU configuration, so that only those are parsed
with libcst; :func:`imported_module_names` lists the modules a file imports (for the import graph)
without parsing it. Both accept any bytes (binary, undecodable, truncated) and never raise.

Speed: a regular-expression alternation of the markers (:data:`MARKER_RE`) runs at only ~100 MB/s in
CPython's ``re`` (any pattern without a literal prefix tops out near 190 MB/s: the engine tries the
pattern at every position), while a substring search (``in``) runs at several GB/s.
:func:`may_configure_npu` therefore looks for a few substrings shared by the markers ("anchors":
``Config``, ``Optimizer``, ``npu_``, and the markers that contain none of them) and tests each
occurrence of an anchor in place (``endswith``/``startswith``). See ``tests/test_prefilter.py`` for the
throughput check.
"""

from __future__ import annotations

import re

__all__ = ["NPU_MARKERS", "imported_module_names", "may_configure_npu"]

NPU_MARKERS: tuple[bytes, ...] = (
    b"parameter_map",
    b"NPURunConfig",
    b"NpuOptimizer",
    b"custom_optimizers",
    b"npu_config_proto",
    b"npu_run_config_init",
    b"set_keras_session_npu_config",
    b"set_iteration_per_loop",
    b"NPUOptimizer",
    b"DumpConfig",
    b"ProfilingConfig",
    b"DynamicInputConfig",
    b"MemoryConfig",
    b"ExperimentalConfig",
    b"NPUEstimator",
    # TensorFlow 2: every write to npu_device.global_options() spells the function's name in its file
    # (a file that only imports npu_device and opens the device has no option to check)
    b"global_options",
)

#: The exact test: any marker, case-sensitive.
MARKER_RE = re.compile(b"|".join(re.escape(m) for m in sorted(NPU_MARKERS, key=len, reverse=True)))

# Substrings shared by several markers ("anchors"); a marker containing none of them is its own anchor.
_ANCHOR_CANDIDATES = (b"Config", b"Optimizer", b"npu_")


def _build_groups(
    markers: tuple[bytes, ...],
) -> tuple[tuple[bytes, bool, tuple[bytes, ...], tuple[tuple[bytes, int], ...]], ...]:
    """For each anchor: (anchor, whether it ends all its markers, its markers, (marker, anchor offset))."""
    groups: dict[bytes, list[bytes]] = {}
    for marker in markers:
        anchor = next((c for c in _ANCHOR_CANDIDATES if c in marker), marker)
        groups.setdefault(anchor, []).append(marker)
    result = []
    for anchor, members in sorted(groups.items(), key=lambda item: len(item[1])):
        suffix = all(m.endswith(anchor) for m in members)
        placed = tuple((m, start) for m in members for start in _occurrences(m, anchor))
        result.append((anchor, suffix, tuple(members), placed))
    return tuple(result)


def _occurrences(data: bytes, part: bytes) -> list[int]:
    found = []
    start = data.find(part)
    while start >= 0:
        found.append(start)
        start = data.find(part, start + 1)
    return found


_GROUPS = _build_groups(NPU_MARKERS)
# Occurrences of one anchor tested in place before its markers are searched for directly.
_HIT_BUDGET = 64


def may_configure_npu(raw: bytes) -> bool:
    """Whether any of :data:`NPU_MARKERS` occurs in ``raw`` (anywhere: code, strings or comments).

    Equivalent to ``MARKER_RE.search(raw) is not None``, only faster: one substring search per anchor
    (8 for the current markers), plus one ``endswith``/``startswith`` test per anchor occurrence (up to
    64 per anchor; beyond that the anchor's markers are searched for directly).
    """
    if not isinstance(raw, (bytes, bytearray)):
        raw = bytes(raw)
    for anchor, suffix, members, placed in _GROUPS:
        if len(members) == 1 and members[0] == anchor:
            if anchor in raw:
                return True
            continue
        at = raw.find(anchor)
        budget = _HIT_BUDGET
        while at >= 0:
            budget -= 1
            if not budget:  # the anchor is everywhere: search its markers over the rest instead
                if any(raw.find(marker, max(0, at - len(marker))) >= 0 for marker in members):
                    return True
                break
            if suffix:
                if raw.endswith(members, 0, at + len(anchor)):
                    return True
            else:
                for marker, offset in placed:
                    if at >= offset and raw.startswith(marker, at - offset):
                        return True
            at = raw.find(anchor, at + 1)
    return False


# --------------------------------------------------------------------------------------------------
# Imports.

_NAME = rb"[A-Za-z_\x80-\xff][\w\x80-\xff]*"
_DOTTED = _NAME + rb"(?:[ \t\f]*\.[ \t\f]*" + _NAME + rb")*"

# The keyword "import" (a literal prefix: the regex engine finds it with a fast substring search).
_IMPORT_WORD_RE = re.compile(rb"import\b")
# What may precede "import" on its line for a "from" statement (after the statement's start).
_FROM_HEAD_RE = re.compile(
    rb"[ \t\f]*from\b[ \t\f]*(?P<dots>\.*)[ \t\f]*(?P<module>" + _DOTTED + rb")?[ \t\f]*"
)
# What follows "import": a parenthesised list, or the rest of the line (with backslash continuations).
_NAMES_RE = re.compile(rb"[ \t\f]*(?:\((?P<paren>[^)]*)\)|(?P<rest>(?:[^\r\n;#\\]|\\\r?\n|\\\r|\\)*))")
_ALIAS_RE = re.compile(rb"^\s*(" + _DOTTED + rb")(?:\s+as\s+" + _NAME + rb")?\s*$")
_CONTINUATION_RE = re.compile(rb"\\\r?\n|\\\r|#[^\r\n]*")
_SPACES_RE = re.compile(rb"\s+")


def _decode_name(name: bytes) -> str | None:
    try:
        text = _SPACES_RE.sub(b"", name).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text and all(part.isidentifier() for part in text.split(".")) else None


def _split_names(chunk: bytes) -> list[bytes]:
    """Imported names (with ``as`` aliases dropped) of ``a.b as c, d`` or ``x, y as z,``."""
    chunk = _CONTINUATION_RE.sub(b" ", chunk)
    names = []
    for part in chunk.split(b","):
        if not part.strip():
            continue
        m = _ALIAS_RE.match(part)
        if m:
            names.append(m.group(1))
    return names


def imported_module_names(raw: bytes, members: bool = False) -> set[str]:
    """Module names imported by ``raw`` (a cheap regular-expression scan, no parsing).

    ``import a.b, c as d`` gives ``a.b`` and ``c``; ``from a.b import c`` gives ``a.b``; relative imports
    keep their leading dots: ``from .m import y`` gives ``.m``, ``from ..pkg.m import y`` gives
    ``..pkg.m`` and ``from . import x, y`` gives ``.x`` and ``.y`` (``x`` and ``y`` are most likely
    modules of the package). A statement is recognised when it starts its line (any indentation) or
    follows a ``;``, and the ``from ... import`` part sits on one line. Text that merely looks like an
    import (inside a multi-line string) is reported too. With ``members``, a from-import names what it
    takes: ``from a.b import c`` gives ``a.b:c``, ``from . import x`` gives ``.:x``, ``from m import *``
    gives ``m:*`` (plain imports are unchanged). Never raises, whatever the bytes.
    """
    found: set[str] = set()
    try:
        data = bytes(raw)
        for m in _IMPORT_WORD_RE.finditer(data):
            _scan_statement(data, m.start(), m.end(), found, members)
    except Exception:  # pragma: no cover - defensive: a heuristic must never stop the run
        pass
    return found


def _scan_statement(data: bytes, start: int, end: int, found: set[str], members: bool = False) -> None:
    line_start = data.rfind(b"\n", 0, start) + 1
    line_start = data.rfind(b"\r", line_start, start) + 1 or line_start
    stmt_start = max(line_start, data.rfind(b";", line_start, start) + 1)
    head = data[stmt_start:start]
    names = _NAMES_RE.match(data, end)
    chunk = b""
    if names is not None:
        chunk = names.group("paren") if names.group("paren") is not None else names.group("rest") or b""
    if not head.strip(b" \t\f"):  # import a.b, c
        if names is None or names.group("paren") is not None:
            return
        for name in _split_names(chunk):
            text = _decode_name(name)
            if text:
                found.add(text)
        return
    m = _FROM_HEAD_RE.fullmatch(head)
    if m is None:
        return
    dots = m.group("dots").decode("ascii")
    module = m.group("module")
    if module is not None:
        if not head.endswith((b" ", b"\t", b"\f")):
            return  # "from aimport x": the name runs into "import"
        text = _decode_name(module)
        if text:
            if members:
                _add_members(found, dots + text, chunk)
            else:
                found.add(dots + text)
    elif dots:
        if members:
            _add_members(found, dots, chunk)
            return
        for name in _split_names(chunk):
            text = _decode_name(name)
            if text and "." not in text:
                found.add(dots + text)


def _add_members(found: set[str], module: str, chunk: bytes) -> None:
    """``from <module> import a, b`` as ``<module>:a`` and ``<module>:b`` (``<module>:*`` for a star)."""
    if chunk.strip(b" \t\f\r\n\\") == b"*":
        found.add(module + ":*")
        return
    for name in _split_names(chunk):
        member = _decode_name(name)
        if member and "." not in member:
            found.add(f"{module}:{member}")
