"""The npu-audit language server: ``npu-audit lsp`` (LSP 3.17 over stdio, built on pygls 2.x).

Features
    * diagnostics for the UNSAVED buffer: on open, on change (debounced), on save; published with
      the document version; stale results are dropped; cleared on close;
    * code actions: the quickfixes of the findings in the requested range, a "suppress" action per
      finding, and ``source.fixAll.npu-audit`` (safe fixes only);
    * hover over an option key (``parameter_map["..."]``), an ``NPURunConfig``/config-object keyword,
      or a value string of such a write: the knowledge base's documentation / the value's facts;
    * completion of option keys inside ``parameter_map["`` and of enum values inside the value string;
    * TensorFlow 2: hover and completion on ``global_options().<group>.<option>`` chains (lsp_tf2);
    * settings ``release``, ``product``, ``scenario``, ``select``, ``ignore`` from
      ``initializationOptions`` or the client's workspace configuration (section ``npu-audit``),
      layered over the nearest ``[tool.npu-audit]`` table (whose per-file-ignores apply, matched
      relative to its folder, as on the command line).

The editor-independent parts (what is under the cursor, the hover text, the completion items,
position-encoding conversion, turning a buffer into a :class:`~npu_audit.pipeline.Job`) are plain
functions that do not need pygls; :func:`create_server` wires them to a pygls ``LanguageServer``.
Analysis runs in worker threads (``run_in_executor``) so the server keeps answering while a file is
being checked.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import logging
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from npu_audit.explain import value_markdown
from npu_audit.text import LINE_BREAK, split_lines, suggestions

logger = logging.getLogger("npu_audit.lsp")

SERVER_NAME = "npu-audit"
CONFIG_SECTION = "npu-audit"
SETTING_NAMES = ("release", "product", "scenario", "select", "ignore")
# After a change, analyse once the user has paused for as long as the last analysis of that document
# took, within these bounds: a fast analysis answers almost at once, a slow one is not run for every
# keystroke (it could not keep up anyway).
DEBOUNCE_SECONDS = 0.3  # the longest pause waited for
DEBOUNCE_MIN_SECONDS = 0.03
FIX_ALL_KIND = "source.fixAll.npu-audit"  # = npu_audit.render.lsp.FIX_ALL_KIND
DEPRECATED_STATUSES = ("deprecated", "no-effect", "not-supported")

# LSP enumerations used in the plain-dict helpers (same numbers as lsprotocol.types).
_KIND_ENUM_MEMBER = 20
_KIND_PROPERTY = 10
_TAG_DEPRECATED = 1


# =============================================================================================
# text, lines and position encodings


def line_offset(text: str, line: int) -> int:
    """Offset in ``text`` (code points) of the start of 0-based ``line``."""
    if line <= 0:
        return 0
    for i, m in enumerate(LINE_BREAK.finditer(text), start=1):
        if i == line:
            return m.end()
    return len(text)


def _unit_width(c: str, encoding: str) -> int:
    if encoding == "utf-8":
        o = ord(c)
        return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
    if encoding == "utf-32":
        return 1
    return 2 if ord(c) > 0xFFFF else 1


def client_to_char(line_text: str, column: int, encoding: str = "utf-16") -> int:
    """0-based code-point index of the 0-based client ``column`` (in ``encoding`` units)."""
    units = 0
    for i, c in enumerate(line_text):
        width = _unit_width(c, encoding)
        if units + width > column:
            return i
        units += width
    return len(line_text) + max(column - units, 0)


def char_to_client(line_text: str, index: int, encoding: str = "utf-16") -> int:
    """0-based client column (in ``encoding`` units) of 0-based code-point ``index``."""
    head = line_text[: max(index, 0)]
    return sum(_unit_width(c, encoding) for c in head) + max(index - len(line_text), 0)


def _convert_position(pos: dict, lines: list[str], encoding: str) -> None:
    text = lines[pos["line"]] if 0 <= pos["line"] < len(lines) else ""
    index = client_to_char(text, pos["character"], "utf-16")
    pos["character"] = char_to_client(text, index, encoding)


def recode_ranges(obj: Any, uri: str, text: str | None, encoding: str) -> Any:
    """Rewrite (in place) the UTF-16 positions of ``uri`` inside an LSP dict (Diagnostic, CodeAction,
    WorkspaceEdit, CompletionItem...) into ``encoding`` units. Ranges in other documents are left
    alone. A no-op for UTF-16, the encoding npu_audit.render.lsp produces."""
    if encoding == "utf-16" or text is None:
        return obj
    lines = split_lines(text)

    def walk(o: Any, mine: bool) -> None:
        if isinstance(o, list):
            for item in o:
                walk(item, mine)
            return
        if not isinstance(o, dict):
            return
        if isinstance(o.get("uri"), str) and "range" in o:  # Location
            mine = o["uri"] == uri
        if isinstance(o.get("textDocument"), dict) and "edits" in o:  # TextDocumentEdit
            mine = o["textDocument"].get("uri") == uri
        for key, value in o.items():
            if key == "changes" and isinstance(value, dict):  # WorkspaceEdit.changes: uri -> edits
                for u, edits in value.items():
                    walk(edits, u == uri)
            elif key in ("range", "insert", "replace") and isinstance(value, dict) and "start" in value:
                if mine:
                    _convert_position(value["start"], lines, encoding)
                    _convert_position(value["end"], lines, encoding)
            else:
                walk(value, mine)

    walk(obj, True)
    return obj


# =============================================================================================
# documents -> jobs


_CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)
_BLANK_OR_COMMENT = re.compile(r"^[ \t\f]*(?:#.*)?$")


def source_encoding(text: str) -> str | None:
    """The PEP 263 coding cookie of ``text`` (first or second line), or None."""
    lines = LINE_BREAK.split(text, maxsplit=2)[:2]
    for i, line in enumerate(lines):
        m = _CODING.match(line)
        if m:
            return m.group(1)
        if i == 0 and not _BLANK_OR_COMMENT.match(line):
            return None
    return None


def encode_buffer(text: str) -> bytes:
    """The bytes a file with this text would hold: encoded per its PEP 263 coding cookie, else (no
    cookie, or a codec Python does not know) UTF-8.

    Characters the cookie's encoding cannot represent (the file could not be saved like that) become
    ``?``: one character for one, so every position the analysis reports stays right, where UTF-8
    bytes read back under the cookie would shift columns or make the file unreadable.
    """
    cookie = source_encoding(text)
    if cookie:
        try:
            if codecs.lookup(cookie).name != "utf-8":
                return text.encode(cookie, "replace")
        except (LookupError, UnicodeError):
            pass
    return text.encode("utf-8", "replace")


def uri_to_path(uri: str) -> str | None:
    """The file-system path of a ``file:`` URI, else None (untitled buffers and other schemes)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if os.name == "nt":  # pragma: no cover - Windows
        if re.match(r"^/[A-Za-z]:", path):
            path = path[1:]
        if parsed.netloc:
            path = f"//{parsed.netloc}{path}"
        return str(Path(path))
    return path


