"""``--shard K/N``: which of the files a run found belong to the K-th of N jobs of a CI matrix.

Every job of the matrix runs the same command in the same checkout, finds the same files and cuts them the
same way, so the N parts are disjoint and together hold every file. The cut keeps a folder tree's files
together (a project's scripts with the helper modules they import): a job then has at hand, among its own
files, the modules its scripts hand values to, reads fewer of them from the disk, and its findings are those of
one run over the whole tree (docs/ci.md). Parts are balanced by their number of files.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from npu_audit.folder_parts import folder_parts

#: How many folder-tree parts each job gets on average: more parts balance the jobs better, fewer keep more of
#: each project in one job.
PARTS_PER_JOB = 8

_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
_SEPARATORS = re.compile(r"[\\/]+")


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> (2, 4). Raises ValueError with a message for anything else (K from 1 to N)."""
    match = _SHARD.fullmatch(text)
    if match is None:
        raise ValueError(f"--shard {text}: write K/N, the job's number K (from 1) of N jobs, e.g. --shard 2/4")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"--shard {text}: K must be from 1 to N (N at least 1), e.g. --shard 1/{max(count, 1)}")
    return index, count


def shard_members(paths: Sequence[str], index: int, count: int) -> list[int]:
    """The indices of ``paths`` (the paths a run shows, ``/`` or ``\\`` between folders) that shard ``index`` of
    ``count`` checks, in the order of ``paths``.

    The folder tree is cut from the top until each part holds at most an ``count * PARTS_PER_JOB``-th of the
    paths (the files directly in one folder are cut in that size too); the parts, largest first, go each to the
    job with the fewest paths so far (the lowest number on a tie)."""
    if count <= 1:
        return list(range(len(paths)))
    order = sorted(range(len(paths)), key=lambda i: paths[i])  # (the same paths give the same parts in any order)
    folders = [tuple(_SEPARATORS.split(paths[i])[:-1]) for i in order]
    parts = folder_parts(range(len(order)), folders, max(1, len(paths) // (count * PARTS_PER_JOB)))
    jobs = min(count, len(parts))  # (more jobs than parts: each part has a job of its own, the others none)
    if index > jobs:
        return []
    loads = [0] * jobs
    mine: list[int] = []
    for part in parts:
        job = min(range(jobs), key=lambda k: (loads[k], k))
        loads[job] += len(part)
        if job == index - 1:
            mine.extend(order[rank] for rank in part)
    return sorted(mine)
