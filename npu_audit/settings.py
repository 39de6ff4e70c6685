"""Run settings: defaults, ``[tool.npu-audit]`` in pyproject.toml, and command-line overrides.

Every file gets the settings of its own project: the nearest folder at or above it (by its path as
given, made absolute; symlinks are not resolved) that holds a ``pyproject.toml`` with a
``[tool.npu-audit]`` table. Paths in that table (``exclude``, ``per-file-ignores``) are relative to
that folder, the project root, so the same files get the same settings whatever the working
directory and however the path was typed. The nearest table wins as a whole (tables are not merged),
then the command line overrides it.

Invalid configuration is never skipped: a table with an unknown key, a value of the wrong type, a
check that does not exist, or a pyproject.toml that may hold npu-audit settings but is not valid TOML
raises :class:`SettingsError` naming the file, the key and what is allowed.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional, Protocol

from npu_audit.knowledge.vocabulary import RELEASES, SCENARIOS
from npu_audit.text import did_you_mean
from npu_audit.toml_compat import toml_library

TABLE = "[tool.npu-audit]"


class NamedCheck(Protocol):
    """What settings know of a check (a ``npu_audit.checks.base.Rule``): its code and name."""

    code: str
    name: str


class SettingsError(Exception):
    """Invalid configuration (exit code 2)."""


@dataclass(frozen=True)
class Settings:
    """The settings a file is checked with: the defaults, overridden by its project's ``[tool.npu-audit]`` table,
    then by the command line."""

    release: str = "current"
    product: Optional[str] = None  # product id from rules/products.toml, or None: no product limits assumed
    scenario: Optional[str] = None  # None: from graph_run_mode when certain
    select: tuple[str, ...] = ()  # codes, names or code prefixes; empty = all
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob relative to root, selectors)
    exclude: tuple[str, ...] = ()  # gitignore-style globs relative to root
    respect_gitignore: bool = True
    max_bytes: int = 10 * 1024 * 1024
    config_file: Optional[str] = None  # the pyproject.toml these settings come from
    root: Optional[str] = None  # its folder (absolute): the project root paths are relative to
    # the per-file-ignores selectors that apply to one file (set by SettingsResolver.for_file);
    # None: not resolved for a file, ignored_for_file matches the globs against the display path
    file_ignores: Optional[tuple[str, ...]] = None

    def cache_token(self) -> str:
        """The part of the settings that changes a file's results (for the cache key)."""
        ignored = self.file_ignores if self.file_ignores is not None else self.per_file_ignores
        return repr((self.release, self.product, self.scenario, self.max_bytes, self.select, self.ignore, ignored))


# --------------------------------------------------------------------------------------------------
# pyproject.toml


_ALLOWED = {
    "release": "one of " + ", ".join(f'"{r}"' for r in RELEASES),
    "product": 'a product id or alias such as "atlas-a2" (npu-audit --list-rules lists them)',
    "scenario": "one of " + ", ".join(f'"{s}"' for s in SCENARIOS),
    "select": 'a list of checks, e.g. ["NPU1", "unknown-option"]',
    "ignore": 'a list of checks, e.g. ["NPU501", "prefer-precision-mode-v2"]',
    "per-file-ignores": 'a table of glob = list of checks, e.g. "tests/**" = ["NPU4"]',
    "exclude": 'a list of gitignore-style globs, e.g. ["third_party/**"]',
    "extend-exclude": 'a list of gitignore-style globs, e.g. ["generated/**"]',
    "respect-gitignore": "true or false",
    "max-file-size": "a positive number of bytes, e.g. 5_000_000",
}
_CHECKS_ALLOWED = ("checks are codes (NPU101), names (unknown-option), code prefixes (NPU1) or ALL; "
                   "npu-audit --list-rules lists them")


def _type_name(value) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, int):
        return f"the number {value}"
    if isinstance(value, float):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


