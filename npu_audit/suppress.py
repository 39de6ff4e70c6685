"""Inline suppressions: ``# npu-audit: ignore[unknown-option, NPU202]`` (or bare ``# npu-audit: ignore``).

Codes and names are matched case-insensitively (``ignore[npu101]`` and ``ignore[Unknown-Option]`` work).

A comment applies to findings on its own line, or, when it sits on the first line of a multi-line
statement, to findings anywhere in that statement. Only real comments count (tokenize tells them
from strings); the file is tokenized only when its text mentions ``npu-audit:`` at all.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Optional

from npu_audit.findings import Edit, Finding, Fix
from npu_audit.text import split_lines

PATTERN = re.compile(r"#\s*npu-audit:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)


@dataclass
class Suppression:
    """One ``# npu-audit: ignore`` comment, and the codes and names of the findings it silenced (for
    unused-suppression)."""

    line: int  # 1-based line of the comment
    column: int  # 1-based column of '#'
    end_column: int  # 1-based, exclusive
    codes: Optional[tuple[str, ...]]  # None: everything
    comment: str
    used: set = field(default_factory=set)


@dataclass
class Suppressions:
    """The inline suppressions of one file, by line; :meth:`matching` finds the one that silences a finding."""

    by_line: dict[int, list[Suppression]]
    statement_start: dict[int, int]  # physical line -> first line of its logical line

    def matching(self, finding: Finding) -> Optional[Suppression]:
        own = {finding.code.lower(), finding.name.lower()}
        for line in {finding.line, self.statement_start.get(finding.line, finding.line)}:
            for s in self.by_line.get(line, ()):
                if s.codes is None or any(c.lower() in own for c in s.codes):
                    return s
        return None


def scan(text: str) -> Optional[Suppressions]:
    if "npu-audit:" not in text.lower():
        return None
    by_line: dict[int, list[Suppression]] = {}
    starts: dict[int, int] = {}
    logical_start = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if logical_start is None and tok.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                logical_start = tok.start[0]
            if tok.type == tokenize.COMMENT:
                m = PATTERN.search(tok.string)
                if m:
                    codes = m.group("codes")
                    parsed = None if codes is None else tuple(c.strip() for c in codes.split(",") if c.strip())
                    col = tok.start[1] + m.start() + 1
                    by_line.setdefault(tok.start[0], []).append(
                        Suppression(tok.start[0], col, tok.start[1] + m.end() + 1, parsed, m.group(0)))
            if tok.type == tokenize.NEWLINE:
                if logical_start is not None:
                    for line in range(logical_start, tok.end[0] + 1):
                        starts[line] = logical_start
                logical_start = None
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    if not by_line:
        return None
    return Suppressions(by_line, starts)


def apply(findings: list[Finding], text: Optional[str], path: str, enabled, unused_rule,
          table: Optional[Suppressions] = None) -> list[Finding]:
    """Drop suppressed findings; add unused-suppression findings when that rule is enabled. ``table``:
    ``scan(text)`` when the caller has it already."""
    if text is None:
        return findings
    table = table or scan(text)
    if table is None:
        return findings
    kept = []
    for f in findings:
        s = table.matching(f)
        if s is None:
            kept.append(f)
        else:
            s.used.add(f.code.lower())
            s.used.add(f.name.lower())
    if unused_rule is not None and enabled(unused_rule.code, unused_rule.name):
        lines = split_lines(text)
        for sups in table.by_line.values():
            for s in sups:
                if s.codes is None:
                    if s.used:
                        continue
                    unused = ["everything"]
                else:
                    unused = [c for c in s.codes if c.lower() not in s.used]
                    # codes of rules that are switched off cannot be judged
                    unused = [c for c in unused if _is_enabled_code(c, enabled)]
                    if not unused:
                        continue
                line_text = lines[s.line - 1] if s.line <= len(lines) else ""
                start = s.column
                # remove the comment (and the spaces before it) when nothing in it is used
                all_unused = s.codes is None or len(unused) == len(s.codes)
                if all_unused:
                    before = line_text[: start - 1]
                    strip_from = len(before.rstrip()) + 1
                    edit = Edit(s.line, strip_from, s.line, s.end_column, "")
                else:
                    keep = [c for c in s.codes if c not in unused]
                    edit = Edit(s.line, s.column, s.line, s.end_column, f"# npu-audit: ignore[{', '.join(keep)}]")
                kept.append(Finding(
                    path=path, line=s.line, column=s.column, end_line=s.line, end_column=s.end_column,
                    code=unused_rule.code, name=unused_rule.name, severity=unused_rule.severity,
                    message=f"unused suppression: nothing to ignore for {', '.join(unused)} on this line",
                    hint="remove the suppression" if all_unused else f"remove {', '.join(unused)} from the suppression",
                    fix=Fix("safe", "Remove the unused suppression", (edit,)), tags=unused_rule.tags))
    return kept


def _is_enabled_code(selector: str, enabled) -> bool:
    from npu_audit.checks import rule_by

    rule = rule_by(selector) or rule_by(selector.lower())
    return rule is None or enabled(rule.code, rule.name)
