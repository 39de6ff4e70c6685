"""Client settings: ``release``, ``product``, ``scenario``, ``select``, ``ignore``.

They come from ``initializationOptions`` and from the client's workspace configuration (pushed with
``workspace/didChangeConfiguration`` or pulled with ``workspace/configuration``, section
``npu-audit``), and are layered over the nearest ``[tool.npu-audit]`` table when a document is
analysed (:meth:`npu_audit.lsp.analysis.Engine.job`). Values are validated by the same functions as the
command line and pyproject.toml; a bad one is reported and left out, never fatal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CONFIG_SECTION = "npu-audit"
SECTION_ALIASES = (CONFIG_SECTION, "npuAudit", "npu_audit")
SETTING_NAMES = ("release", "product", "scenario", "select", "ignore")


def parse_settings(raw: Any, kb) -> tuple[dict, list[str]]:
    """Validated Settings overrides from client settings, and the problems found.

    ``raw`` is the flat table ``{"release": ..., ...}`` or one nested under ``"npu-audit"``
    (also ``npuAudit`` / ``npu_audit``). Unknown keys are ignored; ``null`` or ``""`` means "not set".
    """
    from npu_audit.settings import SettingsError, validate_product, validate_release, validate_scenario

    if not isinstance(raw, dict):
        return {}, []
    for nested in SECTION_ALIASES:
        if isinstance(raw.get(nested), dict):
            raw = raw[nested]
            break
    out: dict = {}
    problems: list[str] = []
    for name in SETTING_NAMES:
        value = raw.get(name)
        if value is None or value == "" or value == []:
            continue
        try:
            if name == "release":
                out["release"] = validate_release(value, "npu-audit.release")
            elif name == "product":
                out["product"] = validate_product(value, kb, "npu-audit.product")
            elif name == "scenario":
                out["scenario"] = validate_scenario(value, "npu-audit.scenario")
            else:
                out[name] = _selectors(value, name)
        except SettingsError as exc:
            problems.append(str(exc))
    return out, problems


def _selectors(value: Any, name: str) -> tuple[str, ...]:
    from npu_audit.checks import all_rules
    from npu_audit.settings import SettingsError, validate_selectors

    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
        raise SettingsError(f"npu-audit.{name}: a list of check codes or names")
    # the same rule as the command line and pyproject.toml: a check that matches nothing is an error
    return validate_selectors(tuple(v.strip() for v in items if v.strip()), f"npu-audit.{name}", all_rules())


def names_settings(raw: Any) -> bool:
    """Whether a pushed ``didChangeConfiguration`` payload carries npu-audit settings (else the
    server pulls them)."""
    return isinstance(raw, dict) and any(k in raw for k in (*SETTING_NAMES, *SECTION_ALIASES))


@dataclass
class ClientSettings:
    """The client's overrides: from ``initializationOptions``, then the workspace configuration."""

    init: dict = field(default_factory=dict)
    workspace: dict = field(default_factory=dict)

    @property
    def overrides(self) -> dict:
        return {**self.init, **self.workspace}

    @property
    def release(self) -> str:
        return self.overrides.get("release", "current")