def document_file(uri: str, roots: tuple[str, ...]) -> str:
    """Where a document lives (or would live: untitled buffers are placed in the first root)."""
    path = uri_to_path(uri)
    if path:
        return path
    name = Path(unquote(urlparse(uri).path or "untitled")).name or "untitled"
    if not name.endswith(".py"):
        name += ".py"
    return str(Path(roots[0] if roots else os.getcwd()) / name)


def job_roots(file: str, workspace_roots: tuple[str, ...]) -> tuple[str, ...]:
    """Job.roots: the workspace folders, plus the document's folder when it lies outside them."""
    folder = str(Path(file).parent)
    roots = list(workspace_roots)
    inside = any(folder == r or folder.startswith(r.rstrip(os.sep) + os.sep) for r in roots)
    if not inside:
        roots.append(folder)
    return tuple(dict.fromkeys(roots))


PYTHON_SUFFIXES = (".py", ".pyw", ".pyi")


def is_python(uri: str, language_id: str | None) -> bool:
    """Whether an opened document is checked: Python by language id, or by file name."""
    if language_id:
        return language_id.lower() == "python"
    return unquote(urlparse(uri).path).lower().endswith(PYTHON_SUFFIXES)


# =============================================================================================
# settings


def parse_settings(raw: Any, kb) -> tuple[dict, list[str]]:
    """Validated Settings overrides from client settings, and the problems found.

    ``raw`` is the flat table ``{"release": ..., ...}`` or one nested under ``"npu-audit"``
    (also ``npuAudit`` / ``npu_audit``). Unknown keys are ignored; ``null`` or ``""`` means "not set".
    """
    from npu_audit.settings import SettingsError, validate_product, validate_release, validate_scenario

    if not isinstance(raw, dict):
        return {}, []
    for nested in (CONFIG_SECTION, "npuAudit", "npu_audit"):
        if isinstance(raw.get(nested), dict):
            raw = raw[nested]
            break
    out: dict = {}
    problems: list[str] = []
    for name in SETTING_NAMES:
        value = raw.get(name)
        if value is None or value == "" or value == []:
            continue
        try:
            if name == "release":
                out["release"] = validate_release(value, "npu-audit.release")
            elif name == "product":
                out["product"] = validate_product(value, kb, "npu-audit.product")
            elif name == "scenario":
                out["scenario"] = validate_scenario(value, "npu-audit.scenario")
            else:
                out[name] = _selectors(value, name)
        except SettingsError as exc:
            problems.append(str(exc))
    return out, problems


def _selectors(value: Any, name: str) -> tuple[str, ...]:
    from npu_audit.checks import all_rules
    from npu_audit.settings import SettingsError, validate_selectors

    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
        raise SettingsError(f"npu-audit.{name}: a list of check codes or names")
    # the same rule as the command line and pyproject.toml: a check that matches nothing is an error
    return validate_selectors(tuple(v.strip() for v in items if v.strip()), f"npu-audit.{name}", all_rules())


# =============================================================================================
# what is under the cursor


