"""The entry points of the syntax tree: parse a text with CPython (or take the ast a caller has), pick
the statements to build, and build them (:mod:`npu_audit.syntax.builder`) over one :class:`Source` per
text, shared by the parts of a helper module built one after another.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Collection, Iterable
from typing import Optional

from npu_audit.syntax.builder import _Builder
from npu_audit.syntax.nodes import CSTNode, Module
from npu_audit.syntax.source import Source


class Unparsable(Exception):
    """CPython's parser rejected the text (``error`` holds its SyntaxError or other exception)."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


def parse_module(text: str, tree: Optional[ast.Module] = None, keep: Optional[Iterable[int]] = None,
                 skip: Collection[int] = (), max_depth: Optional[int] = None, lazy_bodies: bool = False) -> Module:
    """The tree of ``text`` (``tree``: CPython's ast of it, when the caller has it). Raises
    :class:`Unparsable` when CPython rejects the text and RecursionError on trees too deep to convert.

    ``keep``: only these top-level statements (indices into the module's body: a part of a helper module,
    ``npu_audit.extract.demand``). ``skip``: ``id()`` of statements of ``tree``, at any depth, left out
    (the statements a relevance slice drops, ``npu_audit.slicing``). Either way the statements built are
    the ones a text with the others blanked out would give, at the same positions, without parsing again.

    ``max_depth``: raise :class:`TooDeep` rather than build a tree deeper than that (counting nested
    expressions, nested blocks, ``elif`` branches and the links of the chains built as nested nodes:
    ``a and b and c``, implicit string concatenations, dotted names); checked as the tree is built, so it
    costs next to nothing, and only the statements built count.

    ``lazy_bodies``: function bodies are built when first read (:class:`~npu_audit.syntax.nodes.
    LazyIndentedBlock`; a helper module's, most of which are never entered); one too deep to build
    raises RecursionError then."""
    if tree is None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
            raise Unparsable(exc) from exc
    source = _source_of(text)
    builder = _Builder(source, frozenset(skip), max_depth, lazy_bodies)
    body = tree.body
    if keep is not None:
        wanted = set(keep)
        body = [stmt for i, stmt in enumerate(body) if i in wanted]
    module = Module(builder.block(body), source)
    module._src = source
    module._pos = (1, 0, len(source.starts), 0)
    return module


def _source_of(text: str) -> Source:
    """A :class:`Source` of ``text``: the one made for one of the last texts built, when ``text`` is that
    very text (the parts of a helper module are built from one text, one definition at a time)."""
    global _recent_sources
    recent = _recent_sources  # (replaced whole, never changed in place: threads of the language server)
    for seen, source in recent:
        if seen is text:
            return source
    source = Source(text)
    _recent_sources = ((text, source),) + recent[:3]
    return source


_recent_sources: tuple[tuple[str, Source], ...] = ()


def parse_expression(text: str) -> CSTNode:
    """The tree of one expression (tests and tools; raises :class:`Unparsable`)."""
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        raise Unparsable(exc) from exc
    return _Builder(Source(text)).expr(tree.body)
