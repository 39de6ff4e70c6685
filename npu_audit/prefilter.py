"""Cheap byte-level tests run on every file before (and instead of) parsing.

:func:`may_configure_npu` decides which files can hold NPU configuration, so that only those are parsed
with libcst; :func:`imported_module_names` lists the modules a file imports (for the import graph)
without parsing it. Both accept any bytes (binary, undecodable, truncated) and never raise.

Speed: a regular-expression alternation of the markers runs at only ~100 MB/s in CPython's ``re``
(any pattern without a literal prefix tops out near 190 MB/s: the engine tries the pattern at every
position), while ``bytes.find`` runs at several GB/s. :func:`may_configure_npu` therefore looks for a
handful of substrings every marker contains ("anchors": ``Config``, ``npu_``, ``ptimizer`` and the
markers without one of those) with ``bytes.find``, and runs the compiled marker regex only on a small
window around each anchor hit. Files without any anchor, the vast majority, cost a few ``find`` calls.
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
)

#: The exact test: any marker, case-sensitive.
MARKER_RE = re.compile(b"|".join(re.escape(m) for m in sorted(NPU_MARKERS, key=len, reverse=True)))

# Substrings shared by several markers; a marker containing none of them is its own anchor.
_ANCHOR_CANDIDATES = (b"Config", b"npu_", b"ptimizer")


def _build_anchors(markers: tuple[bytes, ...]) -> tuple[tuple[bytes, int, int], ...]:
    """(anchor, bytes to look back, bytes to look forward) covering every marker."""
    windows: dict[bytes, list[int]] = {}
    for marker in markers:
        anchor = next((c for c in _ANCHOR_CANDIDATES if c in marker), marker)
        back, forward = windows.setdefault(anchor, [0, len(anchor)])
        start = marker.find(anchor)
        while start >= 0:  # every occurrence of the anchor inside the marker
            back = max(back, start)
            forward = max(forward, len(marker) - start)
            start = marker.find(anchor, start + 1)
        windows[anchor] = [back, forward]
    return tuple((anchor, back, forward) for anchor, (back, forward) in windows.items())


_ANCHORS = _build_anchors(NPU_MARKERS)


def may_configure_npu(raw: bytes) -> bool:
    """Whether any of :data:`NPU_MARKERS` occurs in ``raw`` (anywhere: code, strings or comments)."""
    search = MARKER_RE.search
    budget = _WINDOW_BUDGET
    for anchor, back, forward in _ANCHORS:
        at = raw.find(anchor)
        while at >= 0:
            if search(raw, max(0, at - back), at + forward):
                return True
            budget -= 1
            if not budget:  # anchors everywhere (TensorFlow code is full of "Config"): test each marker
                return any(marker in raw for marker in NPU_MARKERS)
            at = raw.find(anchor, at + 1)
    return False


# Anchor hits checked one by one before testing each marker over the whole buffer instead.
_WINDOW_BUDGET = 32


# --------------------------------------------------------------------------------------------------
# Imports.

_NAME = rb"[A-Za-z_\x80-\xff][\w\x80-\xff]*"
_DOTTED = _NAME + rb"(?:[ \t]*\.[ \t]*" + _NAME + rb")*"
# Horizontal space, including backslash line continuations.
_SP = rb"(?:[ \t\f]|\\\r?\n|\\\r)"

# A statement start: beginning of a line (after indentation) or after ";".
_IMPORT_RE = re.compile(
    rb"(?:^|;)[ \t\f]*"
    rb"(?:"
    rb"import\b(?P<names>(?:[^\r\n;#\\]|\\\r?\n|\\\r)*)"
    rb"|from\b" + _SP + rb"*(?P<dots>\.*)" + _SP + rb"*(?P<module>" + _DOTTED + rb")?" + _SP + rb"*"
    rb"import\b" + _SP + rb"*(?:\((?P<paren>[^)]*)\)|(?P<rest>(?:[^\r\n;#\\]|\\\r?\n|\\\r)*))"
    rb")",
    re.MULTILINE,
)
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
    """Imported names (with ``as`` aliases dropped) of ``a.b as c, d`` or ``(x, y as z,)``."""
    chunk = _CONTINUATION_RE.sub(b" ", chunk)
    names = []
    for part in chunk.split(b","):
        if not part.strip():
            continue
        m = _ALIAS_RE.match(part)
        if m:
            names.append(m.group(1))
    return names


def imported_module_names(raw: bytes) -> set[str]:
    """Module names imported by ``raw`` (a cheap regular-expression scan, no parsing).

    ``import a.b, c as d`` gives ``a.b`` and ``c``; ``from a.b import c`` gives ``a.b``; relative imports
    keep their leading dots: ``from .m import y`` gives ``.m``, ``from ..pkg.m import y`` gives
    ``..pkg.m`` and ``from . import x, y`` gives ``.x`` and ``.y`` (``x`` and ``y`` are most likely
    modules of the package). Import statements are recognised at the start of a line (any indentation)
    or after ``;``; text that merely looks like an import inside a multi-line string is reported too.
    Never raises, whatever the bytes.
    """
    found: set[str] = set()
    try:
        data = bytes(raw)
    except Exception:
        return found
    for m in _IMPORT_RE.finditer(data):
        names = m.group("names")
        if names is not None:
            for name in _split_names(names):
                text = _decode_name(name)
                if text:
                    found.add(text)
            continue
        dots = (m.group("dots") or b"").decode("ascii")
        module = m.group("module")
        if module is not None:
            text = _decode_name(module)
            if text:
                found.add(dots + text)
        elif dots:
            chunk = m.group("paren") if m.group("paren") is not None else m.group("rest") or b""
            for name in _split_names(chunk):
                text = _decode_name(name)
                if text and "." not in text:
                    found.add(dots + text)
    return found