_QUOTED_KEY = r"""parameter_map\s*\[\s*[bBuU]?(?P<q>['"])(?P<key>[^'"\\\r\n]*)(?P=q)\s*\]"""
_KEY_RE = re.compile(_QUOTED_KEY)
_WRITE_RE = re.compile(_QUOTED_KEY + r"\s*\.\s*(?P<field>[bis])\s*=(?!=)\s*")
_STRING_RE = re.compile(r"""(?<![\w'"])(?P<prefix>[bBuUrR]{0,2})(?P<q>['"])(?P<body>(?:\\.|(?!(?P=q))[^\\\r\n])*)(?P=q)""")
_WORD_RE = re.compile(r"[A-Za-z_]\w*")
_ASSIGN_AFTER = re.compile(r"\s*=(?!=)")
_KW_BEFORE_VALUE = re.compile(r"(?<![\w.])(?P<kw>[A-Za-z_]\w*)\s*=\s*(?:[\w.]+\s*\(\s*)?$")

_KEY_PREFIX_RE = re.compile(r"""parameter_map\s*\[\s*[bBuU]?(?P<q>['"])(?P<partial>[\w.\-]*)$""")
_VALUE_PREFIX_RE = re.compile(
    r"""parameter_map\s*\[\s*[bBuU]?(?P<kq>['"])(?P<key>[^'"\\\r\n]+)(?P=kq)\s*\]\s*\.\s*(?P<field>[bis])\s*=\s*"""
    r"""(?:[\w.]+\s*\(\s*)?[bBuU]?(?P<q>['"])(?P<partial>[^'"\\\r\n]*)$"""
)
_KW_VALUE_PREFIX_RE = re.compile(
    r"""(?<![\w.])(?P<kw>[A-Za-z_]\w*)\s*=\s*(?:[\w.]+\s*\(\s*)?[bBuU]?(?P<q>['"])(?P<partial>[^'"\\\r\n]*)$"""
)
_VALUE_CHARS = re.compile(r"""[^'"\\\s,)]*""")
_KEY_CHARS = re.compile(r"[\w.\-]*")
_CALLEE_BEFORE = re.compile(r"(?P<callee>[A-Za-z_][\w.]*)\s*$")


@dataclass(frozen=True)
class Span:
    """Part of one line: 0-based line, 0-based code-point columns, end exclusive."""

    line: int
    start: int
    end: int

    def to_dict(self, line_text: str, encoding: str = "utf-16") -> dict:
        return {
            "start": {"line": self.line, "character": char_to_client(line_text, self.start, encoding)},
            "end": {"line": self.line, "character": char_to_client(line_text, self.end, encoding)},
        }


def enclosing_call(text: str, offset: int, limit: int = 20000) -> str | None:
    """The callee (last dotted part) of the call whose parentheses contain ``offset``, or None.

    A cheap backwards scan: parentheses inside strings or comments may mislead it, which costs at
    worst a missing hover or completion.
    """
    depth = 0
    stop = max(0, offset - limit)
    i = offset - 1
    while i >= stop:
        c = text[i]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth == 0:
                if c != "(":
                    return None
                m = _CALLEE_BEFORE.search(text, max(0, i - 200), i)
                return m.group("callee").rsplit(".", 1)[-1] if m else None
            depth -= 1
        i -= 1
    return None


def runconfig_param(kb, callee: str | None, keyword: str):
    """The RunConfigParam for ``callee(keyword=...)`` (NPURunConfig or a config object), or None."""
    if callee is None:
        return None
    rc = kb.runconfig
    if callee in ("NPURunConfig",):
        return rc.kwargs.get(keyword)
    obj = rc.objects.get(callee)
    if obj is not None:
        return next((p for p in obj.params if p.name == keyword), None)
    return None


def key_markdown(kb, key: str, release: str) -> str:
    """Hover text for an option key (known, known-but-unread, or unknown)."""
    from npu_audit.explain import explain_option

    if key in kb.options:
        return explain_option(kb, key, release, markdown=True)
    unread = kb.unread_keys.get(key)
    if unread is not None:
        text = f"# {key}\n\n**Not read by any adapter version**: {unread.reason}\n"
        if unread.suggestion:
            text += f"\nUse instead: `{unread.suggestion}`\n"
        return text
    text = f"# {key}\n\n**Unknown option**: no adapter version reads this key, so the setting has no effect.\n"
    close = suggestions(key, kb.options)
    if close:
        text += "\nDid you mean " + ", ".join(f"`{c}`" for c in close) + "?\n"
    return text


def param_markdown(kb, callee: str, param, release: str) -> str:
    """Hover text for an NPURunConfig (or config object) keyword."""
    from npu_audit.explain import explain_option

    head = f"**{callee}({param.name}=...)**"
    if param.key and param.key in kb.options:
        text = f"{head} writes `parameter_map[\"{param.key}\"].{param.field or kb.options[param.key].field}`"
        if param.written:
            text += f" ({param.written})"
        if param.hazard:
            text += f"\n\n⚠ {param.hazard}"
        return text + "\n\n---\n\n" + explain_option(kb, param.key, release, markdown=True)
    parts = [head, ""]
    if param.key:
        parts.append(f"Writes `parameter_map[\"{param.key}\"]`, a key no adapter version reads.")
    elif param.object:
        parts.append(f"Takes a `{param.object}(...)`; hover its keywords for the options they set.")
    else:
        parts.append("Not a parameter_map session option.")
    if param.note:
        parts += ["", param.note]
    if param.hazard:
        parts += ["", f"⚠ {param.hazard}"]
    return "\n".join(parts) + "\n"


