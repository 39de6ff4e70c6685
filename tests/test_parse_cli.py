"""Parsing as users see it on the command line: files Python accepts are checked, huge files cost bounded memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from npu_audit.parse import MAX_PARSE_CHARS, MAX_PARSE_TOKENS, nesting_estimate

# A space-indented script where one branch and one option line were indented with a tab and spaces (the
# editor's tab width was 4): Python runs it, libcst alone refuses it ("no matching outer block for dedent").
TAB_SCRIPT = (
    "import tensorflow as tf\n"
    "\n"
    "\n"
    "def session_config(model_type):\n"
    "    if model_type == 'dnn':\n"
    "        batch = 128\n"
    "    elif model_type == 'wide':\n"
    "\t        batch = 256\n"
    "    config = tf.ConfigProto()\n"
    "    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
    "    custom_op.name = 'NpuOptimizer'\n"
    "    if batch > 128:\n"
    "\t    custom_op.parameter_map[\"precison_mode\"].s = tf.compat.as_bytes('allow_fp32_to_fp16')\n"
    "    custom_op.parameter_map[\"stream_max_parallel_num\"].s = tf.compat.as_bytes('DNN_VM_TF:10')\n"
    "    return config\n"
)

CONFIG = '''
def build_config():
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["precison_mode"].s = tf.compat.as_bytes("allow_mix_precision")
    return config
'''


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "npu_audit", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=dict(os.environ, NO_COLOR="1"), timeout=300)


def run_measured(*args, cwd=None) -> tuple[subprocess.CompletedProcess, int]:
    """The CLI in one process (--jobs 1); also returns its peak resident memory in MB."""
    code = ("import resource, sys\nfrom npu_audit.cli import main\ncode = main(sys.argv[1:])\n"
            "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\nsys.exit(code)\n")
    proc = subprocess.run([sys.executable, "-c", code, "--jobs", "1", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=dict(os.environ, NO_COLOR="1"), timeout=300)
    peak_kb = int(proc.stderr.rsplit("PEAK", 1)[1].split()[0])
    return proc, peak_kb // 1024


def diagnostics(proc) -> list[dict]:
    return json.loads(proc.stdout)["diagnostics"]


def test_a_tab_indented_script_python_accepts_is_checked_at_exact_positions(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TAB_SCRIPT)
    proc = run("--no-cache", "--format", "json", script)
    found = {(d["name"], d["line"], d["column"]) for d in diagnostics(proc)}
    assert not [f for f in found if f[0] == "syntax-error"]
    lines = TAB_SCRIPT.splitlines()
    # line 13 starts with a tab and four spaces (five characters), line 14 with four spaces
    assert ("unknown-option", 13, lines[12].index('"precison_mode"') + 1) == ("unknown-option", 13, 30)
    assert ("unknown-option", 13, 30) in found
    assert ("renamed-value", 14, lines[13].index("DNN_VM_TF") + 1) in found


def test_fixing_a_tab_indented_script_edits_only_the_fixed_literal(tmp_path):
    script = tmp_path / "train.py"
    script.write_bytes(TAB_SCRIPT.encode())
    proc = run("--no-cache", "--fix", script)
    assert "Fixed 1 finding" in proc.stderr, proc.stderr
    assert script.read_bytes() == TAB_SCRIPT.replace("'DNN_VM_TF:10'", "'DNN_VM_AICPU:10'").encode()


def test_an_npu_file_above_the_token_budget_is_refused_with_bounded_memory(tmp_path):
    rows = MAX_PARSE_TOKENS // 21 + 1000  # 21 tokens per row: a generated table just above the budget
    text = ("import tensorflow as tf\n\nTABLE = [\n" + "".join(f"    ({i}, 'n{i}', {i}.5, [{i}, {i + 1}], {{'k': {i}}}),\n"
                                                              for i in range(rows)) + "]\n" + CONFIG)
    assert MAX_PARSE_TOKENS < nesting_estimate(text).tokens and len(text) < MAX_PARSE_CHARS
    (tmp_path / "table.py").write_text(text)
    (tmp_path / "small.py").write_text("import tensorflow as tf\n" + CONFIG)
    proc, peak_mb = run_measured("--no-cache", "--format", "json", tmp_path)
    by_file = {}
    for d in diagnostics(proc):
        by_file.setdefault(os.path.basename(d["path"]), []).append(d)
    [refusal] = by_file["table.py"]
    assert refusal["name"] == "unreadable-file" and "too large to parse" in refusal["message"]
    assert f"{MAX_PARSE_TOKENS:,} tokens" in refusal["message"]
    assert [d["name"] for d in by_file["small.py"]] == ["unknown-option"]  # the other file is checked
    assert proc.returncode == 1
    assert peak_mb < 400  # parsing it would take more than a gigabyte


def test_a_file_above_the_character_budget_is_refused_at_once(tmp_path):
    text = "import tensorflow as tf\n" + CONFIG + "DATA = [\n" + "    '0123456789abcdef0123456789abcdef',\n" * (MAX_PARSE_CHARS // 38 + 10) + "]\n"
    (tmp_path / "big.py").write_text(text)
    proc, peak_mb = run_measured("--no-cache", "--format", "json", "--max-file-size", str(len(text) + 1), tmp_path)
    [refusal] = diagnostics(proc)
    assert refusal["name"] == "unreadable-file" and "characters" in refusal["message"]
    assert peak_mb < 400
