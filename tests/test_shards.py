"""Splitting a run into shards: ``--shard K/N``, ``--files-from`` lists, ``npu-audit merge``, and the CI example of
docs/ci.md run as documented on a small tree (the merged report must equal the report of one run over the whole tree)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SARIF_SCHEMA = REPO / "tests" / "schemas" / "sarif-schema-2.1.0.json"

HELPER = '''import tensorflow as tf


def make_config(mode):
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(mode)
    custom_op.parameter_map["hcom_paralel"].b = True
    return config
'''
CALLER = '''import tensorflow as tf
from common.npu_helper import make_config

sess = tf.Session(config=make_config({mode!r}))
'''
OWN = '''import tensorflow as tf
config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["enable_data_pre_proc"].b = "yes"
'''
# a script with no NPU marker of its own: it hands the helper a value (the second phase reads it)
FEEDER = '''import tensorflow as tf
from common.npu_helper import make_config

MODE = "allow_fp32_to_fp16x"
sess = tf.Session(config=make_config(MODE))
'''


def make_zoo(root: Path) -> Path:
    """A small model zoo: a helper module shared by scripts of several model folders, a file name with a space
    and one starting with '#', a script without NPU markers that feeds the helper."""
    files = {
        "common/npu_helper.py": HELPER,
        "model_a/train.py": CALLER.format(mode="allow_mix_precison"),
        "model_b/train.py": CALLER.format(mode="must_keep_origin_dtype"),
        "model_b/my script.py": OWN,
        "model_c/#run.py": FEEDER,
        "model_d/clean.py": "import os\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def run(*args, cwd, stdin=None):
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "npu_audit", *map(str, args)], capture_output=True, cwd=cwd,
                          env=env, timeout=300, input=stdin if isinstance(stdin, bytes) else (stdin or "").encode())


def out(proc) -> str:
    return proc.stdout.decode("utf-8")


# -- --files-from --------------------------------------------------------------------------------------------


def test_files_from_checks_the_listed_paths_as_if_given_on_the_command_line(tmp_path):
    zoo = make_zoo(tmp_path)
    # CRLF, blank and whitespace-only lines, a name with a space, a name starting with '#' (no comments)
    (tmp_path / "list.txt").write_bytes(b"model_a/train.py\r\n\n   \nmodel_b/my script.py\nmodel_c/#run.py\n")
    listed = run("--no-cache", "--format", "json", "--files-from", "list.txt", cwd=zoo)
    given = run("--no-cache", "--format", "json", "model_a/train.py", "model_b/my script.py", "model_c/#run.py",
                cwd=zoo)
    assert listed.returncode == given.returncode == 1, listed.stderr
    assert out(listed) == out(given)
    paths = [f["path"] for f in json.loads(out(listed))["files"]]
    assert paths == ["model_a/train.py", "model_b/my script.py", "model_c/#run.py"]


def test_files_from_adds_to_command_line_paths_and_reads_stdin(tmp_path):
    zoo = make_zoo(tmp_path)
    proc = run("--no-cache", "--format", "json", "--files-from", "-", "model_d", cwd=zoo,
               stdin="model_a/train.py\nmodel_a/train.py\n")
    assert proc.returncode == 1, proc.stderr
    assert [f["path"] for f in json.loads(out(proc))["files"]] == ["model_a/train.py", "model_d/clean.py"]


def test_files_from_nul_separated_list(tmp_path):
    zoo = make_zoo(tmp_path)
    odd = zoo / "model_d" / "two\nlines.py"
    odd.write_text(OWN)
    proc = run("--no-cache", "--format", "json", "--files-from", "-", cwd=zoo,
               stdin=b"model_d/two\nlines.py\0model_d/clean.py\0")
    assert proc.returncode == 1, proc.stderr
    assert [f["path"] for f in json.loads(out(proc))["files"]] == ["model_d/clean.py", "model_d/two\nlines.py"]


def test_files_from_empty_list_checks_nothing_not_the_current_folder(tmp_path):
    # a shard of a split with fewer files than shards gets an empty list: it must not check the whole tree
    zoo = make_zoo(tmp_path)
    (zoo / "empty.txt").write_bytes(b"")
    proc = run("--no-cache", "--format", "json", "--files-from", "empty.txt", cwd=zoo)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out(proc))
    assert data["files"] == [] and data["diagnostics"] == [] and data["summary"]["files"] == 0


def test_files_from_unreadable_list_is_a_usage_error(tmp_path):
    zoo = make_zoo(tmp_path)
    proc = run("--no-cache", "--files-from", "no-such-list.txt", cwd=zoo)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "--files-from no-such-list.txt: cannot read the list of paths" in err and "one path per line" in err
    assert out(proc) == ""
    both = run("--no-cache", "--files-from", "-", "-", cwd=zoo, stdin="x.py\n")
    assert both.returncode == 2 and "both read stdin" in both.stderr.decode()


def test_files_from_missing_path_gets_the_command_line_diagnostic(tmp_path):
    zoo = make_zoo(tmp_path)
    (zoo / "list.txt").write_text("model_d/clean.py\nmodel_x/gone.py\n")
    listed = run("--no-cache", "--format", "concise", "--files-from", "list.txt", cwd=zoo)
    given = run("--no-cache", "--format", "concise", "model_d/clean.py", "model_x/gone.py", cwd=zoo)
    assert listed.returncode == given.returncode == 1
    assert out(listed) == out(given)
    assert out(listed).startswith("model_x/gone.py:1:1: NPU002 [unreadable-file]")


def test_files_from_paths_get_exclusion_and_project_settings_as_command_line_paths(tmp_path):
    zoo = make_zoo(tmp_path)
    # model_b is a project of its own that ignores a check and excludes a file
    (zoo / "model_b" / "pyproject.toml").write_text(
        '[tool.npu-audit]\nignore = ["NPU301"]\nexclude = ["my script.py"]\n')
    (zoo / "model_b" / "other.py").write_text(OWN)
    (zoo / "list.txt").write_text("model_b/train.py\nmodel_b/other.py\nmodel_b/my script.py\nmodel_a/train.py\n")
    listed = run("--no-cache", "--format", "json", "--exclude", "model_a/", "--files-from", "list.txt", cwd=zoo)
    given = run("--no-cache", "--format", "json", "--exclude", "model_a/", "model_b/train.py", "model_b/other.py",
                "model_b/my script.py", "model_a/train.py", cwd=zoo)
    assert out(listed) == out(given)
    data = json.loads(out(listed))
    assert [f["path"] for f in data["files"]] == ["model_b/other.py", "model_b/train.py"]
    assert "NPU301" not in {d["code"] for d in data["diagnostics"]}
    assert "NPU104" in {d["code"] for d in data["diagnostics"]}


# -- npu-audit merge -----------------------------------------------------------------------------------------


def _shards(zoo: Path, lists: list[list[str]], fmt: str, *options: str) -> list[Path]:
    reports = []
    for i, paths in enumerate(lists):
        listing = zoo.parent / f"list-{i}.txt"
        listing.write_text("".join(p + "\n" for p in paths))
        report = zoo.parent / f"shard-{i}.{fmt}"
        proc = run("--no-cache", "--exit-zero", "--format", fmt, *options, "--files-from", listing, "-o", report,
                   cwd=zoo)
        assert proc.returncode == 0, proc.stderr
        reports.append(report)
    return reports


ALL = ["common/npu_helper.py", "model_a/train.py", "model_b/my script.py", "model_b/train.py", "model_c/#run.py",
       "model_d/clean.py"]


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_merged_shards_equal_one_run(tmp_path, fmt):
    # the helper, its callers and the script feeding it each in another shard; the helper's own finding and the
    # callers' findings about the values they hand it are each reported once, by the shard that holds the file
    zoo = make_zoo(tmp_path / "zoo")
    lists = [["model_a/train.py", "model_d/clean.py"], ["common/npu_helper.py", "model_c/#run.py"],
             ["model_b/train.py", "model_b/my script.py"]]
    _assert_merged_equals_one_run(zoo, _shards(zoo, lists, fmt), fmt)


def _assert_merged_equals_one_run(zoo: Path, reports: list[Path], fmt: str) -> None:
    merged = run("merge", *reports, cwd=zoo)
    single = run("--no-cache", "--format", fmt, ".", cwd=zoo)
    assert merged.returncode == single.returncode == 1, merged.stderr
    assert out(merged) == out(single)


def test_merge_counts_files_and_findings_two_shards_share_once(tmp_path):
    zoo = make_zoo(tmp_path / "zoo")
    # the helper (and one script) checked by both shards
    lists = [["common/npu_helper.py", "model_a/train.py", "model_d/clean.py"],
             ["common/npu_helper.py", "model_a/train.py", "model_b/train.py", "model_b/my script.py",
              "model_c/#run.py"]]
    reports = _shards(zoo, lists, "json", "--statistics")
    merged = run("merge", *reports, "-o", tmp_path / "all.json", cwd=zoo)
    assert merged.returncode == 1, merged.stderr
    single = run("--no-cache", "--format", "json", "--statistics", ".", cwd=zoo)
    assert (tmp_path / "all.json").read_text(encoding="utf-8") == out(single)
    data = json.loads(out(single))
    assert data["summary"]["files"] == len(ALL)
    helper = [d for d in data["diagnostics"] if d["path"] == "common/npu_helper.py"]
    assert len(helper) == 1 and data["summary"]["findings"] == len(data["diagnostics"])
    sarif = _shards(zoo, lists, "sarif")
    merged_sarif = run("merge", *sarif, cwd=zoo)
    assert out(merged_sarif) == out(run("--no-cache", "--format", "sarif", ".", cwd=zoo))


def test_merged_sarif_is_valid_sarif(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    zoo = make_zoo(tmp_path / "zoo")
    reports = _shards(zoo, [ALL[:3], ALL[2:]], "sarif")
    merged = run("merge", *reports, cwd=zoo)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(json.loads(out(merged)))


def test_merge_exit_codes(tmp_path):
    zoo = make_zoo(tmp_path / "zoo")
    clean = _shards(zoo, [["model_d/clean.py"]], "json")
    assert run("merge", *clean, cwd=zoo).returncode == 0
    findings = _shards(zoo, [["model_d/clean.py"], ["model_a/train.py"]], "json")
    assert run("merge", *findings, cwd=zoo).returncode == 1
    assert run("merge", "--exit-zero", *findings, cwd=zoo).returncode == 0
    # a shard's internal error fails the merged report as it fails a run
    data = json.loads(findings[0].read_text(encoding="utf-8"))
    data["diagnostics"].append({**json.loads(findings[1].read_text(encoding="utf-8"))["diagnostics"][0],
                                "code": "NPU003", "name": "internal-error", "path": "model_d/clean.py"})
    findings[0].write_text(json.dumps(data), encoding="utf-8")
    assert run("merge", "--exit-zero", *findings, cwd=zoo).returncode == 2


def test_merge_refuses_what_it_cannot_merge(tmp_path):
    zoo = make_zoo(tmp_path / "zoo")
    (json_report,) = _shards(zoo, [["model_a/train.py"]], "json")
    (sarif_log,) = _shards(zoo, [["model_b/train.py"]], "sarif")
    legacy = zoo.parent / "legacy.json"
    proc = run("--no-cache", "--exit-zero", "--format", "json", "--release", "legacy", "model_d", "-o", legacy,
               cwd=zoo)
    assert proc.returncode == 0, proc.stderr
    (zoo.parent / "cut.json").write_text('{"version": 1, "diagnostics": [')
    (zoo.parent / "config.json").write_text(out(run("--no-cache", "--show-config", "--format", "json", "model_d",
                                                     cwd=zoo)))
    pathless = zoo.parent / "pathless.json"
    data = json.loads(json_report.read_text(encoding="utf-8"))
    del data["diagnostics"][0]["path"]
    pathless.write_text(json.dumps(data), encoding="utf-8")
    other_tool = zoo.parent / "other.sarif"
    data = json.loads(sarif_log.read_text(encoding="utf-8"))
    data["runs"][0]["tool"]["driver"]["name"] = "other-linter"
    other_tool.write_text(json.dumps(data), encoding="utf-8")
    cases = {
        (json_report, sarif_log): "mix JSON and SARIF",
        (json_report, pathless): "a diagnostic lacks one of path",
        (sarif_log, other_tool): "not of npu-audit",
        (json_report, legacy): "differ in settings",
        (json_report, zoo.parent / "cut.json"): "not a JSON document",
        (json_report, zoo.parent / "config.json"): "not a findings report",
        (json_report, zoo.parent / "missing.json"): "cannot read it",
    }
    for reports, message in cases.items():
        target = tmp_path / "merged.json"
        proc = run("merge", *reports, "-o", target, cwd=zoo)
        assert proc.returncode == 2, reports
        assert message in proc.stderr.decode(), proc.stderr
        assert "Traceback" not in proc.stderr.decode()
        assert not target.exists()


# -- the CI example of docs/ci.md, run as documented ---------------------------------------------------------


def _documented_script() -> str:
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- local-shards -->\s*```sh\n(.*?)```", text, re.S)
    assert match, "docs/ci.md lost its local example (the block after <!-- local-shards -->)"
    return match.group(1)


def _gnu_split() -> bool:
    try:
        version = subprocess.run(["split", "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return False
    return "GNU coreutils" in version


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash, as the documented example")
def test_documented_ci_split_and_merge_equals_one_run(tmp_path):
    zoo = make_zoo(tmp_path / "zoo")
    env = dict(os.environ, NO_COLOR="1", HOME=str(tmp_path),
               PATH=os.pathsep.join([str(tmp_path / "bin"), os.environ.get("PATH", "")]))
    (tmp_path / "bin").mkdir()
    launcher = tmp_path / "bin" / "npu-audit"  # the npu-audit of this checkout, as installed
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m npu_audit "$@"\n')
    launcher.chmod(0o755)
    script = _documented_script()
    proc = subprocess.run(["bash", "-c", script], cwd=zoo, env=env, capture_output=True, text=True, timeout=600)
    assert proc.stdout.strip().endswith("exit code: 1"), proc.stdout + proc.stderr  # the tree has findings
    merged = (zoo / "npu-audit.json").read_text(encoding="utf-8")
    single = run("--no-cache", "--format", "json", ".", cwd=zoo)
    assert merged == out(single)
    assert (zoo / "npu-audit.sarif").read_text(encoding="utf-8") == out(run("--no-cache", "--format", "sarif", ".",
                                                                           cwd=zoo))


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None or not _gnu_split(),
                    reason="needs git, bash and GNU split, as the documented split by file")
def test_documented_split_by_file_and_merge_equals_one_run(tmp_path):
    zoo = make_zoo(tmp_path / "zoo")
    env = dict(os.environ, NO_COLOR="1", GIT_CONFIG_NOSYSTEM="1", HOME=str(tmp_path))
    subprocess.run(["git", "init", "-q", "."], cwd=zoo, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=zoo, check=True, env=env)
    reports = []
    for k in (1, 2, 3):
        listed = subprocess.run(f"git ls-files -z '*.py' | split -t '\\0' -n r/{k}/3", shell=True, cwd=zoo, env=env,
                                capture_output=True, check=True).stdout
        report = tmp_path / f"shard-{k}.json"
        proc = run("--files-from", "-", "--no-cache", "--exit-zero", "--format", "json", "-o", report, cwd=zoo,
                   stdin=listed)
        assert proc.returncode == 0, proc.stderr
        reports.append(report)
    merged = run("merge", *reports, cwd=zoo)
    assert out(merged) == out(run("--no-cache", "--format", "json", ".", cwd=zoo))


# -- --shard K/N ---------------------------------------------------------------------------------------------


def test_shard_parts_are_disjoint_cover_every_file_and_keep_a_folder_together():
    from npu_audit.discover.shards import shard_members

    # 12 projects of 1 to 12 files each, and 5 files at the top
    paths = [f"zoo/p{p:02d}/{'src/' if f % 2 else ''}f{f}.py" for p in range(1, 13) for f in range(p)]
    paths += [f"top{n}.py" for n in range(5)]
    for count in (1, 2, 3, 5):
        parts = [shard_members(paths, k, count) for k in range(1, count + 1)]
        flat = sorted(i for part in parts for i in part)
        assert flat == list(range(len(paths)))  # every file in exactly one part
        sizes = [len(part) for part in parts]
        assert max(sizes) - min(sizes) <= max(1, len(paths) // (count * 8))  # balanced to within one part
        # every job finds the files in its own order: the parts are the same files whatever the order
        shuffled = paths[::-1][::2] + paths[::-1][1::2]
        assert [sorted(shuffled[i] for i in shard_members(shuffled, k, count)) for k in range(1, count + 1)] == \
            [sorted(paths[i] for i in part) for part in parts]
    # a project no larger than a part (83 files, 3 jobs: 3 files) is checked by one job, scripts and helpers
    job_of = {i: k for k in (1, 2, 3) for i in shard_members(paths, k, 3)}
    for project in ("p01", "p02", "p03"):
        assert len({job_of[i] for i, path in enumerate(paths) if path.startswith(f"zoo/{project}/")}) == 1
    assert shard_members(paths[:2], 3, 3) == []  # more jobs than files: an empty part


def test_shard_option_is_checked(tmp_path):
    zoo = make_zoo(tmp_path)
    for given, message in (("0/4", "K must be from 1 to N"), ("5/4", "K must be from 1 to N"),
                           ("2", "write K/N"), ("a/b", "write K/N")):
        proc = run("--shard", given, ".", cwd=zoo)
        assert proc.returncode == 2 and message in proc.stderr.decode() and out(proc) == ""
    piped = run("--shard", "1/2", "-", cwd=zoo, stdin=OWN)
    assert piped.returncode == 2 and "stdin" in piped.stderr.decode()


def _by_shard(zoo: Path, count: int, fmt: str, *options: str) -> list[Path]:
    """The reports of ``npu-audit --shard K/count ... .`` for K = 1..count, each job writing its own."""
    reports = []
    for k in range(1, count + 1):
        report = zoo.parent / f"shard-{k}-of-{count}.{fmt}"
        proc = run("--shard", f"{k}/{count}", "--no-cache", "--exit-zero", "--format", fmt, *options, "-o", report,
                   ".", cwd=zoo)
        assert proc.returncode == 0, proc.stderr
        reports.append(report)
    return reports


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_merged_shard_reports_equal_one_run(tmp_path, fmt):
    zoo = make_zoo(tmp_path / "zoo")
    reports = _by_shard(zoo, 4, fmt)
    if fmt == "json":
        checked = [f["path"] for report in reports for f in json.loads(report.read_text(encoding="utf-8"))["files"]]
        assert sorted(checked) == ALL  # each file checked by exactly one job
    _assert_merged_equals_one_run(zoo, reports, fmt)


def test_a_shard_reads_only_files_the_run_found_from_the_disk(tmp_path):
    # a script without NPU markers (and Python 2) imports an NPU helper that the run excludes: one run does not
    # parse the script, and neither does any shard, nor --shard 1/1
    zoo = make_zoo(tmp_path / "zoo")
    (zoo / "model_e").mkdir()
    (zoo / "model_e" / "old.py").write_text('from common.npu_helper import make_config\nprint "hello"\n')
    single = run("--no-cache", "--format", "json", "--exclude", "common/", ".", cwd=zoo)
    assert "NPU001" not in out(single)
    for count in (1, 2, 3):
        reports = _by_shard(zoo, count, "json", "--exclude", "common/")
        assert out(run("merge", *reports, cwd=zoo)) == out(single)


def test_a_path_that_cannot_be_read_is_reported_by_one_shard(tmp_path):
    zoo = make_zoo(tmp_path / "zoo")
    found = []
    for k in (1, 2, 3):
        proc = run("--shard", f"{k}/3", "--no-cache", "--exit-zero", "--format", "json", ".", "model_x/gone.py",
                   cwd=zoo)
        found += [d["path"] for d in json.loads(out(proc))["diagnostics"] if d["code"] == "NPU002"]
    assert found == ["model_x/gone.py"]


def test_files_named_one_by_one_below_one_folder_are_one_root(tmp_path, monkeypatch):
    # every import of every named file would otherwise be looked for in every named file's folder
    from npu_audit.pipeline import _roots

    for sub in ("a/x", "a/y/z", "b"):
        (tmp_path / sub).mkdir(parents=True)
        (tmp_path / sub / "train.py").write_text("")
    monkeypatch.chdir(tmp_path)
    assert _roots(["a/x/train.py", "a/y/z/train.py", "b/train.py"]) == (str(tmp_path.resolve()),)
    outside = tmp_path / "a"
    monkeypatch.chdir(tmp_path / "b")
    assert _roots([str(outside / "x" / "train.py"), str(outside / "y")]) == (
        str((outside / "x").resolve()), str((outside / "y").resolve()))