def hover_at(kb, release: str, text: str, line: int, col: int) -> tuple[str, Span] | None:
    """Markdown and span for what is at 0-based ``line`` / code-point ``col`` of ``text``, or None."""
    lines = split_lines(text)
    if not 0 <= line < len(lines):
        return None
    s = lines[line]
    # 0. TensorFlow 2: a name or value of a global_options() chain (npu_audit.lsp_tf2)
    from npu_audit import lsp_tf2

    tf2 = lsp_tf2.hover(kb, release, s, col)
    if tf2 is not None:
        return tf2[0], Span(line, tf2[1], tf2[2])
    # 1. an option key: parameter_map["<key>"]
    for m in _KEY_RE.finditer(s):
        if m.start("q") <= col <= m.end("key") + 1:
            return key_markdown(kb, m.group("key"), release), Span(line, m.start("q"), m.end("key") + 1)
    # 2. a value string of a parameter_map write
    for m in _WRITE_RE.finditer(s):
        key = m.group("key")
        if key not in kb.options:
            continue
        for sm in _STRING_RE.finditer(s, m.end()):
            if sm.start() <= col <= sm.end():
                return value_markdown(kb, key, sm.group("body"), release), Span(line, sm.start(), sm.end())
    # 3. a keyword of NPURunConfig(...) / DumpConfig(...) & co.
    base = line_offset(text, line)
    for m in _WORD_RE.finditer(s):
        if m.start() <= col <= m.end() and _ASSIGN_AFTER.match(s, m.end()):
            callee = enclosing_call(text, base + m.start())
            param = runconfig_param(kb, callee, m.group())
            if param is not None:
                return param_markdown(kb, callee, param, release), Span(line, m.start(), m.end())
            break
    # 4. a value string of such a keyword
    for sm in _STRING_RE.finditer(s):
        if sm.start() <= col <= sm.end():
            km = _KW_BEFORE_VALUE.search(s, 0, sm.start())
            if km:
                callee = enclosing_call(text, base + km.start("kw"))
                param = runconfig_param(kb, callee, km.group("kw"))
                if param is not None and param.key in kb.options:
                    return value_markdown(kb, param.key, sm.group("body"), release), Span(line, sm.start(), sm.end())
            break
    return None


# =============================================================================================
# completion


def _deprecated(spec, release: str) -> bool:
    lc = spec.lifecycle.get(release)
    return lc is not None and lc.status in DEPRECATED_STATUSES


def key_items(kb, release: str, span: Span, line_text: str, encoding: str = "utf-16") -> list[dict]:
    """CompletionItem dicts for every option key, replacing ``span`` (the partial key)."""
    from npu_audit.explain import FIELD_TEXT, explain_option

    rng = span.to_dict(line_text, encoding)
    items = []
    for key in sorted(kb.options, key=str.lower):
        spec = kb.options[key]
        view = spec.for_release(release)
        deprecated = _deprecated(spec, release)
        detail = f"{FIELD_TEXT.get(view.field, view.field)} — {spec.summary}"
        if deprecated:
            lc = view.lifecycle
            detail = f"[{lc.status}{' -> ' + lc.replacement if lc.replacement else ''}] " + detail
        item = {
            "label": key,
            "kind": _KIND_PROPERTY,
            "detail": detail,
            "documentation": {"kind": "markdown", "value": explain_option(kb, key, release, markdown=True)},
            "sortText": ("1" if deprecated else "0") + key.lower(),
            "filterText": key,
            "textEdit": {"range": rng, "newText": key},
        }
        if deprecated:
            item["tags"] = [_TAG_DEPRECATED]
        items.append(item)
    return items


def value_items(kb, key: str, release: str, span: Span, line_text: str, encoding: str = "utf-16") -> list[dict]:
    """CompletionItem dicts for the enum values of option ``key``, replacing ``span``."""
    spec = kb.options.get(key)
    if spec is None:
        return []
    view = spec.for_release(release)
    if view.domain.kind != "enum":
        return []
    rng = span.to_dict(line_text, encoding)
    items = []
    for i, value in enumerate(v for v in view.domain.values if isinstance(v, str)):
        fact = spec.value_fact(value)
        notes = []
        older = False
        if fact is not None:
            if fact.preferred is not None and fact.preferred != value:
                notes.append(f"prefer {fact.preferred!r}")
                older = True
            elif fact.same_as is not None:
                notes.append(f"same as {fact.same_as!r}")
            if fact.scenarios:
                notes.append("only " + "/".join(fact.scenarios))
            if fact.products:
                notes.append("only on " + ", ".join(fact.products))
            if fact.releases and release not in fact.releases:
                older = True
        if view.default == value:
            notes.insert(0, "default")
        item = {
            "label": value,
            "kind": _KIND_ENUM_MEMBER,
            "detail": f"{key}" + (f" — {'; '.join(notes)}" if notes else ""),
            "documentation": {"kind": "markdown", "value": value_markdown(kb, key, value, release)},
            "sortText": f"{1 if older else 0}{i:03d}",
            "filterText": value,
            "textEdit": {"range": rng, "newText": value},
        }
        if older:
            item["tags"] = [_TAG_DEPRECATED]
        items.append(item)
    return items


