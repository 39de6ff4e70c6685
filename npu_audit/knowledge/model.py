"""Typed view of the option knowledge base kept as TOML in ``rules/``.

Nothing here knows about TOML: :mod:`npu_audit.knowledge.loader` validates the files and builds these
objects once. Every check, fix, explanation and hover reads them.

The records are ``typing.NamedTuple`` classes: immutable like a frozen dataclass, and about seven times
cheaper to create, which counts because every run creates these classes at start-up (a frozen dataclass
writes out and compiles six methods per class). Copy one with ``_replace``; compare records of one class
only (two records are equal when their fields are, as tuples).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional, Union

# Releases, scenarios, products, severities and the adapter's reactions: npu_audit.knowledge.vocabulary
from npu_audit.knowledge.vocabulary import RELEASES as RELEASES  # (re-exported)

FIELDS = ("b", "i", "s")
LIFECYCLE_STATUSES = ("supported", "deprecated", "no-effect", "not-supported", "undocumented")
DOMAIN_KINDS = ("bool", "int", "int-range", "enum", "grammar", "path", "dir", "string")
RELATION_KINDS = ("requires", "excludes", "together", "overrides", "gated")

Scalar = Union[str, int, bool, float]


class Citation(NamedTuple):
    """Where a fact comes from: a vendor doc heading or a line of adapter source."""

    doc: Optional[str] = None  # file name in shared/docs, e.g. "session-options.en.txt"
    heading: Optional[str] = None  # option or section heading in that doc
    adapter: Optional[str] = None  # e.g. "tf_adapter/util/npu_attrs.cc:2188"
    note: Optional[str] = None

    def render(self) -> str:
        parts = []
        if self.doc:
            parts.append(f"docs/{self.doc}" + (f' "{self.heading}"' if self.heading else ""))
        if self.adapter:
            parts.append(f"adapter {self.adapter}")
        text = ", ".join(parts)
        if self.note:
            text = f"{text} ({self.note})" if text else self.note
        return text


class Domain(NamedTuple):
    """The values an option accepts (``domain`` of an option table in rules/options/)."""

    kind: str
    values: tuple[Scalar, ...] = ()  # enum
    min: Optional[float] = None  # int-range, inclusive unless min_exclusive
    max: Optional[float] = None
    min_exclusive: bool = False
    grammar: Optional[str] = None  # grammar name in npu_audit.knowledge.grammars
    unit: Optional[str] = None
    case_sensitive: bool = True

    def describe(self) -> str:
        if self.kind == "enum":
            return "one of " + ", ".join(repr(v) if isinstance(v, str) else str(v) for v in self.values)
        if self.kind == "int-range":
            lo = "" if self.min is None else ("(" if self.min_exclusive else "[") + _num(self.min)
            hi = "" if self.max is None else _num(self.max) + "]"
            unit = f" {self.unit}" if self.unit else ""
            if self.min is not None and self.max is not None:
                return f"integer in {lo}, {hi}{unit}"
            if self.min is not None:
                return f"integer {'>' if self.min_exclusive else '>='} {_num(self.min)}{unit}"
            return f"integer <= {_num(self.max)}{unit}"  # type: ignore[arg-type]
        if self.kind == "grammar":
            return f"string in the {self.grammar} format"
        return {
            "bool": "True or False",
            "int": "integer" + (f" ({self.unit})" if self.unit else ""),
            "path": "file path",
            "dir": "directory path",
            "string": "string",
        }[self.kind]


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


class DocumentedDefault(NamedTuple):
    """A default the docs give for a scenario or products only (``defaults`` of an option table)."""

    value: Scalar
    scenario: Optional[str] = None
    products: tuple[str, ...] = ()
    note: Optional[str] = None


class Lifecycle(NamedTuple):
    """An option's status in one release (supported, deprecated, no-effect, ...), and what to write instead."""

    status: str
    replacement: Optional[str] = None
    note: Optional[str] = None
    scheduled: bool = False  # deprecated: the docs say "will be deprecated in later versions"
    instead: Optional[str] = None  # deprecated without a replacement key: what the docs suggest doing instead


class ValueFact(NamedTuple):
    """A fact about one value of an option (equivalences, scenario or product limits, release limits)."""

    value: Scalar
    same_as: Optional[Scalar] = None  # documented equivalent value (renamed or alias)
    preferred: Optional[Scalar] = None  # the value the docs recommend writing instead
    scenarios: tuple[str, ...] = ()  # only valid in these scenarios (empty: all)
    products: tuple[str, ...] = ()  # only supported on these products (empty: all)
    releases: tuple[str, ...] = ()  # only accepted in these releases (empty: all)
    note: Optional[str] = None
    cite: tuple[Citation, ...] = ()


