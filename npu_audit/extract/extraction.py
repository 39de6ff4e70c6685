"""One file's extraction: the interpreter run on a parsed module, the configs relevant to the file,
their positions (:func:`extract_configs`)."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import npu_audit.syntax as cst
from npu_audit.extract.interpreter import Interpreter
from npu_audit.extract.model import CodeFact, SessionConfig
from npu_audit.extract.positions import Range, node_ranges
from npu_audit.extract.project import ModuleState, Project
from npu_audit.extract.recorder import PositionRecorder
from npu_audit.extract.runconfig import lone_object_config
from npu_audit.knowledge.model import KnowledgeBase


@dataclass
class Extraction:
    """The configs relevant to one file, with positions computed."""

    display: str
    configs: list[SessionConfig]
    facts: list[CodeFact]  # code facts not tied to a config (NPUOptimizer(...), unlinked set_iteration_per_loop)
    modules: dict[str, ModuleState] = field(default_factory=dict)  # display path -> module (for fixes)
    dependencies: list[Path] = field(default_factory=list)  # other files read
    ranges: dict[int, Range] = field(default_factory=dict)  # id(node) -> Range for every node positioned
    functions_read: frozenset[int] = frozenset()  # ids of the function nodes the interpreter read (until release)
    # calls in this file of an adapter API whose name npu-audit cannot trace to an import: (range, name)
    unseen_calls: list[tuple[Range, str]] = field(default_factory=list)

    def range_of(self, node) -> Optional[Range]:
        return self.ranges.get(id(node)) if node is not None else None

    def release(self) -> None:
        """Unlink what points back at itself once the extraction has been checked (a module's names hold
        its functions, which hold the module): freed at once rather than left to the cycle collector,
        whose walks over the trees and symbols of every file read were a tenth of an analysis."""
        for state in self.modules.values():
            for holder in state.classes + state.attr_holders:
                holder.attrs.clear()  # (a class's methods name it as their owner)
            state.globals.clear()
            state.functions.clear()
            state.classes.clear()
            state.attr_holders.clear()
            state.star_modules.clear()
            state.flags.clear()
            state.arguments.clear()
            state.more = None
            state.later_parts.clear()
        self.modules = {}
        self.functions_read = frozenset()

    def file_exists(self, path: str) -> bool:
        """Whether a file exists at ``path``. Checks ask here rather than the file system: the path becomes a
        dependency of the file's result, so the result cache reuses it only while the path still exists (or
        still does not), and the language server re-analyses when it is saved."""
        found = Path(os.path.abspath(path))
        if found not in self.dependencies:
            self.dependencies.append(found)
        return found.exists()


# Helper modules parsed in this process, reused by every script that imports them (the trees are never
# changed; the interpreter keeps its state outside them). Keyed by real path, size, mtime and the size
# limit read under, and for a part of a module (npu_audit.extract.demand) by the statements it holds.
_PARSED: OrderedDict[tuple, Optional[cst.Module]] = OrderedDict()
_PARSED_MAX = 256


_MISSING = object()
# The language server analyses from several threads: a look-up and its move to the end, or an insertion
# and the eviction it causes, must not interleave with another thread's (KeyError).
_CACHE_LOCK = threading.Lock()


def _recall(table: OrderedDict, key: tuple) -> Any:
    """``table[key]``, marked as recently used; _MISSING when absent."""
    with _CACHE_LOCK:
        value = table.get(key, _MISSING)
        if value is not _MISSING:
            table.move_to_end(key)
        return value


def _keep(table: OrderedDict, key: tuple, value: Any, limit: int) -> None:
    with _CACHE_LOCK:
        table[key] = value
        if len(table) > limit:
            table.popitem(last=False)


def _make_reader(max_bytes: int, display_for, whole: bool = False):
    """The project's reader: (display, first part of the module, file bytes, more) for a helper module,
    where ``more(name)`` parses the definitions of ``name`` left out so far (None when there are none).
    With ``whole`` (or when the module's text cannot be cut: no CPython ast) the module is parsed whole
    at once and ``more`` is None."""
    from npu_audit import slicing
    from npu_audit.parse import SyntaxProblem, parse_module
    from npu_audit.source import ReadProblem, read_source

    cut = not whole and slicing.enabled()

    def parsed(key: tuple, source):
        """The module of the whole of ``source``, built once per process."""
        known = _recall(_PARSED, key)
        if known is not _MISSING:
            return known
        module = parse_module(source)
        result = None if isinstance(module, SyntaxProblem) else module
        _keep(_PARSED, key, result, _PARSED_MAX)
        return result

    def reader(path: Path):
        try:
            st = os.stat(path)
            # (max_bytes too: a project whose settings read less must not leave a helper unread for the next)
            key = (str(path), st.st_size, st.st_mtime_ns, max_bytes)  # (``path`` is resolved: Project.load)
        except OSError:
            return None
        display = display_for(path)
        loaded = _recall(_SOURCES, key)
        if loaded is _MISSING:
            source = read_source(path, display, max_bytes)
            loaded = None if isinstance(source, ReadProblem) else _HelperModule(source)
            _keep(_SOURCES, key, loaded, _SOURCES_MAX)
        if loaded is None:
            return None
        helper = loaded.cut() if cut else None
        if helper is None:
            module = parsed(key, loaded.source)
            return None if module is None else (display, module, loaded.source.raw, None)
        have = helper.first_part()
        module = loaded.part(frozenset(have))
        if module is None:  # (a part could not be built: read it whole)
            module = parsed(key, loaded.source)
            return None if module is None else (display, module, loaded.source.raw, None)

        def more(name: str, before: Optional[int] = None) -> Optional[cst.Module]:
            add = helper.definitions_of(name, have, before)
            if not add:
                return None
            have.update(add)
            return loaded.part(frozenset(add))

        return display, module, loaded.source.raw, more

    return reader


class _HelperModule:
    """What the reader read of a helper module in this process: its text, how it is cut into top-level
    statements (None: it cannot be, no CPython ast; computed when first read in parts) and the parts of it
    built so far, by the statements they hold."""

    __slots__ = ("source", "_helper", "_parts")

    def __init__(self, source):
        self.source = source
        self._helper: Any = _NOT_CUT_YET
        self._parts: dict[frozenset[int], Optional[cst.Module]] = {}

    def cut(self):
        if self._helper is _NOT_CUT_YET:
            self._helper = _helper_text(self.source)
        return self._helper

    def part(self, keep: frozenset[int]) -> Optional[cst.Module]:
        """The module built of the top-level statements ``keep`` (None: it could not be built)."""
        from npu_audit.parse import SyntaxProblem, parse_module

        if keep not in self._parts:
            # (function bodies built when the interpreter first enters them: most of a helper's never are)
            module = parse_module(self.source, tree=self._helper.tree, keep=keep, lazy_bodies=True)
            self._parts[keep] = None if isinstance(module, SyntaxProblem) else module
        return self._parts[keep]


# What the reader read of each helper module in this process (None when unreadable); keyed like _PARSED.
_SOURCES: OrderedDict[tuple, Optional[_HelperModule]] = OrderedDict()
_NOT_CUT_YET = object()  # (a module read whole so far: cut when a reader first reads it in parts)
_SOURCES_MAX = 128  # (each holds the module's CPython ast and its parts)


def _helper_text(source):
    from npu_audit.extract.demand import HelperText
    from npu_audit.extract.positions import python_ast

    tree = python_ast(source.text)
    return HelperText(source.text, tree) if tree is not None else None


def display_for_factory(root_display: str, root_file: Path):
    """Display paths for helper modules: relative to the analysed file's folder, as the user gave it (a
    helper above that folder is reached with ``..`` from it: ``models/../common/cfg.py`` is written
    ``common/cfg.py``), so that a report does not depend on the folder npu-audit runs in."""
    base_display = Path(root_display).parent
    root_real = root_file.resolve()
    base_file = root_real.parent

    def display_for(path: Path) -> str:  # (``path``: resolved, as the project's reader is given it)
        if path == root_real:
            return root_display
        try:
            rel = path.relative_to(base_file)
            return str(base_display / rel) if str(base_display) != "." else str(rel)
        except ValueError:
            import os

            try:
                return os.path.normpath(os.path.join(str(base_display), os.path.relpath(path, base_file)))
            except ValueError:  # (another drive)
                return str(path)

    return display_for


def extract_configs(
    display: str,
    file: Path,
    module: cst.Module,
    raw: bytes,
    kb: KnowledgeBase,
    roots: Sequence[Union[str, Path]],
    max_bytes: int = 10 * 1024 * 1024,
    all_positions: bool = False,
    text: Optional[str] = None,
    tree: Optional[Any] = None,
    dropped: frozenset[int] = frozenset(),
) -> Extraction:
    display_for = display_for_factory(display, file)
    project = Project(roots or [file.resolve().parent], _make_reader(max_bytes, display_for, whole=all_positions))
    state = ModuleState(display=display, file=file.resolve(), module=module, raw=raw)
    project.modules[state.file] = state
    positions = PositionRecorder()
    interp = Interpreter(project, kb, positions)
    interp.script = state
    interp.run_module(state)
    interp.run_standalone(state, text, tree, dropped)
    configs = [c for c in interp.configs + _lone_objects(interp, kb, project) if _relevant(c, display)]
    facts = [f for f in interp.loose_facts if f.path == display or (f.calls and f.calls[0].path == display)]
    modules = {m.display: m for m in project.modules.values()}
    ranges = _compute_positions(configs, facts, modules, None if all_positions else display)
    unseen = [(path, node, name) for path, node, name in interp.unseen_calls if path == display]
    if unseen:
        ranges.update(node_ranges([node for _path, node, _name in unseen]))
    interp.tf2 = None  # type: ignore[assignment]  # (it points back at the interpreter)
    return Extraction(
        ranges=ranges,
        display=display,
        configs=configs,
        facts=facts,
        modules=modules,
        dependencies=[p for p in project.dependencies(file) if p != state.file],
        functions_read=frozenset(interp.functions_read),
        unseen_calls=[(ranges[id(node)], name) for _path, node, name in unseen if id(node) in ranges],
    )


def _lone_objects(interp: Interpreter, kb: KnowledgeBase, project: Project) -> list[SessionConfig]:
    """The config objects (DumpConfig(...) & co.) no NPURunConfig the interpreter read takes, each as the
    config of the writes it becomes (runconfig.lone_object_config): checked where they are built."""
    by_display = {m.display: m for m in project.modules.values()}
    out = []
    for obj in interp.config_objects:
        module = by_display.get(obj.path)
        if obj.expanded or module is None:
            continue
        config = lone_object_config(kb, obj, module)
        if config is not None:
            out.append(config)
    return out


def _relevant(config: SessionConfig, display: str) -> bool:
    if config.path == display or (config.calls and config.calls[0].path == display):
        return True
    if any(op.path == display or (op.calls and op.calls[0].path == display) for op in config.opens):
        return True
    for entry in config.all_entries():
        if entry.path == display or (entry.calls and entry.calls[0].path == display):
            return True
        for w in entry.writes:
            if w.path == display or (w.calls and w.calls[0].path == display):
                return True
    return False


def _compute_positions(configs: list[SessionConfig], facts: list[CodeFact], modules: dict[str, ModuleState],
                       only: Optional[str] = None) -> dict:
    """Ranges of every node a finding or the config view may show. With ``only``, just the nodes of that
    file."""
    wanted: dict[str, list] = {}

    def want(path, node):
        if node is not None and (only is None or path == only):
            wanted.setdefault(path, []).append(node)

    seen_entries = set()
    for config in configs:
        want(config.path, config.node)
        for call in config.calls:
            want(call.path, call.node)
        for rewrite in config.rewrite:
            want(rewrite.path, rewrite.node)
        for fact in config.facts:
            want(fact.path, fact.node)
        for op in config.opens:
            want(op.path, op.node)
            for call in op.calls:
                want(call.path, call.node)
        for entry in config.all_entries():
            if id(entry) in seen_entries:
                continue
            seen_entries.add(id(entry))
            want(entry.path, entry.node)
            want(entry.path, entry.name_node)
            for call in entry.calls:
                want(call.path, call.node)
            for h in entry.hazards:
                want(h.path, h.node)
                for call in h.calls:
                    want(call.path, call.node)
            for w in entry.writes + entry.name_writes:
                for node in (w.target_node, w.stmt_node, w.key_node, w.value_node, w.field_node, w.value.source_node):
                    want(w.path if node is not w.value.source_node else (w.value.source_path or w.path), node)
                for call in w.calls:
                    want(call.path, call.node)
    for fact in facts:
        want(fact.path, fact.node)
        for call in fact.calls:
            want(call.path, call.node)
    ranges: dict[int, object] = {}
    for path, nodes in wanted.items():
        state = modules.get(path)
        if state is not None:
            ranges.update(node_ranges(nodes))

    def get(node):
        return ranges.get(id(node)) if node is not None else None

    for config in configs:
        config.range = get(config.node)
        for rewrite in config.rewrite:
            rewrite.range = get(rewrite.node)
        for fact in config.facts:
            fact.range = get(fact.node)
        for op in config.opens:
            op.range = get(op.node)
        for entry in config.all_entries():
            entry.range = get(entry.node)
            for h in entry.hazards:
                h.range = get(h.node)
            for w in entry.writes + entry.name_writes:
                w.range = get(w.target_node) or get(w.stmt_node)
                w.key_range = get(w.key_node)
                w.value_range = get(w.value_node)
                w.field_range = get(w.field_node)
    for fact in facts:
        fact.range = get(fact.node)
    return ranges
