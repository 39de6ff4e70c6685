"""The validated knowledge base is kept as a snapshot; an edit to rules/ is never hidden by it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from npu_audit.knowledge.loader import rules_dir

PROBE = (
    "import sys; from npu_audit.knowledge.loader import load, KnowledgeBaseError\n"
    "try:\n"
    "    kb = load(sys.argv[1])\n"
    "    print(kb.options['iterations_per_loop'].description[:40])\n"
    "except KnowledgeBaseError as exc:\n"
    "    print('ERROR', exc)\n"
)


def _load_in_fresh_process(rules, cache_home) -> str:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home))
    env.pop("NPU_AUDIT_NO_KB_SNAPSHOT", None)
    done = subprocess.run([sys.executable, "-c", PROBE, str(rules)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_snapshot_is_written_once_and_reused(tmp_path):
    cache = tmp_path / "cache"
    first = _load_in_fresh_process(rules_dir(), cache)
    snapshots = list((cache / "npu-audit").glob("kb-*.json"))
    assert len(snapshots) == 1
    stamp = snapshots[0].stat().st_mtime_ns
    assert _load_in_fresh_process(rules_dir(), cache) == first
    assert snapshots[0].stat().st_mtime_ns == stamp  # read, not rebuilt


def test_edited_rules_are_rebuilt_and_validated(tmp_path):
    rules = tmp_path / "rules"
    shutil.copytree(rules_dir(), rules)
    cache = tmp_path / "cache"
    _load_in_fresh_process(rules, cache)
    target = next(p for p in (rules / "options").glob("*.toml") if "iterations_per_loop" in p.read_text("utf-8"))
    text = target.read_text("utf-8")
    target.write_text(text + "\n[this is not toml\n", "utf-8")
    out = _load_in_fresh_process(rules, cache)
    assert out.startswith("ERROR") and target.name in out


def test_unusable_cache_folder_still_loads(tmp_path):
    cache = tmp_path / "cache"
    cache.write_text("a file where the cache folder should be")  # mkdir fails, even for root
    assert "ERROR" not in _load_in_fresh_process(rules_dir(), cache)
