"""A set of files cut into parts that keep a folder tree's files together: the worker chunks of a run
(``npu_audit.workers``) and the jobs of a CI matrix (``npu_audit.discover.shards``)."""

from __future__ import annotations

from collections.abc import Sequence


def folder_parts(items: Sequence[int], folders: Sequence[tuple[str, ...]], limit: int) -> list[list[int]]:
    """``items`` (indices into ``folders``: each item's folder, as path parts) cut into parts of at most
    ``limit`` items, largest first: the tree of folders is split from the top until each part fits, and the
    items directly in one folder are cut into pieces of ``limit``. Items are taken in the order of their folders
    (the items of one folder in the order of their indices), and parts of one size stay in that order, so the
    same items give the same parts whatever their order in ``items``."""
    parts: list[list[int]] = []
    todo = [(sorted(items, key=lambda i: (folders[i], i)), 0)]  # (items of a folder, its depth), in path order
    while todo:
        group, depth = todo.pop()
        if len(group) <= limit:
            parts.append(group)
            continue
        here: list[int] = []  # items directly in this folder
        below: dict[str, list[int]] = {}
        for i in group:
            folder = folders[i]
            if len(folder) > depth:
                below.setdefault(folder[depth], []).append(i)
            else:
                here.append(i)
        parts.extend(here[k:k + limit] for k in range(0, len(here), limit))
        todo.extend((below[name], depth + 1) for name in sorted(below, reverse=True))
    parts.sort(key=len, reverse=True)  # (stable: parts of one size stay in path order)
    return parts
