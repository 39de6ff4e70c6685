"""Helper modules read in parts (npu_audit/extract/demand.py): what the first part holds, that a part keeps
every position, and that findings through a helper read in parts equal those through the whole helper."""

from __future__ import annotations

import ast

import pytest

from npu_audit.extract.demand import HelperText
from npu_audit.pipeline import Job, analyze_file
from npu_audit.settings import Settings
from npu_audit.slicing import ENV_OFF
from npu_audit.text import split_lines_keepends

HELPERS = '''\
"""Helpers of a training script."""
import os

import tensorflow as tf

DEFAULT_MODE = "allow_fp32_to_fp16"


def build_model(x):
    layer = tf.layers.dense(x, 10)
    return tf.nn.relu(layer)


def precision_mode():
    return _mode_from_env()


def _mode_from_env():
    return "high_precision"


@tf.function
def decorated(x):
    return x


class Trainer(object):
    def __init__(self):
        self.steps = 10

    def run(self):
        return build_model(None)


def make_config(mode=DEFAULT_MODE):
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(mode)
    return config


def dump_path():
    return "/tmp/dump"
'''


def helper_text(source: str) -> HelperText:
    return HelperText(source, ast.parse(source))


def names_kept(helper: HelperText, keep: set[int]) -> set[str]:
    return {name for name, found in helper.definitions.items() if set(found) & keep}


def test_the_first_part_is_what_the_module_runs_and_a_name_asked_for_comes_alone():
    helper = helper_text(HELPERS)
    keep = helper.first_part()
    assert set(helper.base) <= keep  # imports and constants are always read
    assert names_kept(helper, keep) == set()  # no module-level statement names a definition
    # the definition of a name looked up, without what it calls (read when the call looks that up)
    assert names_kept(helper, helper.definitions_of("precision_mode", keep)) == {"precision_mode"}
    assert names_kept(helper, helper.definitions_of("Trainer", keep)) == {"Trainer"}


def test_the_first_part_holds_what_a_call_made_while_the_module_runs_reaches():
    source = ("def _default():\n    return _fallback()\n\n\ndef _fallback():\n    return 1\n\n\n"
              "def unused():\n    return 2\n\n\nMODE = _default()\n")
    helper = helper_text(source)
    assert names_kept(helper, helper.first_part()) == {"_default", "_fallback"}


def test_a_later_part_adds_only_what_was_left_out():
    helper = helper_text(HELPERS)
    have = helper.first_part()
    more = helper.definitions_of("make_config", have)
    assert names_kept(helper, more) == {"make_config"}
    assert helper.definitions_of("make_config", have | more) == set()  # read already
    assert helper.definitions_of("DEFAULT_MODE", have) == set()  # no definition: a name the first part binds


def test_a_part_is_built_from_the_modules_own_statements_in_place():
    from npu_audit import syntax

    helper = helper_text(HELPERS)
    keep = helper.first_part()
    keep |= helper.definitions_of("make_config", keep)
    part = syntax.parse_module(HELPERS, helper.tree, keep=keep)
    lines = split_lines_keepends(HELPERS)
    defined = {}
    for stmt in part.body:  # every statement of the part is the module's own, at its own line
        if isinstance(stmt, (syntax.FunctionDef, syntax.ClassDef)):
            line = syntax.range_of(stmt.name)[0]
            assert stmt.name.value in lines[line - 1]
            defined[stmt.name.value] = line
    assert "make_config" in defined and "build_model" not in defined
    assigned = [syntax.code_of(s.body[0]) for s in part.body if isinstance(s, syntax.SimpleStatementLine)]
    assert 'DEFAULT_MODE = "allow_fp32_to_fp16"' in assigned


def test_a_name_defined_twice_is_read_in_place_with_both_definitions():
    source = "def f():\n    return 1\n\n\nx = 2\n\n\ndef f():\n    return 3\n"
    helper = helper_text(source)
    assert helper.first_part() == {0, 1, 2}  # (which one holds f depends on where the module is)


