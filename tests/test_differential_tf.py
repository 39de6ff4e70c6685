"""Differential test: what npu-audit extracts statically equals what real TensorFlow builds.

Runs only where TensorFlow is installed (`tox -e tensorflow`); the oracle executes the project's own
self-contained fixtures in a subprocess (npu-audit itself never executes analysed code).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_extract import FIXTURES, extract

pytestmark = pytest.mark.tensorflow
tf = pytest.importorskip("tensorflow", reason="the differential test needs the optional tensorflow extra")

SELF_CONTAINED = ["basic", "intermediate_names", "values", "in_out_pair", "strings_and_comments", "helpers_and_classes"]


def oracle(name: str) -> list[dict]:
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / "tf_oracle.py"), str(FIXTURES / f"{name}.py")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("ORACLE:"))
    return json.loads(line[len("ORACLE:"):])


@pytest.mark.parametrize("name", SELF_CONTAINED)
def test_static_extraction_matches_tensorflow(name):
    real = oracle(name)
    static = [c for c in extract(name) if c["kind"] == "ConfigProto"]
    assert len(static) == len(real)
    for s_config, r_config in zip(static, real):
        assert len(s_config["entries"]) == len(r_config["entries"])
        for s_entry, r_entry in zip(s_config["entries"], r_config["entries"]):
            assert s_entry["name"] == r_entry["name"]
            expected = r_entry["parameter_map"]
            got = {k: [o["field"], o["value"]] for k, o in s_entry["options"].items()
                   if o["certainty"] == "always" and o["origin"] != "unresolved"}
            unresolved = {k for k, o in s_entry["options"].items() if o["origin"] == "unresolved"}
            assert set(got) | unresolved == set(expected)
            for key, value in got.items():
                assert value == expected[key], key
