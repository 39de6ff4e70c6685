"""Canaries for the private internals of pathspec that npu-audit relies on.

Each test fails loudly when a new release of the library changes what npu-audit uses, instead of
npu-audit silently losing its speed. (npu-audit's own tree must keep libcst's shapes and positions:
tests/test_syntax.py compares the two.)
"""

from __future__ import annotations

import re


def test_canary_pathspec_pattern_internals():
    """discover._Matcher reads pathspec's compiled patterns (``spec.patterns``, each with ``include`` and a
    ``regex``), its one named group ``ps_d``, ``GitIgnoreSpec.check_file`` and ``pathspec.util.normalize_file``
    to answer "no pattern matches" without the spec. With the installed pathspec the shortcut must be
    active (a list of searches, and a joined expression), and agree with the spec."""
    from pathspec import GitIgnoreSpec
    from pathspec.util import normalize_file

    from npu_audit.discover import _ANY_FOLDER, _DIR_GROUP, _joined_search, _Matcher, _pattern_searches

    lines = ["*.pyc", "build/", "/top.py", "!keep.py", "# comment", "", "gen_*_pb2.py", "docs/**/*.md"]
    spec = GitIgnoreSpec.from_lines(lines)
    assert callable(getattr(spec, "check_file", None))
    active = [p for p in spec.patterns if p.include is not None]
    assert len(active) == 6
    for pattern in active:
        assert isinstance(pattern.regex, re.Pattern) and isinstance(pattern.regex.pattern, str)
        assert set(pattern.regex.groupindex) <= {"ps_d"}
    assert any(p.regex.pattern.startswith(_ANY_FOLDER) for p in active)
    assert all(_DIR_GROUP in p.regex.pattern for p in active)
    assert normalize_file("a/b.py") == "a/b.py"
    searches = _pattern_searches(spec)
    assert isinstance(searches, list) and len(searches) == len(active)  # the shortcut is on
    joined = _joined_search(spec)
    assert callable(joined)  # and the patterns can be joined into one expression
    matcher = _Matcher(spec)
    for path in ("a.pyc", "x/build/", "top.py", "sub/top.py", "keep.py", "gen_a_pb2.py", "docs/x/y.md", "ok.py"):
        assert matcher.check(path) == spec.check_file(path).include, path
        assert matcher.match(path) == spec.match_file(path), path
