"""Code actions: the quick fixes of the findings in the requested range, a "suppress" action per
finding, and ``source.fixAll.npu-audit`` (safe fixes only).

Fixes go through the fix engine (:class:`npu_audit.fix.Fixer`), as ``--fix`` does: a quick fix that
would not leave valid Python, or a safe one that would change the effective configuration, is not
offered, and fix-all is the engine's whole result (rounds, re-check). The actions themselves are
shaped by :mod:`npu_audit.render.lsp` (UTF-16) and recoded to the client's position encoding.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from dataclasses import replace as _replace
from typing import Any, Optional, Protocol

from npu_audit.findings import Finding
from npu_audit.lsp.positions import recode_ranges
from npu_audit.render import lsp as render_lsp

FIX_ALL_KIND = render_lsp.FIX_ALL_KIND  # "source.fixAll.npu-audit"


class _Engine(Protocol):  # what code_actions needs of npu_audit.lsp.analysis.Engine
    fixes: FixCache

    @property
    def rules_by_code(self) -> dict: ...

    @property
    def overrides(self) -> dict: ...

    def job(self, uri: str, text: str, workspace_roots: tuple[str, ...]) -> Any: ...


@dataclass
class _Fixes:
    """The fix engine's answers for one document text (and settings)."""

    key: str
    fixer: Any  # npu_audit.fix.Fixer
    verdicts: dict = field(default_factory=dict)  # (code, line, column, fix) -> refusal or None
    fix_all: Any = None  # the FixResult of fix_all(unsafe=False), once asked


class FixCache:
    """Per document, the fix engine of the last code-action request, so moving the cursor over an
    unchanged buffer does not re-run it. Keeps the 32 most recent documents."""

    LIMIT = 32

    def __init__(self) -> None:
        self._by_uri: dict[str, _Fixes] = {}

    def get(self, engine: _Engine, uri: str, text: str, report, workspace_roots: tuple[str, ...]) -> _Fixes:
        from npu_audit.fix import Fixer

        key = f"{engine.overrides!r}\0{text}"  # a settings change makes other fixes
        cached = self._by_uri.get(uri)
        if cached is None or cached.key != key:
            job, _problem = engine.job(uri, text, workspace_roots)
            cached = _Fixes(key, Fixer(job, report))
            self._by_uri[uri] = cached
            while len(self._by_uri) > self.LIMIT:
                self._by_uri.pop(next(iter(self._by_uri)))
        return cached


def _pos(p: dict) -> tuple[int, int]:
    return p["line"], p["character"]


def code_actions(engine: _Engine, report, uri: str, rng: dict, only: Optional[list[str]], encoding: str,
                 context_diagnostics: Iterable[dict] = (), text: Optional[str] = None,
                 workspace_roots: tuple[str, ...] = ()) -> list[dict]:
    """Quick fixes, suppressions and fix-all for ``report`` (the analysis of ``text``), as CodeAction
    dicts in ``encoding``. Without ``text``, fixes are offered as the findings carry them and fix-all is
    one round of safe fixes (what ``--format lsp`` offers). Runs in a worker thread: the fix engine
    re-analyses the buffer."""
    rules = engine.rules_by_code

    def wanted(kind: str) -> bool:
        return not only or any(kind == k or kind.startswith(k + ".") for k in only)

    def fixes() -> _Fixes:
        assert text is not None
        return engine.fixes.get(engine, uri, text, report, workspace_roots)

    def refused(f: Finding) -> bool:
        cached = fixes()
        key = (f.code, f.line, f.column, f.fix)
        if key not in cached.verdicts:
            cached.verdicts[key] = cached.fixer.verify(f)
        return cached.verdicts[key] is not None

    asked = {(d.get("code"), _pos(d["range"]["start"]), _pos(d["range"]["end"])) for d in context_diagnostics}
    lo, hi = _pos(rng["start"]), _pos(rng["end"])
    actions: list[dict] = []
    for f in sorted(report.findings, key=Finding.sort_key):
        d = recode_ranges(render_lsp.diagnostic(f, report, rules), uri, report.text, encoding)
        start, end = _pos(d["range"]["start"]), _pos(d["range"]["end"])
        if not ((start <= hi and lo <= end) or (f.code, start, end) in asked):
            continue
        if wanted("quickfix"):
            offered = f
            if f.fix is not None and text is not None and refused(f):
                offered = _replace(f, fix=None)  # the engine refuses it here
            for action in render_lsp.code_actions(offered, report, uri, rules_by_code=rules):
                actions.append(recode_ranges(action, uri, report.text, encoding))
            sup = render_lsp.suppress_action(f, report, uri, rules_by_code=rules)
            if sup is not None:
                actions.append(recode_ranges(sup, uri, report.text, encoding))
    if wanted(FIX_ALL_KIND):
        fix_all = _fix_all(report, uri, text, rules, fixes)
        if fix_all is not None:
            actions.append(recode_ranges(fix_all, uri, report.text, encoding))
    return actions


def _fix_all(report, uri: str, text: Optional[str], rules: dict, fixes) -> Optional[dict]:
    if text is None:
        return render_lsp.fix_all_action(report, uri, rules_by_code=rules)
    if not any(f.fix is not None and f.fix.applicability == "safe" for f in report.findings):
        return None
    cached = fixes()
    if cached.fix_all is None:
        cached.fix_all = cached.fixer.fix_all(unsafe=False)
    result = cached.fix_all
    if result.fixed_text is None or not result.applied:
        return None
    folder = os.path.dirname(result.path)
    return render_lsp.fixed_text_action(
        report, uri, result.fixed_text, result.fixed_findings,
        new_files=[(os.path.relpath(p, folder), c) for p, c in result.new_files],
        old_text=cached.fixer.source.text, rules_by_code=rules)
