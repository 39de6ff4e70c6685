"""Named string grammars that session option values must follow.

Each :class:`Grammar` checks one string and returns :class:`GrammarProblem` objects whose offsets point at
the smallest bad part of the checked string (0-based, ``end`` exclusive). An empty list means the value is
valid. Checks never raise, whatever the input.

Sources: vendor docs ``session-options.en.txt`` (current) and ``session-options.legacy.zh.txt`` (legacy),
and the adapter's own validation (``tf_adapter/util/npu_attrs.cc``: ``checkDumpStep`` @266-295,
``CheckInputShape`` @361, ``CheckDynamicDims`` @377, ``local_device_list`` @2279-2286;
``kernels/geop_npu.cc:681-830`` for experimental_accelerate_train_mode).

Besides the checks, a few structured parsers are exported for cross-option rules
(:func:`parse_input_shape`, :func:`parse_dynamic_dims`, :func:`parse_profiling_options`,
:func:`parse_accelerate_train_mode`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

from npu_audit.knowledge.vocabulary import ENGINES, LEGACY_ENGINES, PRODUCT_SHORT_NAMES
from npu_audit.text import did_you_mean, split_lines_keepends

__all__ = [
    "GRAMMARS",
    "LEGACY_ENGINES",
    "PROFILING_DEPRECATED_FIELDS",
    "PROFILING_FIELDS",
    "Grammar",
    "GrammarProblem",
    "check",
    "parse_accelerate_train_mode",
    "parse_dynamic_dims",
    "parse_input_shape",
    "parse_profiling_options",
]


@dataclass(frozen=True)
class GrammarProblem:
    """One bad part of a string a grammar checked."""

    start: int  # 0-based offset into the checked string where the bad part starts
    end: int  # end offset (exclusive); start == end for "missing X" at a position
    message: str  # what is wrong, in plain words, no trailing period


@dataclass(frozen=True)
class Grammar:
    """A named format the string values of an option must follow (``Domain.grammar``), with examples the tests run."""

    name: str
    summary: str  # one-line format description for docs and hover
    check: Callable[[str, Optional[str]], list]  # (text, product or None) -> list[GrammarProblem]
    examples_valid: tuple[str, ...]
    examples_invalid: tuple[str, ...]


P = GrammarProblem

# ---------------------------------------------------------------------------------------------------------
# small helpers

_UINT = re.compile(r"[0-9]+")
_INT = re.compile(r"-?[0-9]+")
_WS = " \t\n\r\f\v"


def _q(s: str, limit: int = 40) -> str:
    """Quote a piece of the input for a message (shortened when long)."""
    if len(s) > limit:
        s = s[: limit - 3] + "..."
    return "'" + "".join(c if c.isprintable() else repr(c)[1:-1] for c in s) + "'"


def _suggest(word: str, choices) -> str:
    """' (did you mean 'x'?)' when a choice is close to word, else ''."""
    if len(word) > 200:  # the similarity measure is quadratic
        return ""
    close = did_you_mean(word, choices)
    return f" (did you mean '{close}'?)" if close else ""


def _pieces(text: str, sep: str, base: int = 0) -> list:
    """Split text on sep, keeping the absolute offset of each piece: [(start, piece), ...]."""
    out = []
    start = 0
    while True:
        j = text.find(sep, start)
        if j < 0:
            out.append((base + start, text[start:]))
            return out
        out.append((base + start, text[start:j]))
        start = j + len(sep)


def _empty_piece(what: str, sep: str, pos: int, seg_start: int, seg_end: int) -> GrammarProblem:
    """Problem for an empty piece at pos inside the segment [seg_start, seg_end) split on sep."""
    n = len(sep)
    if pos == seg_start:
        return P(pos, pos + n, f"'{sep}' with no {what} before it")
    if pos == seg_end:
        return P(pos - n, pos, f"trailing '{sep}' with no {what} after it")
    return P(pos - n, pos + n, f"empty {what} between two '{sep}'")


def _empty_value(text: str, expected: str) -> list:
    return [P(0, len(text), f"empty value; expected {expected}")]


def _space_problem(piece: str, start: int, what: str) -> Optional[GrammarProblem]:
    """Problem for whitespace around a piece (pointing at the whitespace), else None."""
    stripped_left = piece.lstrip(_WS)
    if len(stripped_left) != len(piece):
        return P(
            start, start + len(piece) - len(stripped_left), f"space before {what} {_q(piece.strip(_WS))}"
        )
    stripped = piece.rstrip(_WS)
    if len(stripped) != len(piece):
        return P(start + len(stripped), start + len(piece), f"space after {what} {_q(stripped)}")
    return None


def _bad_number(piece: str, start: int, what: str, allow_negative: bool = False) -> Optional[GrammarProblem]:
    """Problem when piece is not a plain integer (non-negative unless allow_negative), else None."""
    if piece == "":
        return P(start, start, f"missing {what}")
    sp = _space_problem(piece, start, what)
    if sp is not None:
        return sp
    if (_INT if allow_negative else _UINT).fullmatch(piece):
        return None
    if not allow_negative and _INT.fullmatch(piece):
        return P(start, start + len(piece), f"{what} {piece} is negative; expected a non-negative integer")
    return P(start, start + len(piece), f"{what} {_q(piece)} is not an integer")


# ---------------------------------------------------------------------------------------------------------
# dump_step

_DUMP_RANGE = re.compile(r"([0-9]+)-([0-9]+)")


def _check_dump_step(text: str, product: Optional[str] = None) -> list:
    if text == "":
        return _empty_value(text, "iterations such as '0|5|10'")
    problems = []
    pieces = _pieces(text, "|")
    for start, item in pieces:
        end = start + len(item)
        if item == "":
            problems.append(_empty_piece("iteration", "|", start, 0, len(text)))
            continue
        if _UINT.fullmatch(item):
            continue
        m = _DUMP_RANGE.fullmatch(item)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if lo >= hi:
                problems.append(P(start, end, f"range {item} must go upwards (N < M)"))
            continue
        sp = _space_problem(item, start, "iteration")
        if sp is not None:
            problems.append(sp)
        elif "," in item or ";" in item:
            sep = "," if "," in item else ";"
            problems.append(P(start, end, f"{_q(item)} uses '{sep}'; separate iterations with '|'"))
        elif item.startswith("-"):
            problems.append(
                P(start, end, f"{_q(item)} is not an iteration: negative numbers are not allowed")
            )
        else:
            problems.append(P(start, end, f"{_q(item)} is not an iteration N or a range N-M of digits"))
    if len(pieces) > 100:
        first_extra = pieces[100][0]
        problems.append(
            P(first_extra, len(text), f"too many items: {len(pieces)} given, at most 100 are allowed")
        )
    return problems


# ---------------------------------------------------------------------------------------------------------
# input_shape


def _check_input_shape(text: str, product: Optional[str] = None) -> list:
    return _input_shape(text)[0]


def _input_shape(text: str):
    if text == "":
        return _empty_value(text, "inputs such as 'data:1,1,40,-1;label:1,-1'"), []
    problems = []
    parsed = []
    seen = {}
    for start, item in _pieces(text, ";"):
        end = start + len(item)
        if item == "":
            problems.append(_empty_piece("input", ";", start, 0, len(text)))
            continue
        colon = item.rfind(":")
        if colon < 0:
            problems.append(
                P(start, end, f"input {_q(item)} has no ':' between the input name and its shape")
            )
            continue
        name, dims_text = item[:colon], item[colon + 1 :]
        dims_start = start + colon + 1
        if name == "":
            problems.append(P(start, start, "missing input name before ':'"))
        else:
            sp = _space_problem(name, start, "input name")
            if sp is not None:
                problems.append(sp)
            elif name in seen:
                problems.append(P(start, start + len(name), f"input {_q(name)} is given twice"))
            seen[name] = True
        if dims_text == "":
            problems.append(P(dims_start, dims_start, f"missing shape after {_q(name + ':')}"))
            continue
        dims = []
        ok = True
        for dstart, dim in _pieces(dims_text, ",", dims_start):
            if dim == "":
                problems.append(_empty_piece("dimension", ",", dstart, dims_start, end))
                ok = False
                continue
            bad = _bad_number(dim, dstart, "dimension", allow_negative=True)
            if bad is not None:
                problems.append(bad)
                ok = False
                continue
            value = int(dim)
            if value < -1:
                problems.append(
                    P(
                        dstart,
                        dstart + len(dim),
                        f"dimension {dim} is invalid; use -1 for a dynamic dimension",
                    )
                )
                ok = False
                continue
            dims.append(value)
        if ok and name:
            parsed.append((name, dims))
    return problems, parsed


def parse_input_shape(text: str) -> Optional[list]:
    """'data:1,1,40,-1;label:1,-1' -> [('data', [1, 1, 40, -1]), ('label', [1, -1])]; None when invalid."""
    try:
        problems, parsed = _input_shape(_as_str(text))
    except Exception:
        return None
    return None if problems else parsed


# ---------------------------------------------------------------------------------------------------------
# dynamic_dims


def _dynamic_dims(text: str):
    if text == "":
        return _empty_value(text, "profiles such as '20,20,1,1;40,40,2,2'"), []
    problems = []
    profiles = []
    for start, prof in _pieces(text, ";"):
        end = start + len(prof)
        if prof == "":
            problems.append(_empty_piece("profile", ";", start, 0, len(text)))
            continue
        sizes = []
        ok = True
        for dstart, dim in _pieces(prof, ",", start):
            if dim == "":
                problems.append(_empty_piece("size", ",", dstart, start, end))
                ok = False
                continue
            bad = _bad_number(dim, dstart, "size")
            if bad is not None:
                problems.append(bad)
                ok = False
                continue
            sizes.append(int(dim))
        if ok:
            profiles.append(sizes)
    return problems, profiles


def _check_dynamic_dims(text: str, product: Optional[str] = None) -> list:
    return _dynamic_dims(text)[0]


def parse_dynamic_dims(text: str) -> Optional[list]:
    """'20,20,1,1;40,40,2,2' -> [[20, 20, 1, 1], [40, 40, 2, 2]]; None when invalid."""
    try:
        problems, profiles = _dynamic_dims(_as_str(text))
    except Exception:
        return None
    return None if problems else profiles


# ---------------------------------------------------------------------------------------------------------
# dynamic_inputs_shape_range

_RANGE_SECTIONS = ("getnext", "data")
_RANGE_DIM = re.compile(r"(-?[0-9]+)|([0-9]+)[ \t]*~[ \t]*([0-9]+)")


def _check_shape_range(text: str, product: Optional[str] = None) -> list:
    if text == "":
        return _empty_value(text, "shape ranges such as 'getnext:[3~5],[3~6];data:[-1,3]'")
    problems = []
    seen = {}
    for start, sec in _pieces(text, ";"):
        end = start + len(sec)
        if sec == "":
            problems.append(_empty_piece("section", ";", start, 0, len(text)))
            continue
        colon = sec.find(":")
        if colon < 0:
            problems.append(
                P(start, end, f"section {_q(sec)} has no ':'; expected 'getnext:[...]' or 'data:[...]'")
            )
            continue
        ident = sec[:colon]
        if ident == "":
            problems.append(P(start, start, "missing input kind before ':'; expected 'getnext' or 'data'"))
        elif ident not in _RANGE_SECTIONS:
            sp = _space_problem(ident, start, "input kind")
            if sp is not None and ident.strip(_WS) in _RANGE_SECTIONS:
                problems.append(sp)
            else:
                problems.append(
                    P(
                        start,
                        start + colon,
                        f"unknown input kind {_q(ident)}; only 'getnext' (dataset inputs) and 'data' "
                        f"(placeholders) are allowed{_suggest(ident.strip(_WS), _RANGE_SECTIONS)}",
                    )
                )
        elif ident in seen:
            problems.append(P(start, start + colon, f"section '{ident}' is given twice"))
        else:
            seen[ident] = True
        problems.extend(_shape_list(sec[colon + 1 :], start + colon + 1))
    return problems


def _shape_list(body: str, base: int) -> list:
    """Check '[..],[..]' (body of one section) starting at absolute offset base."""
    problems = []
    n = len(body)
    if n == 0:
        return [P(base, base, "missing shape ranges after ':'; expected e.g. '[3~5]'")]
    i = 0
    while True:
        # expect '['
        if i >= n:
            problems.append(P(base + i, base + i, "missing shape range after ','"))
            return problems
        if body[i] in _WS:
            j = i
            while j < n and body[j] in _WS:
                j += 1
            if j < n and body[j] == "[":
                problems.append(P(base + i, base + j, "no space is allowed before '['"))
                i = j
            else:
                problems.append(P(base + i, base + j, "expected '[' to start a shape range"))
                return problems
        if body[i] != "[":
            k = body.find("[", i)
            stop = k if k >= 0 else n
            problems.append(
                P(base + i, base + stop, f"expected '[' to start a shape range, found {_q(body[i:stop])}")
            )
            if k < 0:
                return problems
            i = k
        close = body.find("]", i + 1)
        nxt_open = body.find("[", i + 1)
        if close < 0 or (0 <= nxt_open < close):
            stop = nxt_open if 0 <= nxt_open < (close if close >= 0 else n) else n
            # point at the end of the unclosed range
            problems.append(P(base + stop, base + stop, "missing ']' to close the shape range"))
            if close < 0:
                return problems
            i = nxt_open
            continue
        problems.extend(_range_dims(body[i + 1 : close], base + i + 1))
        i = close + 1
        if i >= n:
            return problems
        if body[i] == ",":
            i += 1
            continue
        k = body.find(",", i)
        stop = k if k >= 0 else n
        problems.append(
            P(
                base + i,
                base + stop,
                f"unexpected {_q(body[i:stop])} after ']'; separate shape ranges with ','",
            )
        )
        if k < 0:
            return problems
        i = k + 1


def _range_dims(inner: str, base: int) -> list:
    if inner.strip(_WS) == "":
        return []  # '[]': scalar (spaces tolerated)
    problems = []
    end = base + len(inner)
    for dstart, raw in _pieces(inner, ",", base):
        dim = raw.strip(_WS)
        s = dstart + (len(raw) - len(raw.lstrip(_WS)))
        e = s + len(dim)
        if dim == "":
            if raw == "":
                problems.append(_empty_piece("dimension", ",", dstart, base, end))
            else:
                problems.append(P(dstart, dstart + len(raw), "empty dimension"))
            continue
        m = _RANGE_DIM.fullmatch(dim)
        if not m:
            if "-" in dim and "~" in dim:
                msg = f"range {_q(dim)} must use non-negative bounds a~b; use -1 alone for an unbounded dimension"
            else:
                msg = f"dimension {_q(dim)} is not an integer, -1 or a range a~b"
            problems.append(P(s, e, msg))
            continue
        if m.group(1) is not None:
            if int(m.group(1)) < -1:
                problems.append(P(s, e, f"dimension {dim} is invalid; use -1 for an unbounded dimension"))
        else:
            lo, hi = int(m.group(2)), int(m.group(3))
            if lo > hi:
                problems.append(
                    P(s, e, f"range {dim} goes downwards; the lower bound must not exceed the upper (a <= b)")
                )
    return problems


# ---------------------------------------------------------------------------------------------------------
# profiling_options

_ONOFF = ("on", "off")
_TASK = ("on", "off", "l0", "l1")
_AIC_METRICS = (
    "ArithmeticUtilization",
    "PipeUtilization",
    "Memory",
    "MemoryL0",
    "MemoryUB",
    "ResourceConflictRatio",
    "L2Cache",
    "MemoryAccess",
)
_AIC_NOT_ON = {
    "L2Cache": ("atlas-training", "atlas-inference"),
    "MemoryAccess": ("atlas-training", "atlas-inference"),
}

# field -> (kind, details)
PROFILING_FIELDS: dict = {
    "output": ("path", None),
    "storage_limit": ("storage", None),
    "training_trace": ("enum", _ONOFF),
    "task_trace": ("enum", _TASK),
    "task_time": ("enum", _TASK),
    "ge_api": ("enum", ("off", "l0", "l1")),
    "hccl": ("enum", _ONOFF),
    "aicpu": ("enum", _ONOFF),
    "fp_point": ("string", None),
    "bp_point": ("string", None),
    "aic_metrics": ("aic", None),
    "l2": ("enum", _ONOFF),
    "msproftx": ("enum", _ONOFF),
    "runtime_api": ("enum", _ONOFF),
    "sys_hardware_mem_freq": ("freq", (1, 100)),
    "llc_profiling": ("enum", ("read", "write")),
    "sys_io_sampling_freq": ("freq", (1, 100)),
    "sys_interconnection_freq": ("freq", (1, 50)),
    "dvpp_freq": ("freq", (1, 100)),
    "instr_profiling": ("enum", _ONOFF),
    "instr_profiling_freq": ("freq", (300, 30000)),
    "host_sys": ("cpumem", None),
    "host_sys_usage": ("cpumem", None),
    "host_sys_usage_freq": ("freq", (1, 50)),
}
# Fields the docs say will be deprecated, with the replacement (reported by a separate rule).
PROFILING_DEPRECATED_FIELDS = {"hccl": "task_time"}
# field -> products that do not support it (current docs)
_USE_FREQ = "; this function is controlled through instr_profiling_freq there"
_FIELD_NOT_ON = {
    "sys_io_sampling_freq": {"atlas-inference": ""},
    "instr_profiling": {"atlas-training": "", "atlas-a2": _USE_FREQ, "atlas-a3": _USE_FREQ},
    "instr_profiling_freq": {"atlas-training": ""},
}
_INSTR_EXCLUSIVE = (
    "training_trace",
    "task_trace",
    "hccl",
    "aicpu",
    "fp_point",
    "bp_point",
    "aic_metrics",
    "l2",
    "task_time",
    "runtime_api",
)
_OUTPUT_FORBIDDEN = {
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
    "\b": "\\b",
    "\t": "\\t",
    "\v": "\\v",
    "\x7f": "\\u007F",
}
_JSON_WS = " \t\n\r"
_STORAGE = re.compile(r"([0-9]+)MB")
_REGISTER = re.compile(r"0[xX]([0-9a-fA-F]+)|([0-9]+)")


@dataclass
class _Member:
    """One member of a JSON object read by :func:`_scan_object`, with the offsets of its key and value in the text."""

    key: str
    kstart: int  # offset of the opening quote of the key
    kend: int  # offset after the closing quote
    value: Any
    vstart: int
    vend: int


class _JsonError(Exception):
    def __init__(self, pos: int, msg: str, end: Optional[int] = None):
        super().__init__(msg)
        self.pos = pos
        self.end = pos if end is None else end
        self.msg = msg


def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _JSON_WS:
        i += 1
    return i


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _scan_object(text: str) -> list:
    """Scan a top-level JSON object, returning its members with offsets; raises _JsonError."""
    import json
    from json.decoder import scanstring  # type: ignore[attr-defined]  # (public, not in typeshed)

    decoder = json.JSONDecoder()
    n = len(text)

    def decode_at(i: int):
        try:
            return decoder.raw_decode(text, i)
        except json.JSONDecodeError as e:
            raise _JsonError(e.pos, f"invalid JSON: {e.msg}") from None
        except RecursionError:
            raise _JsonError(i, "invalid JSON: value nested too deeply") from None

    def string_at(i: int):
        try:
            return scanstring(text, i + 1, True)
        except json.JSONDecodeError as e:
            raise _JsonError(e.pos, f"invalid JSON: {e.msg}") from None

    i = _skip_ws(text, 0)
    if i >= n:
        raise _JsonError(i, "invalid JSON: expected '{' to start the options object")
    if text[i] != "{":
        try:
            value, end = decoder.raw_decode(text, i)
        except Exception:
            raise _JsonError(i, "invalid JSON: expected '{' to start the options object", i + 1) from None
        raise _JsonError(i, f"profiling options must be a JSON object, not {_json_kind(value)}", end)
    i = _skip_ws(text, i + 1)
    members: list = []
    if i < n and text[i] == "}":
        i += 1
    else:
        while True:
            if i >= n:
                raise _JsonError(i, "invalid JSON: missing '}' at the end of the object")
            if text[i] != '"':
                if text[i] == "}" and members:
                    raise _JsonError(i - 1, "invalid JSON: trailing ',' before '}'", i)
                raise _JsonError(i, "invalid JSON: expected a field name in double quotes", i + 1)
            key, kend = string_at(i)
            kstart = i
            i = _skip_ws(text, kend)
            if i >= n or text[i] != ":":
                raise _JsonError(i, "invalid JSON: expected ':' after the field name", min(i + 1, n))
            i = _skip_ws(text, i + 1)
            if i >= n:
                raise _JsonError(i, "invalid JSON: missing value after ':'")
            value, vend = decode_at(i)
            members.append(_Member(key, kstart, kend, value, i, vend))
            i = _skip_ws(text, vend)
            if i >= n:
                raise _JsonError(i, "invalid JSON: missing '}' at the end of the object")
            if text[i] == ",":
                i = _skip_ws(text, i + 1)
                continue
            if text[i] == "}":
                i += 1
                break
            raise _JsonError(i, "invalid JSON: expected ',' or '}' after the value", i + 1)
    j = _skip_ws(text, i)
    if j < n:
        raise _JsonError(j, "invalid JSON: extra text after the closing '}'", n)
    return members


def _string_map(text: str, qstart: int, qend: int, decoded: str) -> Optional[list]:
    """Offsets in text of each decoded char of the JSON string literal text[qstart:qend] (plus the end)."""
    out = []
    j = qstart + 1
    stop = qend - 1
    while j < stop:
        out.append(j)
        if text[j] != "\\":
            j += 1
            continue
        if text[j + 1 : j + 2] != "u":
            j += 2
            continue
        try:
            code = int(text[j + 2 : j + 6], 16)
            if (
                0xD800 <= code <= 0xDBFF
                and text[j + 6 : j + 8] == "\\u"
                and 0xDC00 <= int(text[j + 8 : j + 12], 16) <= 0xDFFF
            ):
                j += 12
                continue
        except ValueError:
            return None
        j += 6
    out.append(stop)
    return out if len(out) == len(decoded) + 1 else None


class _Val:
    """A member value with helpers to point inside it."""

    def __init__(self, text: str, m: _Member):
        self.m = m
        self.map = None
        if isinstance(m.value, str):
            self.map = _string_map(text, m.vstart, m.vend, m.value)

    def span(self, i: Optional[int] = None, j: Optional[int] = None) -> tuple:
        if i is None or j is None or self.map is None or self.m.value == "":
            return self.m.vstart, self.m.vend
        return self.map[i], self.map[j]

    def problem(self, msg: str, i: Optional[int] = None, j: Optional[int] = None) -> GrammarProblem:
        s, e = self.span(i, j)
        return P(s, e, msg)


def _check_profiling(text: str, product: Optional[str] = None) -> list:
    if text == "":
        return []  # the adapter substitutes its default options
    try:
        members = _scan_object(text)
    except _JsonError as e:
        pos = max(0, min(e.pos, len(text)))
        return [P(pos, max(pos, min(e.end, len(text))), e.msg)]
    problems = []
    seen = {}
    for m in members:
        if m.key in seen:
            problems.append(P(m.kstart, m.kend, f"field '{m.key}' is given twice; only the last one counts"))
        seen[m.key] = m
        spec = PROFILING_FIELDS.get(m.key)
        if spec is None:
            problems.append(
                P(m.kstart, m.kend, f"unknown profiling field {_q(m.key)}{_suggest(m.key, PROFILING_FIELDS)}")
            )
            continue
        v = _Val(text, m)
        problems.extend(_check_field(m.key, spec, v, product))
        not_on = _FIELD_NOT_ON.get(m.key)
        if product and not_on and product in not_on:
            problems.append(
                P(
                    m.kstart,
                    m.kend,
                    f"{m.key} is not supported on {PRODUCT_SHORT_NAMES.get(product, product)}{not_on[product]}",
                )
            )
    freq = seen.get("instr_profiling_freq")
    if freq is not None and product in ("atlas-a2", "atlas-a3"):
        for name in _INSTR_EXCLUSIVE:
            other = seen.get(name)
            if other is None or other.value in ("off", ""):
                continue
            problems.append(
                P(
                    other.kstart,
                    other.kend,
                    f"{name} cannot be combined with instr_profiling_freq on "
                    f"{PRODUCT_SHORT_NAMES[product]} (they are mutually exclusive)",
                )
            )
    problems.sort(key=lambda p: (p.start, p.end))
    return problems


def _check_field(key: str, spec: tuple, v: _Val, product: Optional[str]) -> list:
    kind, detail = spec
    value = v.m.value
    if kind == "freq":
        return _check_freq(key, detail, v)
    if not isinstance(value, str):
        if kind == "enum":
            allowed = " or ".join(f"'{a}'" for a in detail)
            return [v.problem(f"{key} must be the string {allowed}, not {_json_kind(value)}")]
        return [v.problem(f"{key} must be a string, not {_json_kind(value)}")]
    if kind == "enum":
        if value in detail:
            return []
        allowed = ", ".join(f"'{a}'" for a in detail)
        return [
            v.problem(
                f"{key} value {_q(value)} is not one of {allowed}{_suggest(value, detail)}", 0, len(value)
            )
        ]
    if kind == "string":
        return []
    if kind == "path":
        out = []
        for i, ch in enumerate(value):
            if ch in _OUTPUT_FORBIDDEN:
                out.append(
                    v.problem(
                        f"output path must not contain the control character {_OUTPUT_FORBIDDEN[ch]}",
                        i,
                        i + 1,
                    )
                )
        return out
    if kind == "storage":
        m = _STORAGE.fullmatch(value)
        if not m:
            if _UINT.fullmatch(value):
                return [
                    v.problem(
                        f"storage_limit {_q(value)} lacks the unit; write it as '{value}MB'", 0, len(value)
                    )
                ]
            mm = re.fullmatch(r"([0-9]+)([ \t]*)([A-Za-z]*)", value)
            if mm and mm.group(2) and mm.group(3).upper() == "MB":
                a, b = mm.span(2)
                return [v.problem("storage_limit must not have a space before 'MB'", a, b)]
            if mm and mm.group(3):
                a, b = mm.span(3)
                return [v.problem(f"storage_limit unit {_q(mm.group(3))} is not 'MB'", a, b)]
            return [v.problem(f"storage_limit {_q(value)} is not a size like '200MB'", 0, len(value))]
        n = int(m.group(1))
        if not 200 <= n <= 4294967295:
            return [v.problem(f"storage_limit {n}MB is outside [200, 4294967295] MB", 0, len(m.group(1)))]
        return []
    if kind == "aic":
        return _check_aic(value, v, product)
    if kind == "cpumem":
        if value == "":
            return [v.problem(f"{key} is empty; expected 'cpu', 'mem' or 'cpu,mem'")]
        out = []
        seen = set()
        for s, item in _pieces(value, ","):
            if item == "":
                p = _empty_piece("item", ",", s, 0, len(value))
                out.append(v.problem(f"{key}: {p.message}", p.start, p.end))
            elif item not in ("cpu", "mem"):
                out.append(
                    v.problem(
                        f"{key} item {_q(item)} is not 'cpu' or 'mem'{_suggest(item.strip(), ('cpu', 'mem'))}",
                        s,
                        s + len(item),
                    )
                )
            elif item in seen:
                out.append(v.problem(f"{key} item '{item}' is given twice", s, s + len(item)))
            seen.add(item)
        return out
    return []


def _check_freq(key: str, bounds: tuple, v: _Val) -> list:
    lo, hi = bounds
    value = v.m.value
    i: Optional[int]
    j: Optional[int]
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return [v.problem(f"{key} must be a number in [{lo}, {hi}], not {_json_kind(value)}")]
    if isinstance(value, str):
        if not _UINT.fullmatch(value):
            return [v.problem(f"{key} {_q(value)} is not a whole number in [{lo}, {hi}]", 0, len(value))]
        n = int(value)
        i, j = 0, len(value)
    elif isinstance(value, float):
        if not (value == value and abs(value) != float("inf")) or not value.is_integer():
            return [v.problem(f"{key} {value} is not a whole number in [{lo}, {hi}]")]
        n = int(value)
        i = j = None
    else:
        n = value
        i = j = None
    if not lo <= n <= hi:
        return [v.problem(f"{key} {n} is outside [{lo}, {hi}] Hz", i, j)]
    return []


def _check_aic(value: str, v: _Val, product: Optional[str]) -> list:
    if value.startswith("Custom:"):
        body = value[len("Custom:") :]
        base = len("Custom:")
        if body == "":
            return [
                v.problem(
                    "aic_metrics 'Custom:' needs at least one register, e.g. 'Custom:0x49,0x8'", base, base
                )
            ]
        out = []
        pieces = _pieces(body, ",", base)
        for s, reg in pieces:
            if reg == "":
                p = _empty_piece("register", ",", s, base, len(value))
                out.append(v.problem(f"aic_metrics: {p.message}", p.start, p.end))
                continue
            m = _REGISTER.fullmatch(reg)
            if not m:
                out.append(
                    v.problem(
                        f"register {_q(reg)} is not a hexadecimal (0x..) or decimal number", s, s + len(reg)
                    )
                )
                continue
            n = int(m.group(1), 16) if m.group(1) is not None else int(m.group(2))
            if not 0x1 <= n <= 0x6E:
                out.append(v.problem(f"register {reg} is outside [0x1, 0x6E]", s, s + len(reg)))
        if len(pieces) > 8:
            s = pieces[8][0]
            out.append(
                v.problem(f"at most 8 custom registers are allowed, {len(pieces)} given", s, len(value))
            )
        return out
    if value in _AIC_METRICS:
        bad = _AIC_NOT_ON.get(value, ())
        if product and product in bad:
            return [
                v.problem(
                    f"aic_metrics {value} is not supported on {PRODUCT_SHORT_NAMES.get(product, product)}",
                    0,
                    len(value),
                )
            ]
        return []
    hint = _suggest(value, _AIC_METRICS + ("Custom:",))
    if not hint and value.lower().startswith("custom"):
        hint = " (custom registers are written 'Custom:0x49,0x8')"
    return [v.problem(f"aic_metrics value {_q(value)} is not a known metric{hint}", 0, len(value))]


def parse_profiling_options(text: str) -> Optional[dict]:
    """The options as a dict when text is a JSON object ('' -> {}); None when it is not.

    Field values are not validated here (check() reports them), so cross-field rules still get the dict.
    """
    try:
        text = _as_str(text)
        if text == "":
            return {}
        members = _scan_object(text)
    except Exception:
        return None
    return {m.key: m.value for m in members}


# ---------------------------------------------------------------------------------------------------------
# stream_max_parallel_num

# the engine names accepted (renamed-value reports the legacy ones)
_ALL_ENGINES = ENGINES + tuple(LEGACY_ENGINES)


def _check_stream_parallel(text: str, product: Optional[str] = None) -> list:
    if text == "":
        return _empty_value(text, "engines such as 'DNN_VM_AICPU:10,AIcoreEngine:1'")
    problems = []
    seen = {}
    for start, item in _pieces(text, ","):
        end = start + len(item)
        if item == "":
            problems.append(_empty_piece("engine", ",", start, 0, len(text)))
            continue
        colon = item.find(":")
        if colon < 0:
            hint = "; expected ENGINE:N such as 'AIcoreEngine:1'"
            problems.append(P(start, end, f"{_q(item)} has no ':' between engine name and parallelism{hint}"))
            continue
        engine, num = item[:colon], item[colon + 1 :]
        semi = item.find(";")
        if semi >= 0:
            problems.append(P(start + semi, start + semi + 1, "';' found; separate engines with ','"))
            continue
        if engine == "":
            problems.append(P(start, start, "missing engine name before ':'"))
        elif engine not in _ALL_ENGINES:
            sp = _space_problem(engine, start, "engine name")
            if sp is not None and engine.strip(_WS) in _ALL_ENGINES:
                problems.append(sp)
            else:
                problems.append(
                    P(
                        start,
                        start + colon,
                        f"unknown engine {_q(engine)}; expected DNN_VM_AICPU or AIcoreEngine"
                        f"{_suggest(engine.strip(_WS), _ALL_ENGINES)}",
                    )
                )
        else:
            canon = LEGACY_ENGINES.get(engine, engine)
            if canon in seen:
                problems.append(P(start, start + colon, f"engine {engine} is given twice"))
            seen[canon] = True
        nstart = start + colon + 1
        if num == "":
            problems.append(P(nstart, nstart, f"missing parallelism after {_q(engine + ':')}"))
            continue
        bad = _bad_number(num, nstart, "parallelism")
        if bad is not None:
            problems.append(bad)
        elif int(num) < 1:
            problems.append(P(nstart, end, "parallelism must be at least 1"))
    return problems


# ---------------------------------------------------------------------------------------------------------
# aicore_num


def _check_aicore_num(text: str, product: Optional[str] = None) -> list:
    if text == "":
        return _empty_value(text, "'cube|vector' core counts such as '2|4'")
    pieces = _pieces(text, "|")
    problems = []
    if len(pieces) == 1:
        if "," in text or ":" in text:
            sep = "," if "," in text else ":"
            k = text.find(sep)
            return [P(k, k + 1, f"'{sep}' found; cube and vector core counts are joined by '|', e.g. '2|4'")]
        return [
            P(
                len(text),
                len(text),
                "missing '|vector' part; expected two core counts 'cube|vector' such as '2|4'",
            )
        ]
    names = ("cube core count", "vector core count")
    for idx, (start, num) in enumerate(pieces[:2]):
        what = names[idx]
        if num == "":
            problems.append(P(start, start, f"missing {what}"))
            continue
        bad = _bad_number(num, start, what)
        if bad is not None:
            problems.append(bad)
        elif int(num) < 1:
            problems.append(P(start, start + len(num), f"{what} must be greater than 0"))
    if len(pieces) > 2:
        s = pieces[2][0] - 1
        problems.append(P(s, len(text), "only two core counts are allowed ('cube|vector')"))
    return problems


# ---------------------------------------------------------------------------------------------------------
# experimental_accelerate_train_mode

_ACC_KINDS = ("fast", "fast1")
_ACC_TRIGGERS = ("step", "loss")
_ACC_RATIO = {"step": (0.2, 0.9), "loss": (1.01, 1.5)}
_DECIMAL = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")


def _accelerate(text: str):
    if text == "":
        return _empty_value(text, "'type|trigger|ratio' such as 'fast|step|0.9'"), None
    pieces = _pieces(text, "|")
    problems = []
    kind = pieces[0][1]
    if len(pieces) == 1:
        for sep in (",", ";", ":", " "):
            k = text.find(sep)
            if k >= 0 and text[:k] in _ACC_KINDS:
                return [
                    P(k, k + 1, f"'{sep}' found; the fields are joined by '|', e.g. 'fast|step|0.9'")
                ], None
    if kind == "":
        problems.append(P(0, 0, "missing acceleration type (fast or fast1) before '|'"))
    elif kind not in _ACC_KINDS:
        problems.append(
            P(
                0,
                len(kind),
                f"acceleration type {_q(kind)} is not 'fast' or 'fast1'{_suggest(kind, _ACC_KINDS)}",
            )
        )
    if len(pieces) < 2:
        problems.append(
            P(len(text), len(text), "missing '|step' or '|loss' trigger after the acceleration type")
        )
        return problems, None
    tstart, trigger = pieces[1]
    if trigger == "":
        problems.append(P(tstart, tstart, "missing trigger (step or loss)"))
    elif trigger not in _ACC_TRIGGERS:
        problems.append(
            P(
                tstart,
                tstart + len(trigger),
                f"trigger {_q(trigger)} is not 'step' or 'loss'{_suggest(trigger, _ACC_TRIGGERS)}",
            )
        )
    ratio = None
    if len(pieces) >= 3:
        rstart, rtext = pieces[2]
        rend = rstart + len(rtext)
        if rtext == "":
            problems.append(P(rstart - 1, rstart, "trailing '|' with no ratio after it"))
        elif not _DECIMAL.fullmatch(rtext):
            problems.append(P(rstart, rend, f"ratio {_q(rtext)} is not a decimal number"))
        else:
            ratio = float(rtext)
            bounds = _ACC_RATIO.get(trigger)
            if bounds and not bounds[0] <= ratio <= bounds[1]:
                problems.append(
                    P(rstart, rend, f"{trigger} ratio {rtext} is outside [{bounds[0]}, {bounds[1]}]")
                )
    if len(pieces) > 3:
        s = pieces[3][0] - 1
        problems.append(P(s, len(text), "too many fields; expected at most 'type|trigger|ratio'"))
    if problems:
        return problems, None
    return [], (kind, trigger, ratio)


def _check_accelerate(text: str, product: Optional[str] = None) -> list:
    return _accelerate(text)[0]


def parse_accelerate_train_mode(text: str) -> Optional[tuple]:
    """'fast|step|0.9' -> ('fast', 'step', 0.9); 'fast|loss' -> ('fast', 'loss', None); None when invalid."""
    try:
        return _accelerate(_as_str(text))[1]
    except Exception:
        return None


# ---------------------------------------------------------------------------------------------------------
# local_device_list


def _check_local_device_list(text: str, product: Optional[str] = None) -> list:
    if text == "":
        return _empty_value(text, "device ids such as '0,1'")
    problems = []
    for start, item in _pieces(text, ","):
        if item == "":
            problems.append(_empty_piece("device id", ",", start, 0, len(text)))
            continue
        bad = _bad_number(item, start, "device id")
        if bad is not None:
            problems.append(bad)
    return problems


# ---------------------------------------------------------------------------------------------------------
# auto_multistream_parallel_mode

_MULTISTREAM_MODES = ("cv", "LoadBalance", "MainStream")


def _check_multistream(text: str, product: Optional[str] = None) -> list:
    if text == "":
        return _empty_value(text, "'cv'")
    if text == "cv" or text == "LoadBalance":
        return []
    mode, colon, num = text.partition(":")
    if mode == "cv":
        return [P(2, len(text), "mode cv takes no stream count")]
    if mode not in ("LoadBalance", "MainStream"):
        hint = _suggest(mode, _MULTISTREAM_MODES)
        return [
            P(
                0,
                len(mode),
                f"unknown mode {_q(mode)}; expected 'cv', 'LoadBalance[:n]' or 'MainStream:n'{hint}",
            )
        ]
    if not colon:
        return [P(len(text), len(text), "MainStream needs a stream count, e.g. 'MainStream:4'")]
    start = len(mode) + 1
    if num == "":
        return [P(start, start, f"missing stream count after '{mode}:'")]
    bad = _bad_number(num, start, "stream count")
    if bad is not None:
        return [bad]
    if not 1 <= int(num) <= 64:
        return [P(start, len(text), f"stream count {num} is outside [1, 64]")]
    return []


# ---------------------------------------------------------------------------------------------------------
# comma_list, space_list


def _check_comma_list(text: str, product: Optional[str] = None) -> list:
    if text == "":
        return []  # empty: not configured
    problems = []
    for start, item in _pieces(text, ","):
        if item == "" or item.strip(_WS) == "":
            if item == "":
                problems.append(_empty_piece("item", ",", start, 0, len(text)))
            else:
                problems.append(P(start, start + len(item), "empty item (only spaces)"))
            continue
        sp = _space_problem(item, start, "item")
        if sp is not None:
            problems.append(sp)
            continue
        for k, ch in enumerate(item):
            if ch in _WS:
                problems.append(
                    P(start + k, start + k + 1, f"space inside item {_q(item)}; separate items with ','")
                )
                break
    return problems


def _check_trimmed_comma_list(text: str, product: Optional[str] = None) -> list:
    """A comma list whose reader trims each item: spaces around items are harmless."""
    if text.strip(_WS) == "":
        return []  # empty: not configured
    problems = []
    for start, item in _pieces(text, ","):
        name = item.strip(_WS)
        if name == "":
            problems.append(_empty_piece("item", ",", start, 0, len(text)) if item == ""
                            else P(start, start + len(item), "empty item (only spaces)"))
            continue
        lead = len(item) - len(item.lstrip(_WS))
        for k, ch in enumerate(name):
            if ch in _WS:
                problems.append(P(start + lead + k, start + lead + k + 1,
                                  f"space inside item {_q(name)}; separate items with ','"))
                break
    return problems


def _check_space_list(text: str, product: Optional[str] = None) -> list:
    if text == "":
        return []  # empty: not configured
    problems = []
    for m in re.finditer(r"[ \t\n\r\f\v]+", text):
        s, e = m.span()
        ws = m.group(0)
        if s == 0:
            problems.append(P(s, e, "space before the first name"))
        elif e == len(text):
            problems.append(P(s, e, "space after the last name"))
        elif ws != " ":
            what = "more than one space" if set(ws) == {" "} else "a character other than a single space"
            problems.append(P(s, e, f"{what} between names; separate names with one space"))
    for m in re.finditer(r"[,;]", text):
        problems.append(P(m.start(), m.end(), f"'{m.group(0)}' found; separate names with single spaces"))
    problems.sort(key=lambda p: (p.start, p.end))
    return problems


# ---------------------------------------------------------------------------------------------------------
# in_out_pair


def _check_in_out_pair(text: str, product: Optional[str] = None) -> list:
    if text == "":
        return []  # empty: not configured
    import ast
    import warnings

    stripped = text.lstrip(" \t")
    shift = len(text) - len(stripped)
    lines = split_lines_keepends(stripped)
    if not lines or lines[-1].endswith(("\n", "\r")):
        lines.append("")  # the line after a final line break (where an error at the end is reported)
    starts = []
    acc = shift
    for line in lines:
        starts.append(acc)
        acc += len(line)

    def pos(lineno: Optional[int], col: Optional[int]) -> int:
        if not lineno or col is None or lineno > len(lines):
            return shift
        line = lines[lineno - 1]
        raw = line.encode("utf-8", "surrogatepass")
        return starts[lineno - 1] + len(raw[: max(col, 0)].decode("utf-8", "ignore"))

    def span(node) -> tuple[int, int]:
        s = pos(getattr(node, "lineno", None), getattr(node, "col_offset", None))
        e = pos(getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))
        return s, max(s, e)

    whole = "expected str() of a list of [in_nodes, out_nodes] pairs, e.g. \"[[['a'], ['b']]]\""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(stripped, mode="eval")
    except SyntaxError as e:
        off = 0
        if e.lineno and e.offset and e.lineno <= len(lines):
            off = starts[e.lineno - 1] + min(max(e.offset - 1, 0), len(lines[e.lineno - 1]))
        off = min(max(off, 0), len(text))
        return [P(off, off, f"not a Python list literal ({e.msg}); {whole}")]
    except Exception:
        return [P(0, len(text), f"not a Python list literal; {whole}")]
    top = tree.body
    if not isinstance(top, ast.List):
        return [P(*span(top), f"value is not a list; {whole}")]
    problems = []
    if not top.elts:
        return []
    for pair in top.elts:
        if not isinstance(pair, ast.List):
            problems.append(P(*span(pair), "each pair must be a list [in_nodes, out_nodes]"))
            continue
        if len(pair.elts) != 2:
            problems.append(
                P(*span(pair), f"pair has {len(pair.elts)} elements; expected [in_nodes, out_nodes]")
            )
            continue
        for what, nodes in zip(("in_nodes", "out_nodes"), pair.elts):
            if not isinstance(nodes, ast.List):
                problems.append(P(*span(nodes), f"{what} must be a list of node names"))
                continue
            if not nodes.elts:
                problems.append(P(*span(nodes), f"{what} list is empty"))
                continue
            for name in nodes.elts:
                if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                    problems.append(P(*span(name), f"{what} entries must be node names in quotes"))
                elif name.value == "":
                    problems.append(P(*span(name), f"empty node name in {what}"))
    return problems


# ---------------------------------------------------------------------------------------------------------
# registry


def _as_str(text: Any) -> str:
    if isinstance(text, (bytes, bytearray)):
        return bytes(text).decode("utf-8", "replace")
    return text if isinstance(text, str) else str(text)


GRAMMARS: dict = {
    g.name: g
    for g in (
        Grammar(
            name="dump_step",
            summary="iterations joined by '|', each N or N-M (N < M), at most 100",
            check=_check_dump_step,
            examples_valid=("0|5|10", "0|3-5|10", "7", "0-100", "00|1"),
            examples_invalid=(
                "0|5-3|10",
                "0,5,10",
                "",
                "0||5",
                "0|",
                "|0",
                "3-3",
                "-1",
                "1-",
                "a",
                "0| 5",
                "|".join(str(i) for i in range(101)),
            ),
        ),
        Grammar(
            name="input_shape",
            summary="inputs joined by ';', each name:dim,dim,... with integer dims, -1 for a dynamic dim, 0 for scalars",
            check=_check_input_shape,
            examples_valid=("data:1,1,40,-1;label:1,-1;mask:-1,-1", "x:0", "input_ids:-1,128", "a:1;b:2"),
            examples_invalid=(
                "data:1,1,40,-1;",
                "data",
                ":1,2",
                "data:",
                "data:1,,2",
                "data:1,a",
                "data:1,-2",
                "data:1, 2",
                "data:1;data:2",
                "data:1,2,",
            ),
        ),
        Grammar(
            name="dynamic_dims",
            summary="profiles joined by ';', each comma-separated non-negative integers",
            check=_check_dynamic_dims,
            examples_valid=("20,20,1,1;40,40,2,2;80,60,4,4", "1;2", "8"),
            examples_invalid=("20,20;", "", "1,,2", "1,-1;2,2", "1;a", "1 ,2", "1|2"),
        ),
        Grammar(
            name="dynamic_inputs_shape_range",
            summary="getnext:[..],[..];data:[..] with each dim an integer, -1 or a range a~b (a <= b); [] for scalars",
            check=_check_shape_range,
            examples_valid=(
                "getnext:[128 ,3~5, 2~128, -1],[64 ,3~5, 2~128, -1];data:[128 ,3~5, 2~128, -1]",
                "getnext:[3,3,4,10],[-1,3,2~1000,-1],[-1,-1,-1,-1]",
                "getnext:[3~5],[3~6]",
                "data:[3~5],[3~6]",
                "data:[3~6],[3~5]",
                "data:[]",
                "getnext:[],[2,3]",
            ),
            examples_invalid=(
                "input:[3~5]",
                "getnext: [3~5]",
                "getnext:[3~5], [3~6]",
                "data:[5~3]",
                "data:[3~5",
                "data:3~5",
                "data:[3,,4]",
                "data:[-2]",
                "data:[a]",
                "data:[1];data:[2]",
                "data:",
                "getnext:[1]x",
                "getnext:[1];",
            ),
        ),
        Grammar(
            name="profiling_options",
            summary='JSON object of profiling fields, e.g. {"output":"/tmp/profiling","training_trace":"on"}',
            check=_check_profiling,
            examples_valid=(
                '{"output":"/tmp/profiling","training_trace":"on","fp_point":"","bp_point":""}',
                '{"output":"./","training_trace":"on","task_time":"on","hccl":"on","aicpu":"on",'
                '"aic_metrics":"PipeUtilization","msproftx":"off"}',
                '{"aic_metrics":"Custom:0x49,0x8,0x15,0x1b,0x64,0x10"}',
                '{"storage_limit":"200MB","task_trace":"l1","ge_api":"l0"}',
                '{"sys_hardware_mem_freq":50,"host_sys":"cpu,mem","host_sys_usage_freq":"10"}',
                '{"llc_profiling":"write","dvpp_freq":100,"sys_interconnection_freq":"50"}',
                "{}",
                "",
            ),
            examples_invalid=(
                '{"output":"/tmp/profiling",}',
                '{"training_trace":"true"}',
                '{"trainig_trace":"on"}',
                '{"training_trace":true}',
                '{"storage_limit":"100MB"}',
                '{"storage_limit":"200"}',
                '{"aic_metrics":"Custom:0x0"}',
                '{"aic_metrics":"Custom:1,2,3,4,5,6,7,8,9"}',
                '{"aic_metrics":"pipeUtilization"}',
                '{"sys_hardware_mem_freq":0}',
                '{"instr_profiling_freq":100}',
                '{"host_sys":"cpu,disk"}',
                '{"output":"/tmp/a\\tb"}',
                '["output"]',
                "output=/tmp",
                '{"output":"/tmp"} x',
                '{"aicpu":"on","aicpu":"off"}',
            ),
        ),
        Grammar(
            name="stream_max_parallel_num",
            summary="ENGINE:N items joined by ',' with ENGINE DNN_VM_AICPU or AIcoreEngine and N >= 1",
            check=_check_stream_parallel,
            examples_valid=("DNN_VM_AICPU:10,AIcoreEngine:1", "DNN_VM_TF:10,DNN_V100:1", "AIcoreEngine:2"),
            examples_invalid=(
                "DNN_VM_AICPU:0",
                "AICoreEngine:1",
                "DNN_VM_AICPU=10",
                "DNN_VM_AICPU:10,",
                "DNN_VM_AICPU:",
                "DNN_VM_AICPU:x",
                "AIcoreEngine:1,AIcoreEngine:2",
                "DNN_VM_AICPU:10;AIcoreEngine:1",
                "",
            ),
        ),
        Grammar(
            name="aicore_num",
            summary="cube|vector: two positive integers joined by '|'",
            check=_check_aicore_num,
            examples_valid=("2|4", "24|48", "1|1"),
            examples_invalid=("2", "2,4", "0|4", "2|", "|4", "2|4|6", "a|4", "2 |4", ""),
        ),
        Grammar(
            name="experimental_accelerate_train_mode",
            summary="type|trigger|ratio: fast or fast1, step (ratio 0.2-0.9, default 0.9) or loss "
            "(ratio 1.01-1.5, default 1.05); ratio optional",
            check=_check_accelerate,
            examples_valid=(
                "fast|step|0.9",
                "fast|loss|1.05",
                "fast|step",
                "fast1|loss",
                "fast1|step|0.2",
                "fast|loss|1.5",
            ),
            examples_invalid=(
                "fast|step|1.05",
                "fast|loss|0.9",
                "slow|step",
                "fast",
                "fast|epoch|0.5",
                "fast|step|",
                "fast|step|abc",
                "fast|step|0.5|1",
                "fast,step,0.9",
                "",
            ),
        ),
        Grammar(
            name="local_device_list",
            summary="comma-separated non-negative device ids, e.g. 0,1",
            check=_check_local_device_list,
            examples_valid=("0,1", "0", "0,1,2,3,4,5,6,7"),
            examples_invalid=("0,", ",1", "0;1", "0, 1", "-1", "a", "0,,1", ""),
        ),
        Grammar(
            name="auto_multistream_parallel_mode",
            summary="cv (docs); the adapter also knows LoadBalance[:n] and MainStream:n with 1 <= n <= 64",
            check=_check_multistream,
            examples_valid=("cv", "LoadBalance", "LoadBalance:8", "MainStream:1", "MainStream:64"),
            examples_invalid=(
                "CV",
                "MainStream",
                "MainStream:0",
                "MainStream:65",
                "LoadBalance:",
                "vc",
                "cv:1",
                "LoadBalance:x",
                "",
            ),
        ),
        Grammar(
            name="trimmed_comma_list",
            summary="names separated by ',' (spaces around a name are trimmed) without empty items",
            check=_check_trimmed_comma_list,
            examples_valid=("Pooling,SoftmaxV2", "Pooling, SoftmaxV2", " Pooling ", "Pooling", ""),
            examples_invalid=("Pooling,", ",Pooling", "Pooling, ,SoftmaxV2", "Pooling SoftmaxV2"),
        ),
        Grammar(
            name="comma_list",
            summary="names separated by ',' without empty items or surrounding spaces",
            check=_check_comma_list,
            examples_valid=("ScopeLayerNormPass,ScopeClipBoxesPass", "Pooling,SoftmaxV2", "Pooling", ""),
            examples_invalid=(
                "Pooling,",
                ",Pooling",
                "Pooling,,SoftmaxV2",
                "Pooling, SoftmaxV2",
                "Pooling SoftmaxV2",
                " Pooling",
                " ",
            ),
        ),
        Grammar(
            name="space_list",
            summary="names separated by single spaces",
            check=_check_space_list,
            examples_valid=("nodename1 nodename2 nodename3", "nodename1", ""),
            examples_invalid=(
                "nodename1  nodename2",
                " nodename1",
                "nodename1 ",
                "nodename1,nodename2",
                "nodename1\tnodename2",
            ),
        ),
        Grammar(
            name="in_out_pair",
            summary="str() of a list of [in_nodes, out_nodes] pairs, e.g. [[['a', 'b'], ['c']]]",
            check=_check_in_out_pair,
            examples_valid=(
                "[[['a', 'b'], ['c']]]",
                "[[['import/conv2d_1/convolution'], ['import/conv2d_59/BiasAdd', 'import/conv2d_67/BiasAdd', "
                "'import/conv2d_75/BiasAdd']]]",
                "[]",
                '[[["a"], ["b"]], [["c"], ["d"]]]',
            ),
            examples_invalid=(
                "[['a', 'b']]",
                "[[['a'], ['b']]",
                "a,b",
                "[[['a'], ['b'], ['c']]]",
                "[[['a'], 'b']]",
                "[[[1], ['b']]]",
                "[[[], ['b']]]",
                "[[['a'], ['']]]",
                "{'a': 'b'}",
            ),
        ),
    )
}


def check(name: str, text: str, product: Optional[str] = None) -> list:
    """Problems of text under the named grammar ([] = valid). KeyError for an unknown grammar name."""
    grammar = GRAMMARS[name]
    try:
        text = _as_str(text)
        return list(grammar.check(text, product))
    except Exception as e:  # pragma: no cover - safety net; the grammars themselves must not raise
        return [
            P(0, len(text) if isinstance(text, str) else 0, f"could not check the value ({type(e).__name__})")
        ]
