"""Run settings: defaults, ``[tool.npu-audit]`` in pyproject.toml, and command-line overrides."""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RELEASES = ("current", "legacy")
SCENARIOS = ("training", "inference")


class SettingsError(Exception):
    """Invalid configuration (exit code 2)."""


@dataclass(frozen=True)
class Settings:
    release: str = "current"
    product: Optional[str] = None  # product id from rules/products.toml, or None: no product limits assumed
    scenario: Optional[str] = None  # None: from graph_run_mode when certain
    select: tuple[str, ...] = ()  # codes, names or code prefixes; empty = all
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, selectors)
    exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    max_bytes: int = 10 * 1024 * 1024
    config_file: Optional[str] = None

    def cache_token(self) -> str:
        """The part of the settings that changes analysis results (for the cache key)."""
        return repr((self.release, self.product, self.scenario, self.max_bytes))


def find_pyproject(start: Path) -> Optional[Path]:
    """Nearest pyproject.toml with a [tool.npu-audit] table, from ``start`` upwards."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else [start.parent, *start.parent.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            if "npu-audit" in data.get("tool", {}):
                return candidate
    return None


_KEYS = {"release", "product", "scenario", "select", "ignore", "per-file-ignores", "exclude", "extend-exclude",
         "respect-gitignore", "max-file-size"}


def from_pyproject(path: Path, base: Settings, kb=None) -> Settings:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read [tool.npu-audit]: {exc}") from exc
    table = data.get("tool", {}).get("npu-audit", {})
    unknown = set(table) - _KEYS
    if unknown:
        raise SettingsError(f"{path}: unknown setting(s) in [tool.npu-audit]: {', '.join(sorted(unknown))}")
    out = base
    if "release" in table:
        out = replace(out, release=validate_release(table["release"], str(path)))
    if "product" in table:
        out = replace(out, product=validate_product(table["product"], kb, str(path)))
    if "scenario" in table:
        out = replace(out, scenario=validate_scenario(table["scenario"], str(path)))
    for key in ("select", "ignore", "exclude"):
        if key in table:
            out = replace(out, **{key: tuple(_list_of_str(table[key], key, path))})
    if "extend-exclude" in table:
        out = replace(out, exclude=out.exclude + tuple(_list_of_str(table["extend-exclude"], "extend-exclude", path)))
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise SettingsError(f"{path}: per-file-ignores is a table of glob = [codes]")
        out = replace(out, per_file_ignores=tuple((g, tuple(_list_of_str(v, "per-file-ignores", path))) for g, v in pfi.items()))
    if "respect-gitignore" in table:
        if not isinstance(table["respect-gitignore"], bool):
            raise SettingsError(f"{path}: respect-gitignore is true or false")
        out = replace(out, respect_gitignore=table["respect-gitignore"])
    if "max-file-size" in table:
        value = table["max-file-size"]
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise SettingsError(f"{path}: max-file-size is a positive number of bytes")
        out = replace(out, max_bytes=value)
    return replace(out, config_file=str(path))


def _list_of_str(value, key, path) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{path}: {key} is a list of strings")
    return value


def validate_release(value, where="--release") -> str:
    if value not in RELEASES:
        raise SettingsError(f"{where}: release must be one of {', '.join(RELEASES)}, not {value!r}")
    return value


def validate_scenario(value, where="--scenario") -> str:
    if value not in SCENARIOS:
        raise SettingsError(f"{where}: scenario must be one of {', '.join(SCENARIOS)}, not {value!r}")
    return value


def validate_product(value, kb, where="--product") -> str:
    if kb is None:
        return value
    pid = kb.product_id(str(value))
    if pid is None:
        names = ", ".join(sorted(kb.products))
        raise SettingsError(f"{where}: unknown product {value!r}; products: {names}")
    return pid


def ignored_for_file(settings: Settings, display: str) -> tuple[str, ...]:
    out: list[str] = []
    posix = display.replace("\\", "/")
    for glob, selectors in settings.per_file_ignores:
        if fnmatch.fnmatch(posix, glob) or fnmatch.fnmatch(Path(posix).name, glob):
            out.extend(selectors)
    return tuple(out)


@dataclass(frozen=True)
class RuleFilter:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extra_ignore: tuple[str, ...] = field(default=())

    @staticmethod
    def _matches(selector: str, code: str, name: str) -> bool:
        s = selector.strip()
        if not s:
            return False
        if s.upper() == "ALL":
            return True
        return name == s or code == s.upper() or (s.upper().startswith("NPU") and code.startswith(s.upper()))

    def enabled(self, code: str, name: str) -> bool:
        if self.select and not any(self._matches(s, code, name) for s in self.select):
            return False
        return not any(self._matches(s, code, name) for s in (*self.ignore, *self.extra_ignore))