def shown_path(path) -> str:
    """``path`` as messages show it: relative to the working directory when below it."""
    text = os.fspath(path)
    try:
        rel = os.path.relpath(text)
    except ValueError:  # pragma: no cover - another drive
        return text
    return rel if not rel.startswith("..") else os.path.abspath(text)


def load_table(path: Path) -> tuple[Optional[dict], Optional[str]]:
    """The ``[tool.npu-audit]`` table of ``path`` (None when it has none) and a warning (or None).

    A file that cannot be read or is not valid TOML raises :class:`SettingsError` when it may hold
    npu-audit settings (it mentions npu-audit); otherwise it is not ours and only gets a warning."""
    shown = shown_path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, f"{shown}: cannot read it ({exc.strerror or exc}); not used for npu-audit settings"
    tomllib = toml_library()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        what = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else f"not valid TOML ({exc})"
        if b"npu-audit" in raw or b"npu_audit" in raw:
            raise SettingsError(f"{shown}: {what}; npu-audit cannot read its {TABLE} settings. "
                                "Fix the file (or remove the table)") from exc
        return None, f"{shown}: {what}; it holds no npu-audit settings, ignored"
    tool = data.get("tool")
    if not isinstance(tool, dict):
        return None, None
    for wrong in ("npu_audit", "npuaudit", "npu-audit-settings", "npu"):
        if wrong in tool and "npu-audit" not in tool:
            raise SettingsError(f"{shown}: [tool.{wrong}] is not read by npu-audit: the table is {TABLE}")
    if "npu-audit" not in tool:
        return None, None
    table = tool["npu-audit"]
    if not isinstance(table, dict):
        raise SettingsError(f"{shown}: tool.npu-audit is {_type_name(table)}; it must be a table: write "
                            f'{TABLE} on its own line, followed by lines such as select = ["NPU1"]')
    return table, None


def find_pyproject(start: Path) -> Optional[Path]:
    """Nearest pyproject.toml with a [tool.npu-audit] table, from ``start`` (a folder, or a file's
    folder) upwards, by the absolute path (symlinks are not resolved)."""
    folder = os.path.abspath(start)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate) and load_table(Path(candidate))[0] is not None:
            return Path(candidate)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def from_pyproject(path: Path, base: Settings, kb=None, rules: Optional[Iterable[NamedCheck]] = None) -> Settings:
    """``base`` updated with the [tool.npu-audit] table of ``path`` (SettingsError when invalid)."""
    table, _warning = load_table(path)
    return from_table(table or {}, path, base, kb, rules)


