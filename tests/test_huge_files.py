"""A file above the parse budget is refused before anything is built from it: the refusal costs about what
reading the file costs, not the seconds and gigabytes of CPython's ast and the relevance slice of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from npu_audit.parse import MAX_PARSE_CHARS, MAX_PARSE_TOKENS

HELPER = '''
def build_config_{i}(flag=False):
    config = tf.ConfigProto(allow_soft_placement=True)
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["precison_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    custom_op.parameter_map["iterations_per_loop"].i = {i}
    return config
'''


def npu_helpers(size: int) -> str:
    """A module of NPU helper functions (every statement reaches a config: the slice keeps it all) of about
    ``size`` characters."""
    parts = ["import tensorflow as tf\n"]
    total, i = len(parts[0]), 0
    while total < size:
        parts.append(HELPER.format(i=i + 1))
        total += len(parts[-1])
        i += 1
    return "".join(parts)


def run_measured(path) -> tuple[list[dict], int]:
    """The findings of ``npu-audit`` on ``path`` (one process) and its peak resident memory in MB."""
    code = ("import resource, sys\nfrom npu_audit.cli import main\ncode = main(sys.argv[1:])\n"
            "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\nsys.exit(code)\n")
    proc = subprocess.run([sys.executable, "-c", code, "--jobs", "1", "--no-cache", "--format", "json",
                           "--max-file-size", "100000000", str(path)],
                          capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"), timeout=300)
    peak_kb = int(proc.stderr.rsplit("PEAK", 1)[1].split()[0])
    return json.loads(proc.stdout)["diagnostics"], peak_kb // 1024


def test_a_file_above_the_budget_costs_little_more_memory_than_a_small_one(tmp_path):
    (tmp_path / "small.py").write_text(npu_helpers(2_000))
    _, small_mb = run_measured(tmp_path / "small.py")
    tokens = tmp_path / "tokens.py"  # above the token budget, below the character budget
    tokens.write_text(npu_helpers(MAX_PARSE_CHARS // 2))
    chars = tmp_path / "chars.py"  # above the character budget
    chars.write_text(npu_helpers(MAX_PARSE_CHARS + 100_000))
    for path, why in ((tokens, f"tokens, more than the {MAX_PARSE_TOKENS:,} tokens"),
                      (chars, f"characters, more than the {MAX_PARSE_CHARS:,} characters")):
        [refusal], peak_mb = run_measured(path)
        assert refusal["name"] == "unreadable-file" and refusal["message"].startswith("file too large to parse: ")
        assert why in refusal["message"]
        assert refusal["hint"].startswith("split the file into smaller modules")
        # the file's bytes and text, and what reading them costs: not CPython's ast of it (over 350 MB for
        # the first, over a gigabyte for the second)
        size_mb = path.stat().st_size / 2**20
        assert peak_mb < small_mb + 4 * size_mb + 40, (path.name, small_mb, peak_mb)


def test_a_long_file_within_the_token_budget_is_checked(tmp_path):
    # longer than the token budget in characters, but mostly comments: within the budget, analysed
    script = tmp_path / "train.py"
    comment = "# " + "a long generated comment line " * 3 + "\n"
    script.write_text(npu_helpers(2_000) + comment * (2 * MAX_PARSE_TOKENS // len(comment)))
    assert MAX_PARSE_TOKENS < len(script.read_text()) < MAX_PARSE_CHARS
    found, _ = run_measured(script)
    assert found and {d["name"] for d in found} == {"unknown-option"}
