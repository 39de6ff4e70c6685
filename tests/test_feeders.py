"""Which files without NPU markers are parsed: those that really import a module that has them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

NPU_HELPER = '''import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig


def session_config():
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["iterations_per_loop"].i = 10
    return config
'''


def _run(tree: Path, *extra: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "npu_audit", "--format", "json", "--no-cache", "--isolated", *extra, "."],
                          capture_output=True, text=True, cwd=tree)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_only_real_importers_of_npu_modules_are_parsed(tmp_path):
    (tmp_path / "project_a").mkdir()
    (tmp_path / "project_a" / "optimize.py").write_text(NPU_HELPER)
    (tmp_path / "project_a" / "train.py").write_text(
        "import tensorflow as tf\nfrom optimize import session_config\n\nsess = tf.Session(config=session_config())\n")
    (tmp_path / "project_b").mkdir()
    # An unrelated project: `scipy.optimize` is not project_a/optimize.py, and this Python 2 file holds
    # no NPU code, so its syntax is none of npu-audit's business.
    (tmp_path / "project_b" / "fit.py").write_text("import scipy.optimize\nprint 'fitting'\n")
    (tmp_path / "project_b" / "models.py").write_text("from optimize import minimize\nprint 'x'\n")
    report = _run(tmp_path)
    assert report["summary"]["files"] == 4
    assert report["summary"]["files_parsed"] == 2  # optimize.py and the script that imports it
    assert not [d for d in report["diagnostics"] if d["name"] == "syntax-error"]


def test_package_submodule_imported_by_from_import_is_followed(tmp_path):
    pkg = tmp_path / "proj" / "common"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "npu_cfg.py").write_text(NPU_HELPER.replace('"NpuOptimizer"', '"NPUOptimizer"'))
    (tmp_path / "proj" / "run.py").write_text(
        "import tensorflow as tf\nfrom common import npu_cfg\n\nsess = tf.Session(config=npu_cfg.session_config())\n")
    report = _run(tmp_path)
    assert report["summary"]["files_parsed"] == 2  # npu_cfg.py and run.py (not the empty __init__)
    configs = _run(tmp_path, "--show-config")["configs"]
    callers = [c["through"][0]["path"] for c in configs if c["through"]]
    assert callers == [str(Path("proj", "run.py"))]  # run.py was read, and it calls the helper


def test_importing_only_names_without_npu_code_does_not_parse(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "utils.py").write_text(NPU_HELPER + "\n\ndef load_data(path):\n    return open(path).read()\n\n\n"
                                   "def run_with_config():\n    return session_config()\n")
    (proj / "data.py").write_text("from utils import load_data\nprint 'python 2'\n")
    (proj / "train.py").write_text("import tensorflow as tf\nfrom utils import run_with_config\n\n"
                                   "sess = tf.Session(config=run_with_config())\n")
    (proj / "star.py").write_text("from utils import *\n")
    report = _run(tmp_path)
    parsed = report["summary"]["files_parsed"]
    # utils.py and train.py (takes a helper that builds a config); star.py only re-exports the helpers
    # (its importers read it when they are analysed), so on its own it can build no config
    assert parsed == 2
    assert not [d for d in report["diagnostics"] if d["name"] == "syntax-error"]


def test_npu_exports_follow_what_carries_configuration():
    import ast

    from npu_audit.relevance import npu_exports

    text = (
        "import tensorflow as tf\n"
        "LOOPS = 10\n"
        "cfg = tf.ConfigProto()\n"
        "op = cfg.graph_options.rewrite_options.custom_optimizers.add()\n"
        "op.parameter_map['iterations_per_loop'].i = LOOPS\n"
        "def plain():\n    return 1\n"
        "def uses_cfg():\n    return cfg\n"
        "def main():\n    uses_cfg()\n"
    )
    assert npu_exports(ast.parse(text), text) == ["LOOPS", "cfg", "main", "op", "uses_cfg"]
    assert npu_exports(None, text) is None


def test_a_warm_run_reuses_the_second_phase_only_while_nothing_it_depends_on_changed(tmp_path):
    """With a cache, the files parsed because they import NPU code are remembered for the next run;
    editing any file of the tree (here: a script that starts importing the helper, then a helper that
    stops exporting NPU code) must give the answer a cold run gives."""
    tree = tmp_path / "proj"
    tree.mkdir()
    (tree / "optimize.py").write_text(NPU_HELPER)
    (tree / "train.py").write_text("import tensorflow as tf\n\nsess = tf.Session()\n")
    cache = ["--cache-dir", str(tmp_path / "cache")]

    def warm() -> dict:
        done = subprocess.run([sys.executable, "-m", "npu_audit", "--format", "json", "--isolated", *cache, "."],
                              capture_output=True, text=True, cwd=tree)
        assert done.returncode in (0, 1), done.stderr
        report = json.loads(done.stdout)
        assert report["summary"] == _run(tree)["summary"]  # what a cold run says
        return report

    assert warm()["summary"]["files_parsed"] == 1
    assert warm()["summary"]["files_parsed"] == 1  # (the remembered answer)
    (tree / "train.py").write_text(
        "import tensorflow as tf\nfrom optimize import session_config\n\nsess = tf.Session(config=session_config())\n")
    assert warm()["summary"]["files_parsed"] == 2
    assert warm()["summary"]["files_parsed"] == 2
    (tree / "optimize.py").write_text("def session_config():\n    return None\n")
    assert warm()["summary"]["files_parsed"] == 0


def test_a_file_that_imports_npu_code_but_cannot_use_it_is_not_parsed(tmp_path):
    """The second phase reads a marker-less file only if its relevance slice keeps something besides its
    imports: a module that imports the NPU helper for a name it never uses (or uses only where no config
    can flow) cannot build or fill a config, so libcst and the interpreter are spared."""
    (tmp_path / "optimize.py").write_text(NPU_HELPER)
    (tmp_path / "uses.py").write_text(
        "import tensorflow as tf\nfrom optimize import session_config\n\nsess = tf.Session(config=session_config())\n")
    (tmp_path / "idle.py").write_text(
        "import numpy as np\nfrom optimize import session_config\n\n\ndef mean(values):\n    return np.mean(values)\n")
    report = _run(tmp_path)
    assert report["summary"]["files"] == 3
    assert report["summary"]["files_parsed"] == 2  # optimize.py and uses.py; idle.py only imports the helper
    shown = _run(tmp_path, "--show-config")["configs"]
    assert [c["through"][0]["path"] for c in shown if c["through"]] == ["uses.py"]


def test_a_script_named_alone_is_checked_as_in_a_run_over_its_folder(tmp_path):
    """`npu-audit train.py` must say what `npu-audit .` says about train.py when its config is built by a
    helper module that is not named: the helper is found on the disk as the script's interpreter would."""
    (tmp_path / "helper.py").write_text(
        "import tensorflow as tf\n\n\ndef make_config(mode):\n    config = tf.ConfigProto()\n"
        "    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        '    custom_op.name = "NpuOptimizer"\n'
        '    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(mode)\n    return config\n')
    (tmp_path / "train.py").write_text(
        'import tensorflow as tf\nfrom helper import make_config\n\nsess = tf.Session(config=make_config("fp99"))\n')
    (tmp_path / "plot.py").write_text("import numpy as np\nfrom helper import make_config\n\nprint(np.pi)\n")

    def about(report: dict, name: str) -> list:
        return [(d["line"], d["column"], d["code"]) for d in report["diagnostics"] if d["path"] == name]

    alone = _run_files(tmp_path, "train.py", "plot.py")
    whole = _run(tmp_path)
    assert about(alone, "train.py") == about(whole, "train.py") == [(4, 26, "NPU104")]
    assert alone["summary"]["files_parsed"] == 1  # train.py; plot.py only imports the helper