def from_table(table: dict, path, base: Settings, kb=None, rules: Optional[Iterable[NamedCheck]] = None) -> Settings:
    """``base`` updated with a [tool.npu-audit] table read from ``path``; every problem of the table
    is reported at once (SettingsError, one line each). Product names are checked against ``kb`` and
    check selectors against ``rules`` (``npu_audit.checks.all_rules()``), each when given."""
    config = os.path.abspath(path)
    path = shown_path(path)
    problems: list[str] = []
    values: dict = {}

    def bad(key: str, problem: str) -> None:
        problems.append(f"{path}: {TABLE} {key}: {problem}; expected {_ALLOWED[key]}")

    for key in table:
        if key not in _ALLOWED:
            close = did_you_mean(key, _ALLOWED)
            hint = f' (did you mean "{close}"?)' if close else ""
            problems.append(f"{path}: {TABLE}: unknown key {key!r}{hint}; allowed keys: {', '.join(_ALLOWED)}")
    for key, check in (("release", validate_release), ("scenario", validate_scenario)):
        if key in table:
            try:
                values[key] = check(table[key], f"{path}: {TABLE}")
            except SettingsError as exc:
                problems.append(str(exc))
    if "product" in table:
        try:
            values["product"] = validate_product(table["product"], kb, f"{path}: {TABLE}")
        except SettingsError as exc:
            problems.append(str(exc))
    for key in ("select", "ignore"):
        if key in table:
            checks = _string_list(table[key], key, bad)
            if checks is not None:
                if not checks and key == "select":
                    bad(key, "the list is empty, which would switch every check off (remove the key to run them all)")
                    continue
                unknown = unknown_selectors(checks, rules) if rules is not None else []
                if unknown:
                    problems.append(f"{path}: {TABLE} {key}: unknown check(s) {', '.join(map(repr, unknown))}; "
                                    + _CHECKS_ALLOWED)
                else:
                    values[key] = tuple(checks)
    excludes: list[str] = []
    for key in ("exclude", "extend-exclude"):
        if key in table:
            globs = _string_list(table[key], key, bad)
            if globs is not None:
                wrong = [problem for problem in map(glob_problem, globs) if problem]
                if wrong:
                    bad(key, "; ".join(wrong))
                    continue
                excludes += globs
    if excludes:
        values["exclude"] = tuple(excludes)
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            bad("per-file-ignores", f"got {_type_name(pfi)}")
        else:
            rows = []
            for glob, checks_value in pfi.items():
                checks = _string_list(checks_value, "per-file-ignores", bad, f"for {glob!r}: ")
                if checks is None:
                    continue
                unknown = unknown_selectors(checks, rules) if rules is not None else []
                if unknown:
                    problems.append(f"{path}: {TABLE} per-file-ignores {glob!r}: unknown check(s) "
                                    f"{', '.join(map(repr, unknown))}; {_CHECKS_ALLOWED}")
                    continue
                rows.append((glob, tuple(checks)))
            values["per_file_ignores"] = tuple(rows)
    if "respect-gitignore" in table:
        value = table["respect-gitignore"]
        if isinstance(value, bool):
            values["respect_gitignore"] = value
        else:
            bad("respect-gitignore", f"got {_type_name(value)}")
    if "max-file-size" in table:
        value = table["max-file-size"]
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            values["max_bytes"] = value
        else:
            bad("max-file-size", f"got {_type_name(value)}")
    if problems:
        raise SettingsError("\n".join(problems))
    return replace(base, **values, config_file=config, root=os.path.dirname(config))


def glob_problem(pattern: str) -> Optional[str]:
    """Why ``pattern`` cannot be used as a gitignore-style exclude pattern, or None: a pattern the
    pattern library refuses (``!``, a lone ``\\``), or one with a ``[`` that no ``]`` closes, which git
    (and pathspec 1.x) discards, so that it would exclude nothing without a word."""
    text = pattern.strip()
    if not text or text.startswith("#"):
        return None  # (a blank line or a comment, as in a .gitignore: ignored)
    if _unclosed_bracket(text):
        return (f"{pattern!r} is not a gitignore-style pattern (a '[' opens a character range that no ']' "
                "closes, so the pattern matches nothing: close the range, e.g. 'data[0-9]/', or write '\\[' "
                "for a literal bracket)")
    from pathspec import GitIgnoreSpec

    try:
        GitIgnoreSpec.from_lines([text])
    except Exception as exc:  # noqa: BLE001 - the library raises its own errors and ValueError
        reason = exc.__cause__ or exc
        return f"{pattern!r} is not a gitignore-style pattern ({reason})"
    return None


def _unclosed_bracket(pattern: str) -> bool:
    """Whether ``pattern`` has a ``[`` that starts no complete character range, read as git reads one:
    ``\\`` escapes the next character, ``[!`` and ``[^`` negate, and a ``]`` right after them is a member."""
    i, end = 0, len(pattern)
    while i < end:
        char = pattern[i]
        i += 1
        if char == "\\":
            i += 1
        elif char == "[":
            j = i
            if j < end and pattern[j] in "!^":
                j += 1
            if j < end and pattern[j] == "]":
                j += 1
            close = pattern.find("]", j)
            if close < 0:
                return True
            i = close + 1
    return False


