"""Where each function the interpreter read was defined: the statements that enclose it, outermost first.

The interpreter is handed a :class:`PositionRecorder` and tells it, as it reads, where each function is
defined; a call reads the function's body later, in that place (the frame's enclosing statements, which
the TF2 extraction reads). Positions themselves need no recording: every node of :mod:`npu_audit.syntax`
keeps its own (:mod:`npu_audit.extract.positions`).
"""

from __future__ import annotations

from typing import Optional

import npu_audit.syntax as cst

Stmts = tuple  # the statements enclosing a node, outermost (module level) first


class PositionRecorder:
    def __init__(self) -> None:
        self._definitions: dict[int, tuple[Optional[cst.CSTNode], Stmts]] = {}

    def defined(self, function: cst.CSTNode, top: Optional[cst.CSTNode], stmts: Stmts) -> None:
        """``function`` (a def) is written inside module-level statement ``top``, in ``stmts``."""
        self._definitions[id(function)] = (top, stmts)

    def definition(self, function: cst.CSTNode) -> tuple[Optional[cst.CSTNode], Stmts]:
        """(module-level statement, enclosing statements) of a def recorded with :meth:`defined`."""
        return self._definitions.get(id(function), (None, ()))