def _run_files(tree: Path, *files: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "npu_audit", "--format", "json", "--no-cache", "--isolated", *files],
                          capture_output=True, text=True, cwd=tree)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _script_through(helper_module: str, *args: str) -> str:
    return (f"import tensorflow as tf\nfrom {helper_module} import session_config\n\n"
            f"sess = tf.Session(config=session_config({', '.join(args)}))\n")


def test_workers_find_the_second_phase_as_one_process_does_within_and_across_projects(tmp_path):
    """The workers analyse a marker-less script that imports an NPU helper of its own project right after
    the project (analyze_feeders_ahead), and one whose helper lies in another project's chunk in the
    second phase: both must be read, and the report must be the one a single process gives."""
    # (the scripts pass iterations_per_loop=0: a finding placed on their call)
    helper = NPU_HELPER.replace("session_config()", "session_config(steps)").replace("= 10", "= steps")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "npu_cfg.py").write_text(helper)
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "local_cfg.py").write_text(helper)
    (tmp_path / "proj" / "train_local.py").write_text(_script_through("local_cfg", "0"))
    (tmp_path / "proj" / "train_shared.py").write_text(_script_through("shared.npu_cfg", "0"))
    for folder in ("shared", "proj"):  # (each project more than half of the tree: two chunks, not one)
        for n in range(20):
            (tmp_path / folder / f"util_{n:02d}.py").write_text(f"VALUE = {n}\n")
    two = _run(tmp_path, "--jobs", "2")
    assert two == _run(tmp_path, "--jobs", "1")
    assert two["summary"]["files_parsed"] == 4  # the two helpers and the two scripts
    scripts = {d["path"] for d in two["diagnostics"] if d["name"] == "out-of-range"}
    assert scripts == {str(Path("proj", "train_local.py")), str(Path("proj", "train_shared.py"))}


