"""Load and validate the TOML knowledge base in ``rules/`` (parsed once per process).

Every structural mistake in a rules file raises :class:`KnowledgeBaseError` naming the file and the
table, so a reviewer editing the data sees at once what is wrong. Cross-references (relations naming
options, defaults inside domains, grammars accepting the docs' examples) are checked by
:func:`consistency_problems`, which the test-suite runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from npu_audit import user_cache
from npu_audit.knowledge import vocabulary
from npu_audit.knowledge.model import (
    Citation,
    Condition,
    DocumentedDefault,
    Domain,
    FieldRequirement,
    KnowledgeBase,
    Lifecycle,
    Migration,
    OptionSpec,
    Product,
    Relation,
    RelationExample,
    RunConfigModel,
    RunConfigObject,
    RunConfigParam,
    RunConfigRoute,
    UnreadKey,
    ValueFact,
    ValueMigration,
)
from npu_audit.knowledge.schema import SchemaSet
from npu_audit.knowledge.validation import KnowledgeBaseError
from npu_audit.knowledge.validation import Location as _Ctx
from npu_audit.knowledge.vocabulary import RELEASES
from npu_audit.toml_compat import toml_library

#: the tests a key condition can make (rules/README.md, "Conditions"; rules/schema/common.schema.json)
CONDITION_OPS = ("set", "is", "in", "not_in", "gt", "ge", "lt", "le", "gt_key")

#: What a snapshot file holds: a MAC, then the JSON object of every rules file's validated document.
SNAPSHOT_FORMAT = 2

INVALID_REACTIONS = tuple(vocabulary.INVALID_REACTIONS)
WRONG_FIELD_REACTIONS = tuple(vocabulary.WRONG_FIELD_REACTIONS)


def rules_dir() -> Path:
    """Where the rules live: inside the installed wheel, else next to the source package."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "rules", here.parent / "rules"):
        if (candidate / "products.toml").is_file():
            return candidate
    raise KnowledgeBaseError(f"cannot find the rules/ folder near {here}")


