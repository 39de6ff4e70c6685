"""Load and validate the TOML knowledge base in ``rules/`` (parsed once per process).

Every structural mistake in a rules file raises :class:`KnowledgeBaseError` naming the file and the
table, so a reviewer editing the data sees at once what is wrong. Cross-references (relations naming
options, defaults inside domains, grammars accepting the docs' examples) are checked by
:func:`consistency_problems`, which the test-suite runs.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from npu_audit.knowledge import vocabulary
from npu_audit.knowledge.model import (
    DOMAIN_KINDS,
    FIELDS,
    LIFECYCLE_STATUSES,
    RELATION_KINDS,
    Citation,
    Condition,
    DocumentedDefault,
    Domain,
    KnowledgeBase,
    Lifecycle,
    Migration,
    OptionSpec,
    Product,
    Relation,
    RunConfigModel,
    RunConfigObject,
    RunConfigParam,
    RunConfigRoute,
    UnreadKey,
    ValueFact,
    ValueMigration,
)
from npu_audit.knowledge.validation import KnowledgeBaseError
from npu_audit.knowledge.validation import Location as _Ctx
from npu_audit.knowledge.validation import expect as _expect
from npu_audit.knowledge.validation import scalar as _scalar
from npu_audit.knowledge.validation import string as _str
from npu_audit.knowledge.validation import strings as _strs
from npu_audit.knowledge.vocabulary import FAILURES, PRODUCT_IDS, RELEASES, SCENARIOS, SEVERITIES

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

    Parsing and validating the TOML costs about as much as analysing a small script, so the validated
    result is kept as a compiled snapshot (a pickle in the user's cache folder) named by a digest of
    every rules file and of this package's knowledge code: any edit to either builds a new one. A
    missing, unreadable or unwritable snapshot only costs the full build.
    """
    root = Path(directory) if directory else rules_dir()
    snapshot = _snapshot_path(root)
    if snapshot is not None:
        try:
            with open(snapshot, "rb") as handle:
                kb = pickle.load(handle)
            if isinstance(kb, KnowledgeBase):
                return kb
        except Exception:  # noqa: BLE001 - a bad snapshot is rebuilt
            pass
    kb = _Builder(root).build()
    if snapshot is not None:
        _write_snapshot(snapshot, kb)
    return kb


