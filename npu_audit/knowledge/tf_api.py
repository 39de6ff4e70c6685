"""The TensorFlow / NPU calls the extractor models (``rules/tf_api.toml``): typed view and its loader.

Each entry names calls (by the last part of their dotted name, by their whole dotted name after import
aliases are expanded, or by their last two parts) and says what they do with a ``kind``; the extractor
(``npu_audit/extract/api.py``) has one small handler per kind. The argument table (``params``: the
positional order, ``roles``: which parameter holds what the handler needs) is data too, so teaching the
extractor another spelling of a known API, or another helper of a known kind, is a change of the TOML only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from npu_audit.knowledge.model import Citation
from npu_audit.knowledge.validation import Location as _Ctx
from npu_audit.knowledge.validation import expect as _expect
from npu_audit.knowledge.validation import string as _str
from npu_audit.knowledge.validation import strings as _strs

FILE = "tf_api.toml"

#: kind -> the roles its handler reads from the argument table (npu_audit/extract/api.py implements each)
KINDS: dict[str, tuple[str, ...]] = {
    "config-proto": (),  # a new ConfigProto
    "npurunconfig": (),  # NPURunConfig(...): the writes of rules/npurunconfig.toml
    "convert": (),  # a conversion of its first argument to `to` (as_bytes, str, int, ...)
    "environment": (),  # an environment variable: never one value
    "path-join": (),  # os.path.join of constant strings
    "dict": (),  # dict(a=1)
    "define-flag": ("name", "default"),  # flags.DEFINE_*(name, default, ...): the flag's default
    "argument-parser": (),  # argparse.ArgumentParser(): add_argument defaults are read
    "session": ("config",),  # a session run with the config it is given
    "npu-helper": ("config",),  # npu_init helpers that complete a config (see `creates`, `returns`)
    "iterations-per-loop": ("session", "value"),  # set_iteration_per_loop(sess, op, n): a code fact
    "npu-optimizer": ("tailing",),  # NPU optimizer wrappers (the tailing keyword is a code fact)
    "app-run": ("main",),  # tf.app.run(main): calls main
    "super": (),  # super(): the parent class of the method being read
}
#: The kinds whose calls make, fill, take or define what a config holds (not the value conversions): a
#: helper function that makes such a call can carry NPU configuration (npu_audit.slicing.TreeReach.exports).
CONFIG_KINDS = ("config-proto", "npurunconfig", "define-flag", "argument-parser", "session", "npu-helper",
                "iterations-per-loop", "npu-optimizer", "app-run")
RETURNS = ("config", "session")
CONVERSIONS = ("str", "bytes", "text", "text-any", "int", "float", "bool", "repr")


@dataclass(frozen=True)
class ApiEntry:
    """One ``[[api]]`` entry of rules/tf_api.toml: the calls it matches, what kind of call they are, and where their
    arguments are."""

    kind: str
    names: tuple[str, ...] = ()  # matched against the last part of the callee's dotted name
    full: tuple[str, ...] = ()  # matched against the whole dotted name (import aliases expanded)
    suffix: tuple[str, ...] = ()  # matched against its last two parts ("app.run")
    params: tuple[str, ...] = ()  # the positional parameters, in order
    roles: dict[str, str] = field(default_factory=dict)  # role of the handler -> parameter name
    to: Optional[str] = None  # convert: the type converted to
    creates: bool = False  # npu-helper: makes a new ConfigProto when given none
    returns: str = "config"  # npu-helper: what the call gives back
    # session: the top-level modules it is imported from; a call through an import of another module
    # (outside the analysed tree) is somebody else's class of the same name (requests.Session)
    modules: tuple[str, ...] = ()
    # the adapter's own API: the call is it only when its name comes from one of ApiModel.adapter_packages
    adapter: bool = False
    note: Optional[str] = None
    cite: tuple[Citation, ...] = ()

    def param(self, role: str) -> str:
        """The parameter that holds ``role`` (its own name unless ``roles`` renames it)."""
        return self.roles.get(role, role)

    def position(self, role: str) -> Optional[int]:
        """The positional index of ``role``'s parameter, or None when it is keyword-only."""
        name = self.param(role)
        return self.params.index(name) if name in self.params else None


@dataclass(frozen=True)
class ApiModel:
    """The entries by the way they match a call; :meth:`lookup` tries whole names, then last parts,
    then last two parts."""

    by_full: dict[str, ApiEntry]
    by_name: dict[str, ApiEntry]
    by_suffix: dict[str, ApiEntry]
    entries: tuple[ApiEntry, ...] = ()
    # the top-level packages of the adapter (``[adapter]``): where the names of its API come from
    adapter_packages: tuple[str, ...] = ()

    def modelled_call_names(self) -> frozenset[str]:
        """The last names of every call an entry matches (by name, whole name or last two parts): calls
        whose arguments the interpreter reads for a value."""
        out: set[str] = set()
        for entry in self.entries:
            out.update(entry.names)
            out.update(n.rsplit(".", 1)[-1] for n in entry.full + entry.suffix)
        return frozenset(out)

    def config_call_names(self) -> list[str]:
        """The last names of the calls of :data:`CONFIG_KINDS` (``Session``, ``DEFINE_string``, ...)."""
        return self.call_names(*CONFIG_KINDS)

    def call_names(self, *kinds: str) -> list[str]:
        """The last names of the calls of the entries of ``kinds`` (``call_names("session")``)."""
        return [name for entry in self.entries if entry.kind in kinds for name in entry.names]

    def lookup(self, last: str, full: str) -> Optional[ApiEntry]:
        found = self.by_full.get(full) or self.by_name.get(last)
        if found is None and self.by_suffix and "." in full:
            found = self.by_suffix.get(".".join(full.split(".")[-2:]))
        return found