@lru_cache(maxsize=4)
def load(directory: Optional[str] = None) -> KnowledgeBase:
    """Parse and validate the knowledge base once (cached per directory).

    Parsing the TOML and checking it against its JSON Schemas costs more than analysing a small script,
    so the parsed and validated documents are kept as a snapshot: JSON in the user's cache folder, signed
    with the user's secret key (npu_audit.user_cache) and named by a digest of every rules file and of this
    package's knowledge code, so that any edit to either makes a new one. Building the typed model from the
    documents is cheap and is done at every start. A missing, unreadable, unsigned or unwritable snapshot
    only costs the full parse; it is data, never code.
    """
    root = Path(directory) if directory else rules_dir()
    snapshot = _snapshot_path(root)
    key = user_cache.secret_key() if snapshot is not None else None
    documents = _read_snapshot(snapshot, key) if snapshot is not None and key is not None else None
    builder = _Builder(root, documents)
    kb = builder.build()
    if documents is None and snapshot is not None and key is not None:
        data = json.dumps(builder.documents, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        user_cache.write(snapshot, user_cache.signed(key, data))
    return kb


def _read_snapshot(path: Path, key: bytes) -> Optional[dict[str, dict]]:
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    data = user_cache.unsigned(key, blob)
    if data is None:
        return None
    try:
        documents = json.loads(data)
    except ValueError:
        return None
    return documents if isinstance(documents, dict) else None


def _snapshot_folder() -> Optional[Path]:
    if os.environ.get("NPU_AUDIT_NO_KB_SNAPSHOT"):
        return None
    return user_cache.folder()


def _snapshot_path(root: Path) -> Optional[Path]:
    """Where the snapshot of ``root`` lives, named by the digest of everything it is built from."""
    folder = _snapshot_folder()
    if folder is None:
        return None
    digest = hashlib.sha256(f"{SNAPSHOT_FORMAT}|{sys.version_info[:2]}".encode())
    try:
        code = Path(__file__).resolve().parent
        sources = [(p.relative_to(root).as_posix(), p) for p in sorted(root.rglob("*")) if p.is_file()]
        sources += [(f"<code>/{p.name}", p) for p in sorted(code.glob("*.py"))]
        for name, path in sources:
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    except OSError:
        return None
    return folder / f"kb-{digest.hexdigest()[:32]}.json"


class _Builder:
    def __init__(self, root: Path, documents: Optional[dict[str, dict]] = None):
        self.root = root
        #: every rules file read, by its path relative to ``root``: its validated document
        self.documents: dict[str, dict] = {}
        self._known = documents or {}
        self.digest = hashlib.sha256()
        self.product_ids: tuple[str, ...] = ()
        self.schemas = SchemaSet(root)

    def _read(self, relative: str) -> dict:
        """The parsed TOML of rules file ``relative``, checked against its JSON Schema (rules/schema/)."""
        path = self.root / relative
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise KnowledgeBaseError(f"{relative}: cannot read: {exc}") from exc
        self.digest.update(relative.encode() + b"\0" + data)
        known = self._known.get(relative)
        if isinstance(known, dict):
            self.documents[relative] = known
            return known
        tomllib = toml_library()
        try:
            table = tomllib.loads(data.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise KnowledgeBaseError(f"{relative}: not valid TOML: {exc}") from exc
        self.schemas.check(relative, table)
        self.documents[relative] = table
        return table

    # The shape of each file is checked by its schema before these run: they only build the typed
    # model, and check what a schema cannot say (references between tables and files).

    # -- citations, domains, conditions -------------------------------------------------------

    def citations(self, value: Any) -> tuple[Citation, ...]:
        return tuple(
            Citation(doc=item.get("doc"), heading=item.get("heading"), adapter=item.get("adapter"), note=item.get("note"))
            for item in value or ()
        )

    def domain(self, table: dict) -> Domain:
        return Domain(
            kind=table["kind"],
            values=tuple(table.get("values", [])),
            min=table.get("min"),
            max=table.get("max"),
            min_exclusive=bool(table.get("min_exclusive", False)),
            grammar=table.get("grammar"),
            unit=table.get("unit"),
            case_sensitive=bool(table.get("case_sensitive", True)),
        )

    def condition(self, table: dict) -> Condition:
        for combinator in ("all", "any"):
            if combinator in table:
                return Condition(op=combinator, children=tuple(self.condition(c) for c in table[combinator]))
        if "not" in table:
            return Condition(op="not", children=(self.condition(table["not"]),))
        op = next(op for op in CONDITION_OPS if op in table)
        operand = table[op]
        if op == "set":
            return Condition(op="set" if operand else "unset", key=table["key"])
        return Condition(
            op=op,
            key=table["key"],
            operand=tuple(operand) if isinstance(operand, list) else operand,
            factor=float(table.get("factor", 1.0)),
        )

    # -- options --------------------------------------------------------------------------------

    def option(self, key: str, table: dict, source_file: str) -> OptionSpec:
        lifecycle: dict[str, Lifecycle] = {
            release: Lifecycle(status=entry["status"], replacement=entry.get("replacement"), note=entry.get("note"),
                               scheduled=entry.get("scheduled", False), instead=entry.get("instead"))
            for release, entry in ((r, table["lifecycle"][r]) for r in RELEASES)
        }
        defaults = tuple(
            DocumentedDefault(value=d["value"], scenario=d.get("scenario"), products=tuple(d.get("products", [])),
                              note=d.get("note"))
            for d in table.get("defaults", [])
        )
        values = tuple(
            ValueFact(
                value=v["value"],
                same_as=v.get("same_as"),
                preferred=v.get("preferred"),
                scenarios=tuple(v.get("scenarios", [])),
                products=tuple(v.get("products", [])),
                releases=tuple(v.get("releases", [])),
                note=v.get("note"),
                cite=self.citations(v.get("cite")),
            )
            for v in table.get("values", [])
        )
        overrides: dict[str, dict[str, Any]] = {}
        for release in RELEASES:
            if release in table:
                over = dict(table[release])
                if "domain" in over:
                    over["domain"] = self.domain(over["domain"])
                if "scenarios" in over:
                    over["scenarios"] = tuple(over["scenarios"])
                overrides[release] = over
        return OptionSpec(
            key=key,
            field=table["field"],
            section=table["section"],
            summary=table["summary"],
            description=table.get("description", "").strip(),
            scenarios=tuple(table["scenarios"]),
            products=tuple(table.get("products", [])),
            domain=self.domain(table["domain"]),
            default=table.get("default"),
            default_note=table.get("default_note"),
            defaults=defaults,
            on_invalid=table["on_invalid"],
            on_wrong_field=table.get("on_wrong_field", "reads-default"),
            read_condition=table.get("read_condition"),
            lifecycle=lifecycle,
            release_overrides=overrides,
            values=values,
            cite=self.citations(table["cite"]),
            source_file=source_file,
        )

    # -- whole knowledge base ---------------------------------------------------------------------

    def build(self) -> KnowledgeBase:
        products, by_alias = self.products()
        options: dict[str, OptionSpec] = {}
        option_files = sorted((self.root / "options").glob("*.toml"))
        if not option_files:
            raise KnowledgeBaseError(f"no option files in {self.root / 'options'}")
        for path in option_files:
            relative = f"options/{path.name}"
            data = self._read(relative)
            for key, table in data.items():
                if key in options:
                    raise _Ctx(relative, key).fail(f"option defined twice (also in {options[key].source_file})")
                options[key] = self.option(key, table, relative)
        relations = self.relations()
        unread = self.unread_keys()
        migrations = self.migrations()
        runconfig = self.runconfig()
        options = _attach_routes(options, runconfig)
        from npu_audit.knowledge import estimator as estimator_table
        from npu_audit.knowledge import tf2 as tf2_table
        from npu_audit.knowledge import tf_api

        tf2 = tf2_table.build(self, options)
        kb = KnowledgeBase(
            options=options,
            relations=relations,
            unread_keys=unread,
            products=products,
            migrations=migrations,
            runconfig=runconfig,
            fingerprint=self.digest.hexdigest(),
            _by_alias=by_alias,
            tf2=tf2,
            tf_api=tf_api.build(self),
            estimator=estimator_table.build(self, options, runconfig),
            field_requirements=self.field_requirements(),
        )
        problems = structural_problems(kb)
        if problems:
            raise KnowledgeBaseError("\n".join(problems))
        return kb

    def products(self):
        data = self._read("products.toml")
        products, by_alias = {}, {}
        for pid, table in data["products"].items():
            aliases = tuple(table.get("aliases", []))
            products[pid] = Product(id=pid, name=table["name"], aliases=aliases)
            for alias in (pid, table["name"], *aliases):
                by_alias[alias.lower()] = pid
        self.product_ids = tuple(products)
        return products, by_alias

    def relations(self) -> tuple[Relation, ...]:
        data = self._read("relations.toml")
        out, seen = [], set()
        for i, table in enumerate(data["relation"]):
            rid = table["id"]
            if rid in seen:
                raise _Ctx("relations.toml", f"relation[{i}]").fail(f"duplicate relation id {rid!r}")
            seen.add(rid)
            kind = table["kind"]
            when = self.condition(table["when"]) if "when" in table else None
            require = self.condition(table["require"]) if "require" in table else None
            keys = set(table.get("keys", []))
            keys.add(table["subject"])
            for cond in (when, require):
                if cond is not None:
                    keys |= cond.keys()
            if kind == "together" and len(keys) < 2:
                raise _Ctx("relations.toml", f"relation[{i}]").fail("a together relation lists at least two keys")
            out.append(
                Relation(
                    id=rid,
                    kind=kind,
                    subject=table["subject"],
                    keys=tuple(sorted(keys)),
                    when=when,
                    require=require,
                    severity=table["severity"],
                    failure=table["failure"],
                    message=table["message"].strip(),
                    hint=table.get("hint"),
                    releases=tuple(table.get("releases", RELEASES)),
                    cite=self.citations(table["cite"]),
                    examples=tuple(RelationExample(**example) for example in table.get("example", [])),
                    enforced_by=tuple(table.get("enforced_by", ())),
                )
            )
        return tuple(out)

    def field_requirements(self) -> tuple[FieldRequirement, ...]:
        data = self._read("relations.toml")
        return tuple(
            FieldRequirement(
                id=table["id"],
                option=table["option"],
                when=self.condition(table["when"]),
                scenario=table["scenario"],
                fields={name: tuple(values) for name, values in table["fields"].items()},
                absent_ok=tuple(table.get("absent_ok", ())),
                goes_with=dict(table.get("goes_with", {})),
                severity=table["severity"],
                message=" ".join(table["message"].split()),
                hint=table["hint"],
                cite=self.citations(table["cite"]),
            )
            for table in data.get("field_requirement", [])
        )

    def unread_keys(self) -> dict[str, UnreadKey]:
        data = self._read("unread_keys.toml")
        return {
            key: UnreadKey(
                key=key,
                reason=table["reason"].strip(),
                suggestion=table.get("suggestion"),
                cite=self.citations(table["cite"]),
                active=None if table.get("active") is None else tuple(table["active"]),
                wants=table.get("wants"),
                provided_by=self.condition(table["provided_by"]) if "provided_by" in table else None,
            )
            for key, table in data.items()
        }

    def migrations(self) -> dict[str, Migration]:
        data = self._read("migrations.toml")
        return {
            mid: Migration(
                id=mid,
                from_key=table["from_key"],
                to_key=table.get("to_key"),
                summary=table["summary"],
                rows=tuple(
                    ValueMigration(old=row["old"], new=row.get("new"), exact=row["exact"], note=row.get("note"),
                                   cite=self.citations(row.get("cite")))
                    for row in table["rows"]
                ),
                cite=self.citations(table["cite"]),
            )
            for mid, table in data.items()
        }

    @staticmethod
    def _param(name: str, table: dict) -> RunConfigParam:
        return RunConfigParam(
            name=name,
            key=table.get("key"),
            field=table.get("field"),
            default=table.get("default"),
            written=table["written"],
            note=table.get("note"),
            hazard=table.get("hazard"),
            object=table.get("object"),
            unless_kwarg=table.get("unless_kwarg"),
            removed=bool(table.get("removed", False)),
            instead=table.get("instead"),
        )

    def runconfig(self) -> RunConfigModel:
        data = self._read("npurunconfig.toml")
        kwargs = {name: self._param(name, table) for name, table in data["kwargs"].items()}
        objects = {
            oname: RunConfigObject(name=oname, params=tuple(self._param(p["name"], p) for p in table["params"]),
                                   note=table.get("note"))
            for oname, table in data["objects"].items()
        }
        implicit = tuple(self._param(p["key"], p) for p in data["implicit"])
        return RunConfigModel(kwargs=kwargs, objects=objects, implicit=implicit, helpers=data.get("helpers", {}))


def _attach_routes(options: dict[str, OptionSpec], rc: RunConfigModel) -> dict[str, OptionSpec]:
    routes: dict[str, list[RunConfigRoute]] = {}
    for kw in rc.kwargs.values():
        if kw.key:
            routes.setdefault(kw.key, []).append(RunConfigRoute(kwarg=kw.name, written=kw.written, default=kw.default))
        if kw.object and kw.object in rc.objects:
            for p in rc.objects[kw.object].params:
                if p.key:
                    routes.setdefault(p.key, []).append(
                        RunConfigRoute(kwarg=kw.name, object=kw.object, param=p.name, written=p.written, default=p.default)
                    )
    for obj in rc.objects.values():
        # objects nested in other objects (GraphMemoryOptimizeConfig inside ExperimentalConfig)
        for p in obj.params:
            if p.key and not any(r.object == obj.name and r.param == p.name for r in routes.get(p.key, [])):
                routes.setdefault(p.key, []).append(
                    RunConfigRoute(kwarg="", object=obj.name, param=p.name, written=p.written, default=p.default)
                )
    return {k: v._replace(routes=tuple(routes.get(k, ()))) for k, v in options.items()}


def structural_problems(kb: KnowledgeBase) -> list[str]:
    """Cross-references that must hold for the knowledge base to load at all."""
    problems = []
    known = set(kb.options)
    for rel in kb.relations:
        for key in rel.keys:
            if key not in known:
                problems.append(f"relations.toml: relation {rel.id!r} names unknown option {key!r}")
    for key, unread in kb.unread_keys.items():
        if key in known:
            problems.append(f"unread_keys.toml: {key!r} is also an option the adapter reads")
        for k in sorted(unread.provided_by.keys()) if unread.provided_by else ():
            if k not in known:
                problems.append(f"unread_keys.toml: {key!r} provided_by names unknown option {k!r}")
    for mig in kb.migrations.values():
        for name in (mig.from_key, mig.to_key):
            if name and name not in known:
                problems.append(f"migrations.toml: {mig.id!r} names unknown option {name!r}")
    for spec in kb.options.values():
        for release in RELEASES:
            repl = spec.lifecycle[release].replacement
            if repl and repl not in known:
                problems.append(f"{spec.source_file}: {spec.key} replacement {repl!r} is not an option")
    for kw in kb.runconfig.kwargs.values():
        if kw.key and kw.key not in known and kw.key not in kb.unread_keys:
            problems.append(f"npurunconfig.toml: kwarg {kw.name!r} writes unknown key {kw.key!r}")
        if kw.object and kw.object not in kb.runconfig.objects:
            problems.append(f"npurunconfig.toml: kwarg {kw.name!r} takes unknown object {kw.object!r}")
    for obj in kb.runconfig.objects.values():
        for p in obj.params:
            if p.key and p.key not in known and p.key not in kb.unread_keys:
                problems.append(f"npurunconfig.toml: {obj.name}.{p.name} writes unknown key {p.key!r}")
    for p in kb.runconfig.implicit:
        if p.key and p.key not in known and p.key not in kb.unread_keys:
            problems.append(f"npurunconfig.toml: implicit write of unknown key {p.key!r}")
    engines = kb.migrations.get("stream_engine_names")
    rows = {r.old: r.new for r in engines.rows} if engines is not None else {}
    if rows != vocabulary.LEGACY_ENGINES:
        problems.append(f"migrations.toml: stream_engine_names rows {rows} differ from the legacy engine names the "
                        f"stream_max_parallel_num grammar accepts {vocabulary.LEGACY_ENGINES} "
                        "(npu_audit/knowledge/vocabulary.py)")
    return problems
