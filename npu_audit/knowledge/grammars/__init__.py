"""Named string grammars that session option values must follow, one module per family of options.

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

The families: :mod:`.execution` (how the device runs a graph: dump iterations, engines, cores, devices,
streams, accelerated training), :mod:`.shapes` (input shapes and dynamic dimensions), :mod:`.profiling`
(the profiling JSON) and :mod:`.lists` (lists of names, input/output pairs); each grammar's examples,
which the tests run, sit next to its check. :mod:`.base` holds what they share. This module is the
registry: :data:`GRAMMARS` by name, and :func:`check`.
"""

from __future__ import annotations

from typing import Optional

from npu_audit.knowledge.grammars.base import Grammar, GrammarProblem, P, _as_str
from npu_audit.knowledge.grammars.execution import (
    AICORE_NUM,
    AUTO_MULTISTREAM_PARALLEL_MODE,
    DUMP_STEP,
    EXPERIMENTAL_ACCELERATE_TRAIN_MODE,
    LEGACY_ENGINES,
    LOCAL_DEVICE_LIST,
    STREAM_MAX_PARALLEL_NUM,
    parse_accelerate_train_mode,
)
from npu_audit.knowledge.grammars.lists import COMMA_LIST, IN_OUT_PAIR, SPACE_LIST, TRIMMED_COMMA_LIST
from npu_audit.knowledge.grammars.profiling import (
    PROFILING_DEPRECATED_FIELDS,
    PROFILING_FIELDS,
    PROFILING_OPTIONS,
    parse_profiling_options,
)
from npu_audit.knowledge.grammars.profiling import (
    _check_profiling as _check_profiling,  # (the tests check one profiling value with it)
)
from npu_audit.knowledge.grammars.shapes import (
    DYNAMIC_DIMS,
    DYNAMIC_INPUTS_SHAPE_RANGE,
    INPUT_SHAPE,
    parse_dynamic_dims,
    parse_input_shape,
)

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

GRAMMARS: dict = {
    g.name: g
    for g in (
        DUMP_STEP,
        INPUT_SHAPE,
        DYNAMIC_DIMS,
        DYNAMIC_INPUTS_SHAPE_RANGE,
        PROFILING_OPTIONS,
        STREAM_MAX_PARALLEL_NUM,
        AICORE_NUM,
        EXPERIMENTAL_ACCELERATE_TRAIN_MODE,
        LOCAL_DEVICE_LIST,
        AUTO_MULTISTREAM_PARALLEL_MODE,
        TRIMMED_COMMA_LIST,
        COMMA_LIST,
        SPACE_LIST,
        IN_OUT_PAIR,
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
