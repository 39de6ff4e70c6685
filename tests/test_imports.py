"""Import resolution against the file system (npu_audit/imports.py): the answers a script's own
interpreter would give, and the folders that decide them (the result cache watches those)."""

from __future__ import annotations

import os

import pytest

from npu_audit import imports


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "repo"
    for path in ("pkg/__init__.py", "pkg/mod.py", "a/b/c.py", "a/b/train.py", "utils.py", "a/utils/helpers.py",
                 "models/__init__.py", "models/resnet.py"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x = 1\n", encoding="utf-8")
    imports.forget()
    yield str(root.resolve())
    imports.forget()


NAMES = ["numpy", "os.path", "utils", "utils.x", "pkg", "pkg.mod", "pkg.missing", "a.b.c", "c", "mod", "models.resnet",
         "helpers", "a.utils.helpers", "tensorflow.compat.v1"]


@pytest.mark.parametrize("where", [".", "a/b", "pkg", "a/utils"])
def test_answers_are_those_of_a_walk_of_every_folder(tree, where):
    from_dir = os.path.normpath(os.path.join(tree, where))
    for dotted in NAMES:
        for level in (0, 1, 2):
            expected = imports.resolve_module(dotted, level, from_dir, (tree,), os.path.isfile)
            assert imports.resolve_in_tree(dotted, level, from_dir, (tree,)) == expected, (dotted, level)


def test_an_import_of_nothing_in_the_tree_is_watched_in_every_folder_it_was_looked_for_in(tree):
    from_dir = os.path.join(tree, "a", "b")
    imports.record()
    assert imports.resolve_in_tree("numpy.linalg", 0, from_dir, (tree,)) is None
    asked, folders = imports.recorded()
    assert [a[-1] for a in asked] == [None]
    assert {f[0] for f in folders} == {from_dir, os.path.join(tree, "a"), tree}


def test_a_module_added_later_is_found_after_forget(tree):
    from_dir = os.path.join(tree, "a", "b")
    assert imports.resolve_in_tree("numpy", 0, from_dir, (tree,)) is None
    (open(os.path.join(tree, "a", "numpy.py"), "w")).close()
    imports.forget()
    assert imports.resolve_in_tree("numpy", 0, from_dir, (tree,)) == os.path.join(tree, "a", "numpy.py")


def test_roots_given_through_a_link_are_resolved_again_after_forget(tmp_path):
    # a run resolves its roots once for all its files; the language server forgets between analyses, so a
    # workspace link pointed at another checkout is followed to the new one
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    link = tmp_path / "work"
    link.symlink_to(tmp_path / "one", target_is_directory=True)
    imports.forget()
    assert imports.real_folders((str(link),)) == (str((tmp_path / "one").resolve()),)
    link.unlink()
    link.symlink_to(tmp_path / "two", target_is_directory=True)
    assert imports.real_folders((str(link),)) == (str((tmp_path / "one").resolve()),)  # (within one run)
    imports.forget()
    assert imports.real_folders((str(link),)) == (str((tmp_path / "two").resolve()),)
