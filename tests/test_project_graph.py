"""The files an analysis read (``Project.dependencies``: what the result cache checks before reusing a
result) are exactly the descendants of the analysed file in the import/call graph (``Project.graph``)."""

from __future__ import annotations

import random
from pathlib import Path

import networkx as nx

from npu_audit.extract.project import Project


def test_dependencies_are_the_descendants_in_the_graph(tmp_path):
    files = [tmp_path / f"m{i}.py" for i in range(12)]
    for f in files:
        f.write_text("x = 1\n")
    rng = random.Random(11)
    for _ in range(30):
        project = Project([tmp_path], lambda path: None)
        for _ in range(rng.randrange(0, 40)):  # cycles and self-edges included
            a, b = rng.choice(files), rng.choice(files)
            if rng.random() < 0.5:
                project._add_edge(str(a), str(b), "import")
            else:
                project.add_call_edge(str(a), str(b))
        start = rng.choice(files)
        graph = project.graph
        expected = sorted(Path(p) for p in nx.descendants(graph, str(start))) if str(start) in graph else []
        assert project.dependencies(start) == expected
