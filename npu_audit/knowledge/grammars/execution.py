"""Grammars of the options that say how the device runs a graph: the iterations to dump
(``dump_step``), the engines' parallelism (``stream_max_parallel_num``), the core counts
(``aicore_num``), the accelerated training mode (``experimental_accelerate_train_mode``), the devices
(``local_device_list``) and the multi-stream mode (``auto_multistream_parallel_mode``)."""

from __future__ import annotations

import re
from typing import Optional

from npu_audit.knowledge.grammars.base import (
    _UINT,
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
from npu_audit.knowledge.vocabulary import ENGINES, LEGACY_ENGINES

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


DUMP_STEP = Grammar(
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
)


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


STREAM_MAX_PARALLEL_NUM = Grammar(
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
)


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


AICORE_NUM = Grammar(
    name="aicore_num",
    summary="cube|vector: two positive integers joined by '|'",
    check=_check_aicore_num,
    examples_valid=("2|4", "24|48", "1|1"),
    examples_invalid=("2", "2,4", "0|4", "2|", "|4", "2|4|6", "a|4", "2 |4", ""),
)


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


EXPERIMENTAL_ACCELERATE_TRAIN_MODE = Grammar(
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
)


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


LOCAL_DEVICE_LIST = Grammar(
    name="local_device_list",
    summary="comma-separated non-negative device ids, e.g. 0,1",
    check=_check_local_device_list,
    examples_valid=("0,1", "0", "0,1,2,3,4,5,6,7"),
    examples_invalid=("0,", ",1", "0;1", "0, 1", "-1", "a", "0,,1", ""),
)


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


AUTO_MULTISTREAM_PARALLEL_MODE = Grammar(
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
)
