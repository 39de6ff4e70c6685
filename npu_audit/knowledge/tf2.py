"""The TensorFlow 2 option tree (``rules/tf2_options.toml``): typed view and its loader.

TF2 scripts set attributes on ``npu_device.global_options()``, an object of option groups. Each option
path (``dump_config.dump_path``) is linked to the TF1 parameter_map key it is passed on as, so facts
written once for that key (relations, scenario and product limits, value facts, migrations) apply to
TF2 scripts too; what belongs to the TF2 adapter alone (groups, accepted values, defaults, deprecations
of the option object) lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from npu_audit.knowledge.model import Citation
from npu_audit.knowledge.vocabulary import RELEASES

FILE = "tf2_options.toml"
_MISSING = object()


@dataclass(frozen=True)
class Tf2Group:
    """One object of the TF2 option tree: the option object itself or one of its groups (dump_config, ...)."""

    path: str  # "" for the option object itself
    cls: str  # the adapter's class name, as its ValueError names it
    cite: tuple[Citation, ...] = ()


@dataclass(frozen=True)
class Tf2Option:
    """One option of the TF2 option tree, linked to the TF1 key it is passed on as; accepted values, defaults and
    deprecations are the TF2 adapter's own."""

    path: str  # relative to global_options(): "precision_mode", "dump_config.dump_path"
    key: Optional[str]  # TF1 parameter_map key (None: a TF2-only option)
    summary: Optional[str]
    default: Any  # None: not passed on
    allowed: Optional[tuple]  # None: any value is accepted at assignment
    allow_none: bool
    deprecated: Optional[dict]  # {"replacement": path or None, "releases": (...)}
    releases: tuple[str, ...]
    removed: Optional[dict]  # {"instead": path or None, "note": str or None}
    no_effect: Optional[str]
    legacy: dict  # {"allowed": (...), "default": value}
    cite: tuple[Citation, ...]

    @property
    def group(self) -> str:
        return self.path.rpartition(".")[0]

    @property
    def name(self) -> str:
        return self.path.rpartition(".")[2]

    def exists_in(self, release: str) -> bool:
        return release in self.releases

    def allowed_in(self, release: str) -> Optional[tuple]:
        if release == "legacy" and "allowed" in self.legacy:
            return self.legacy["allowed"]
        return self.allowed

    def default_in(self, release: str) -> Any:
        if release == "legacy" and "default" in self.legacy:
            return self.legacy["default"]
        return self.default

    def deprecation(self, release: str) -> Optional[dict]:
        if self.deprecated is not None and release in self.deprecated["releases"]:
            return self.deprecated
        return None

    def accepts(self, value: Any, release: str) -> bool:
        """Whether the adapter accepts ``value`` when it is assigned (Python ``in`` on the list)."""
        allowed = self.allowed_in(release)
        if allowed is None or (value is None and self.allow_none):
            return True
        try:
            return any(value == a for a in allowed)
        except Exception:  # noqa: BLE001 - an exotic value: not comparable, not accepted
            return False

    def rejection(self, value: Any, release: str) -> Optional[tuple[str, str]]:
        """(exception, detail) the adapter raises when ``value`` is assigned, or None when accepted."""
        if self.accepts(value, release):
            return None
        allowed = list(self.allowed_in(release) or ()) + ([None] if self.allow_none else [])
        default = self.default_in(release)
        if default is not None and not isinstance(value, type(default)):
            return "TypeError", f"Expected {type(default).__name__}, got {type(value).__name__}"
        return "ValueError", f"'{value}' not in optional list {allowed}"


@dataclass(frozen=True)
class Tf2Model:
    """The TensorFlow 2 option tree of rules/tf2_options.toml, as the extractor and the checks read it."""

    modules: tuple[str, ...]  # top-level module names of the TF2 adapter ("npu_device")
    option_object: tuple[str, ...]  # functions returning the process-wide option object
    open: tuple[str, ...]  # functions that read it (once per process)
    groups: dict[str, Tf2Group]
    options: dict[str, Tf2Option]
    tf1_only: dict[str, dict]  # TF1 key -> {"hint": ..., "cite": (...)}
    cite: tuple[Citation, ...] = ()
    _by_key: dict[str, str] = field(default_factory=dict)

    def by_key(self, key: str) -> Optional[Tf2Option]:
        path = self._by_key.get(key)
        return self.options.get(path) if path else None

    def with_name(self, name: str) -> list[Tf2Option]:
        return [o for o in self.options.values() if o.name == name]

    def members(self, group: str, release: str) -> list[str]:
        """Attribute names a group defines in ``release``: its options and its sub-groups."""
        names = [o.name for o in self.options.values() if o.group == group and o.exists_in(release)]
        names += [g.rpartition(".")[2] for g in self.groups if g and g.rpartition(".")[0] == group]
        return names

    def is_group(self, path: str) -> bool:
        return path in self.groups


