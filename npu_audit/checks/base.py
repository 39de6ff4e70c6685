"""What a rule is, and the context every rule checks.

One rule per module under ``npu_audit/checks/rules/`` (Fixit style). Each rule documents itself the
Ruff way (What it does / Why is this bad / Example / Fix safety) and declares whether it fixes
(``fix``, ``fix_applicability``); its ``invalid`` examples carry the findings they yield and their
fixed text, its ``valid`` ones yield nothing. tests/test_rules.py runs them, and ``--explain``,
``--list-rules``, SARIF rule metadata, README's rule reference and editor hovers show the first
invalid example from the same data. Rules report through :meth:`CheckContext.report`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Union

from npu_audit.extract.model import CodeFact, Entry, Hazard, OptionWrite, SessionConfig
from npu_audit.extract.ranges import Range
from npu_audit.findings import Finding, Fix, Related
from npu_audit.knowledge.model import KnowledgeBase, Relation
from npu_audit.knowledge.vocabulary import FATAL, INVALID_REACTIONS
from npu_audit.settings import Settings

if TYPE_CHECKING:  # (extract.extraction imports the interpreter: not needed to run the checks)
    from npu_audit.extract.extraction import Extraction

DOCS_URL = "https://github.com/npu-audit/npu-audit/blob/main/README.md#rules"


class _Derived:
    """Marks a keyword argument of CheckContext.report that is derived from what the finding is about."""

    def __repr__(self) -> str:
        return "<derived>"


_DERIVED: Any = _Derived()


@dataclass(frozen=True)
class Expect:
    """A finding an invalid example must produce: its 1-based line and column, its exact message, its
    severity when it is not the rule's default, and its hint (what to write instead) and the option it
    names (the JSON ``option``) when given."""

    line: int
    column: int
    message: str
    severity: Optional[str] = None
    hint: Optional[str] = None
    option: Optional[str] = None


@dataclass(frozen=True)
class Invalid:
    """An example a rule reports: a whole script (``bytes`` for a file that does not decode), the
    findings of this rule it yields, in order, and the text after this rule's fixes (safe and unsafe)
    are applied by the fix engine; None when no fix applies. ``new_files``: files a fix creates next
    to the script, (name, content)."""

    code: Union[str, bytes]
    findings: tuple[Expect, ...]
    fixed: Optional[str] = None
    new_files: tuple[tuple[str, str], ...] = ()


FixAvailability = Literal["none", "sometimes", "always"]
Applicability = Literal["safe", "unsafe"]


class Rule:
    code: str = ""
    name: str = ""
    severity: str = "warning"  # default severity (a finding may be more or less severe)
    summary: str = ""  # one line
    what: str = ""  # What it does
    why: str = ""  # Why is this bad (what happens on the device)
    fix_safety: str = "No automatic fix."
    # whether a finding of the rule comes with a fix (never, for some findings, for every one), and the
    # applicabilities of those fixes; tests/test_rules.py holds the examples to them
    fix: FixAvailability = "none"
    fix_applicability: tuple[Applicability, ...] = ()
    tags: tuple[str, ...] = ()  # LSP/SARIF tags: "deprecated", "unnecessary"
    # Fixit-style examples: whole scripts, run by tests/test_rules.py and shown in the docs. An
    # `invalid` one yields exactly its expected findings of this rule (and, when the rule fixes it, the
    # fixed text); `valid` ones yield none, and the first is the one the docs show as "Use instead"
    # when the first invalid example has no fix. Settings overrides per example go in a leading
    # "# npu-audit-test: k=v, ..." line.
    valid: tuple[Union[str, bytes], ...] = ()
    invalid: tuple[Invalid, ...] = ()

    def check(self, ctx: CheckContext) -> Iterable[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    def folded_reason(self, ctx: CheckContext, finding: Finding, write: Optional[OptionWrite]) -> Optional[str]:
        """What a finding of this rule adds when it is folded into another check's finding on the same write
        (``checks.FOLDED_INTO``), as a clause appended to that finding's message; None: "moreover, <message>"."""
        return None

    @property
    def help_uri(self) -> str:
        return f"{DOCS_URL.rsplit('#', 1)[0]}#{self.code.lower()}-{self.name}"

    def shown_example(self) -> tuple[Optional[str], tuple[Expect, ...], Optional[str]]:
        """What the docs show: the first invalid example (its code and the findings it yields) and what
        to write instead: its fixed text when the rule fixes it, else the first valid example."""
        if not self.invalid:
            return None, (), _text(self.valid[0]) if self.valid else None
        first = self.invalid[0]
        instead = first.fixed if first.fixed is not None else (_text(self.valid[0]) if self.valid else None)
        return _text(first.code), first.findings, instead

    def fix_summary(self) -> str:
        """The declared fixability in words ("" when the rule never fixes)."""
        if self.fix == "none":
            return ""
        how = " or ".join(self.fix_applicability)
        return f"Fix available for {'every finding' if self.fix == 'always' else 'some findings'} ({how})."

    def documentation(self) -> str:
        """Markdown documentation of the rule (the single source for every surface). The example is the
        rule's first invalid example, which tests/test_rules.py runs, and what to write instead."""
        parts = [f"# {self.name} ({self.code})", "", self.summary, "", "## What it does", self.what.strip(), "",
                 "## Why is this bad?", self.why.strip(), ""]
        bad, findings, good = self.shown_example()
        if bad:
            parts += ["## Example", "```python", bad.strip("\n"), "```", ""]
        parts += example_findings_lines(findings)
        if good:
            parts += ["Use instead:", "```python", good.strip("\n"), "```", ""]
        parts += ["## Fix safety", " ".join(x for x in (self.fix_summary(), self.fix_safety.strip()) if x), ""]
        return "\n".join(parts)