def test_a_chunk_analyses_ahead_only_the_files_the_second_phase_can_take(tmp_path):
    from npu_audit.checks import all_rules
    from npu_audit.knowledge.loader import load
    from npu_audit.pipeline import Job, analyze_feeders_ahead, analyze_file, analyze_in_batch
    from npu_audit.settings import Settings, SettingsResolver

    (tmp_path / "optimize.py").write_text(NPU_HELPER)
    (tmp_path / "train.py").write_text(_script_through("optimize"))
    (tmp_path / "plot.py").write_text("import matplotlib\nVALUE = 1\n")
    settings = SettingsResolver(Settings(), {}, load(), True, all_rules()).default
    jobs = [Job(file=str(tmp_path / name), display=name, roots=(str(tmp_path),), settings=settings)
            for name in ("optimize.py", "plot.py", "train.py")]
    reports = [analyze_in_batch(job) for job in jobs]
    assert [r.parsed for r in reports] == [True, False, False]
    analyze_feeders_ahead(jobs, reports)
    assert [r.ahead is not None for r in reports] == [False, False, True]
    ahead = reports[2].ahead
    alone = analyze_file(Job(file=jobs[2].file, display="train.py", roots=jobs[2].roots, settings=settings,
                             force_parse=True))
    assert ahead is not None and ahead.parsed and ahead.findings == alone.findings
    # a chunk of the second phase is not looked at again
    again = [analyze_in_batch(Job(file=job.file, display=job.display, roots=job.roots, settings=settings,
                                  force_parse=True)) for job in jobs]
    analyze_feeders_ahead([Job(file=j.file, display=j.display, roots=j.roots, settings=settings, force_parse=True)
                           for j in jobs], again)
    assert all(r.ahead is None for r in again)


def test_a_helper_too_large_for_one_project_is_still_read_for_another_in_the_same_process(tmp_path):
    """Helper modules are kept per process for the next files; one that a project with a small
    max-file-size could not read must still be read for a project without that limit."""
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "pyproject.toml").write_text("[tool.npu-audit]\nmax-file-size = 300\n")
    (tmp_path / "A" / "train.py").write_text(_script_through("B.npu_cfg", "0"))
    (tmp_path / "B").mkdir()
    (tmp_path / "B" / "__init__.py").write_text("")
    helper = NPU_HELPER.replace("session_config()", "session_config(steps)").replace("= 10", "= steps")
    assert len(helper.encode()) > 300
    (tmp_path / "B" / "npu_cfg.py").write_text(helper)
    (tmp_path / "B" / "train.py").write_text(_script_through("npu_cfg", "0"))
    done = subprocess.run([sys.executable, "-m", "npu_audit", "--format", "json", "--no-cache", "--jobs", "1", "."],
                          capture_output=True, text=True, cwd=tmp_path)  # (A's files first, in one process)
    assert done.returncode in (0, 1), done.stderr
    flagged = {d["path"] for d in json.loads(done.stdout)["diagnostics"] if d["name"] == "out-of-range"}
    assert str(Path("B", "train.py")) in flagged