def build(builder, options: dict) -> Tf2Model:
    """Build the TF2 model from rules/tf2_options.toml, read (and checked against its schema) by the
    loader's ``builder`` (see loader._Builder); here only the references a schema cannot check."""
    from npu_audit.knowledge.validation import Location as _Ctx

    data = builder._read(FILE)
    ctx = _Ctx(FILE)
    api = data["api"]
    groups = {path: Tf2Group(path=path, cls=table["class"], cite=builder.citations(table["cite"]))
              for path, table in data["groups"].items()}
    out: dict[str, Tf2Option] = {}
    by_key: dict[str, str] = {}
    for path, table in data["options"].items():
        c = ctx.at(f"options.{path}")
        key = table.get("key")
        if key is not None:
            if key not in options:
                raise c.fail(f"key {key!r} is not a TF1 option (options/*.toml)")
            if key in by_key:
                raise c.fail(f"key {key!r} is already linked to {by_key[key]!r}")
            by_key[key] = path
        group = path.rpartition(".")[0]
        if group not in groups:
            raise c.fail(f"group {group!r} is not in [groups]")
        allowed = table.get("allowed")
        deprecated = table.get("deprecated")
        if deprecated is not None:
            deprecated = {"replacement": deprecated.get("replacement"),
                          "releases": tuple(deprecated.get("releases", RELEASES))}
        removed = table.get("removed")
        legacy = {k: (tuple(v) if isinstance(v, list) else v) for k, v in table.get("legacy", {}).items()}
        out[path] = Tf2Option(
            path=path,
            key=key,
            summary=table.get("summary"),
            default=table.get("default"),
            allowed=tuple(allowed) if allowed is not None else None,
            allow_none=bool(table.get("allow_none", False)),
            deprecated=deprecated,
            releases=tuple(table.get("releases", RELEASES)),
            removed=dict(removed) if removed is not None else None,
            no_effect=table.get("no_effect"),
            legacy=legacy,
            cite=builder.citations(table["cite"]),
        )
    tf1_only = {}
    for key, table in data.get("tf1_only", {}).items():
        if key not in options:
            raise ctx.at(f"tf1_only.{key}").fail(f"{key!r} is not a TF1 option")
        tf1_only[key] = {"hint": table["hint"], "cite": builder.citations(table["cite"])}
    model = Tf2Model(
        modules=tuple(api["modules"]),
        option_object=tuple(api["option_object"]),
        open=tuple(api["open"]),
        groups=groups,
        options=out,
        tf1_only=tf1_only,
        cite=builder.citations(api["cite"]),
        _by_key=by_key,
    )
    problems = structural_problems(model)
    if problems:
        raise ctx.fail("; ".join(problems))
    return model


def structural_problems(model: Tf2Model) -> list[str]:
    """References inside the TF2 table that must hold: replacements name options, defaults and legacy
    values lie in their lists, removed options say what to write instead."""
    problems = []
    for o in model.options.values():
        for release in RELEASES:
            dep = o.deprecation(release)
            if dep and dep["replacement"] and dep["replacement"] not in model.options:
                problems.append(f"{o.path}: replacement {dep['replacement']!r} is not an option")
            default, allowed = o.default_in(release), o.allowed_in(release)
            if default is not None and allowed is not None and not o.accepts(default, release):
                problems.append(f"{o.path}: default {default!r} is not in its allowed list ({release})")
        if o.removed and o.removed.get("instead") and o.removed["instead"] not in model.options:
            problems.append(f"{o.path}: removed.instead {o.removed['instead']!r} is not an option")
        if set(o.releases) != set(RELEASES) and not o.removed:
            problems.append(f"{o.path}: an option missing from a release says what to write instead (removed)")
        if o.name in model.groups or o.path in model.groups:
            problems.append(f"{o.path}: an option and a group share a name")
    return problems
