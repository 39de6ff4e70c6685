"""Names a script imports from modules of its tree, followed as Python binds them: a package that
imports its own submodules (``from . import paths`` in its ``__init__``), re-exports, and modules that
import a name from each other. Each case is a small tree whose script writes a ``str`` into a ``.s``
field (NPU103) through such a name, then a ``str`` of its own: both are reported, or, where the name has
no value, the second alone (the rest of the function is still read)."""

from __future__ import annotations

import pytest

from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings

SCRIPT = '''\
import tensorflow as tf
{imports}


def configure():
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["enable_dump"].b = True
    custom_op.parameter_map["dump_path"].s = {value}
    custom_op.parameter_map["dump_mode"].s = "all"
    return config


with tf.Session(config=configure()) as sess:
    pass
'''

# (files besides train.py, its import lines, the value written into dump_path)
FOLLOWED = {
    "a package importing its submodule": (
        {"pkg/__init__.py": "from . import paths\n", "pkg/paths.py": "DUMP_PATH = '/tmp/dump'\n"},
        "import pkg", "pkg.paths.DUMP_PATH"),
    "a package importing its submodule by its absolute name": (
        {"pkg/__init__.py": "from pkg import paths\n", "pkg/paths.py": "DUMP_PATH = '/tmp/dump'\n"},
        "import pkg", "pkg.paths.DUMP_PATH"),
    "a package's submodule imported by name from the package": (
        {"pkg/__init__.py": "from . import paths\n", "pkg/paths.py": "DUMP_PATH = '/tmp/dump'\n"},
        "from pkg import paths", "paths.DUMP_PATH"),
    "a name the package bound before importing from itself": (
        {"pkg/__init__.py": "from .paths import DUMP_PATH\nfrom . import DUMP_PATH as CHOSEN\n",
         "pkg/paths.py": "DUMP_PATH = '/tmp/dump'\n"},
        "import pkg", "pkg.CHOSEN"),
    "a re-export through two modules": (
        {"settings.py": "from defaults import DUMP_PATH\n", "defaults.py": "DUMP_PATH = '/tmp/dump'\n"},
        "from settings import DUMP_PATH", "DUMP_PATH"),
}


def findings_of(tmp_path, files: dict[str, str], imports: str, value: str) -> list[tuple[str, int]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "train.py").write_text(SCRIPT.format(imports=imports, value=value), encoding="utf-8")
    report = analyze_file(Job(file=str(tmp_path / "train.py"), display="train.py", roots=(str(tmp_path),),
                              settings=Settings()))
    assert not report.internal_error, [f.message for f in report.findings]
    return sorted((f.code, f.line) for f in report.findings)


@pytest.mark.parametrize("case", sorted(FOLLOWED))
def test_a_value_imported_through_a_package_or_a_re_export_is_checked(tmp_path, case):
    files, imports, value = FOLLOWED[case]
    found = findings_of(tmp_path, files, imports, value)
    assert ("NPU103", 10) in found and ("NPU103", 11) in found, found


def test_modules_importing_a_name_from_each_other_leave_it_unknown(tmp_path):
    # Python raises ImportError here: the name has no value, and the function around it is still read
    files = {"first.py": "from second import DUMP_PATH\n", "second.py": "from first import DUMP_PATH\n"}
    found = findings_of(tmp_path, files, "from first import DUMP_PATH", "DUMP_PATH")
    assert ("NPU103", 10) not in found and ("NPU103", 11) in found, found


def _shown_precision_modes(tree) -> list[str]:
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "npu_audit", "--no-cache", "--isolated", "--show-config", "--format",
                           "json", "launch.py"], capture_output=True, text=True, cwd=tree)
    assert done.returncode == 0, done.stderr
    (config,) = json.loads(done.stdout)["configs"]
    option = config["entries"][0]["options"]["precision_mode"]
    return [value["value"] for value in option["possible_values"]]


def test_an_imported_modules_main_block_does_not_run(tmp_path):
    """Imported, a module's ``__name__`` is its own name: what its ``if __name__ == "__main__":`` block does
    (rebind a constant, train a model) does not happen for the script that imports it."""
    (tmp_path / "helper.py").write_text(
        'import tensorflow as tf\n\nMODE = "allow_fp32_to_fp16"\n\n\ndef make_config():\n'
        '    config = tf.ConfigProto()\n'
        '    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n'
        '    custom_op.name = "NpuOptimizer"\n'
        '    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(MODE)\n'
        '    return config\n\n\n'
        'if __name__ == "__main__":\n    MODE = "force_fp16"\n    make_config()\n')
    (tmp_path / "launch.py").write_text("import tensorflow as tf\nimport helper\n\n"
                                        "sess = tf.Session(config=helper.make_config())\n")
    assert _shown_precision_modes(tmp_path) == ["allow_fp32_to_fp16"]
    # (the script's own main block runs: it is the script)
    (tmp_path / "launch.py").write_text("import tensorflow as tf\nimport helper\n\n"
                                        'if __name__ == "__main__":\n'
                                        "    sess = tf.Session(config=helper.make_config())\n")
    assert _shown_precision_modes(tmp_path) == ["allow_fp32_to_fp16"]