# -- which importers can hand their helper something it writes (npu_audit.extract.inputs) -----------------

PARAMETER_HELPER = '''import tensorflow as tf


def session_config(mode{default}):
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(mode)
    return config
'''


def _inputs_of(path: Path):
    """``caller_inputs`` of one file's analysis."""
    from npu_audit.imports import forget
    from npu_audit.pipeline import Job, analyze_file
    from npu_audit.settings import Settings

    forget()  # (as a run does: the files of the folder change between the test's analyses)
    report = analyze_file(Job(file=str(path), display=path.name, roots=(str(path.parent),), settings=Settings()))
    assert report.parsed, report.findings
    return report.caller_inputs


def test_values_written_in_the_write_or_its_own_function_are_no_callers(tmp_path):
    helper = tmp_path / "helper.py"
    helper.write_text(NPU_HELPER.replace("    return config", '    mode = "allow_mix_precision"\n'
                                         '    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(mode)\n'
                                         "    return config"))
    assert _inputs_of(helper) == []


def test_a_parameter_a_default_or_a_module_constant_may_be_a_callers(tmp_path):
    for default in ("", '="allow_fp32_to_fp16"'):
        helper = tmp_path / "helper.py"
        helper.write_text(PARAMETER_HELPER.format(default=default))
        assert _inputs_of(helper) is None, default
    helper.write_text('MODE = "allow_mix_precision"\n' + PARAMETER_HELPER.format(default="").replace(
        "def session_config(mode):", "def session_config():\n    mode = MODE"))
    assert _inputs_of(helper) is None  # (an importer may set helper.MODE before calling)


def test_a_flag_default_is_the_defining_files_value(tmp_path):
    reading = PARAMETER_HELPER.format(default="").replace("def session_config(mode):",
                                                          "def session_config():\n    mode = FLAGS.precision_mode")
    define = "tf.app.flags.DEFINE_string('precision_mode', 'allow_mix_precision', 'mode')\n"
    helper = tmp_path / "helper.py"
    helper.write_text("import tensorflow as tf\n" + define + "FLAGS = tf.app.flags.FLAGS\n" + reading)
    assert _inputs_of(helper) == []  # (its own flag: whoever calls it)
    (tmp_path / "flag_defs.py").write_text("import tensorflow as tf\n" + define + "FLAGS = tf.app.flags.FLAGS\n")
    helper.write_text("import tensorflow as tf\nfrom flag_defs import FLAGS\n" + reading)
    assert _inputs_of(helper) == [str((tmp_path / "flag_defs.py").resolve())]


def test_an_importer_that_can_supply_no_value_is_not_parsed(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "optimize.py").write_text(NPU_HELPER)  # (writes only a literal of its own)
    # Python 2, and nothing it could hand session_config() changes what it writes: not npu-audit's business
    (proj / "launch.py").write_text("from optimize import session_config\nconfig = session_config()\nprint 'go'\n")
    report = _run(tmp_path)
    assert report["summary"]["files_parsed"] == 1
    assert not [d for d in report["diagnostics"] if d["name"] == "syntax-error"]


