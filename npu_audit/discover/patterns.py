"""Exclude patterns and ``.gitignore`` files: which paths of a walk they leave out (:mod:`npu_audit.discover`).

Patterns are gitignore-style (pathspec's ``GitIgnoreSpec``); :class:`_Matcher` answers the common case (no
pattern matches) from the patterns' own regular expressions, joined into one for a spec used often.
:class:`_Excluder` holds the exclude patterns (name patterns checked on each path component, path patterns
on the relative path), :class:`_Ignores` the ``.gitignore`` files that apply to one folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


def _is_path_pattern(line: str) -> bool:
    """Whether a gitignore pattern is anchored or names a path (a ``/`` other than a trailing one)."""
    body = line.strip()
    if body.startswith("!"):
        body = body[1:]
    return "/" in body.rstrip("/")


class _Matcher:
    """A ``GitIgnoreSpec`` with an exact shortcut: most paths match none of its patterns, which the
    patterns' own regular expressions say far quicker than the spec does (then joined into one for
    a spec used often, when they are plain enough to be joined safely). Whatever one of them
    matches goes through the spec."""

    __slots__ = ("spec", "_normalize", "_check_file", "_searches", "_joined", "_uses")

    _JOIN_AFTER = 256  # uses before joining (joining costs about what 300 uses save)

    def __init__(self, spec: GitIgnoreSpec) -> None:
        from pathspec.util import normalize_file

        self.spec = spec
        self._normalize = normalize_file  # what the spec matches its patterns against
        self._check_file = getattr(spec, "check_file", None)
        self._searches = _pattern_searches(spec)  # None: no shortcut
        self._joined = None  # the joined expression's search, once built (False: none possible)
        self._uses = 0

    def _none_matches(self, path: str) -> bool:
        """True when certainly none of the patterns matches ``path``; False: the spec decides."""
        joined = self._joined
        if joined is None:
            searches = self._searches
            if searches is None:
                return False
            self._uses += 1
            if self._uses < self._JOIN_AFTER:
                path = self._normalize(path)
                for search in searches:
                    if search(path) is not None:
                        return False
                return True
            joined = self._joined = _joined_search(self.spec)
        return joined is not False and joined(self._normalize(path)) is None

    def check(self, path: str) -> bool | None:
        """True: ignored; False: re-included by a negation; None: no pattern matches."""
        if self._none_matches(path):
            return None
        if self._check_file is not None:
            return self._check_file(path).include
        return True if self.spec.match_file(path) else None  # pragma: no cover - pathspec < 0.12

    def match(self, path: str) -> bool:
        if self._none_matches(path):
            return False
        return self.spec.match_file(path)


def _pattern_searches(spec: GitIgnoreSpec) -> list | None:
    """The ``search`` of each active pattern's expression (pathspec matches a path when one of them
    finds it), or None when a pattern is not a plain regular expression."""
    searches = []
    for pattern in spec.patterns:
        if pattern.include is None:  # comments, blank lines: the spec skips them too
            continue
        regex = getattr(pattern, "regex", None)
        if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str):
            return None  # pragma: no cover - not a pathspec we know
        searches.append(regex.search)
    return searches


_ANY_FOLDER = "^(?:.+/)?"  # how gitignore patterns without a "/" start: in any folder
_DIR_GROUP = "(?P<ps_d>"  # pathspec's one named group (was it matched as a folder?)
_EXTENSION = re.compile(r"\(\?(?!:)")  # "(?" other than "(?:" (inline flags, look-arounds...)
_WARNS = ("[[", "--", "&&", "~~", "||")  # in a set, re warns about them: pathspec did already


def _joined_search(spec: GitIgnoreSpec):
    """The ``search`` of one expression matching what at least one of the spec's patterns matches
    (``search`` as pathspec's patterns use), or False when the patterns cannot be joined safely."""
    try:
        common: list[str] = []  # bodies after _ANY_FOLDER: joined behind a single _ANY_FOLDER
        others: list[str] = []
        flags = None
        for pattern in spec.patterns:
            if pattern.include is None:  # comments, blank lines: the spec skips them too
                continue
            regex = getattr(pattern, "regex", None)
            if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str):
                return False  # pragma: no cover - not a pathspec we know
            if flags is None:
                flags = regex.flags
            names = regex.groupindex
            text = regex.pattern
            if (
                regex.flags != flags
                or flags & re.VERBOSE
                or regex.groups != len(names)
                or any(name != "ps_d" for name in names)
                or text.count(_DIR_GROUP) != len(names)
                or any(sequence in text for sequence in _WARNS)
            ):
                return False
            text = text.replace(_DIR_GROUP, "(?:")  # the same group, without a name to clash
            if _EXTENSION.search(text):
                return False
            body = text[len(_ANY_FOLDER) :]
            if text.startswith(_ANY_FOLDER) and body[:1] not in ("?", "*", "+", "{") and _is_sequence(body):
                common.append(body)  # "^(?:.+/)?A|^(?:.+/)?B" matches what "^(?:.+/)?(?:A|B)" does
            else:
                others.append(text)
        if flags is None:  # no pattern at all
            return _no_match
        alternatives = [f"(?:{text})" for text in others]
        if common:
            alternatives.insert(0, _ANY_FOLDER + "(?:" + "|".join(f"(?:{body})" for body in common) + ")")
        joined = re.compile("|".join(alternatives), flags)
        if joined.groups:  # pragma: no cover - excluded above
            return False
        return joined.search
    except Exception:  # pragma: no cover - whatever goes wrong, the spec alone decides
        return False


