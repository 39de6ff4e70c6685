"""CPython's own ``ast``, shared by the steps that read it directly: one parse per text
(:func:`python_tree`) and a walk without the ``Load``/``Store`` markers (:func:`python_walk`).

The relevance slice (:mod:`npu_audit.slicing`), the relevance of definitions (:mod:`npu_audit.relevance`),
the reading of helper modules in parts (:mod:`npu_audit.extract.demand`) and the checks read this tree;
the extraction reads the tree :mod:`npu_audit.syntax.builder` builds from it.
"""

from __future__ import annotations

import ast
import warnings
from collections import deque
from collections.abc import Iterator
from functools import lru_cache
from typing import Optional

_AST = ast.AST
# Fields that never hold a child node: names and other plain values, and ``ctx`` (the Load/Store markers).
_LEAF_FIELDS = frozenset({"ctx", "id", "attr", "arg", "asname", "module", "level", "kind", "type_comment",
                          "conversion", "is_async"})
# Per node class, the fields that may hold child nodes (the class's ``_fields`` less :data:`_LEAF_FIELDS`,
# and less a constant's value): a ``Name`` or a ``Constant`` has none to look at.
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def python_children(node: ast.AST) -> list[ast.AST]:
    """The child nodes of a CPython ast node, as ``ast.iter_child_nodes`` gives them but as a list, without
    the ``Load``/``Store`` markers, and faster (the walks over whole files add up)."""
    kind = type(node)
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = tuple(
            name for name in kind._fields
            if name not in _LEAF_FIELDS and not (kind is ast.Constant and name == "value"))
    out: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend([v for v in value if isinstance(v, _AST)])
        elif isinstance(value, _AST):
            out.append(value)
    return out


def python_walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` (the same nodes in the same breadth-first order) without the ``Load``/``Store``
    markers, through :func:`python_children`: faster."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(python_children(node))
        yield node


@lru_cache(maxsize=64)
def python_tree(text: str) -> Optional[ast.Module]:
    """CPython's ast of ``text`` (shared by the steps that need it: one parse per text), or None when
    CPython rejects it. The tree is shared: callers must not change it. (64 texts: the slice reads the
    NPU names of the modules a script imports, and the analysis reads some of them as helpers soon after,
    and a script of a project is often a helper of the next one: the cache holds a project's modules
    between those readings. Measured on TensorFlow/built-in/cv with ``--jobs 1``: 96 texts parsed again
    instead of 168 with 16.)"""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