def completion_at(kb, release: str, text: str, line: int, col: int, encoding: str = "utf-16") -> list[dict] | None:
    """CompletionItem dicts for the cursor, or None when npu-audit has nothing to offer there."""
    lines = split_lines(text)
    if not 0 <= line < len(lines):
        return None
    s = lines[line]
    col = min(col, len(s))
    prefix = s[:col]
    from npu_audit import lsp_tf2

    tf2 = lsp_tf2.completion(kb, release, s, col)  # TensorFlow 2: after global_options(). or in its value
    if tf2 is not None:
        items, start, end = tf2
        rng = Span(line, start, end).to_dict(s, encoding)
        for item in items:
            item["textEdit"] = {"range": rng, "newText": item.pop("newText")}
        return items or None
    m = _KEY_PREFIX_RE.search(prefix)
    if m:
        end = _KEY_CHARS.match(s, col).end()
        return key_items(kb, release, Span(line, m.start("partial"), end), s, encoding)
    m = _VALUE_PREFIX_RE.search(prefix)
    key = None
    if m:
        key = m.group("key")
    else:
        m = _KW_VALUE_PREFIX_RE.search(prefix)
        if m:
            callee = enclosing_call(text, line_offset(text, line) + m.start("kw"))
            param = runconfig_param(kb, callee, m.group("kw"))
            key = param.key if param is not None else None
    if m and key:
        end = _VALUE_CHARS.match(s, col).end()
        return value_items(kb, key, release, Span(line, m.start("partial"), end), s, encoding) or None
    return None


# =============================================================================================
# the server


@dataclass
class DocState:
    generation: int = 0
    pending: asyncio.Future | None = None
    report: Any = None  # FileReport of the last published analysis
    version: int | None = None
    text: str | None = None
    # the last analysis made for a request (code actions) on the current text
    fresh: tuple[str, Any] | None = None
    dependencies: tuple[str, ...] = field(default_factory=tuple)
    release: str | None = None  # from the settings of the last analysis (pyproject + client)
    last_duration: float = 0.0  # seconds the last analysis took (the next debounce)