def _string_list(value, key: str, bad, what: str = "") -> Optional[list[str]]:
    """``value`` when it is a list of strings; otherwise the problem is reported and None returned."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value]
    if isinstance(value, str):
        got = f"the string {value!r} (write a list: [{value!r}])"
    elif isinstance(value, list):
        got = "a list with items that are not strings"
    else:
        got = _type_name(value)
    bad(key, f"{what}got {got}")
    return None


def validate_release(value, where="--release") -> str:
    if value not in RELEASES:
        raise SettingsError(f"{where}: release must be one of {', '.join(RELEASES)}, not {value!r}")
    return value


def validate_scenario(value, where="--scenario") -> str:
    if value not in SCENARIOS:
        raise SettingsError(f"{where}: scenario must be one of {', '.join(SCENARIOS)}, not {value!r}")
    return value


def validate_product(value, kb, where="--product") -> str:
    if not isinstance(value, str):
        raise SettingsError(f"{where}: a product name is a string, not {_type_name(value)}")
    if kb is None:
        return value
    pid = kb.product_id(str(value))
    if pid is None:
        names = ", ".join(sorted(kb.products))
        raise SettingsError(f"{where}: unknown product {value!r}; products: {names}")
    return pid


def unknown_selectors(selectors, rules: Iterable[NamedCheck]) -> list[str]:
    """The selectors that match none of ``rules`` (an empty or blank one included): a selector that
    selects nothing would silently switch checks off (``select``) or on (``ignore``)."""
    rules = tuple(rules)
    return [s for s in selectors
            if not (s.strip().upper() == "ALL" or any(RuleFilter._matches(s, r.code, r.name) for r in rules))]


def validate_selectors(selectors, where: str, rules: Iterable[NamedCheck]) -> tuple[str, ...]:
    """``selectors`` (SettingsError when one of them matches none of ``rules``)."""
    unknown = unknown_selectors(selectors, rules)
    if unknown:
        raise SettingsError(f"{where}: unknown check(s) {', '.join(map(repr, unknown))}; {_CHECKS_ALLOWED}")
    return tuple(selectors)


# --------------------------------------------------------------------------------------------------
# per-file settings


_BROKEN = object()


class SettingsResolver:
    """Settings per folder and per file, from each one's project root (see the module docstring).

    Each folder's pyproject.toml is read at most once. In a run, problems are collected
    (``errors``, ``warnings``) so that all of them can be reported together; ``for_file(...,
    strict=True)`` raises the error of the file's own project instead."""

    def __init__(self, base: Settings, overrides: Optional[dict] = None, kb=None, isolated: bool = False,
                 rules: Optional[Iterable[NamedCheck]] = None):
        self.base = base
        self.overrides = dict(overrides or {})
        self.kb = kb
        self.rules = tuple(rules) if rules is not None else None
        self.isolated = isolated
        self.default = replace(base, **self.overrides) if self.overrides else base
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self._own: dict[str, object] = {}  # folder -> Settings of the project rooted there, None, _BROKEN
        self._broken: dict[str, str] = {}  # project root -> its error
        self._near: dict[str, Settings] = {}  # folder -> settings of the nearest project at or above
        self._files: dict[tuple, Settings] = {}  # (root, file ignores) -> settings
        self._given: dict[str, Settings] = {}  # folder of a file as given (relative to the working directory)

    def in_dir(self, folder: str) -> Optional[Settings]:
        """The settings of the project rooted at ``folder`` (absolute), if it holds one."""
        if self.isolated:
            return None
        hit = self._own.get(folder, _MISSING)
        if hit is _MISSING:
            hit = self._own[folder] = self._load(folder)
        if hit is _BROKEN:
            return replace(self.default, root=folder, config_file=os.path.join(folder, "pyproject.toml"))
        return hit  # type: ignore[return-value]

    def _load(self, folder: str):
        path = os.path.join(folder, "pyproject.toml")
        if not os.path.isfile(path):
            return None
        try:
            table, warning = load_table(Path(path))
            if warning and warning not in self.warnings:
                self.warnings.append(warning)
            if table is None:
                return None
            settings = from_table(table, path, self.base, self.kb, self.rules)
        except SettingsError as exc:
            self._broken[folder] = str(exc)
            self.errors.append(str(exc))
            return _BROKEN
        return replace(settings, **self.overrides) if self.overrides else settings

    def for_dir(self, folder: str) -> Settings:
        """Settings of the nearest project at or above ``folder`` (made absolute), or the defaults."""
        folder = os.path.abspath(folder)
        hit = self._near.get(folder)
        if hit is not None:
            return hit
        chain = []
        current = folder
        while True:
            hit = self._near.get(current)
            if hit is not None:
                break
            chain.append(current)
            own = self.in_dir(current)
            if own is not None:
                hit = own
                break
            parent = os.path.dirname(current)
            if parent == current:
                hit = self.default
                break
            current = parent
        for f in chain:
            self._near[f] = hit
        return hit

    def for_file(self, file, strict: bool = False) -> Settings:
        """Settings of ``file``: its project's, with the per-file-ignores that match it resolved."""
        text = os.fspath(file)
        folder = os.path.dirname(text)
        settings = self._given.get(folder)  # by the folder as given: a walk gives thousands of files per folder
        if settings is None:
            settings = self._given[folder] = self.for_dir(folder or os.curdir)
        if strict and settings.root in self._broken:
            raise SettingsError(self._broken[settings.root])
        if not settings.per_file_ignores:
            return settings
        path = os.path.abspath(text)
        rel = os.path.relpath(path, settings.root).replace(os.sep, "/") if settings.root else os.path.basename(path)
        matched = _matching_ignores(settings.per_file_ignores, rel)
        key = (id(settings), matched)
        hit = self._files.get(key)
        if hit is None:
            hit = self._files[key] = replace(settings, file_ignores=matched)
        return hit


