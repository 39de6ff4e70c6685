"""The result model shared by checks, fixes and every renderer.

Positions are 1-based lines and 1-based columns counted in characters (Unicode code points) of the
decoded source line. Renderers that need other units (LSP: UTF-16 code units, 0-based) convert from
the source text kept on :class:`FileReport`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

SEVERITY_ORDER = {"info": 0, "warning": 1, "error": 2}


@dataclass(frozen=True)
class Related:
    """Another place a finding refers to (a related write, say), with what it is."""

    path: str
    line: int
    column: int
    message: str


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based positions (end exclusive) with ``content``."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str


@dataclass(frozen=True)
class Fix:
    """The fix of a finding: its edits and the files it creates, and whether applying it is safe."""

    applicability: str  # "safe" | "unsafe"
    message: str
    edits: tuple[Edit, ...]
    # Files a fix creates next to the script (path relative to the script's folder -> content);
    # never overwritten when they exist.
    new_files: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Finding:
    """One finding of a rule in one file: where, what, how severe, and its fix if it has one."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str  # stable, e.g. "NPU101"
    name: str  # stable kebab-case, e.g. "unknown-option"
    severity: str  # "error" | "warning" | "info"
    message: str
    hint: Optional[str] = None
    option: Optional[str] = None
    related: tuple[Related, ...] = ()
    fix: Optional[Fix] = None
    certainty: str = "always"  # "always" | "conditional"
    tags: tuple[str, ...] = ()  # "deprecated", "unnecessary"

    def sort_key(self):
        return (self.path, self.line, self.column, self.code, self.message)

    @property
    def at_least_warning(self) -> bool:
        return SEVERITY_ORDER[self.severity] >= SEVERITY_ORDER["warning"]


@dataclass
class FileReport:
    """Everything npu-audit learned about one file."""

    path: str  # as given on the command line (or relative to the folder given)
    findings: list[Finding] = field(default_factory=list)
    text: Optional[str] = None  # decoded source, for markers and UTF-16 conversion; None if unreadable
    configs: list = field(default_factory=list)  # effective configs (npu_audit.extract.model.SessionConfig)
    parsed: bool = False  # whether libcst parsed the file (prefiltered-out files are not parsed)
    internal_error: bool = False
    dependencies: list = field(default_factory=list)  # other files (paths) the analysis read
    content_hash: Optional[str] = None  # sha256 of the bytes analysed
    imports: list = field(default_factory=list)  # modules imported, for files the prefilter skipped and parsed ones
    # top-level names that can carry NPU configuration to importers (npu_audit.relevance), for parsed
    # files; None: any name may
    exports: Optional[list] = None
    # for parsed files: the other files (real paths) whose literals or flag definitions its option writes take
    # their values from; None: a caller of its code may supply a value (npu_audit.extract.inputs), or not known
    caller_inputs: Optional[list] = None
    # for the result cache (filled by a run, not part of to_dict): the imports the analysis resolved against
    # the file system, (module, level, folder, roots, file or None), and the folders whose entries decide
    # them, [folder, stat, digest of its .py files and subfolders] (a module added next to a script can hide
    # the one its import found)
    resolutions: Optional[list] = None
    watched_folders: Optional[list] = None
    # (a run's own, not part of to_dict) this file analysed again as a file of the second phase (parsed
    # although it has no NPU markers), by the worker that analysed its project, in case the run picks it
    ahead: Optional[FileReport] = None

    def to_dict(self) -> dict:
        from dataclasses import asdict

        return {
            "path": self.path,
            "findings": [asdict(f) for f in self.findings],
            "text": self.text,
            "configs": self.configs,
            "parsed": self.parsed,
            "internal_error": self.internal_error,
            "dependencies": list(self.dependencies),
            "content_hash": self.content_hash,
            "imports": list(self.imports),
            "exports": None if self.exports is None else list(self.exports),
            "caller_inputs": None if self.caller_inputs is None else list(self.caller_inputs),
        }

    @classmethod
    def from_dict(cls, data: dict) -> FileReport:
        findings = []
        for f in data["findings"]:
            fix = None
            if f.get("fix"):
                fx = f["fix"]
                fix = Fix(fx["applicability"], fx["message"], tuple(Edit(**e) for e in fx["edits"]),
                          tuple(tuple(x) for x in fx.get("new_files", ())))
            findings.append(Finding(**{**f, "fix": fix, "related": tuple(Related(**r) for r in f["related"]),
                                       "tags": tuple(f["tags"])}))
        return cls(path=data["path"], findings=findings, text=data["text"], configs=data["configs"],
                   parsed=data["parsed"], internal_error=data["internal_error"],
                   dependencies=list(data.get("dependencies", [])), content_hash=data.get("content_hash"),
                   imports=list(data.get("imports", [])), exports=data.get("exports"),
                   caller_inputs=data.get("caller_inputs"))

    def line_text(self, line: int) -> str:
        if self.text is None:
            return ""
        from npu_audit.text import split_lines

        lines = split_lines(self.text)
        return lines[line - 1] if 0 < line <= len(lines) else ""


@dataclass
class RunReport:
    """What a run found: the report of each file, and the release, product and scenario it assumed."""

    files: list[FileReport]
    settings: dict = field(default_factory=dict)

    @property
    def findings(self) -> list[Finding]:
        return sorted((f for r in self.files for f in r.findings), key=Finding.sort_key)

    def summary(self) -> dict:
        counts = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            counts[f.severity] += 1
        return {
            "files": len(self.files),
            "files_parsed": sum(1 for r in self.files if r.parsed),
            "findings": sum(counts.values()),
            **counts,
            "fixable": sum(1 for f in self.findings if f.fix is not None),
        }

    def exit_code(self) -> int:
        if any(r.internal_error for r in self.files):
            return 2
        return 1 if any(f.at_least_warning for f in self.findings) else 0