class Engine:
    """Editor-independent state of the server: settings, open documents, analyses."""

    def __init__(self, workers: int = 2):
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="npu-audit-analysis")
        self.init_settings: dict = {}
        self.workspace_settings: dict = {}
        self.docs: dict[str, DocState] = {}
        self._kb = None
        self._rules_by_code = None
        # per document: (settings and text, Fixer, quick-fix verdicts, fix-all result) of the last code-action request,
        # so moving the cursor over an unchanged buffer does not re-run the fix engine
        self._fixes: dict[str, tuple[str, Any, dict, list]] = {}

    @property
    def kb(self):
        if self._kb is None:
            from npu_audit.knowledge.loader import load

            self._kb = load()
        return self._kb

    @property
    def rules_by_code(self) -> dict:
        if self._rules_by_code is None:
            from npu_audit.checks import all_rules

            self._rules_by_code = {r.code: r for r in all_rules()}
        return self._rules_by_code

    @property
    def overrides(self) -> dict:
        return {**self.init_settings, **self.workspace_settings}

    @property
    def release(self) -> str:
        return self.overrides.get("release", "current")

    def job(self, uri: str, text: str, workspace_roots: tuple[str, ...]):
        """The pipeline Job for the buffer ``text`` of ``uri`` (and a settings problem, if any)."""
        from npu_audit.pipeline import Job, settings_for
        from npu_audit.settings import Settings, SettingsError

        file = document_file(uri, workspace_roots)
        roots = job_roots(file, workspace_roots)
        base = Settings()
        problem = None
        try:
            settings = settings_for(Path(file), base, self.overrides, {}, self.kb)
        except SettingsError as exc:
            problem = str(exc)
            settings = replace(base, **self.overrides)
        job = Job(file=file, display=file, roots=roots, settings=settings, source_bytes=encode_buffer(text))
        return job, problem

    def analyze(self, uri: str, text: str, workspace_roots: tuple[str, ...]):
        """(FileReport, settings problem or None, Settings used); runs in a worker thread."""
        from npu_audit.pipeline import analyze_file

        job, problem = self.job(uri, text, workspace_roots)
        return analyze_file(job), problem, job.settings

    def release_for(self, uri: str) -> str:
        """The release hovers and completions describe: the document's effective settings."""
        state = self.docs.get(uri)
        if state is not None and state.release:
            return state.release
        return self.release

    # -- LSP-shaped results (dicts, in the client's position encoding) --------------------------

    def diagnostics(self, report, uri: str, encoding: str) -> list[dict]:
        from npu_audit.findings import Finding
        from npu_audit.render import lsp as render_lsp

        out = []
        for f in sorted(report.findings, key=Finding.sort_key):
            d = render_lsp.diagnostic(f, report, self.rules_by_code)
            out.append(recode_ranges(d, uri, report.text, encoding))
        return out

    def code_actions(self, report, uri: str, rng: dict, only: list[str] | None, encoding: str,
                     context_diagnostics: list[dict] = (), text: str | None = None,
                     workspace_roots: tuple[str, ...] = ()) -> list[dict]:
        """Quick fixes, suppressions and fix-all for ``report`` (the analysis of ``text``). With
        ``text``, fixes go through the fix engine (:class:`npu_audit.fix.Fixer`): a quick fix that
        would not leave valid Python, or a safe one that would change the effective configuration,
        is not offered, and fix-all is the engine's whole result (rounds, re-check). Runs in a
        worker thread: the engine re-analyses the buffer."""
        from dataclasses import replace as _replace

        from npu_audit.findings import Finding
        from npu_audit.fix import Fixer
        from npu_audit.render import lsp as render_lsp

        def wanted(kind: str) -> bool:
            return not only or any(kind == k or kind.startswith(k + ".") for k in only)

        def pos(p: dict) -> tuple[int, int]:
            return p["line"], p["character"]

        cache = self._fixes.get(uri)
        state_key = f"{self.overrides!r}\0{text}"  # a settings change makes other fixes

        def get_fixer():
            nonlocal cache
            if cache is None or cache[0] != state_key:
                job, _problem = self.job(uri, text, workspace_roots)
                cache = (state_key, Fixer(job, report), {}, [])
                self._fixes[uri] = cache
                while len(self._fixes) > 32:
                    self._fixes.pop(next(iter(self._fixes)))
            return cache[1]

        def refused(f) -> bool:
            fixer = get_fixer()
            key = (f.code, f.line, f.column, f.fix)
            if key not in cache[2]:
                cache[2][key] = fixer.verify(f)
            return cache[2][key] is not None

        def whole_file():
            fixer = get_fixer()
            if not cache[3]:
                cache[3].append(fixer.fix_all(unsafe=False))
            return cache[3][0]

        asked = {(d.get("code"), pos(d["range"]["start"]), pos(d["range"]["end"])) for d in context_diagnostics}
        lo, hi = pos(rng["start"]), pos(rng["end"])
        actions: list[dict] = []
        for f in sorted(report.findings, key=Finding.sort_key):
            d = recode_ranges(render_lsp.diagnostic(f, report, self.rules_by_code), uri, report.text, encoding)
            start, end = pos(d["range"]["start"]), pos(d["range"]["end"])
            if not ((start <= hi and lo <= end) or (f.code, start, end) in asked):
                continue
            if wanted("quickfix"):
                offered = f
                if f.fix is not None and text is not None and refused(f):
                    offered = _replace(f, fix=None)  # the engine refuses it here
                for action in render_lsp.code_actions(offered, report, uri, rules_by_code=self.rules_by_code):
                    actions.append(recode_ranges(action, uri, report.text, encoding))
                sup = render_lsp.suppress_action(f, report, uri, rules_by_code=self.rules_by_code)
                if sup is not None:
                    actions.append(recode_ranges(sup, uri, report.text, encoding))
        if wanted(FIX_ALL_KIND):
            if text is None:
                fix_all = render_lsp.fix_all_action(report, uri, rules_by_code=self.rules_by_code)
            elif any(f.fix is not None and f.fix.applicability == "safe" for f in report.findings):
                result = whole_file()
                fix_all = None
                if result.fixed_text is not None and result.applied:
                    folder = os.path.dirname(result.path)
                    fix_all = render_lsp.fixed_text_action(
                        report, uri, result.fixed_text, result.fixed_findings,
                        new_files=[(os.path.relpath(p, folder), c) for p, c in result.new_files],
                        old_text=get_fixer().source.text, rules_by_code=self.rules_by_code)
            else:
                fix_all = None
            if fix_all is not None:
                actions.append(recode_ranges(fix_all, uri, report.text, encoding))
        return actions

    def shutdown(self) -> None:
        self.executor.shutdown(wait=False)


def _folder_paths(ls) -> tuple[str, ...]:
    """Workspace roots as file-system paths: workspace folders, else rootUri/rootPath."""
    roots: list[str] = []
    try:
        ws = ls.workspace
    except Exception:  # noqa: BLE001 - not initialized yet
        return ()
    for folder in getattr(ws, "folders", {}).values():
        path = uri_to_path(folder.uri)
        if path:
            roots.append(path)
    if not roots and ws.root_uri:
        path = uri_to_path(ws.root_uri)
        if path:
            roots.append(path)
    return tuple(dict.fromkeys(str(Path(r)) for r in roots))


