"""Grammars of the options that take lists of names: comma- and space-separated lists
(``comma_list``, ``trimmed_comma_list``, ``space_list``) and input/output index pairs
(``in_out_pair``)."""

from __future__ import annotations

import re
from typing import Optional

from npu_audit.knowledge.grammars.base import (
    _WS,
    Grammar,
    P,
    _empty_piece,
    _pieces,
    _q,
    _space_problem,
)
from npu_audit.text import split_lines_keepends

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


TRIMMED_COMMA_LIST = Grammar(
    name="trimmed_comma_list",
    summary="names separated by ',' (spaces around a name are trimmed) without empty items",
    check=_check_trimmed_comma_list,
    examples_valid=("Pooling,SoftmaxV2", "Pooling, SoftmaxV2", " Pooling ", "Pooling", ""),
    examples_invalid=("Pooling,", ",Pooling", "Pooling, ,SoftmaxV2", "Pooling SoftmaxV2"),
)


COMMA_LIST = Grammar(
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
)


SPACE_LIST = Grammar(
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
)


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


IN_OUT_PAIR = Grammar(
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
)
