"""The second phase's choice: which files without NPU markers are analysed too (:func:`feeders`).

A file without an NPU marker can still matter: it may hand a helper module of the tree a value the helper
writes into a config, build a session from a helper's config, or write an option into an object a helper
returns. The first phase's reports say what each analysed module exports and whose values its writes take
(``FileReport.exports``, ``FileReport.caller_inputs``); every report says what its file imports. From
those, :func:`feeders` picks the files the run analyses again with ``force_parse``
(docs/architecture.md, "The second phase").
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional, Protocol

from npu_audit.findings import FileReport
from npu_audit.slice_knowledge import slice_knowledge

_INIT_PY = os.sep + "__init__.py"


class FileJob(Protocol):
    """What the choice reads of a job (``pipeline.Job``)."""

    file: str  # path to open
    settings: Any  # (its ``max_bytes``: how much of a file is read)
    source_bytes: Optional[bytes]


def feeders(jobs: Sequence[FileJob], results: Sequence[FileReport], roots: tuple[str, ...],
             given: frozenset[int] = frozenset(), elsewhere: Sequence[str] = ()) -> list[int]:
    """Files without NPU markers that take from a module which has them something that can carry NPU
    configuration, and can hand it a value it writes or build a config themselves: they are parsed too.

    Imports are resolved as the importing file's own interpreter would (``npu_audit.imports``), so a
    mere name clash (``import scipy.optimize`` in a tree holding an unrelated ``optimize.py``) does not
    count; ``from m import a`` counts when ``a`` is one of ``m``'s NPU exports (``npu_audit.relevance``)
    or an NPU submodule; ``import m`` and ``from m import *`` count when ``m`` has NPU code at all.
    Such a file is taken when one of those modules writes a value a caller may supply, or one from the
    file itself (``FileReport.caller_inputs``, ``npu_audit.extract.inputs``): a finding about a value is
    shown where the value comes from, so a file that can supply none has nothing the module's own
    analysis does not report. It is taken too when its text names an API that makes, fills or opens a
    config, or writes an option, or holds a suppression comment (:func:`names_config_api`).
    For the files named on the command line (``given``: indices of ``jobs``), a module that is not a
    file of the run is also looked for on the disk, so that ``npu-audit train.py`` reads train.py as
    ``npu-audit .`` does when train.py builds its config through a helper module. ``elsewhere``: the files the
    run found but left to other jobs (``--shard``): imports resolve to them as to files of the run, and they are
    read from the disk as modules the run does not analyse.
    """
    from npu_audit.imports import resolve_module, split_relative

    real_dirs: dict[str, str] = {}

    def real_folder(folder: str) -> str:
        """os.path.realpath of an absolute, normalised folder, one ``lstat`` per folder of the tree."""
        real = real_dirs.get(folder)
        if real is None:
            parent, name = os.path.split(folder)
            if not name:
                real = folder
            else:
                real = os.path.join(real_folder(parent), name)
                if os.path.islink(real):
                    real = os.path.realpath(real)
            real_dirs[folder] = real
        return real

    given_dirs: dict[str, str] = {}

    def absolute(file: str) -> str:
        folder, _, name = file.rpartition(os.sep)  # (os.path.split, for a path with a folder that is not the root)
        if not folder:
            folder, name = os.path.split(file)
        real = given_dirs.get(folder)
        if real is None:
            real = given_dirs[folder] = real_folder(os.path.abspath(folder))
        return real + name if real.endswith(os.sep) else real + os.sep + name

    paths = [absolute(job.file) for job in jobs]
    exports = {path: report.exports for path, report in zip(paths, results) if report.parsed}
    inputs = {path: report.caller_inputs for path, report in zip(paths, results) if report.parsed}
    imports_of = {path: report.imports for path, report in zip(paths, results)}
    others = {absolute(file) for file in elsewhere}
    if not exports and not given and not others:
        return []
    is_file = (set(paths) | others).__contains__
    # Every name an absolute import can start with and still find a file of the tree: the folders'
    # and the modules' names. Most imports (tensorflow, numpy, os) name none of them and are answered
    # without walking the importer's folders.
    names: set[str] = set()
    for path in [*paths, *others]:
        names.update(path.split(os.sep))
    names.update(name[:-3] for name in list(names) if name.endswith(".py"))
    resolved: dict[tuple[str, int, str], Optional[str]] = {}

    def resolve(dotted: str, level: int, here: str) -> Optional[str]:
        if not level and dotted.partition(".")[0] not in names:
            return None
        key = (dotted, level, here)
        if key not in resolved:
            resolved[key] = resolve_module(dotted, level, here, roots, is_file)
        return resolved[key]

    # A module resolves to a file with NPU code only if its last name is that file's (or, for a
    # package, its folder's): a cheap necessary condition tried before resolving.
    export_names = {os.path.basename(os.path.dirname(p)) if p.endswith(_INIT_PY) else os.path.basename(p)[:-3]
                    for p in [*exports, *others]}

    def may_be_export(dotted: str) -> bool:
        return not dotted or dotted.rpartition(".")[2] in export_names

    outside: dict[str, tuple[bool, Optional[list[str]]]] = {}

    def outside_module(path: str, max_bytes: int) -> tuple[bool, Optional[list[str]]]:
        """(has NPU code, its NPU exports) of a file the run does not analyse, read from the disk."""
        if path not in outside:
            from npu_audit import prefilter
            from npu_audit.extract.positions import python_ast
            from npu_audit.relevance import npu_exports
            from npu_audit.source import ReadProblem, read_source

            source = read_source(Path(path), path, max_bytes)
            if isinstance(source, ReadProblem) or not prefilter.may_configure_npu(source.raw):
                outside[path] = (False, None)
            else:
                outside[path] = (True, npu_exports(python_ast(source.text), source.text))
        return outside[path]

    def lookup(dotted: str, level: int, here: str, max_bytes: int,
               on_disk: bool) -> tuple[bool, Optional[list[str]], Optional[str]]:
        """Whether the module is one with NPU code, its NPU exports (None: any name may be one), and its
        path when it is a file the run analysed. ``on_disk``: a module that is not a file of the run is looked
        for on the disk too. Such a module, and a file left to another job (``elsewhere``), is read from the
        disk, at most ``max_bytes`` of it (the importing file's --max-file-size)."""
        if on_disk:
            found = resolve(dotted, level, here)
            if found is None:
                from npu_audit.imports import resolve_in_tree

                real = resolve_in_tree(dotted, level, here, roots)
                if real is None or is_file(real):
                    return False, None, None
                return (*outside_module(real, max_bytes), None)
        else:
            found = resolve(dotted, level, here) if may_be_export(dotted) else None
        if found in exports:
            return True, exports[found], found
        if found is not None and found in others:
            return (*outside_module(found, max_bytes), None)
        return False, None, None

    # absolute imports that lead to no file with NPU code, wherever the importer is: no name of theirs is
    # that of such a file (``numpy``, ``os.path``: most imports of the tree, each asked thousands of times)
    no_npu_by_name: set[str] = set()

    def takes_npu(imported: str, here: str, max_bytes: int, on_disk: bool) -> tuple[bool, Optional[str]]:
        """Whether the import takes something that can carry NPU configuration, and from which file of
        the run (None: a module read from the disk, or none)."""
        if not on_disk and imported in no_npu_by_name:
            return False, None
        module, _, member = imported.partition(":")
        dotted, level = split_relative(module)
        if not on_disk and not level and not may_be_export(dotted) \
                and not (member and may_be_export(f"{dotted}.{member}")):
            no_npu_by_name.add(imported)
            return False, None
        npu, members, found = lookup(dotted, level, here, max_bytes, on_disk)
        if not member:
            return npu, found
        if npu and (members is None or member == "*" or member in members):
            return True, found
        submodule = f"{dotted}.{member}" if dotted else member
        npu, _members, found = lookup(submodule, level, here, max_bytes, on_disk)
        return npu, found

    leads: dict[str, list[str]] = {}

    def imported_files(current: str) -> list[str]:
        """The files of the run that ``current``'s imports lead to (a module, or the submodule it names)."""
        out = leads.get(current)
        if out is not None:
            return out
        here = os.path.dirname(current)
        out = leads[current] = []
        for imported in imports_of.get(current, ()):
            module, _, member = imported.partition(":")
            dotted, level = split_relative(module)
            found = None
            if member and member != "*":
                found = resolve(f"{dotted}.{member}" if dotted else member, level, here)
            if found is None and (dotted or level):
                found = resolve(dotted, level, here)
            if found is not None:
                out.append(found)
        return out

    taken_below: dict[str, Optional[frozenset[str]]] = {}

    def sources_below(module: str) -> Optional[frozenset[str]]:
        """The files whose values the writes of ``module`` and of the files of the run it imports,
        transitively (through modules without NPU code too: a re-export), take; None when one of them may
        take a caller's value (``FileReport.caller_inputs``). Once per module and run: a helper module has
        many importers."""
        if module in taken_below:
            return taken_below[module]
        found: set[str] = set()
        result: Optional[frozenset[str]] = None
        seen = {module}
        todo = [module]
        while todo:  # (breadth first, stopping at the first module that may take a caller's value: most do at once)
            each = todo.pop(0)
            if each in others:  # (left to another job: what it imports and takes is not known here)
                break
            if each in inputs:  # (a file without NPU code writes nothing)
                taken = inputs[each]
                if taken is None:
                    break
                found.update(taken)
            for target in imported_files(each):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        else:
            result = frozenset(found)
        taken_below[module] = result
        return result

    def may_supply(module: Optional[str], importer: str) -> bool:
        """Whether ``importer`` can hand ``module`` (None: one whose analysis the run has not), or a file of the
        run that ``module`` imports, a value it writes: through ``module`` an importer reaches their code
        (``helpers.npu_lib.make(...)``)."""
        if module is None:
            return True
        taken = sources_below(module)
        # (the sources are real paths; a file may be a link)
        return taken is None or bool(taken) and (importer in taken or os.path.realpath(importer) in taken)

    out = []
    for i, report in enumerate(results):
        if report.parsed or not report.imports:
            continue
        here = os.path.dirname(paths[i])
        max_bytes, on_disk = jobs[i].settings.max_bytes, i in given
        modules = set()
        for imported in report.imports:
            npu, module = takes_npu(imported, here, max_bytes, on_disk)
            if npu:
                modules.add(module)
        if not modules:
            continue
        if any(may_supply(module, paths[i]) for module in modules) or names_config_api(jobs[i]):
            out.append(i)
    return out




#: TensorFlow's own classes that take a session config (``RunConfig(session_config=...)``, an ``Estimator``
#: given one), besides those the knowledge base names.
CONFIG_TAKERS = frozenset({"RunConfig", "Estimator"})
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_config_words: Optional[tuple[frozenset[bytes], frozenset[bytes]]] = None


def _words() -> tuple[frozenset[bytes], frozenset[bytes]]:
    """(names of the APIs that make, fill, take or open a config, names of the options), once per process:
    the slice's seed identifiers and consumers, the knowledge base's config objects and config calls but
    the flag definitions, :data:`CONFIG_TAKERS`; the TF1 keys and the parts of the TF2 option paths."""
    global _config_words
    if _config_words is None:
        from npu_audit import slicing
        from npu_audit.knowledge.loader import load

        kb = load()
        known = slice_knowledge(kb)
        apis = set(slicing.SEED_IDENTIFIERS | slicing.CONSUMERS | CONFIG_TAKERS) - {"setattr"}
        apis.update(known.identifiers)
        # (not the calls that define flags and arguments: what their values do is caller_inputs' business)
        api = getattr(kb, "tf_api", None)
        definitions = set(api.call_names("define-flag", "argument-parser")) if api is not None else set()
        apis.update(set(known.config_calls) - definitions)
        options = set(kb.options)
        if kb.tf2 is not None:
            options.update(part for path in list(kb.tf2.options) + list(kb.tf2.groups) for part in path.split(".") if part)
        _config_words = (frozenset(name.encode("ascii") for name in apis),
                         frozenset(name.encode("ascii") for name in options - apis))
    return _config_words


def names_config_api(job: FileJob) -> bool:
    """Whether the file's text names an API that makes, fills, takes or opens a config (:func:`_words`), or
    writes an option, or holds "npu-audit" (a suppression comment, which the file's analysis reads); True
    when it cannot be read (its analysis reports why). Such a file is a file of the second phase whatever
    the modules it imports write.

    An option is written into an object a helper returns either by its name as a string (a TF1 key,
    ``setattr(opts, "precision_mode", v)``) or as an attribute stored (``opts.precision_mode = ...``, a TF2
    option); so an option's name counts only in those two forms. Many options are named like everyday
    words of model code (``input_shape``, ``job``, ``experimental``): as a keyword argument or an attribute
    read they write no option (a value handed to a helper that writes it is ``caller_inputs``' business)."""
    apis, options = _words()
    raw = job.source_bytes
    if raw is None:
        try:
            with open(job.file, "rb") as handle:
                raw = handle.read(job.settings.max_bytes + 1)
        except OSError:
            return True
    if b"npu-audit" in raw:
        return True
    # (the file's words against the sets: several times faster than one pattern of some 300 alternatives)
    words = set(_WORD.findall(raw))
    if not apis.isdisjoint(words):
        return True
    return any(_writes_option(name, raw) for name in options.intersection(words))


_defined_as_flag: Optional[re.Pattern[bytes]] = None


def _writes_option(name: bytes, raw: bytes) -> bool:
    """Whether ``raw`` names option ``name`` as a string (``setattr(opts, "name", v)``, a TF1 key) or stores it
    as an attribute (``opts.name = v``). A string that names a flag or an argument being defined
    (``flags.DEFINE_integer("iterations_per_loop", ...)``, ``parser.add_argument("precision_mode")``: a call of
    ``slicing.DEFINITION_CALLS``) is neither: what its default does is ``caller_inputs``' business (the
    default's source is the defining file)."""
    global _defined_as_flag
    if _defined_as_flag is None:
        from npu_audit.slicing import DEFINITION_CALLS

        calls = b"|".join(re.escape(call.encode("ascii")) for call in sorted(DEFINITION_CALLS))
        _defined_as_flag = re.compile(rb"\b(?:%s)\(\s*(?:name\s*=\s*)?$" % calls)
    for match in re.finditer(rb"[\"']%s[\"']|\.%s\s*=(?!=)" % (name, name), raw):
        start = match.start()
        if raw[start] != 0x2E and _defined_as_flag.search(raw, max(0, start - 80), start):  # (0x2E: ".")
            continue
        return True
    return False