def create_server(debounce: float = DEBOUNCE_SECONDS):
    """A pygls ``LanguageServer`` with npu-audit's features registered."""
    from lsprotocol import types
    from lsprotocol.converters import get_converter
    from pygls.lsp.server import LanguageServer

    from npu_audit import __version__

    converter = get_converter()
    engine = Engine()
    server = LanguageServer(SERVER_NAME, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
    server.npu_audit = engine  # type: ignore[attr-defined]

    def encoding() -> str:
        try:
            enc = server.workspace.position_encoding
        except Exception:  # noqa: BLE001
            return "utf-16"
        return str(getattr(enc, "value", enc) or "utf-16").lower()

    shown: set[str] = set()

    def show(message: str, kind=types.MessageType.Warning, once: bool = False) -> None:
        """Tell the user (``once``: a problem met at every analysis is told once per session)."""
        logger.warning("%s", message)
        if once and message in shown:
            return
        shown.add(message)
        server.window_show_message(types.ShowMessageParams(type=kind, message=f"npu-audit: {message}"))

    def markdown_ok(path: str) -> bool:
        """Whether the client renders markdown there (else the same text goes as plaintext)."""
        obj: Any = server.client_capabilities
        for part in path.split("."):
            obj = getattr(obj, part, None) if obj is not None else None
        return obj is None or types.MarkupKind.Markdown in obj

    def document(uri: str):
        doc = server.workspace.get_text_document(uri)
        return doc.source, doc.version

    def publish(uri: str, report, version: int | None) -> None:
        diags = engine.diagnostics(report, uri, encoding())
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, diagnostics=[converter.structure(d, types.Diagnostic) for d in diags], version=version))

    async def run_analysis(uri: str, generation: int, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        state = engine.docs.get(uri)
        if state is None or state.generation != generation:
            return
        text, version = document(uri)
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        report, problem, settings = await loop.run_in_executor(
            engine.executor, engine.analyze, uri, text, _folder_paths(server))
        state = engine.docs.get(uri)
        if state is not None:
            state.last_duration = time.perf_counter() - started
        if state is None or state.generation != generation:  # closed or changed meanwhile: stale
            logger.debug("dropping stale analysis of %s (version %s)", uri, version)
            return
        if problem:
            show(problem, once=True)
        state.report, state.version, state.text, state.release = report, version, text, settings.release
        state.dependencies = tuple(str(Path(p).resolve()) for p in report.dependencies)
        publish(uri, report, version)

    def schedule(uri: str, delay: float) -> None:
        state = engine.docs.setdefault(uri, DocState())
        state.generation += 1
        if state.pending is not None and not state.pending.done():
            state.pending.cancel()
        task = asyncio.ensure_future(run_analysis(uri, state.generation, delay))
        task.add_done_callback(_log_task_error)
        state.pending = task

    async def report_for(uri: str):
        """A report for the document's current text (reusing the published one when current)."""
        text, _version = document(uri)
        state = engine.docs.get(uri)  # None: a document the client did not open (or not Python)
        if state is not None:
            if state.report is not None and state.text == text:
                return state.report
            if state.fresh is not None and state.fresh[0] == text:
                return state.fresh[1]
        loop = asyncio.get_running_loop()
        report, _problem, _settings = await loop.run_in_executor(
            engine.executor, engine.analyze, uri, text, _folder_paths(server))
        if state is not None:
            state.fresh = (text, report)
        return report

    def load_settings(raw: Any, target: str) -> None:
        overrides, problems = parse_settings(raw, engine.kb)
        setattr(engine, target, overrides)
        for p in problems:
            show(p)

    async def pull_configuration() -> bool:
        caps = server.client_capabilities
        if not (caps and caps.workspace and caps.workspace.configuration):
            return False
        try:
            result = await server.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=CONFIG_SECTION)]))
        except Exception as exc:  # noqa: BLE001 - a client without settings support
            logger.info("workspace/configuration failed: %s", exc)
            return False
        raw = result[0] if result else None
        load_settings(raw if isinstance(raw, dict) else {}, "workspace_settings")
        return True

    # -- lifecycle ----------------------------------------------------------------------------

    @server.feature(types.INITIALIZE)
    def on_initialize(ls, params: types.InitializeParams):
        load_settings(params.initialization_options, "init_settings")
        engine.rules_by_code  # noqa: B018 - load the rules before the first analysis

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls, params: types.InitializedParams):
        if await pull_configuration():
            for uri in list(engine.docs):
                schedule(uri, 0)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_configuration(ls, params: types.DidChangeConfigurationParams):
        settings = params.settings
        if isinstance(settings, dict) and any(k in settings for k in (*SETTING_NAMES, CONFIG_SECTION, "npuAudit", "npu_audit")):
            load_settings(settings, "workspace_settings")
        elif not await pull_configuration():
            load_settings(settings if isinstance(settings, dict) else {}, "workspace_settings")
        for uri in list(engine.docs):
            schedule(uri, 0)

    @server.feature(types.SHUTDOWN)
    def on_shutdown(ls, params):
        for state in engine.docs.values():
            if state.pending is not None and not state.pending.done():
                state.pending.cancel()
        engine.shutdown()

    # -- documents ----------------------------------------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def on_open(ls, params: types.DidOpenTextDocumentParams):
        item = params.text_document
        if is_python(item.uri, item.language_id):
            schedule(item.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def on_change(ls, params: types.DidChangeTextDocumentParams):
        state = engine.docs.get(params.text_document.uri)
        if state is not None:
            schedule(params.text_document.uri, min(debounce, max(DEBOUNCE_MIN_SECONDS, state.last_duration)))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def on_save(ls, params: types.DidSaveTextDocumentParams):
        uri = params.text_document.uri
        if uri in engine.docs:
            schedule(uri, 0)
        saved = uri_to_path(uri)
        if saved:  # scripts that read the saved module as a helper
            saved = str(Path(saved).resolve())
            for other, state in list(engine.docs.items()):
                if other != uri and saved in state.dependencies:
                    schedule(other, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def on_close(ls, params: types.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        state = engine.docs.pop(uri, None)
        if state is not None and state.pending is not None and not state.pending.done():
            state.pending.cancel()
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # -- requests -----------------------------------------------------------------------------

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    async def on_code_action(ls, params: types.CodeActionParams):
        uri = params.text_document.uri
        report = await report_for(uri)
        rng = converter.unstructure(params.range)
        only = [str(getattr(k, "value", k)) for k in params.context.only] if params.context.only else None
        asked = [converter.unstructure(d) for d in params.context.diagnostics or ()]
        text, _version = document(uri)
        loop = asyncio.get_running_loop()
        actions = await loop.run_in_executor(engine.executor, engine.code_actions, report, uri, rng, only, encoding(),
                                             asked, text, _folder_paths(server))
        return [converter.structure(a, types.CodeAction) for a in actions] or None

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls, params: types.HoverParams):
        text, _ = document(params.text_document.uri)
        lines = split_lines(text)
        line = params.position.line
        if not 0 <= line < len(lines):
            return None
        col = client_to_char(lines[line], params.position.character, encoding())
        found = hover_at(engine.kb, engine.release_for(params.text_document.uri), text, line, col)
        if found is None:
            return None
        markdown, span = found
        rng = converter.structure(span.to_dict(lines[line], encoding()), types.Range)
        kind = types.MarkupKind.Markdown if markdown_ok("text_document.hover.content_format") else types.MarkupKind.PlainText
        return types.Hover(contents=types.MarkupContent(kind=kind, value=markdown), range=rng)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=['"', "'", "."]))
    def on_completion(ls, params: types.CompletionParams):
        text, _ = document(params.text_document.uri)
        lines = split_lines(text)
        line = params.position.line
        if not 0 <= line < len(lines):
            return None
        col = client_to_char(lines[line], params.position.character, encoding())
        items = completion_at(engine.kb, engine.release_for(params.text_document.uri), text, line, col, encoding())
        if items is None:
            return None
        if not markdown_ok("text_document.completion.completion_item.documentation_format"):
            for item in items:
                item["documentation"]["kind"] = "plaintext"
        return types.CompletionList(is_incomplete=False,
                                    items=[converter.structure(i, types.CompletionItem) for i in items])

    return server