def test_a_class_with_bases_other_than_object_is_read_where_it_stands():
    source = ("class Plain(object):\n    pass\n\n\nclass Derived(Plain):\n    pass\n\n\n"
              "class Outer:\n    class Inner(Plain):\n        pass\n")
    helper = helper_text(source)
    assert helper.definitions == {"Plain": [0]}  # (the only class that can wait for a look-up)
    assert helper.first_part() == {0, 1, 2}  # (with Plain, which Derived's base names)


SCRIPT = '''\
import tensorflow as tf
import helpers
from helpers import make_config

config = make_config()
custom_op = config.graph_options.rewrite_options.custom_optimizers[0]
custom_op.parameter_map["enable_dump"].b = True
custom_op.parameter_map["dump_path"].s = helpers.dump_path()
custom_op.parameter_map["op_select_implmode"].s = helpers.precision_mode()
with tf.Session(config=config) as sess:
    pass
'''


def findings_of(tmp_path, monkeypatch, whole: bool, want_configs: bool = False) -> list[tuple]:
    if whole:
        monkeypatch.setenv(ENV_OFF, "1")
    else:
        monkeypatch.delenv(ENV_OFF, raising=False)
    (tmp_path / "helpers.py").write_text(HELPERS, encoding="utf-8")
    (tmp_path / "train.py").write_text(SCRIPT, encoding="utf-8")
    report = analyze_file(Job(file=str(tmp_path / "train.py"), display="train.py", roots=(str(tmp_path),),
                              settings=Settings(), want_configs=want_configs))
    assert not report.internal_error, [f.message for f in report.findings]
    return sorted((f.code, f.line, f.column, f.end_line, f.end_column, f.message) for f in report.findings)


@pytest.mark.parametrize("want_configs", [False, True])
def test_findings_through_a_helper_read_in_parts_equal_those_through_the_whole_helper(tmp_path, monkeypatch,
                                                                                     want_configs):
    parts = findings_of(tmp_path, monkeypatch, whole=False, want_configs=want_configs)
    whole = findings_of(tmp_path, monkeypatch, whole=True, want_configs=want_configs)
    assert parts == whole
    # the str written into each .s comes from definitions the first part left out: dump_path, and
    # _mode_from_env, which precision_mode calls (looked up by the helper's own code)
    assert [line for code, line, *_ in parts if code == "NPU103"] == [8, 9], parts


SESSION = '''\
import tensorflow as tf
import helpers

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
custom_op.parameter_map["enable_dump"].b = True
custom_op.parameter_map["dump_path"].s = {value}
with tf.Session(config=config) as sess:
    pass
'''

# (helper modules, the value the script writes into dump_path): in each, reading the helper in parts must
# give what reading it whole gives (a str there: NPU103), although the name asked for first is another
ORDER_SENSITIVE = {
    "an import rebound by a later def": (
        {"helpers.py": "from paths import dump_path\nMODE = 1\n\n\ndef dump_path():\n    return '/tmp/dump'\n",
         "paths.py": "def dump_path():\n    return b'/tmp/dump'\n"},
        "(helpers.MODE, helpers.dump_path())[1]"),
    "a class body that rebinds a module name": (
        {"helpers.py": "DUMP_PATH = b'/tmp/dump'\n\n\nclass Local(object):\n    global DUMP_PATH\n    DUMP_PATH = '/tmp/dump'\n"},
        "helpers.DUMP_PATH"),
    "a class attribute read where the class stands": (
        {"helpers.py": "DUMP_PATH = '/tmp/dump'\n\n\nclass Settings(object):\n    path = DUMP_PATH\n\n\n"
                       "DUMP_PATH = b'/tmp/dump'\n"},
        "(helpers.DUMP_PATH, helpers.Settings.path)[1]"),
    "a class whose base is bound again further down": (
        {"helpers.py": "from base_a import Base\n\n\nclass Local(Base):\n    pass\n\n\nfrom base_b import Base\n",
         "base_a.py": "class Base(object):\n    def dump_path(self):\n        return '/tmp/dump'\n",
         "base_b.py": "class Base(object):\n    def dump_path(self):\n        return b'/tmp/dump'\n"},
        "helpers.Local().dump_path()"),
    "a function importing from its own module": (
        {"helpers.py": "def dump_path():\n    from helpers import _path\n    return _path()\n\n\n"
                       "def _path():\n    return '/tmp/dump'\n"},
        "helpers.dump_path()"),
    "a conditional def and a later one": (
        {"helpers.py": "import sys\nif sys.platform == 'win32':\n    def dump_path():\n        return b'C:/dump'\n\n\n"
                       "def dump_path():\n    return '/tmp/dump'\n"},
        "(helpers.sys, helpers.dump_path())[1]"),
}