def build(builder: Any) -> ApiModel:
    """Read and validate rules/tf_api.toml with the loader's ``builder`` (see loader._Builder)."""
    return from_data(builder._read(FILE))


def from_data(data: dict) -> ApiModel:
    """The model of the parsed table ``data``."""
    ctx = _Ctx(FILE)
    _expect(ctx, data, {"api"}, {"python", "adapter"})
    packages: tuple[str, ...] = ()
    if "adapter" in data:
        adapter = data["adapter"]
        _expect(ctx.at("adapter"), adapter, {"packages", "cite"}, set())
        packages = _strs(ctx.at("adapter.packages"), adapter["packages"])
        if not packages or any("." in m for m in packages):
            raise ctx.at("adapter.packages").fail("the adapter's top-level package names (\"npu_bridge\"), at least one")
        _citations(ctx.at("adapter.cite"), adapter["cite"])
    entries: list[ApiEntry] = []
    for section, cited in (("api", True), ("python", False)):
        tables = data.get(section, [])
        if not isinstance(tables, list):
            raise ctx.at(section).fail("expected an array of tables ([[" + section + "]])")
        for i, table in enumerate(tables):
            entries.append(_entry(ctx.at(f"{section}[{i}]"), table, cited))
    if not packages and any(entry.adapter for entry in entries):
        raise ctx.fail("entries marked adapter = true need the [adapter] table (the packages their names come from)")
    by_full: dict[str, ApiEntry] = {}
    by_name: dict[str, ApiEntry] = {}
    by_suffix: dict[str, ApiEntry] = {}
    for entry in entries:
        for names, table in ((entry.full, by_full), (entry.names, by_name), (entry.suffix, by_suffix)):
            for name in names:
                if name in table:
                    raise ctx.fail(f"{name!r} is named twice ({table[name].kind} and {entry.kind})")
                table[name] = entry
    return ApiModel(by_full=by_full, by_name=by_name, by_suffix=by_suffix, entries=tuple(entries),
                    adapter_packages=packages)


def _entry(c: _Ctx, table: Any, cited: bool) -> ApiEntry:
    required = {"kind", "cite"} if cited else {"kind", "note"}
    _expect(c, table, required, {"names", "full", "suffix", "params", "roles", "to", "creates", "returns",
                                 "modules", "adapter", "note", "cite"})
    kind = _str(c.at("kind"), table["kind"], tuple(KINDS))
    names = _strs(c.at("names"), table.get("names", []))
    full = _strs(c.at("full"), table.get("full", []))
    suffix = _strs(c.at("suffix"), table.get("suffix", []))
    if not (names or full or suffix):
        raise c.fail("an entry names calls: names, full or suffix")
    if any(s.count(".") != 1 for s in suffix):
        raise c.at("suffix").fail("a suffix is the last two parts of a dotted name (\"app.run\")")
    params = _strs(c.at("params"), table.get("params", []))
    roles_table = table.get("roles", {})
    if not isinstance(roles_table, dict):
        raise c.at("roles").fail("expected a table role = parameter")
    roles = {role: _str(c.at(f"roles.{role}"), name) for role, name in roles_table.items()}
    unknown = set(roles) - set(KINDS[kind])
    if unknown:
        raise c.at("roles").fail(f"kind {kind!r} has no role {', '.join(sorted(unknown))} "
                                 f"(it reads {', '.join(KINDS[kind]) or 'none'})")
    to = table.get("to")
    if kind == "convert":
        to = _str(c.at("to"), to, CONVERSIONS)
    elif to is not None:
        raise c.at("to").fail("only a convert entry has `to`")
    creates = table.get("creates", False)
    if not isinstance(creates, bool):
        raise c.at("creates").fail("expected true or false")
    returns = _str(c.at("returns"), table.get("returns", "config"), RETURNS)
    if (creates or "returns" in table) and kind != "npu-helper":
        raise c.fail("creates and returns belong to npu-helper entries")
    modules = _strs(c.at("modules"), table.get("modules", []))
    if modules and kind != "session":
        raise c.at("modules").fail("only a session entry has `modules`")
    if any("." in m for m in modules):
        raise c.at("modules").fail("a module here is a top-level package name (\"tensorflow\")")
    adapter = table.get("adapter", False)
    if not isinstance(adapter, bool):
        raise c.at("adapter").fail("expected true or false")
    if adapter and (modules or not cited):
        raise c.at("adapter").fail("an adapter entry is an [[api]] entry without `modules` (its packages are [adapter])")
    note = table.get("note")
    if note is not None:
        _str(c.at("note"), note)
    return ApiEntry(kind=kind, names=names, full=full, suffix=suffix, params=params, roles=roles, to=to,
                    creates=creates, returns=returns, modules=modules, adapter=adapter, note=note,
                    cite=_citations(c.at("cite"), table["cite"]) if cited else ())


def _citations(c: _Ctx, value: Any) -> tuple[Citation, ...]:
    """``cite = [{ doc, heading } | { adapter }, ...]`` (rules/README.md): at least one."""
    if not isinstance(value, list) or not value:
        raise c.fail("cite must be a non-empty list of tables")
    out = []
    for i, item in enumerate(value):
        ci = c.at(f"[{i}]")
        _expect(ci, item, set(), {"doc", "heading", "adapter", "note"})
        if not (item.get("doc") or item.get("adapter")):
            raise ci.fail("a citation names a doc (with heading) or an adapter source line")
        out.append(Citation(doc=item.get("doc"), heading=item.get("heading"), adapter=item.get("adapter"),
                            note=item.get("note")))
    return tuple(out)