_MISSING = object()


def _glob_matches(glob: str, rel: str) -> bool:
    """Whether a per-file-ignores glob matches ``rel`` (a "/"-separated path relative to the project
    root): the whole path, its file name (for globs without "/"), or a folder holding it."""
    glob = glob.strip().replace("\\", "/")
    while glob.startswith("./"):
        glob = glob[2:]
    glob = glob.rstrip("/") or glob
    if fnmatch.fnmatchcase(rel, glob):
        return True
    if "/" not in glob and fnmatch.fnmatchcase(posixpath.basename(rel), glob):
        return True
    parts = rel.split("/")
    return any(fnmatch.fnmatchcase("/".join(parts[:i]), glob) for i in range(1, len(parts)))


def _matching_ignores(rows, rel: str) -> tuple[str, ...]:
    out: list[str] = []
    for glob, selectors in rows:
        if _glob_matches(glob, rel):
            out.extend(selectors)
    return tuple(out)


def ignored_for_file(settings: Settings, display: str) -> tuple[str, ...]:
    """The selectors per-file-ignores adds for one file: resolved by ``SettingsResolver.for_file``
    from the path relative to the project root; otherwise the globs are matched against ``display``."""
    if settings.file_ignores is not None:
        return settings.file_ignores
    if not settings.per_file_ignores:
        return ()
    posix = display.replace("\\", "/")
    while posix.startswith("./"):
        posix = posix[2:]
    return _matching_ignores(settings.per_file_ignores, posix)


@dataclass(frozen=True)
class RuleFilter:
    """Which rules report on one file: those selected and not ignored, for all files or for this one."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extra_ignore: tuple[str, ...] = field(default=())

    @staticmethod
    def _matches(selector: str, code: str, name: str) -> bool:
        s = selector.strip()
        if not s:
            return False
        if s.upper() == "ALL":
            return True
        return name == s or code == s.upper() or (s.upper().startswith("NPU") and code.startswith(s.upper()))

    def enabled(self, code: str, name: str) -> bool:
        if self.select and not any(self._matches(s, code, name) for s in self.select):
            return False
        return not any(self._matches(s, code, name) for s in (*self.ignore, *self.extra_ignore))