def _no_match(path: str) -> None:
    return None


def _is_sequence(expression: str) -> bool:
    """Whether a regular expression is not empty, has balanced parentheses and no "|" outside
    them: "^(?:.+/)?" followed by it is that prefix followed by the expression."""
    depth = 0
    i, end = 0, len(expression)
    while i < end:
        char = expression[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":  # a set: "]" right after "[" or "[^" is a member, escapes are skipped
            i += 1
            if expression.startswith("^", i):
                i += 1
            if expression.startswith("]", i):
                i += 1
            while i < end and expression[i] != "]":
                i += 2 if expression[i] == "\\" else 1
            if i >= end:
                return False
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return False
        elif char == "|" and depth == 0:
            return False
        i += 1
    return depth == 0 and end > 0


class _Excluder:
    """Exclude patterns: name patterns checked on each component, path patterns on the relative path."""

    def __init__(self, patterns: Iterable[str]) -> None:
        lines = [p for p in (str(p).strip() for p in patterns) if p and not p.startswith("#")]
        name_lines = [p for p in lines if not _is_path_pattern(p)]
        self._names: _Matcher | None = None
        self._paths: _Matcher | None = None
        if lines:  # (the pattern library is loaded only when there are patterns)
            from pathspec import GitIgnoreSpec

            self._names = _Matcher(GitIgnoreSpec.from_lines(name_lines)) if name_lines else None
            self._paths = _Matcher(GitIgnoreSpec.from_lines(lines)) if len(name_lines) != len(lines) else None
        # name (+ "/" for a folder) -> excluded by a name pattern; None without name patterns
        self.names: dict[str, bool] | None = {} if self._names is not None else None
        self.paths = self._paths.match if self._paths is not None else None  # rel (+ "/") -> bool

    def __bool__(self) -> bool:
        return self._names is not None or self._paths is not None

    def excluded(self, rel: str, name: str, is_dir: bool) -> bool:
        suffix = "/" if is_dir else ""
        if self.names is not None and self.name_excluded(name + suffix):
            return True
        return self.paths is not None and self.paths(rel + suffix)

    def name_excluded(self, key: str) -> bool:
        hit = self.names.get(key)
        if hit is None:
            hit = self.names[key] = self._names.match(key)
        return hit


class _Ignores:
    """The ``.gitignore`` files that apply to one folder, innermost last: (folder prefix, matcher)."""

    __slots__ = ("levels",)

    def __init__(self, levels: tuple[tuple[str, _Matcher | _Prefixed], ...] = ()) -> None:
        self.levels = levels

    def with_level(self, prefix: str, matcher: _Matcher) -> _Ignores:
        return _Ignores(self.levels + ((prefix, matcher),))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` (relative to the walked root, "/"-separated) is ignored; innermost file wins."""
        path = rel + "/" if is_dir else rel
        for prefix, matcher in reversed(self.levels):
            if prefix:
                if not path.startswith(prefix):
                    continue
                sub = path[len(prefix) :]
            else:
                sub = path
            include = matcher.check(sub)
            if include is not None:
                return include
        return False


class _Prefixed:
    """An outer ``.gitignore`` (of a folder above the root) seen from the root."""

    __slots__ = ("_matcher", "_prefix")

    def __init__(self, matcher: _Matcher, prefix: str) -> None:
        self._matcher = matcher
        self._prefix = prefix

    def check(self, path: str) -> bool | None:
        return self._matcher.check(self._prefix + path)


def _explicit_excluded(excluder: _Excluder, rel: str, name: str) -> bool:
    """An explicit file is excluded when its path or one of its components matches."""
    parts = [p for p in rel.split("/") if p not in ("", ".", "..")]
    partial = ""
    for i, part in enumerate(parts):
        partial = partial + "/" + part if partial else part
        if excluder.excluded(partial, part, i < len(parts) - 1):
            return True
    return excluder.excluded(rel, name, False)


def _path_excluded(excluder: _Excluder, rel: str, is_dir: bool) -> bool:
    """Whether ``rel`` ("/"-separated, relative to the patterns' root, inside it) or one of the
    folders holding it is excluded."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    partial = ""
    for i, part in enumerate(parts):
        partial = partial + "/" + part if partial else part
        if excluder.excluded(partial, part, is_dir or i < len(parts) - 1):
            return True
    return False