def train_findings(tmp_path, monkeypatch, whole: bool) -> list[tuple]:
    """The findings of ``tmp_path/train.py``, its helpers read whole or in parts."""
    if whole:
        monkeypatch.setenv(ENV_OFF, "1")
    else:
        monkeypatch.delenv(ENV_OFF, raising=False)
    report = analyze_file(Job(file=str(tmp_path / "train.py"), display="train.py", roots=(str(tmp_path),),
                              settings=Settings()))
    assert not report.internal_error, [f.message for f in report.findings]
    return sorted((f.code, f.line, f.column, f.message) for f in report.findings)


@pytest.mark.parametrize("case", sorted(ORDER_SENSITIVE))
def test_a_helper_read_in_parts_keeps_the_order_the_module_runs_in(tmp_path, monkeypatch, case):
    files, value = ORDER_SENSITIVE[case]
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "train.py").write_text(SESSION.format(value=value), encoding="utf-8")

    parts = train_findings(tmp_path, monkeypatch, whole=False)
    whole = train_findings(tmp_path, monkeypatch, whole=True)
    assert [code for code, *_ in whole] == ["NPU103"], whole  # (the case is what it says)
    assert parts == whole


def test_a_definition_further_down_a_module_that_is_still_running_is_not_there_yet(tmp_path, monkeypatch):
    # a imports b, which calls a.dump_path() while a is still running its first line: Python raises
    # AttributeError there; the interpreter, whole or in parts, sees an unknown value (no finding)
    (tmp_path / "a.py").write_text("from b import PATH\nDUMP_PATH = PATH + ''\n\n\ndef dump_path():\n"
                                   "    return '/tmp/dump'\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("import a\nPATH = a.dump_path()\n", encoding="utf-8")
    (tmp_path / "helpers.py").write_text("from a import DUMP_PATH\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(SESSION.format(value="helpers.DUMP_PATH"), encoding="utf-8")
    for whole in (False, True):
        assert train_findings(tmp_path, monkeypatch, whole) == [], whole


def test_a_module_in_a_circular_import_has_the_definitions_above_the_import(tmp_path, monkeypatch):
    # pkg runs ``from pkg.conf import PATH`` and uses it at once; conf imports dump_path from pkg, which is
    # still running but has defined it above that line: Python binds it, and so must a reading of pkg in parts
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("def dump_path():\n    return '/tmp/dump'\n\n\n"
                                                  "from pkg.conf import PATH\nLOWER = PATH.lower()\n", encoding="utf-8")
    (tmp_path / "pkg" / "conf.py").write_text("from pkg import dump_path\nPATH = dump_path()\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(SESSION.replace("import helpers", "import pkg").format(value="pkg.LOWER"),
                                       encoding="utf-8")
    whole = train_findings(tmp_path, monkeypatch, whole=True)
    assert [code for code, *_ in whole] == ["NPU103"], whole
    assert train_findings(tmp_path, monkeypatch, whole=False) == whole
