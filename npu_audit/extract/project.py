"""Modules of the analysed tree: import resolution, lazy loading, and the import/call graph.

Only modules that can matter are parsed: a module is loaded when the script being analysed looks up
a name in it (a constant, a helper function, a flag definition), never merely because it is imported.
The graph (networkx) records which module loaded which, and which helper called which, so a file's
cache entry can depend on exactly the files its analysis read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Union

import npu_audit.syntax as cst

# A reader returns (display path, libcst Module, file bytes, more) or None when the file cannot be read or
# parsed. ``more(name[, before])``, when not None, parses the module's definitions of ``name`` that the
# first part left out (with a line ``before``: only those that start above it; npu_audit.extract.demand).
Reader = Callable[[Path], Optional[tuple[str, cst.Module, bytes, Optional[Callable[..., Optional[cst.Module]]]]]]


@dataclass
class ModuleState:
    """A module of the analysed tree as the interpreter reads it: its parsed tree and what reading it bound (names,
    imports, flags, functions, classes)."""

    display: str
    file: Path
    module: cst.Module
    raw: bytes = b""
    # CPython's ast of the original text (see source_ast); False: the text does not decode or parse
    original_ast: Any = None
    globals: dict = field(default_factory=dict)  # name -> Binding
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> dotted imported name
    star_modules: list = field(default_factory=list)  # ModuleRef of `from m import *` (tree modules)
    # the modules outside the tree of `from m import *` (dotted; "" for a relative one not found)
    foreign_stars: list[str] = field(default_factory=list)
    flags: dict = field(default_factory=dict)  # flag name -> (Sym, node)
    arguments: dict = field(default_factory=dict)  # argparse dest -> (Sym, node)
    functions: list = field(default_factory=list)  # FunctionRef defined at module level (and methods)
    classes: list = field(default_factory=list)
    # what was made while reading this module and may point back at itself through its ``attrs``: classes
    # defined in a function or class body (their methods name them as owner; not names of the module) and
    # instances (``self.callbacks = Callbacks(owner=self)``). Kept only so that Extraction.release can
    # unlink them
    attr_holders: list = field(default_factory=list)
    # parses definitions of a name left out of ``module`` (a helper read in parts; with a line, only those
    # that start above it); None: all was parsed
    more: Optional[Callable[..., Optional[cst.Module]]] = None
    later_parts: list = field(default_factory=list)  # the parts ``more`` gave that were run, in that order

    def source_ast(self) -> Optional[Any]:
        """CPython's ast of the module's original text, read once: ``module`` may have been parsed from a
        relevance slice of it (the analysed file), and what the slice blanked is still there. None when
        the text does not decode or parse."""
        if self.original_ast is None:
            from npu_audit.extract.positions import python_ast
            from npu_audit.source import decode_source

            text = getattr(decode_source(self.raw, self.display), "text", None) if self.raw else None
            self.original_ast = (python_ast(text) if text is not None else None) or False
        return self.original_ast or None

    def code(self, node: Optional[cst.CSTNode]) -> str:
        """The source of ``node`` (a node of this module), stripped; "" for None."""
        if node is None:
            return ""
        try:
            return self.module.code_for_node(node).strip()
        except Exception:  # pragma: no cover - code generation of a parsed node should not fail
            return ""


class Project:
    """Resolves imports to files below the analysis roots and loads them on demand."""

    def __init__(self, roots: Sequence[Union[str, Path]], reader: Reader, max_modules: int = 200):
        from npu_audit.imports import real_folders

        self._root_names = real_folders(tuple(str(root) for root in roots))
        self.reader = reader
        self.max_modules = max_modules
        self.modules: dict[Path, ModuleState] = {}
        self.failed: set[Path] = set()
        # edges (importer/caller file -> imported/called file), kept as plain data: networkx is slow to
        # import and only needed when the analysis really crossed into other files
        self._edges: dict[str, dict[str, str]] = {}
        self._folders: dict[Path, str] = {}  # importing file -> its real folder
        self._real: dict[Path, Path] = {}  # path -> path.resolve() (asked again for every look-up in a module)

    @property
    def graph(self):
        """The import/call graph of the files read (a networkx.DiGraph, built on demand)."""
        import networkx as nx

        graph = nx.DiGraph()
        for source, targets in self._edges.items():
            graph.add_node(source)
            for target, kind in targets.items():
                graph.add_edge(source, target, kind=kind)
        return graph

    # -- resolution ---------------------------------------------------------------------------

    def resolve(self, dotted: str, level: int, from_file: Path) -> Optional[Path]:
        """File of module ``dotted`` imported from ``from_file`` (``level`` leading dots), if in the tree."""
        from npu_audit.imports import resolve_in_tree

        folder = self._folders.get(from_file)
        if folder is None:
            folder = self._folders[from_file] = str(self.real(from_file).parent)
        found = resolve_in_tree(dotted, level, folder, self._root_names)
        return Path(found) if found is not None else None

    # -- loading ------------------------------------------------------------------------------

    def load(self, file: Path, importer: Optional[Path] = None) -> Optional[ModuleState]:
        """The module of ``file``, read (in part: its ``more`` reads the rest) when it is first loaded."""
        file = self.real(file)
        if importer is not None:
            self._add_edge(str(self.real(importer)), str(file), "import")
        state = self.modules.get(file)
        if state is not None:
            return state
        if file in self.failed or len(self.modules) >= self.max_modules:
            return None
        got = self.reader(file)
        if got is None:
            self.failed.add(file)
            return None
        display, module, raw, more = got
        state = ModuleState(display=display, file=file, module=module, raw=raw, more=more)
        self.modules[file] = state
        return state

    def real(self, path: Path) -> Path:
        """``path.resolve()``, once per path for this analysis."""
        found = self._real.get(path)
        if found is None:
            found = self._real[path] = path.resolve()
        return found

    def _add_edge(self, source: str, target: str, kind: str) -> None:
        if source != target:
            self._edges.setdefault(source, {}).setdefault(target, kind)

    def add_call_edge(self, caller: str, callee: str) -> None:
        self._add_edge(caller, callee, "call")

    def dependencies(self, file: Path) -> list[Path]:
        """Files whose content the analysis of ``file`` read (transitively): the descendants of ``file`` in
        :attr:`graph`, found by walking the edges directly (importing networkx for this one question cost
        0.3 s, most of a one-file run)."""
        if not self._edges:
            return []  # nothing was read from other files
        key = str(file.resolve())
        seen: set[str] = set()
        todo = [key]
        while todo:
            for target in self._edges.get(todo.pop(), ()):
                if target not in seen and target != key:
                    seen.add(target)
                    todo.append(target)
        return sorted(Path(p) for p in seen if os.path.isfile(p))