def _snapshot_folder() -> Optional[Path]:
    if os.environ.get("NPU_AUDIT_NO_KB_SNAPSHOT"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "npu-audit"


def _snapshot_path(root: Path) -> Optional[Path]:
    """Where the snapshot of ``root`` lives, named by the digest of everything it is built from."""
    folder = _snapshot_folder()
    if folder is None:
        return None
    digest = hashlib.sha256(f"{sys.version_info[:2]}|{pickle.HIGHEST_PROTOCOL}".encode())
    try:
        code = Path(__file__).resolve().parent
        sources = [(p.relative_to(root).as_posix(), p) for p in sorted(root.rglob("*")) if p.is_file()]
        sources += [(f"<code>/{p.name}", p) for p in sorted(code.glob("*.py"))]
        for name, path in sources:
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    except OSError:
        return None
    return folder / f"kb-{digest.hexdigest()[:32]}.pickle"


def _write_snapshot(path: Path, kb: KnowledgeBase) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".kb-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(kb, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    except Exception:  # noqa: BLE001 - the snapshot is an optimisation only
        pass


class _Builder:
    def __init__(self, root: Path):
        self.root = root
        self.digest = hashlib.sha256()
        self.product_ids: tuple[str, ...] = ()

    def _read(self, relative: str) -> dict:
        path = self.root / relative
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise KnowledgeBaseError(f"{relative}: cannot read: {exc}") from exc
        self.digest.update(relative.encode() + b"\0" + data)
        try:
            return tomllib.loads(data.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise KnowledgeBaseError(f"{relative}: not valid TOML: {exc}") from exc

    # -- citations, domains, conditions -------------------------------------------------------

    def citations(self, ctx: _Ctx, value: Any, required: bool = True) -> tuple[Citation, ...]:
        if value is None:
            if required:
                raise ctx.fail("missing cite")
            return ()
        if not isinstance(value, list) or (required and not value):
            raise ctx.fail("cite must be a non-empty list of tables")
        out = []
        for i, item in enumerate(value):
            c = ctx.at(f"cite[{i}]")
            _expect(c, item, set(), {"doc", "heading", "adapter", "note"})
            if not (item.get("doc") or item.get("adapter")):
                raise c.fail("a citation names a doc (with heading) or an adapter source line")
            out.append(
                Citation(
                    doc=item.get("doc"),
                    heading=item.get("heading"),
                    adapter=item.get("adapter"),
                    note=item.get("note"),
                )
            )
        return tuple(out)

    def domain(self, ctx: _Ctx, table: Any) -> Domain:
        _expect(
            ctx,
            table,
            {"kind"},
            {"values", "min", "max", "min_exclusive", "grammar", "unit", "case_sensitive"},
        )
        kind = _str(ctx.at("kind"), table["kind"], DOMAIN_KINDS)
        values = tuple(_scalar(ctx.at("values"), v) for v in table.get("values", []))
        if kind == "enum" and not values:
            raise ctx.fail("an enum domain lists its values")
        if kind == "grammar" and not table.get("grammar"):
            raise ctx.fail("a grammar domain names its grammar")
        if kind != "int-range" and ("min" in table or "max" in table):
            raise ctx.fail("min/max belong to int-range domains")
        return Domain(
            kind=kind,
            values=values,
            min=table.get("min"),
            max=table.get("max"),
            min_exclusive=bool(table.get("min_exclusive", False)),
            grammar=table.get("grammar"),
            unit=table.get("unit"),
            case_sensitive=bool(table.get("case_sensitive", True)),
        )

    def condition(self, ctx: _Ctx, table: Any) -> Condition:
        if not isinstance(table, dict):
            raise ctx.fail(f"a condition is a table, got {table!r}")
        for combinator in ("all", "any"):
            if combinator in table:
                _expect(ctx, table, {combinator}, set())
                items = table[combinator]
                if not isinstance(items, list) or not items:
                    raise ctx.fail(f"{combinator} takes a non-empty list of conditions")
                return Condition(
                    op=combinator,
                    children=tuple(self.condition(ctx.at(f"{combinator}[{i}]"), c) for i, c in enumerate(items)),
                )
        if "not" in table:
            _expect(ctx, table, {"not"}, set())
            return Condition(op="not", children=(self.condition(ctx.at("not"), table["not"]),))
        ops = {"set", "is", "in", "not_in", "gt", "ge", "lt", "le", "gt_key"}
        _expect(ctx, table, {"key"}, ops | {"factor"})
        given = [op for op in ops if op in table]
        if len(given) != 1:
            raise ctx.fail("a key condition has exactly one of " + ", ".join(sorted(ops)))
        op = given[0]
        operand = table[op]
        if op == "set":
            if not isinstance(operand, bool):
                raise ctx.fail("set takes true or false")
            return Condition(op="set" if operand else "unset", key=_str(ctx.at("key"), table["key"]))
        if op in ("in", "not_in") and not isinstance(operand, list):
            raise ctx.fail(f"{op} takes a list")
        if op in ("gt", "ge", "lt", "le") and (isinstance(operand, bool) or not isinstance(operand, (int, float))):
            raise ctx.fail(f"{op} takes a number")
        return Condition(
            op=op,
            key=_str(ctx.at("key"), table["key"]),
            operand=tuple(operand) if isinstance(operand, list) else operand,
            factor=float(table.get("factor", 1.0)),
        )

    # -- options --------------------------------------------------------------------------------

    OPTION_REQUIRED = {"field", "section", "summary", "scenarios", "domain", "on_invalid", "lifecycle", "cite"}
    OPTION_OPTIONAL = {
        "description",
        "products",
        "default",
        "default_note",
        "defaults",
        "on_wrong_field",
        "read_condition",
        "values",
        "legacy",
        "current",
    }

    def option(self, ctx: _Ctx, key: str, table: Any, source_file: str) -> OptionSpec:
        _expect(ctx, table, self.OPTION_REQUIRED, self.OPTION_OPTIONAL)
        field = _str(ctx.at("field"), table["field"], FIELDS)
        lifecycle_table = _expect(ctx.at("lifecycle"), table["lifecycle"], set(RELEASES), set())
        lifecycle: dict[str, Lifecycle] = {}
        for release in RELEASES:
            c = ctx.at(f"lifecycle.{release}")
            entry = _expect(c, lifecycle_table[release], {"status"}, {"replacement", "note"})
            lifecycle[release] = Lifecycle(
                status=_str(c.at("status"), entry["status"], LIFECYCLE_STATUSES),
                replacement=entry.get("replacement"),
                note=entry.get("note"),
            )
        defaults = []
        for i, d in enumerate(table.get("defaults", [])):
            c = ctx.at(f"defaults[{i}]")
            _expect(c, d, {"value"}, {"scenario", "products", "note"})
            defaults.append(
                DocumentedDefault(
                    value=_scalar(c.at("value"), d["value"]),
                    scenario=_str(c.at("scenario"), d["scenario"], SCENARIOS) if "scenario" in d else None,
                    products=_strs(c.at("products"), d.get("products", []), self.product_ids),
                    note=d.get("note"),
                )
            )
        values = []
        for i, v in enumerate(table.get("values", [])):
            c = ctx.at(f"values[{i}]")
            _expect(c, v, {"value"}, {"same_as", "preferred", "scenarios", "products", "releases", "note", "cite"})
            values.append(
                ValueFact(
                    value=_scalar(c.at("value"), v["value"]),
                    same_as=v.get("same_as"),
                    preferred=v.get("preferred"),
                    scenarios=_strs(c.at("scenarios"), v.get("scenarios", []), SCENARIOS),
                    products=_strs(c.at("products"), v.get("products", []), self.product_ids),
                    releases=_strs(c.at("releases"), v.get("releases", []), RELEASES),
                    note=v.get("note"),
                    cite=self.citations(c, v.get("cite"), required=False),
                )
            )
        overrides: dict[str, dict[str, Any]] = {}
        for release in RELEASES:
            if release not in table:
                continue
            c = ctx.at(release)
            over = _expect(c, table[release], set(), {"field", "domain", "default", "scenarios", "note"})
            parsed: dict[str, Any] = {}
            if "field" in over:
                parsed["field"] = _str(c.at("field"), over["field"], FIELDS)
            if "domain" in over:
                parsed["domain"] = self.domain(c.at("domain"), over["domain"])
            if "default" in over:
                parsed["default"] = _scalar(c.at("default"), over["default"])
            if "scenarios" in over:
                parsed["scenarios"] = _strs(c.at("scenarios"), over["scenarios"], SCENARIOS)
            if "note" in over:
                parsed["note"] = over["note"]
            overrides[release] = parsed
        return OptionSpec(
            key=key,
            field=field,
            section=_str(ctx.at("section"), table["section"]),
            summary=_str(ctx.at("summary"), table["summary"]),
            description=table.get("description", "").strip(),
            scenarios=_strs(ctx.at("scenarios"), table["scenarios"], SCENARIOS),
            products=_strs(ctx.at("products"), table.get("products", []), self.product_ids),
            domain=self.domain(ctx.at("domain"), table["domain"]),
            default=table.get("default"),
            default_note=table.get("default_note"),
            defaults=tuple(defaults),
            on_invalid=_str(ctx.at("on_invalid"), table["on_invalid"], INVALID_REACTIONS),
            on_wrong_field=_str(
                ctx.at("on_wrong_field"), table.get("on_wrong_field", "reads-default"), WRONG_FIELD_REACTIONS
            ),
            read_condition=table.get("read_condition"),
            lifecycle=lifecycle,
            release_overrides=overrides,
            values=tuple(values),
            cite=self.citations(ctx, table.get("cite")),
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
                ctx = _Ctx(relative, key)
                if key in options:
                    raise ctx.fail(f"option defined twice (also in {options[key].source_file})")
                options[key] = self.option(ctx, key, table, relative)
        relations = self.relations()
        unread = self.unread_keys()
        migrations = self.migrations()
        runconfig = self.runconfig()
        options = _attach_routes(options, runconfig)
        from npu_audit.knowledge import tf2 as tf2_table

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
        )
        problems = structural_problems(kb)
        if problems:
            raise KnowledgeBaseError("\n".join(problems))
        return kb

    def products(self):
        data = self._read("products.toml")
        ctx = _Ctx("products.toml")
        _expect(ctx, data, {"products"}, set())
        products, by_alias = {}, {}
        for pid, table in data["products"].items():
            c = ctx.at(f"products.{pid}")
            _str(ctx.at("products"), pid, PRODUCT_IDS)  # the value grammars know these products
            _expect(c, table, {"name"}, {"aliases"})
            aliases = _strs(c.at("aliases"), table.get("aliases", []))
            products[pid] = Product(id=pid, name=table["name"], aliases=aliases)
            for alias in (pid, table["name"], *aliases):
                by_alias[alias.lower()] = pid
        self.product_ids = tuple(products)
        return products, by_alias

    def relations(self) -> tuple[Relation, ...]:
        data = self._read("relations.toml")
        ctx = _Ctx("relations.toml")
        _expect(ctx, data, {"relation"}, set())
        out, seen = [], set()
        for i, table in enumerate(data["relation"]):
            c = ctx.at(f"relation[{i}]")
            _expect(
                c,
                table,
                {"id", "kind", "subject", "severity", "failure", "message", "cite"},
                {"keys", "when", "require", "hint", "releases"},
            )
            rid = _str(c.at("id"), table["id"])
            if rid in seen:
                raise c.fail(f"duplicate relation id {rid!r}")
            seen.add(rid)
            kind = _str(c.at("kind"), table["kind"], RELATION_KINDS)
            when = self.condition(c.at("when"), table["when"]) if "when" in table else None
            require = self.condition(c.at("require"), table["require"]) if "require" in table else None
            if kind in ("requires",) and (when is None or require is None):
                raise c.fail("a requires relation has when and require")
            if kind in ("excludes", "overrides", "gated") and when is None:
                raise c.fail(f"a {kind} relation has when")
            keys = set(_strs(c.at("keys"), table.get("keys", [])))
            keys.add(table["subject"])
            for cond in (when, require):
                if cond is not None:
                    keys |= cond.keys()
            if kind == "together" and len(keys) < 2:
                raise c.fail("a together relation lists at least two keys")
            out.append(
                Relation(
                    id=rid,
                    kind=kind,
                    subject=_str(c.at("subject"), table["subject"]),
                    keys=tuple(sorted(keys)),
                    when=when,
                    require=require,
                    severity=_str(c.at("severity"), table["severity"], SEVERITIES),
                    failure=_str(c.at("failure"), table["failure"], FAILURES),
                    message=_str(c.at("message"), table["message"]).strip(),
                    hint=table.get("hint"),
                    releases=_strs(c.at("releases"), table.get("releases", list(RELEASES)), RELEASES),
                    cite=self.citations(c, table.get("cite")),
                )
            )
        return tuple(out)

    def unread_keys(self) -> dict[str, UnreadKey]:
        data = self._read("unread_keys.toml")
        out = {}
        for key, table in data.items():
            c = _Ctx("unread_keys.toml", key)
            _expect(c, table, {"reason", "cite"}, {"suggestion", "active", "wants", "provided_by"})
            active = table.get("active")
            if active is not None and not isinstance(active, list):
                raise c.at("active").fail(f"expected a list of values, got {active!r}")
            out[key] = UnreadKey(
                key=key,
                reason=_str(c.at("reason"), table["reason"]).strip(),
                suggestion=table.get("suggestion"),
                cite=self.citations(c, table["cite"]),
                active=None if active is None else tuple(_scalar(c.at("active"), v) for v in active),
                wants=_str(c.at("wants"), table["wants"]) if "wants" in table else None,
                provided_by=self.condition(c.at("provided_by"), table["provided_by"]) if "provided_by" in table else None,
            )
        return out

    def migrations(self) -> dict[str, Migration]:
        data = self._read("migrations.toml")
        out = {}
        for mid, table in data.items():
            c = _Ctx("migrations.toml", mid)
            _expect(c, table, {"from_key", "summary", "rows", "cite"}, {"to_key"})
            rows = []
            for i, row in enumerate(table["rows"]):
                rc = c.at(f"rows[{i}]")
                _expect(rc, row, {"old", "exact"}, {"new", "note", "cite"})
                if not isinstance(row["exact"], bool):
                    raise rc.fail("exact is true or false")
                if row["exact"] and row.get("new") is None:
                    raise rc.fail("an exact row names its new value")
                rows.append(
                    ValueMigration(
                        old=_scalar(rc.at("old"), row["old"]),
                        new=row.get("new"),
                        exact=row["exact"],
                        note=row.get("note"),
                        cite=self.citations(rc, row.get("cite"), required=False),
                    )
                )
            out[mid] = Migration(
                id=mid,
                from_key=_str(c.at("from_key"), table["from_key"]),
                to_key=table.get("to_key"),
                summary=_str(c.at("summary"), table["summary"]),
                rows=tuple(rows),
                cite=self.citations(c, table["cite"]),
            )
        return out

    def _param(self, ctx: _Ctx, name: str, table: Any, obj_allowed: bool) -> RunConfigParam:
        optional = {"key", "field", "default", "note", "hazard", "unless_kwarg", "removed"} | (
            {"object"} if obj_allowed else set())
        _expect(ctx, table, {"written"}, optional)
        written = _str(ctx.at("written"), table["written"], ("always", "if-not-none", "never", "conditional"))
        if table.get("key") and not table.get("field"):
            raise ctx.fail("a parameter that writes a key names its field")
        return RunConfigParam(
            name=name,
            key=table.get("key"),
            field=_str(ctx.at("field"), table["field"], FIELDS) if "field" in table else None,
            default=table.get("default"),
            written=written,
            note=table.get("note"),
            hazard=table.get("hazard"),
            object=table.get("object"),
            unless_kwarg=table.get("unless_kwarg"),
            removed=bool(table.get("removed", False)),
        )

    def runconfig(self) -> RunConfigModel:
        data = self._read("npurunconfig.toml")
        ctx = _Ctx("npurunconfig.toml")
        _expect(ctx, data, {"kwargs", "objects", "implicit"}, {"helpers", "cite"})
        kwargs = {
            name: self._param(ctx.at(f"kwargs.{name}"), name, table, obj_allowed=True)
            for name, table in data["kwargs"].items()
        }
        objects = {}
        for oname, table in data["objects"].items():
            c = ctx.at(f"objects.{oname}")
            _expect(c, table, {"params"}, {"note"})
            params = []
            for i, p in enumerate(table["params"]):
                pc = c.at(f"params[{i}]")
                if not isinstance(p, dict) or "name" not in p:
                    raise pc.fail("each object parameter has a name")
                body = {k: v for k, v in p.items() if k != "name"}
                params.append(self._param(pc, p["name"], body, obj_allowed=False))
            objects[oname] = RunConfigObject(name=oname, params=tuple(params), note=table.get("note"))
        implicit = tuple(
            self._param(ctx.at(f"implicit[{i}]"), p.get("key", f"implicit{i}"), {k: v for k, v in p.items()}, False)
            for i, p in enumerate(data["implicit"])
        )
        return RunConfigModel(kwargs=kwargs, objects=objects, implicit=implicit, helpers=data.get("helpers", {}))


def _attach_routes(options: dict[str, OptionSpec], rc: RunConfigModel) -> dict[str, OptionSpec]:
    from dataclasses import replace

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
    return {k: replace(v, routes=tuple(routes.get(k, ()))) for k, v in options.items()}


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
