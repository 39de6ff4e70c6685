"""Which imports of a file lead to code that can reach NPU configuration: the modules of the analysed
tree that hold an NPU marker or import one that does (:class:`TreeReach`), and which of their names can
(:meth:`TreeReach.exports`). A call through such a name is kept by the slice; :func:`_imports` reads a
file's imports into the local names the units are built with.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable
from typing import Callable, Optional, Union

from npu_audit.prefilter import may_configure_npu
from npu_audit.slicing.seeds import DEFINITION_CALLS, MARKER_TEXT_RE, SEED_IDENTIFIERS, _statements
from npu_audit.source import DEFAULT_MAX_BYTES
from npu_audit.text import IDENTIFIER_WORD

Reaches = Callable[[str, int], bool]
#: ``exports(dotted, level)``: the top-level names of a module of the tree (one ``reaches`` says yes for)
#: through which calls can reach NPU code; None when that is not known (any name can).
Exports = Callable[[str, int], Optional[frozenset[str]]]

#: What the slice knows of a local name imported from a module of the tree that can reach NPU code:
#: None, any call through it may build or fill a config (the module's exports are not known); True or
#: False, a name imported from such a module that is or is not one of its exports; a frozenset, the name
#: is such a module and these are its exports (``name.export(...)`` is a call that may).
HelperUse = Optional[Union[bool, frozenset]]


def _carries_npu(use: HelperUse, func: ast.expr, root: ast.Name) -> bool:
    """Whether calling ``func`` (reached through the imported name ``root``) may build or fill a config."""
    if use is None or isinstance(use, bool):
        return use is None or use
    if isinstance(func, ast.Attribute) and func.value is root:
        return func.attr in use
    return True  # (a submodule of it, or the module called: not known)


def _merged(old: HelperUse, new: HelperUse, first: bool) -> HelperUse:
    """What a name imported twice (in two branches, two functions) can do: either."""
    if first:
        return new
    if old is None or new is None or isinstance(old, bool) != isinstance(new, bool):
        return None
    if isinstance(old, bool):
        return old or bool(new)
    return old | new  # type: ignore[operator]


#: What a file's star imports of modules of the tree that can reach NPU code may bind that can: False, nothing
#: (no such import); True, any name (the exports of one are not known); else the names (their exports).
StarUse = Union[bool, frozenset]


def _imports(tree: ast.Module, modules: frozenset[str], reaches: Optional[Reaches],
             exports: Optional[Exports] = None) -> tuple[frozenset[str], dict[str, HelperUse], StarUse]:
    """Local names bound by importing a seed module or from one (``import npu_device as npu``: ``npu``);
    local names imported from a module of the tree that can reach NPU code (``reaches(dotted, level)``),
    with what of them can (``exports``; without it, anything); what star imports of such modules bind that
    can (:data:`StarUse`)."""
    seeds = set()
    star: StarUse = False
    helpers: dict[str, HelperUse] = {}

    def note(local: str, use: HelperUse) -> None:
        helpers[local] = _merged(helpers.get(local), use, local not in helpers)

    def module_use(dotted: str, level: int) -> HelperUse:
        return exports(dotted, level) if exports is not None else None

    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                if modules.intersection(alias.name.split(".")):
                    seeds.add(local)
                imported = alias.name if alias.asname else local
                if reaches is not None and reaches(imported, 0):
                    note(local, module_use(imported, 0))
        elif isinstance(node, ast.ImportFrom):
            dotted = node.module or ""
            parts = set(dotted.split("."))
            for alias in node.names:
                local = alias.asname or alias.name
                if parts & modules or alias.name in modules:
                    seeds.add(local)
                if reaches is None:
                    continue
                if alias.name == "*":
                    if star is not True and reaches(dotted, node.level):
                        use = module_use(dotted, node.level)
                        star = True if use is None else use.union(star or ())
                    continue
                submodule = f"{dotted}.{alias.name}" if dotted else alias.name
                if reaches(submodule, node.level):
                    note(local, module_use(submodule, node.level))
                elif reaches(dotted, node.level) and not _submodule_only(reaches, dotted, alias.name, node.level):
                    use = module_use(dotted, node.level)
                    note(local, None if use is None else alias.name in use)
    return frozenset(seeds), helpers, star


def _submodule_only(reaches: Reaches, dotted: str, name: str, level: int) -> bool:
    """Whether ``from dotted import name`` can only give the submodule ``name``, a file of the tree (a package
    that binds the name otherwise in its ``__init__`` may give something else): then whether it reaches NPU code
    is the submodule's answer, not the package's (``from . import utils`` in a package whose other modules do)."""
    check = getattr(reaches, "submodule_only", None)
    return check is not None and check(dotted, name, level)


#: How many modules deep :meth:`TreeReach.exports` reads the exports of a module's imports before it answers
#: "not known" (any name may be an NPU name): the reading recurses, and a chain of hundreds of modules would
#: exhaust Python's stack.
_EXPORTS_DEPTH = 16


class TreeReach:
    """``reaches(dotted, level)`` for the files of one folder: whether an import leads to a file below
    ``roots`` that holds an NPU marker or imports (transitively) one that does. What a file holds (a
    marker, the files its imports lead to) is read once per process (keyed by path, size and
    modification time); past ``budget`` files visited for one question the answer is yes (when in
    doubt, keep)."""

    _facts: dict[tuple[str, int, int], tuple[bool, tuple[str, ...]]] = {}
    # (path, size, mtime, seed words) -> the file's exports (:meth:`exports`)
    _exported: dict[tuple[str, int, int, frozenset[str]], Optional[frozenset[str]]] = {}
    # (the generation of imports, roots, budget) and the answers of __call__ made under it, by file
    _reached: tuple[Optional[tuple], dict[str, bool]] = (None, {})

    def __init__(self, folder: str, roots: tuple[str, ...], budget: int = 64,
                 identifiers: Iterable[str] = ()):
        self.folder = folder
        self.roots = roots
        self.budget = budget
        self.identifiers = SEED_IDENTIFIERS | DEFINITION_CALLS | frozenset(identifiers)

    def _resolve(self, dotted: str, level: int, folder: str) -> Optional[str]:
        from npu_audit.imports import resolve_in_tree

        return resolve_in_tree(dotted, level, folder, self.roots)

    def in_tree(self, dotted: str, level: int) -> bool:
        """Whether the module an import names is a file of the analysed tree (else the interpreter reads
        none of its code: an unmodelled call into it has an unknown value)."""
        return self._resolve(dotted, level, self.folder) is not None

    # how many modules are being read for their exports, each for the one before (:data:`_EXPORTS_DEPTH`)
    _exports_depth = 0
    # (path, size, mtime) of a package's __init__ -> the names it binds other than as its own submodules
    _bound_otherwise: dict[tuple[str, int, int], Optional[frozenset[str]]] = {}

    def submodule_only(self, dotted: str, name: str, level: int) -> bool:
        """:func:`_submodule_only`: ``dotted`` is a package (an ``__init__.py`` of the tree) with a submodule
        ``name``, and its ``__init__`` binds ``name`` only as that submodule (``from . import name``) or not at
        all."""
        if self._resolve(f"{dotted}.{name}" if dotted else name, level, self.folder) is None:
            return False
        package = self._resolve(dotted, level, self.folder)
        if package is None or os.path.basename(package) != "__init__.py":
            return False
        try:
            st = os.stat(package)
        except OSError:
            return False
        key = (package, st.st_size, st.st_mtime_ns)
        if key not in self._bound_otherwise:
            if len(self._bound_otherwise) > 10_000:
                self._bound_otherwise.clear()
            there = TreeReach(os.path.dirname(package), self.roots, self.budget)
            self._bound_otherwise[key] = _bound_otherwise(package, there.in_tree)
        bound = self._bound_otherwise[key]
        return bound is not None and name not in bound

    def __call__(self, dotted: str, level: int) -> bool:
        found = self._resolve(dotted, level, self.folder)
        if found is None:
            return False
        from npu_audit.imports import generation

        # (one answer per file and process, until imports.forget(): the tree may have changed then)
        shared = TreeReach._reached
        if shared[0] != (generation(), self.roots, self.budget):
            # (replaced whole, never emptied in place: the language server's threads may share it)
            shared = TreeReach._reached = ((generation(), self.roots, self.budget), {})
        answers = shared[1]
        known = answers.get(found)
        if known is None:
            known = answers[found] = self._reaches(found)
        return known

    def _file(self, path: str) -> Optional[tuple[bool, tuple[str, ...]]]:
        from npu_audit.imports import split_relative
        from npu_audit.prefilter import imported_module_names

        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (path, st.st_size, st.st_mtime_ns)
        facts = self._facts.get(key)
        if facts is None:
            try:
                with open(path, "rb") as handle:
                    raw = handle.read(DEFAULT_MAX_BYTES)
            except OSError:
                return None
            folder = os.path.dirname(path)
            if may_configure_npu(raw):
                facts = (True, ())
            else:
                targets = (self._resolve(*split_relative(name), folder) for name in imported_module_names(raw))
                facts = (False, tuple(sorted({t for t in targets if t is not None})))
            if len(self._facts) > 50_000:
                self._facts.clear()
            self._facts[key] = facts
        return facts

    def _reaches(self, start: str) -> bool:
        seen = {start}
        todo = [start]
        while todo:
            if len(seen) > self.budget:
                return True
            facts = self._file(todo.pop())
            if facts is None:
                continue
            if facts[0]:
                return True
            for target in facts[1]:
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return False

    def exports(self, dotted: str, level: int) -> Optional[frozenset[str]]:
        """The top-level names of the module an import names (a file of the tree that can reach NPU
        code) through which a call can reach it, or None when that cannot be told. A name counts when its
        statement holds an NPU marker, names an API the interpreter models or a flag definition, or
        reads a name imported from a module of the tree that can reach NPU code (or a name imported so,
        re-exported; of a module imported whole whose NPU names are known, one of those names), or, until
        nothing changes, reads a name that counts; the NPU names a star import brings count too. Words of the
        source are read, strings and comments too (more names count than could: what counts is kept), but not
        docstrings, which run nothing. A module whose imports lead back to it while it is read gives None."""
        found = self._resolve(dotted, level, self.folder)
        if found is None:
            return None
        try:
            st = os.stat(found)
        except OSError:
            return None
        key = (found, st.st_size, st.st_mtime_ns, self.identifiers)
        if key not in self._exported:
            if TreeReach._exports_depth >= _EXPORTS_DEPTH:
                return None  # (a long chain of modules, each read for the exports of the next: not known)
            if len(self._exported) > 10_000:
                self._exported.clear()
            self._exported[key] = None  # (while it is read: a module its imports lead back to gives no answer)
            TreeReach._exports_depth += 1
            try:
                self._exported[key] = self._exports_of(found)
            finally:
                TreeReach._exports_depth -= 1
        return self._exported[key]

    def _exports_of(self, path: str) -> Optional[frozenset[str]]:
        from npu_audit.relevance import carrying_names

        read = _read_tree(path)
        if read is None:
            return None
        text, tree = read
        there = TreeReach(os.path.dirname(path), self.roots, self.budget)
        _seeds, helpers, star = _imports(tree, frozenset(), there, there.exports)
        if star is True:
            return None  # (a star import of such a module whose exports are not known: any name may be one of its)
        # a module of the tree imported whole, whose exports are known (``from . import ops``): a statement reaches
        # its NPU code only through one of those (``ops.set_gpu_fraction()``), so they are the words to look for,
        # not the module's name (``ops`` is also a word of ``tensorflow.python.ops``); it stays an export itself
        modules = {name: use for name, use in helpers.items() if isinstance(use, frozenset)}
        carriers = frozenset(name for name in helpers if name not in modules).union(*modules.values())
        wanted = self.identifiers | carriers

        def is_seed(segment: str) -> bool:
            return bool(wanted.intersection(IDENTIFIER_WORD.findall(segment))) or bool(MARKER_TEXT_RE.search(segment))

        return frozenset(carrying_names(tree, _without_docstrings(tree, text), is_seed, exact=False,
                                        given=carriers)).union(modules, star or ())


def _without_docstrings(tree: ast.Module, text: str) -> str:
    """``text`` with every string that stands as a statement of its own blanked, line breaks kept: a docstring
    runs nothing (``>>> sess = tf.InteractiveSession()`` in a usage example)."""
    from npu_audit.syntax.source import Source

    strings = sorted((stmt.lineno, stmt.col_offset, stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
                      for stmt in _statements(tree.body)
                      if type(stmt) is ast.Expr and type(stmt.value) is ast.Constant and type(stmt.value.value) is str)
    if not strings:
        return text
    source = Source(text)  # (CPython's lines and byte columns)
    pieces: list[str] = []
    at = 0
    for line, column, end_line, end_column in strings:
        start, end = source.offset(line, column), source.offset(end_line, end_column)
        pieces += (text[at:start], _NOT_A_LINE_BREAK.sub(" ", text[start:end]))
        at = end
    return "".join(pieces) + text[at:]


_NOT_A_LINE_BREAK = re.compile(r"[^\r\n]")  # (Python's line breaks: npu_audit.text.LINE_BREAK)


def _bound_otherwise(package: str, in_tree: Callable[[str, int], bool]) -> Optional[frozenset[str]]:
    """The names a package's ``__init__`` binds at any depth, except by importing its own submodule of that
    name (``from . import utils``); None when it cannot be read or star-imports a module of the tree (a star
    import from outside the tree binds nothing the interpreter reads)."""
    from npu_audit.relevance import bound_names

    read = _read_tree(package)
    if read is None:
        return None
    tree = read[1]
    out: set[str] = set()
    for stmt in _statements(tree.body):
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            out.update(bound_names(stmt))  # (not the names imports bind: below)
            continue
        if isinstance(stmt, ast.ImportFrom) and any(alias.name == "*" for alias in stmt.names):
            if stmt.level or in_tree(stmt.module or "", 0):
                return None  # (a star import of a module of the tree may bind any name)
            continue
        own = isinstance(stmt, ast.ImportFrom) and stmt.level == 1 and not stmt.module  # (``from . import x``)
        for alias in stmt.names:
            local = alias.asname or alias.name.split(".")[0]
            if not (own and local == alias.name):
                out.add(local)
    return frozenset(out)


def _read_tree(path: str) -> Optional[tuple[str, ast.Module]]:
    """The text of a module of the tree and CPython's ast of it; None when it cannot be read or parsed."""
    from npu_audit.source import ReadProblem, read_source
    from npu_audit.syntax import python_tree

    source = read_source(path, path, DEFAULT_MAX_BYTES, lenient=True)
    if isinstance(source, ReadProblem):
        return None
    tree = python_tree(source.text)
    return None if tree is None else (source.text, tree)
