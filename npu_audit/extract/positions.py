"""Positions of the nodes a finding or the config view shows.

Every node of :mod:`npu_audit.syntax` keeps the position CPython's parser gave it; a range is turned into
1-based lines and character columns only for the nodes asked about. Ranges match libcst's syntactic
positions (the tree's shapes are libcst's): parentheses around an expression are not part of it, end
exclusive.
"""

from __future__ import annotations

from collections.abc import Iterable

import npu_audit.syntax as cst
from npu_audit.extract.ranges import Range


def node_ranges(nodes: Iterable[cst.CSTNode]) -> dict[int, Range]:
    """Ranges of ``nodes`` (keyed by ``id(node)``); nodes without a position are left out."""
    out = {}
    for n in nodes:
        if n is None:
            continue
        found = cst.range_of(n)
        if found is not None:
            out[id(n)] = Range(*found)
    return out


#: CPython's ast of a text, parsed once per text (``None`` when CPython rejects it)
python_ast = cst.python_tree
