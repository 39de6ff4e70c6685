"""Modules of the analysed tree: import resolution, lazy loading, and the import/call graph.

Only modules that can matter are parsed: a module is loaded when the script being analysed looks up
a name in it (a constant, a helper function, a flag definition), never merely because it is imported.
The graph (networkx) records which module loaded which, and which helper called which, so a file's
cache entry can depend on exactly the files its analysis read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import libcst as cst

# A reader returns (display path, libcst Module) or None when the file cannot be read/parsed.
Reader = Callable[[Path], Optional[tuple[str, cst.Module, bytes]]]


@dataclass
class ModuleState:
    display: str
    file: Path
    module: cst.Module
    raw: bytes = b""
    globals: dict = field(default_factory=dict)  # name -> Binding
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> dotted imported name
    star_modules: list = field(default_factory=list)  # ModuleRef of `from m import *` (tree modules)
    flags: dict = field(default_factory=dict)  # flag name -> (Sym, node)
    arguments: dict = field(default_factory=dict)  # argparse dest -> (Sym, node)
    functions: list = field(default_factory=list)  # FunctionRef defined at module level (and methods)
    classes: list = field(default_factory=list)
    executed: bool = False
    executing: bool = False


class Project:
    """Resolves imports to files below the analysis roots and loads them on demand."""

    def __init__(self, roots: list[Path], reader: Reader, max_modules: int = 200):
        self.roots = [r.resolve() for r in roots]
        self.reader = reader
        self.max_modules = max_modules
        self.modules: dict[Path, ModuleState] = {}
        self.failed: set[Path] = set()
        self._graph = None  # networkx.DiGraph, created with the first edge (networkx is slow to import)
        self._exists_cache: dict[Path, bool] = {}

    @property
    def graph(self):
        if self._graph is None:
            import networkx as nx

            self._graph = nx.DiGraph()
        return self._graph

    # -- resolution ---------------------------------------------------------------------------

    def _is_file(self, path: Path) -> bool:
        hit = self._exists_cache.get(path)
        if hit is None:
            hit = path.is_file()
            self._exists_cache[path] = hit
        return hit

    def _inside_roots(self, path: Path) -> bool:
        for root in self.roots:
            try:
                path.relative_to(root)
                return True
            except ValueError:
                continue
        return False

    def _candidates(self, base: Path, parts: list[str]) -> Optional[Path]:
        target = base.joinpath(*parts) if parts else base
        for candidate in (target.with_name(target.name + ".py") if parts else None, target / "__init__.py"):
            if candidate is not None and self._is_file(candidate) and self._inside_roots(candidate):
                return candidate
        return None

    def resolve(self, dotted: str, level: int, from_file: Path) -> Optional[Path]:
        """File of module ``dotted`` imported from ``from_file`` (``level`` leading dots), if in the tree."""
        parts = [p for p in dotted.split(".") if p]
        here = from_file.resolve().parent
        if level:
            base = here
            for _ in range(level - 1):
                base = base.parent
            return self._candidates(base, parts)
        # Script-style imports first (the folder of the importing file), then its ancestors up to a root.
        base = here
        seen = set()
        while True:
            if base in seen:
                break
            seen.add(base)
            found = self._candidates(base, parts)
            if found is not None:
                return found
            if not self._inside_roots(base.parent) or base.parent == base:
                break
            base = base.parent
        for root in self.roots:
            found = self._candidates(root, parts)
            if found is not None:
                return found
        return None

    # -- loading ------------------------------------------------------------------------------

    def load(self, file: Path, importer: Optional[Path] = None) -> Optional[ModuleState]:
        file = file.resolve()
        if importer is not None:
            self.graph.add_edge(str(importer.resolve()), str(file), kind="import")
        state = self.modules.get(file)
        if state is not None:
            return state
        if file in self.failed or len(self.modules) >= self.max_modules:
            return None
        got = self.reader(file)
        if got is None:
            self.failed.add(file)
            return None
        display, module, raw = got
        state = ModuleState(display=display, file=file, module=module, raw=raw)
        self.modules[file] = state
        return state

    def add_call_edge(self, caller: str, callee: str) -> None:
        self.graph.add_edge(caller, callee, kind="call")

    def dependencies(self, file: Path) -> list[Path]:
        """Files whose content the analysis of ``file`` read (transitively)."""
        if self._graph is None:
            return []  # nothing was imported from the tree
        import networkx as nx

        key = str(file.resolve())
        if key not in self._graph:
            return []
        return sorted(Path(p) for p in nx.descendants(self._graph, key) if os.path.isfile(p))