def test_an_importer_that_passes_a_value_its_helper_writes_is_parsed_and_told(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    for default in ("", '="allow_fp32_to_fp16"'):
        (proj / "optimize.py").write_text(PARAMETER_HELPER.format(default=default))
        (proj / "launch.py").write_text("from optimize import session_config\n\n"
                                        "config = session_config('allow_mix_precision')\n")
        report = _run(tmp_path)
        assert report["summary"]["files_parsed"] == 2, default
        told = [d for d in report["diagnostics"] if d["path"] == str(Path("proj", "launch.py"))]
        assert [d["name"] for d in told] == ["prefer-precision-mode-v2"], default
        assert told[0]["line"] == 3


def test_an_importer_whose_flag_a_helper_reads_is_parsed(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "optimize.py").write_text("import tensorflow as tf\nFLAGS = tf.app.flags.FLAGS\n"
                                      + PARAMETER_HELPER.format(default="").replace(
                                          "def session_config(mode):",
                                          "def session_config():\n    mode = FLAGS.precision_mode"))
    (proj / "launch.py").write_text("import tensorflow as tf\nfrom optimize import session_config\n\n"
                                    "tf.app.flags.DEFINE_string('precision_mode', 'allow_mix_precision', 'mode')\n"
                                    "config = session_config()\n")
    report = _run(tmp_path)
    assert report["summary"]["files_parsed"] == 2
    assert [d["name"] for d in report["diagnostics"] if d["path"] == str(Path("proj", "launch.py"))] == [
        "prefer-precision-mode-v2"]


def test_an_importer_that_opens_a_session_or_holds_a_suppression_is_parsed(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "optimize.py").write_text(NPU_HELPER)
    for text in ("sess = tf.Session(config=session_config())\n",
                 "config = session_config()  # npu-audit: ignore[NPU501]\n"):
        (proj / "launch.py").write_text("import tensorflow as tf\nfrom optimize import session_config\n\n" + text)
        report = _run(tmp_path)
        assert report["summary"]["files_parsed"] == 2, text


def _told_in_launch(tree: Path) -> list[tuple[str, int]]:
    report = _run(tree)
    return [(d["name"], d["line"]) for d in report["diagnostics"] if Path(d["path"]).name == "launch.py"]


def test_an_importer_that_writes_into_an_option_object_a_helper_returns_is_parsed(tmp_path):
    (tmp_path / "helper.py").write_text("import npu_device\n\n\ndef npu_options():\n    return npu_device.global_options()\n\n\n"
                                        "def open_device():\n    npu_device.open().as_default()\n")
    (tmp_path / "launch.py").write_text("import helper\n\nopts = helper.npu_options()\n"
                                        "opts.precision_mode = 'allow_mix_precision'\nhelper.open_device()\n")
    assert _told_in_launch(tmp_path) == [("prefer-precision-mode-v2", 4)]


def test_an_option_name_counts_only_where_it_can_write_an_option(tmp_path):
    """Option names such as input_shape or job are everyday words of model code: in a keyword argument,
    an attribute read or the name of a flag or argument defined they write no option, so they alone do not
    make an importer a second-phase file; as a string (a TF1 key, setattr) or an attribute stored (a TF2
    option) they do. (A flag's default that a helper writes makes the importer one through the helper's
    caller inputs: test_an_importer_whose_flag_a_helper_reads_is_parsed.)"""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "optimize.py").write_text(NPU_HELPER)  # (writes only a literal of its own)
    head = "import tensorflow as tf\nfrom optimize import session_config\n\nconfig = session_config()\n"
    for text, parsed in (("layer = tf.keras.layers.Dense(8, input_shape=(4,))\nshape = layer.input_shape\n", 1),
                         ("name = cluster.job\nready = cluster.job == 'worker'\n", 1),
                         ("tf.app.flags.DEFINE_string('input_shape', '1,224,224,3', 'input shape')\n", 1),
                         ("tf.app.flags.DEFINE_integer(\n    name='iterations_per_loop', default=10, help='')\n", 1),
                         ("import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument(\n"
                          "    'precision_mode', default='force_fp16')\n", 1),
                         ("tf.app.flags.DEFINE_string('input_shape', '1', '')\nopts = {'input_shape': '1'}\n", 2),
                         ("opts = {}\nopts['input_shape'] = '1,224,224,3'\n", 2),
                         ("opts = config.experimental\nopts.job = 'localhost'\n", 2)):
        (proj / "launch.py").write_text(head + text)
        report = _run(tmp_path)
        assert report["summary"]["files_parsed"] == parsed, text


def test_an_importer_reaches_the_npu_modules_its_module_imports(tmp_path):
    # a package re-exporting a helper that writes its parameter; a module whose plain wrapper passes its own
    # parameter on to such a helper: the importer's value reaches the write through either
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "helper.py").write_text(PARAMETER_HELPER.format(default=""))
    (pkg / "__init__.py").write_text("from npu_bridge.estimator.npu.npu_config import NPURunConfig\n\n"
                                     "from .helper import session_config\n\n\n"
                                     "def run_config():\n    return NPURunConfig(iterations_per_loop=10)\n")
    for launch in ("import pkg\n\nconfig = pkg.session_config('allow_mix_precision')\n",
                   "from pkg import *\n\nconfig = session_config('allow_mix_precision')\n"):
        (tmp_path / "launch.py").write_text(launch)
        assert _told_in_launch(tmp_path) == [("prefer-precision-mode-v2", 3)], launch
    (pkg / "__init__.py").write_text("from npu_bridge.estimator.npu.npu_config import NPURunConfig\n\n"
                                     "from pkg import helper\n\n\n"
                                     "def run_config():\n    return NPURunConfig(iterations_per_loop=10)\n\n\n"
                                     "def build(mode):\n    return helper.session_config(mode)\n")
    (tmp_path / "launch.py").write_text("import pkg\n\nconfig = pkg.build('allow_mix_precision')\n")
    assert _told_in_launch(tmp_path) == [("prefer-precision-mode-v2", 3)]