def example_findings_lines(findings) -> list[str]:
    """What an example's expected findings say, as every rule document shows them (``--explain``, SARIF
    help, hovers, README): each finding and its hint, a blank line after each."""
    lines: list[str] = []
    for e in findings:
        severity = f", {e.severity}" if e.severity else ""
        lines += [f"npu-audit reports (line {e.line}, column {e.column}{severity}): {e.message}", ""]
        if e.hint:
            lines += [f"Hint: {e.hint}", ""]
    return lines


def _text(code: Union[str, bytes]) -> str:
    """An example as text: bytes in the encoding they declare (PEP 263), undecodable bytes as escapes."""
    if isinstance(code, str):
        return code
    import re

    cookie = re.search(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", b"\n".join(code.split(b"\n")[:2]), re.M)
    try:
        return code.decode(cookie.group(1).decode("ascii") if cookie else "utf-8")
    except (UnicodeDecodeError, LookupError):
        return code.decode("utf-8", "backslashreplace")


@dataclass
class CheckContext:
    """What every rule checks one file with: its session configs and code facts, the knowledge base and the
    settings; rules report through :meth:`report`."""

    path: str  # the file being reported on (display path)
    configs: list[SessionConfig]
    facts: list  # code facts not tied to one config
    kb: KnowledgeBase
    settings: Settings
    extraction: Optional[Extraction] = None  # ranges and modules of the file's analysis
    # whether an inline suppression of the file names a finding (filled by the pipeline from
    # npu_audit.suppress, which sits above the checks): folding is skipped for such findings
    suppressed: Callable[[Finding], bool] = field(default=lambda finding: False, repr=False, compare=False)
    findings: list[Finding] = field(default_factory=list)
    _relation_hits: Optional[list] = field(default=None, init=False, repr=False, compare=False)  # (relations.py)
    # per finding made (by id): (the finding, the message before its "[may happen: ...]" suffix, the
    # branch text, the helper calls of what it is about, the write it is about or None); run_checks
    # merges findings that differ only by those, and the findings one write gets from one check
    origins: dict = field(default_factory=dict)

    # -- iteration ----------------------------------------------------------------------------

    def entries(self, npu_only: bool = True) -> Iterator[tuple[SessionConfig, Entry]]:
        """Each optimizer entry once (an entry can belong to several configs through session_config)."""
        seen = set()
        for config in self.configs:
            for entry in config.all_entries():
                if id(entry) in seen:
                    continue
                seen.add(id(entry))
                if npu_only and entry.is_npu is False:
                    continue
                yield config, entry

    def user_writes(self, npu_only: bool = True) -> Iterator[tuple[SessionConfig, Entry, OptionWrite]]:
        for config, entry in self.entries(npu_only):
            for w in entry.writes:
                if not w.implicit:
                    yield config, entry, w

    def spec(self, key: str):
        return self.kb.options.get(key)

    def release_view(self, key: str):
        spec = self.spec(key)
        return spec.for_release(self.settings.release) if spec else None

    # -- locations ----------------------------------------------------------------------------

    def place(self, path: str, rng: Optional[Range], calls=(), write=None) -> Optional[tuple[Range, str]]:
        """Where a finding about something at (path, rng) is shown in this file, with a note.

        Something in this file is shown where it is. A write inside a helper of another module is
        shown at the helper call made in this file only when its value comes from this file (an
        argument, a constant or flag of this file): otherwise the helper's own file reports it.
        """
        if path == self.path and rng is not None:
            return rng, ""
        if write is None or write.value.source_path != self.path:
            return None
        for call in reversed(calls):  # the innermost call made in this file: the one that passed the value
            if call.path == self.path:
                call_rng = self.extraction.range_of(call.node) if self.extraction is not None else None
                if call_rng is not None:
                    return call_rng, f" (set by {call.callee}() in {path})"
        return None

    def finding(
        self,
        rule: Rule,
        path: str,
        rng: Optional[Range],
        message: str,
        *,
        calls=(),
        severity: Optional[str] = None,
        hint: Optional[str] = None,
        option: Optional[str] = None,
        related: Iterable[Related] = (),
        fix: Optional[Fix] = None,
        certainty: str = "always",
        branch: Optional[str] = None,
        write=None,
    ) -> Optional[Finding]:
        placed = self.place(path, rng, calls, write)
        if placed is None:
            return None
        where, note = placed
        base = message + note
        if certainty == "conditional":
            message = f"{message} [may happen: {branch}]" if branch else f"{message} [may happen on some paths]"
        finding = Finding(
            path=self.path,
            line=where.line,
            column=where.column,
            end_line=where.end_line,
            end_column=where.end_column,
            code=rule.code,
            name=rule.name,
            severity=severity or rule.severity,
            message=message + note,
            hint=hint,
            option=option,
            related=tuple(related),
            fix=fix if not note else None,
            certainty=certainty,
            tags=rule.tags,
        )
        self.origins[id(finding)] = (finding, base, branch if certainty == "conditional" else None, tuple(calls), write)
        return finding

    def report(
        self,
        rule: Rule,
        about: About,
        message: str,
        *,
        at: Any = _DERIVED,
        hint: Optional[str] = None,
        fix: Optional[Fix] = None,
        severity: Optional[str] = None,
        related: Iterable[Related] = (),
        option: Any = _DERIVED,
        certainty: Any = _DERIVED,
        branch: Any = _DERIVED,
        write: Any = _DERIVED,
    ) -> Optional[Finding]:
        """A finding of ``rule`` about a write, an entry, a relation hit, a hazard or a code fact.

        Where it is (path, range and the helper calls that reach it), the option it names, whether it
        always happens and on which branch are derived from what it is about. ``at`` says which part of
        a write (or of a relation hit's write) to point at: "key", "value", "field" (each falling back to
        the whole write) or "write"; a Range points at that range (in the file of what it is about), None
        at no range of this file (shown at a helper call, if at all).
        By default a write is pointed at as a whole and a relation hit at its key.
        ``option``, ``certainty``, ``branch`` and ``write`` (the write whose value decides whether a finding
        inside a helper of another module is shown at the call made here) override the derived ones where a
        rule knows better (a certainty combined from several writes, say). ``severity``: the rule's default
        when None (a hazard brings its own).
        """
        d = _derive(about, at)
        return self.finding(
            rule, d.path, d.range, message, calls=d.calls, write=d.write if write is _DERIVED else write,
            severity=severity or d.severity, hint=hint,
            option=d.option if option is _DERIVED else option, related=related, fix=fix,
            certainty=d.certainty if certainty is _DERIVED else certainty,
            branch=d.branch if branch is _DERIVED else branch,
        )

    def related_write(self, w: OptionWrite, message: str) -> Optional[Related]:
        if w.range is None:
            return None
        return Related(path=w.path, line=w.range.line, column=w.range.column, message=message)


#: What a finding can be about (CheckContext.report).
@dataclass
class RelationHit:
    """A knowledge-base relation broken in one optimizer entry (or across the entries of one config), as
    evaluate_relations finds it for the relation rules."""

    relation: Relation
    entry: Entry
    anchor: OptionWrite  # where to report
    others: list[OptionWrite]  # the other writes involved (related information)
    certainty: str
    missing: tuple[str, ...] = ()
    branch: Optional[str] = None  # the branch on which the violation happens (conditional hits)
    across_entries: bool = False  # found only on the options several NpuOptimizer entries produce together
    # `excludes` whose options are set under separate conditions, no single path taking both: the two
    # conditions (each described), then what they share; the combination is then only information
    independent: Optional[tuple[str, str]] = None


About = Union[OptionWrite, Entry, Hazard, CodeFact, "RelationHit"]


@dataclass(frozen=True)
class _Where:
    """Where a finding is shown and how certain it is, derived by :func:`_derive` from what it is about."""

    path: str
    range: Optional[Range]
    calls: tuple
    write: Optional[OptionWrite]
    option: Optional[str]
    certainty: str
    branch: Optional[str]
    severity: Optional[str] = None


_PARTS = {"key": "key_range", "value": "value_range", "field": "field_range", "write": "range"}


def _write_range(w: OptionWrite, at: Any) -> Optional[Range]:
    if at is None or isinstance(at, Range):
        return at
    if at not in _PARTS:
        raise ValueError(f"at={at!r}: one of {', '.join(_PARTS)} or a Range")
    return getattr(w, _PARTS[at]) or w.range


def _derive(about: About, at: Any) -> _Where:
    if isinstance(about, RelationHit):
        w = about.anchor
        return _Where(w.path, _write_range(w, "key" if at is _DERIVED else at), w.calls, w, w.key, about.certainty,
                      about.branch or w.branch_text())
    if isinstance(about, OptionWrite):
        return _Where(about.path, _write_range(about, "write" if at is _DERIVED else at), about.calls, about, about.key,
                      about.certainty, about.branch_text())
    if isinstance(about, Hazard):
        branch = "; ".join(s.description for s in about.branches) or None
        return _Where(about.path, _range_of(about, at), about.calls, None, about.option,
                      "conditional" if about.branches else "always", branch, about.severity)
    if isinstance(about, (Entry, CodeFact)):
        return _Where(about.path, _range_of(about, at), about.calls, None, None, "always", None)
    raise TypeError(f"a finding is about a write, an entry, a relation hit, a hazard or a code fact, not {about!r}")


def _range_of(about: Union[Entry, Hazard, CodeFact], at: Any) -> Optional[Range]:
    return about.range if at is _DERIVED else at


def describe(value) -> str:
    """A value as a user would write it in the message."""
    if isinstance(value, bytes):
        try:
            return repr(value.decode("utf-8"))
        except UnicodeDecodeError:
            return repr(value)
    return repr(value)


def severity_for_reaction(reaction: str) -> str:
    return "error" if reaction in FATAL else "warning"


#: How the adapter reacts to a bad value, as the end of a finding's message.
REACTION_TEXT: dict[str, str] = {reaction: text.consequence for reaction, text in INVALID_REACTIONS.items()}
