"""What the NpuOptimizer entry NPUEstimator appends writes for an NPURunConfig keyword left unset, per
adapter release (``rules/estimator_entry.toml``): typed view and its loader.

rules/npurunconfig.toml describes the current adapter, whose appended entry the extractor adds to every
``NPURunConfig(...)``. Older adapters wrote more keys when a keyword was left unset (``precision_mode``
from late 2020 to early 2023, say); those rows are kept here, each with the lines of the adapter's public
history that show it, and the ``estimator-overrides`` check reads them for the release it checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from npu_audit.knowledge.model import Citation
from npu_audit.knowledge.validation import Location as _Ctx

FILE = "estimator_entry.toml"


@dataclass(frozen=True)
class Source:
    """A line (or lines) of the adapter's public history."""

    repo: str  # owner/name on GitHub
    commit: str  # 40 hex digits
    path: str
    line: int
    end_line: Optional[int]
    note: str

    def citation(self) -> Citation:
        lines = f"{self.line}-{self.end_line}" if self.end_line and self.end_line != self.line else f"{self.line}"
        return Citation(adapter=f"{self.path}:{lines}", note=f"{self.repo}@{self.commit[:12]}: {self.note}")


@dataclass(frozen=True)
class WrittenValue:
    """A value the entry writes, when the entry's own write of ``when_key`` is truthy (``when_truthy``)
    or falsy; ``when_key`` None: always."""

    value: Any
    when_key: Optional[str] = None
    when_truthy: bool = True


@dataclass(frozen=True)
class EstimatorWrite:
    """One row: in ``release``, with NPURunConfig's ``kwarg`` left unset, the appended entry writes ``key``
    (``written``) with one of ``values``."""

    release: str
    kwarg: str
    key: str
    written: bool
    field: Optional[str]
    values: tuple[WrittenValue, ...]
    adapter_releases: Optional[str]  # which adapter releases do it, as a message names them
    severity: Optional[str]  # of a finding on a session-config value it overrides
    effect: Optional[str]  # what the override does on the device (lower-case, continues a message)
    sources: tuple[Source, ...]

    @property
    def cite(self) -> tuple[Citation, ...]:
        return tuple(s.citation() for s in self.sources)


@dataclass(frozen=True)
class EstimatorModel:
    writes: tuple[EstimatorWrite, ...]

    def for_release(self, release: str) -> tuple[EstimatorWrite, ...]:
        """The rows of ``release`` whose key the appended entry writes."""
        return tuple(w for w in self.writes if w.release == release and w.written)


def build(builder: Any, options: dict, runconfig: Any) -> EstimatorModel:
    """Read rules/estimator_entry.toml with the loader's ``builder`` (its schema is checked there) and
    check what the schema cannot: keys are options, keywords are NPURunConfig's, a row appears once."""
    return from_data(builder._read(FILE), options, runconfig)


def from_data(data: dict, options: dict, runconfig: Any) -> EstimatorModel:
    ctx = _Ctx(FILE)
    rows: list[EstimatorWrite] = []
    seen: set[tuple[str, str]] = set()
    for i, table in enumerate(data["write"]):
        at = ctx.at(f"write[{i}]")
        key, kwarg, release = table["key"], table["kwarg"], table["release"]
        if key not in options:
            raise at.fail(f"key {key!r} is not an option of rules/options")
        if kwarg not in runconfig.kwargs:
            raise at.fail(f"kwarg {kwarg!r} is not an NPURunConfig keyword of npurunconfig.toml")
        if (release, kwarg) in seen:
            raise at.fail(f"a second row for {kwarg!r} in release {release!r}")
        seen.add((release, kwarg))
        spec = runconfig.kwargs[kwarg]
        if spec.key != key:
            raise at.fail(f"NPURunConfig's {kwarg!r} writes {spec.key!r} (npurunconfig.toml), not {key!r}")
        if release == "current" and table["written"] and spec.written in ("always", "if-not-none") \
                and spec.default is not None:
            raise at.fail(f"npurunconfig.toml already has the current default of {kwarg!r}: keep it there only")
        values = []
        for v in table.get("values", ()):
            when = v.get("when")
            if when is not None and when["key"] not in options:
                raise at.fail(f"when.key {when['key']!r} is not an option of rules/options")
            values.append(WrittenValue(v["value"], when["key"] if when else None, when["truthy"] if when else True))
        rows.append(EstimatorWrite(
            release=release, kwarg=kwarg, key=key, written=table["written"], field=table.get("field"),
            values=tuple(values), adapter_releases=table.get("adapter_releases"), severity=table.get("severity"),
            effect=table.get("effect"),
            sources=tuple(Source(s["repo"], s["commit"], s["path"], s["line"], s.get("end_line"), s["note"])
                          for s in table["sources"]),
        ))
    return EstimatorModel(writes=tuple(rows))