def _log_task_error(task: asyncio.Future) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        logger.error("analysis failed: %r", exc, exc_info=exc)


# =============================================================================================
# entry point


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="npu-audit lsp", description="Run the npu-audit language server.")
    p.add_argument("--stdio", action="store_true", default=True, help="talk LSP over stdin/stdout (the default)")
    p.add_argument("--log-file", metavar="PATH", help="write a debug log to this file")
    p.add_argument("--log-level", default=None, choices=("debug", "info", "warning", "error"),
                   help="log level (default: debug with --log-file, else warning on stderr)")
    return p


def main(argv: list[str] | None = None, *, stdin=None, stdout=None) -> int:
    """``npu-audit lsp [--stdio] [--log-file PATH]``; returns the exit code."""
    args = build_parser().parse_args(list(argv or []))
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as exc:
        print(f"npu-audit lsp: the language server needs pygls>=2 and lsprotocol ({exc}); "
              "install them with: pip install 'npu-audit[lsp]'", file=sys.stderr)
        return 2
    level = getattr(logging, (args.log_level or ("debug" if args.log_file else "warning")).upper())
    handler: logging.Handler = logging.FileHandler(args.log_file, encoding="utf-8") if args.log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)

    # stdout carries the protocol: keep stray prints (from anywhere) off it.
    out = stdout or sys.stdout.buffer
    inp = stdin or sys.stdin.buffer
    saved_stdout = sys.stdout
    sys.stdout = sys.stderr
    server = create_server()
    try:
        server.start_io(inp, out)
    finally:
        sys.stdout = saved_stdout
        server.npu_audit.shutdown()  # type: ignore[attr-defined]
    # LSP: exit code 0 after a shutdown request, 1 when the client went away without one
    return 0 if getattr(server.protocol, "_shutdown", False) else 1


__all__ = [
    "Engine",
    "Span",
    "char_to_client",
    "client_to_char",
    "completion_at",
    "create_server",
    "encode_buffer",
    "hover_at",
    "main",
    "parse_settings",
    "recode_ranges",
    "source_encoding",
]