class ReleaseView(NamedTuple):
    """The parts of an option that can differ between releases."""

    field: str
    domain: Domain
    default: Optional[Scalar]
    scenarios: tuple[str, ...]
    lifecycle: Lifecycle


class RunConfigRoute(NamedTuple):
    """How the option reaches parameter_map through NPURunConfig (see rules/npurunconfig.toml)."""

    kwarg: str  # NPURunConfig keyword, e.g. "dump_config" or "precision_mode"
    object: Optional[str] = None  # config object class, e.g. "DumpConfig"
    param: Optional[str] = None  # parameter of that object
    written: str = "if-not-none"
    default: Any = None


_VIEWS: dict = {}  # (id(spec), release) -> (spec, ReleaseView): views are asked for on every write


class OptionSpec(NamedTuple):
    """Everything the knowledge base says about one parameter_map key (a table of rules/options/);
    :meth:`for_release` gives the parts that differ by release."""

    key: str
    field: str
    section: str
    summary: str
    description: str
    scenarios: tuple[str, ...]
    products: tuple[str, ...]
    domain: Domain
    default: Optional[Scalar]
    default_note: Optional[str]
    defaults: tuple[DocumentedDefault, ...]
    on_invalid: str
    on_wrong_field: str
    read_condition: Optional[str]
    lifecycle: dict[str, Lifecycle]
    release_overrides: dict[str, dict[str, Any]]
    values: tuple[ValueFact, ...]
    cite: tuple[Citation, ...]
    source_file: str
    routes: tuple[RunConfigRoute, ...] = ()

    def for_release(self, release: str) -> ReleaseView:
        cached = _VIEWS.get((id(self), release))
        if cached is not None and cached[0] is self:
            return cached[1]
        view = self._view(release)
        _VIEWS[(id(self), release)] = (self, view)
        return view

    def _view(self, release: str) -> ReleaseView:
        over = self.release_overrides.get(release, {})
        return ReleaseView(
            field=over.get("field", self.field),
            domain=over.get("domain", self.domain),
            default=over.get("default", self.default),
            scenarios=over.get("scenarios", self.scenarios),
            lifecycle=self.lifecycle[release],
        )

    def value_fact(self, value: Scalar) -> Optional[ValueFact]:
        for fact in self.values:
            if fact.value == value and type(fact.value) is type(value):
                return fact
        return None


class Condition(NamedTuple):
    """A predicate over an effective option set. See rules/README.md, "Conditions"."""

    op: str  # set | unset | is | in | not_in | gt | ge | lt | le | gt_key | all | any | not
    key: Optional[str] = None
    operand: Any = None  # value, list, number, or other key for gt_key
    factor: float = 1.0
    children: tuple[Condition, ...] = ()

    def keys(self) -> set[str]:
        found = {self.key} if self.key else set()
        if self.op == "gt_key":
            found.add(self.operand)
        for child in self.children:
            found |= child.keys()
        return found


class RelationExample(NamedTuple):
    """A script showing a relation (``[[relation.example]]``): ``code`` follows the TF1 prelude of the
    rule examples (a ConfigProto with one NpuOptimizer entry, ``custom_op``); an invalid example expects
    one finding of the relation at ``line``/``column`` of ``code`` with exactly ``message`` (and
    ``severity`` when it is not the relation's), a valid one (``valid = true``) none."""

    code: str
    valid: bool = False
    release: Optional[str] = None  # the release to check it for (default: current)
    line: Optional[int] = None
    column: Optional[int] = None
    message: Optional[str] = None
    severity: Optional[str] = None


class Relation(NamedTuple):
    """A rule between options (rules/relations.toml): when it is broken, what happens, and what the finding says."""

    id: str
    kind: str
    subject: str  # the option the finding is reported on
    keys: tuple[str, ...]  # every option involved
    when: Optional[Condition]
    require: Optional[Condition]
    severity: str
    failure: str
    message: str
    hint: Optional[str]
    releases: tuple[str, ...]
    cite: tuple[Citation, ...]
    examples: tuple[RelationExample, ...] = ()
    # the adapters whose own check makes `failure` happen (failures "session-error" and "abort"); a
    # config read by another adapter passes the options on unchecked: the finding is at most a warning
    enforced_by: tuple[str, ...] = ()


class FieldRequirement(NamedTuple):
    """Fields the JSON object written to ``option`` must hold in ``scenario`` when ``when`` holds in the entry
    (``[[field_requirement]]`` of rules/relations.toml): profiling training data needs training_trace on."""

    id: str
    option: str
    when: Condition
    scenario: str
    fields: dict[str, tuple[str, ...]]  # field -> the values that meet the requirement
    absent_ok: tuple[str, ...]  # fields whose documented default meets it
    goes_with: dict[str, str]  # field -> the required field it belongs to
    severity: str
    message: str
    hint: str
    cite: tuple[Citation, ...]