def test_a_helper_whose_npu_function_its_analysis_did_not_read_takes_any_callers_value(tmp_path):
    helper = tmp_path / "helper.py"
    indented = "\n".join("    " + line if line else line for line in PARAMETER_HELPER.format(default="").splitlines()[2:])
    helper.write_text("import os\n\nimport tensorflow as tf\n\nif os.environ.get('DEVICE', 'npu') == 'npu':\n"
                      + indented + "\n")
    assert _inputs_of(helper) is None  # (defined in a block: the analysis reads no such function on its own)
    (tmp_path / "launch.py").write_text("from helper import session_config\n\n"
                                        "config = session_config('allow_mix_precision')\n")
    assert _told_in_launch(tmp_path) == [("prefer-precision-mode-v2", 3)]


def test_an_importer_reaches_a_helper_through_a_module_without_npu_code(tmp_path):
    (tmp_path / "core.py").write_text(PARAMETER_HELPER.format(default="").replace("session_config", "build"))
    (tmp_path / "reexport.py").write_text("from core import build\n")  # (no NPU code of its own)
    (tmp_path / "wrap.py").write_text(NPU_HELPER.replace("import tensorflow as tf\n",
                                                         "import tensorflow as tf\nfrom reexport import build\n"))
    (tmp_path / "launch.py").write_text("import wrap\n\nconfig = wrap.build('allow_mix_precision')\n")
    assert _told_in_launch(tmp_path) == [("prefer-precision-mode-v2", 3)]


def test_files_named_without_a_folder_are_found_by_their_importers(tmp_path):
    # (paths as given, "train.py": the second phase places them in the working directory)
    (tmp_path / "optimize.py").write_text(NPU_HELPER)
    (tmp_path / "train.py").write_text(
        "import tensorflow as tf\nfrom optimize import session_config\n\nsess = tf.Session(config=session_config())\n")
    done = subprocess.run([sys.executable, "-m", "npu_audit", "--format", "json", "--no-cache", "--isolated",
                           "train.py", "optimize.py"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout)["summary"]["files_parsed"] == 2


def test_a_write_in_a_helper_function_read_after_the_first_part_may_take_a_callers_value(tmp_path):
    # models.py (no marker) writes self.amp in a method; session.py reads models.py in parts, and the method
    # comes in a later part: that write sits in a function, so its default is a caller's value (None), and
    # launch.py, which sets model.amp, is analysed and told
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "models.py").write_text('class Model(object):\n    def __init__(self, amp=b"allow_fp32_to_fp16"):\n'
                                    '        self.amp = amp\n\n    def fill(self, options):\n'
                                    '        options["precision_mode"].s = self.amp\n')
    (proj / "session.py").write_text("import tensorflow as tf\nfrom models import Model\n\n\ndef make_model():\n"
                                     "    return Model()\n\n\ndef main():\n    return open_session(make_model())\n\n\n"
                                     "def open_session(model):\n    config = tf.ConfigProto()\n"
                                     "    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
                                     '    custom_op.name = "NpuOptimizer"\n    model.fill(custom_op.parameter_map)\n'
                                     "    return tf.Session(config=config)\n")
    (proj / "launch.py").write_text('from session import make_model, open_session\n\nmodel = make_model()\n'
                                    'model.amp = "allow_mix_precision"\nopen_session(model)\n')
    assert _inputs_of(proj / "session.py") is None
    report = _run(tmp_path)
    told = [(d["path"], d["code"], d["line"]) for d in report["diagnostics"]]
    assert (str(Path("proj", "launch.py")), "NPU103", 5) in told, told  # (told at the call that hands it on)
