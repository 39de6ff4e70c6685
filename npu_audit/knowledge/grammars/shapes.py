"""Grammars of the options that give input shapes: fixed and dynamic shapes per input
(``input_shape``), the sets of dynamic dimensions (``dynamic_dims``) and the shape ranges of dynamic
inputs (``dynamic_inputs_shape_range``), with the parsers cross-option rules read them with."""

from __future__ import annotations

import re
from typing import Optional

from npu_audit.knowledge.grammars.base import (
    _WS,
    Grammar,
    P,
    _as_str,
    _bad_number,
    _empty_piece,
    _empty_value,
    _pieces,
    _q,
    _space_problem,
    _suggest,
)

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


INPUT_SHAPE = Grammar(
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
)


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


DYNAMIC_DIMS = Grammar(
    name="dynamic_dims",
    summary="profiles joined by ';', each comma-separated non-negative integers",
    check=_check_dynamic_dims,
    examples_valid=("20,20,1,1;40,40,2,2;80,60,4,4", "1;2", "8"),
    examples_invalid=("20,20;", "", "1,,2", "1,-1;2,2", "1;a", "1 ,2", "1|2"),
)


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


DYNAMIC_INPUTS_SHAPE_RANGE = Grammar(
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
)