class UnreadKey(NamedTuple):
    """A key that real scripts write but no adapter version reads."""

    key: str
    reason: str
    suggestion: Optional[str]
    cite: tuple[Citation, ...]
    # values by which a script means the key to act (the user believes it does something: an error);
    # None: every value; (): none, a harmless leftover (a warning)
    active: Optional[tuple] = None
    wants: Optional[str] = None  # what a script writing an active value expects ("mixed precision")
    provided_by: Optional[Condition] = None  # when this holds in the entry, what it wants is on anyway


class Product(NamedTuple):
    """A product the docs name (rules/products.toml); option and value limits refer to its id."""

    id: str
    name: str
    aliases: tuple[str, ...]


class ValueMigration(NamedTuple):
    """One row of a rename table, e.g. precision_mode value -> precision_mode_v2 value."""

    old: Scalar
    new: Optional[Scalar]
    exact: bool
    note: Optional[str]
    cite: tuple[Citation, ...]


class Migration(NamedTuple):
    """A rename table of rules/migrations.toml (precision_mode values to precision_mode_v2 ones, say)."""

    id: str
    from_key: str
    to_key: Optional[str]
    summary: str
    rows: tuple[ValueMigration, ...]
    cite: tuple[Citation, ...]

    def row(self, old: Scalar) -> Optional[ValueMigration]:
        for row in self.rows:
            if row.old == old:
                return row
        return None


class RunConfigParam(NamedTuple):
    """A keyword of NPURunConfig, a parameter of one of its config objects, or a write NPUEstimator makes by itself
    (rules/npurunconfig.toml): the parameter_map key it becomes and when it is written."""

    name: str  # keyword of NPURunConfig or of a config object
    key: Optional[str]  # parameter_map key written (None: not a parameter_map option)
    field: Optional[str]
    default: Any
    written: str  # always | if-not-none | never | see note
    note: Optional[str] = None
    hazard: Optional[str] = None
    object: Optional[str] = None  # for NPURunConfig kwargs that take a config object
    unless_kwarg: Optional[str] = None  # implicit writes made only when this keyword is not given
    removed: bool = False  # a keyword the current NPURunConfig no longer accepts (TypeError)
    instead: Optional[str] = None  # what to write instead: a removed keyword's replacement, a missing argument's value


class RunConfigObject(NamedTuple):
    """A config object class NPURunConfig takes (DumpConfig, ProfilingConfig, ...), with its parameters."""

    name: str
    params: tuple[RunConfigParam, ...]  # in positional order
    note: Optional[str] = None


class RunConfigModel(NamedTuple):
    """How NPURunConfig, its config objects and NPUEstimator become parameter_map writes (rules/npurunconfig.toml)."""

    kwargs: dict[str, RunConfigParam]
    objects: dict[str, RunConfigObject]
    implicit: tuple[RunConfigParam, ...]  # writes NPUEstimator makes with no keyword at all
    helpers: dict[str, dict[str, Any]]  # npu_config_proto & co.

    def keyword_taking(self, cls: str) -> Optional[RunConfigParam]:
        """The NPURunConfig keyword that takes an object of config class ``cls`` (dump_config for DumpConfig)."""
        return next((spec for spec in self.kwargs.values() if spec.object == cls), None)


@dataclass
class KnowledgeBase:
    """The whole knowledge base of rules/, built once by :mod:`npu_audit.knowledge.loader`; every check, fix,
    explanation and hover reads it."""

    options: dict[str, OptionSpec]
    relations: tuple[Relation, ...]
    unread_keys: dict[str, UnreadKey]
    products: dict[str, Product]
    migrations: dict[str, Migration]
    runconfig: RunConfigModel
    fingerprint: str = ""  # hash of every rules file, part of cache keys
    _by_alias: dict[str, str] = field(default_factory=dict)
    tf2: Any = None  # npu_audit.knowledge.tf2.Tf2Model: the TensorFlow 2 option tree (rules/tf2_options.toml)
    tf_api: Any = None  # npu_audit.knowledge.tf_api.ApiModel: the calls the extractor models (rules/tf_api.toml)
    # npu_audit.knowledge.estimator.EstimatorModel: per release, what NPUEstimator's appended entry writes for an
    # NPURunConfig keyword left unset, where it differs from npurunconfig.toml (rules/estimator_entry.toml)
    estimator: Any = None
    field_requirements: tuple[FieldRequirement, ...] = ()  # [[field_requirement]] of rules/relations.toml

    def option(self, key: str) -> Optional[OptionSpec]:
        return self.options.get(key)

    def product_id(self, name: str) -> Optional[str]:
        return self._by_alias.get(name.strip().lower())
