"""Where each node the interpreter read sits: the statements that enclose it, outermost first.

The interpreter is handed a :class:`PositionRecorder` and tells it, as it reads, which statements
enclose each node it evaluates, and where each function was defined (its body is read later, when it
is called). Positions are computed afterwards for just the nodes a finding or the config view shows,
from the statements recorded for them (:func:`npu_audit.extract.positions.statement_ranges` takes
:attr:`PositionRecorder.tops`): a code-generation pass over those statements only, not the whole module.
"""

from __future__ import annotations

from typing import Optional

import npu_audit.syntax as cst

Stmts = tuple  # the statements enclosing a node, outermost (module level) first


class PositionRecorder:
    def __init__(self) -> None:
        self.tops: dict[int, Stmts] = {}  # id(node) -> the statements enclosing it
        self._definitions: dict[int, tuple[Optional[cst.CSTNode], Stmts]] = {}

    def seen(self, node: cst.CSTNode, stmts: Stmts) -> None:
        """``node`` was read inside ``stmts``."""
        self.tops[id(node)] = stmts

    def defined(self, function: cst.CSTNode, top: Optional[cst.CSTNode], stmts: Stmts) -> None:
        """``function`` (a def) is written inside module-level statement ``top``, in ``stmts``."""
        self._definitions[id(function)] = (top, stmts)

    def definition(self, function: cst.CSTNode) -> tuple[Optional[cst.CSTNode], Stmts]:
        """(module-level statement, enclosing statements) of a def recorded with :meth:`defined`."""
        return self._definitions.get(id(function), (None, ()))
