"""The grammar of ``profiling_options``: a JSON object of profiling fields, each checked against what
the vendor docs allow (per product), with the parser cross-option rules read it with."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from npu_audit.knowledge.grammars.base import (
    _UINT,
    Grammar,
    GrammarProblem,
    P,
    _as_str,
    _empty_piece,
    _pieces,
    _q,
    _suggest,
)
from npu_audit.knowledge.vocabulary import PRODUCT_SHORT_NAMES

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


PROFILING_OPTIONS = Grammar(
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
)
