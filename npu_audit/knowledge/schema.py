"""The shape of every rules file, checked against one JSON Schema per file kind in ``rules/schema/``.

The schemas are the single description of the knowledge base's structure: the loader checks each file
against its schema before building the typed model (:mod:`npu_audit.knowledge.model`), the tests check
that the schemas' enumerations agree with :mod:`npu_audit.knowledge.vocabulary`, and TOML editors that
understand ``#:schema`` comments (Taplo / Even Better TOML) complete and check the files as they are
edited. What a schema cannot say (cross-references between files: a relation's subject must be an
option, a TF2 option's key must exist) stays in the loader's semantic checks.

Validation runs only when the knowledge base is built, i.e. once per edit of ``rules/``: the compiled
snapshot (:func:`npu_audit.knowledge.loader.load`) is what every other run reads, so ``jsonschema`` is
never imported by an ordinary run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from npu_audit.knowledge.validation import KnowledgeBaseError

SCHEMA_FOLDER = "schema"

#: rules file (relative to rules/, ``options/*`` for every section file) -> its schema file
SCHEMA_OF: dict[str, str] = {
    "products.toml": "products.schema.json",
    "options/*": "options.schema.json",
    "relations.toml": "relations.schema.json",
    "unread_keys.toml": "unread_keys.schema.json",
    "migrations.toml": "migrations.schema.json",
    "npurunconfig.toml": "npurunconfig.schema.json",
    "tf2_options.toml": "tf2_options.schema.json",
    "tf_api.toml": "tf_api.schema.json",
    "estimator_entry.toml": "estimator_entry.schema.json",
}


def schema_file_for(relative: str) -> Optional[str]:
    """The schema file that describes rules file ``relative`` (a path relative to rules/), if any."""
    if relative.startswith("options/"):
        return SCHEMA_OF["options/*"]
    return SCHEMA_OF.get(relative)


class SchemaSet:
    """The schemas of one rules folder, resolved against each other (``common.schema.json`` holds the
    shared definitions)."""

    def __init__(self, rules_root: Path):
        self.folder = rules_root / SCHEMA_FOLDER
        self._validators: dict[str, Any] = {}
        self._registry: Any = None

    def _load(self, name: str) -> dict:
        path = self.folder / name
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise KnowledgeBaseError(f"{SCHEMA_FOLDER}/{name}: cannot read the schema: {exc}") from exc

    def validator(self, name: str) -> Any:
        if name not in self._validators:
            from jsonschema import Draft202012Validator
            from referencing import Registry, Resource

            if self._registry is None:
                resources = []
                for path in sorted(self.folder.glob("*.schema.json")):
                    contents = self._load(path.name)
                    resources.append((contents["$id"], Resource.from_contents(contents)))
                self._registry = Registry().with_resources(resources)
            schema = self._load(name)
            Draft202012Validator.check_schema(schema)
            self._validators[name] = Draft202012Validator(schema, registry=self._registry)
        return self._validators[name]

    def check(self, relative: str, data: Any) -> None:
        """Raise :class:`KnowledgeBaseError` naming the file, the table and the problem when ``data`` (the
        parsed TOML of ``relative``) does not follow its schema."""
        name = schema_file_for(relative)
        if name is None:  # tests/test_rules_schema.py requires a schema for every rules file
            return
        from jsonschema.exceptions import best_match

        error = best_match(self.validator(name).iter_errors(data))
        if error is None:
            return
        where = _toml_path(error.absolute_path)
        raise KnowledgeBaseError(f"{relative}: [{where}]: {_plain(error)}" if where else f"{relative}: {_plain(error)}")


def _toml_path(parts) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _plain(error: Any) -> str:
    """jsonschema's message, with the offending value shortened and the schema rule named."""
    message = error.message
    if len(message) > 300:
        message = message[:297] + "..."
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    return f"{message} ({description})" if description and error.validator in ("enum", "required") else message
