import os
import sys
from pathlib import Path

import pytest

from npu_audit.discover import DEFAULT_EXCLUDES, DiscoveredFile, DiscoveryProblem, discover
from npu_audit.source import SourceText, read_source

J = os.path.join
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file system semantics")


def touch(base: Path, *names: str, data: bytes = b"x = 1\n") -> None:
    for name in names:
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def displays(files):
    return [f.display for f in files]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_walks_folders_for_py_files_only(in_tmp):
    touch(
        in_tmp,
        "proj/train.py",
        "proj/pkg/__init__.py",
        "proj/pkg/model.py",
        "proj/README.md",
        "proj/data.pyc",
    )
    files, problems = discover(["proj"])
    assert problems == []
    assert displays(files) == [
        J("proj", "pkg", "__init__.py"),
        J("proj", "pkg", "model.py"),
        J("proj", "train.py"),
    ]
    for f in files:
        assert isinstance(f, DiscoveredFile)
        assert f.path.is_file()


def test_current_folder_displays_without_dot_prefix(in_tmp):
    touch(in_tmp, "a.py", "sub/b.py")
    files, _ = discover(["."])
    assert displays(files) == ["a.py", J("sub", "b.py")]
    assert all(f.path.exists() for f in files)


def test_trailing_separator_and_absolute_roots(in_tmp):
    touch(in_tmp, "proj/a.py")
    assert displays(discover(["proj" + os.sep])[0]) == [J("proj", "a.py")]
    absolute = str(in_tmp / "proj")
    assert displays(discover([absolute])[0]) == [J(absolute, "a.py")]


def test_explicit_files_are_analysed_whatever_their_extension(in_tmp):
    touch(in_tmp, "scripts/run_training", "scripts/notes.txt")
    files, problems = discover([J("scripts", "run_training")])
    assert problems == []
    assert displays(files) == [J("scripts", "run_training")]


def test_explicit_file_display_is_kept_as_given(in_tmp):
    touch(in_tmp, "a.py")
    files, _ = discover([J(".", "a.py")])
    assert displays(files) == [J(".", "a.py")]


def test_output_is_sorted_in_tree_order(in_tmp):
    touch(in_tmp, "z.py", "a/z.py", "a.b/c.py", "B.py")
    files, _ = discover(["."])
    assert displays(files) == ["B.py", J("a", "z.py"), J("a.b", "c.py"), "z.py"]


def test_default_excludes(in_tmp):
    touch(
        in_tmp,
        "ok.py",
        ".git/hooks/x.py",
        ".venv/lib/y.py",
        "venv/z.py",
        "build/gen.py",
        "dist/d.py",
        "pkg.egg-info/e.py",
        "node_modules/n.py",
        "__pycache__/c.py",
        "lib/site-packages/s.py",
        "sub/build/deep.py",
    )
    files, _ = discover(["."])
    assert displays(files) == ["ok.py"]
    files, _ = discover(["."], default_excludes=())
    assert len(files) == 11
    assert "build" in DEFAULT_EXCLUDES and "*.egg-info" in DEFAULT_EXCLUDES


def test_user_excludes(in_tmp):
    touch(in_tmp, "src/train.py", "src/test_train.py", "src/gen/proto_pb2.py", "other/gen/keep.py")
    files, _ = discover(["."], exclude=["test_*.py", "src/gen"])
    # "src/gen" has a "/": it is matched against the path relative to the folder given
    assert displays(files) == [J("other", "gen", "keep.py"), J("src", "train.py")]
    files, _ = discover(["src"], exclude=["gen/"])
    assert displays(files) == [J("src", "test_train.py"), J("src", "train.py")]


def test_explicit_file_matching_an_exclude_is_skipped(in_tmp):
    touch(in_tmp, "gen/a_pb2.py", "b.py")
    files, problems = discover([J("gen", "a_pb2.py"), "b.py"], exclude=["*_pb2.py"])
    assert displays(files) == ["b.py"] and problems == []
    files, _ = discover([J("gen", "a_pb2.py")], exclude=["gen"])
    assert files == []


def test_default_excludes_do_not_apply_to_explicit_paths(in_tmp):
    touch(in_tmp, "build/gen.py", "venv/proj/x.py")
    assert displays(discover([J("build", "gen.py")])[0]) == [J("build", "gen.py")]
    # a folder given explicitly is walked even when its own name is a default exclude
    assert displays(discover([J("venv", "proj")])[0]) == [J("venv", "proj", "x.py")]


def test_gitignore(in_tmp):
    touch(in_tmp, "a.py", "gen_a.py", "out/b.py", "pkg/c.py", "pkg/gen_keep.py", "pkg/sub/gen_d.py")
    (in_tmp / ".gitignore").write_text("# generated\ngen_*.py\nout/\n")
    (in_tmp / "pkg" / ".gitignore").write_text("!gen_keep.py\n")
    files, problems = discover(["."])
    assert problems == []
    assert displays(files) == ["a.py", J("pkg", "c.py"), J("pkg", "gen_keep.py")]
    files, _ = discover(["."], respect_gitignore=False)
    assert len(files) == 6


def test_gitignore_dir_only_pattern_does_not_match_files(in_tmp):
    touch(in_tmp, "logs.py", "logs/x.py")
    (in_tmp / ".gitignore").write_text("logs/\n")
    assert displays(discover(["."])[0]) == ["logs.py"]


def test_gitignore_of_parent_folders_inside_a_work_tree(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".gitignore").write_text("generated/\n*_pb2.py\n/top_only.py\n")
    touch(repo, "sub/ok.py", "sub/generated/x.py", "sub/a_pb2.py", "sub/top_only.py", "top_only.py")
    files, _ = discover([str(repo / "sub")])
    names = sorted(f.path.name for f in files)
    assert names == ["ok.py", "top_only.py"]  # "/top_only.py" is anchored at the repository root


def test_gitignore_of_parent_folders_outside_a_work_tree_is_ignored(tmp_path):
    (tmp_path / ".gitignore").write_text("*.py\n")
    touch(tmp_path, "sub/ok.py")
    files, _ = discover([str(tmp_path / "sub")])
    assert [f.path.name for f in files] == ["ok.py"]


def test_missing_argument(in_tmp):
    touch(in_tmp, "a.py")
    files, problems = discover(["nope.py", "a.py", "no/such/folder"])
    assert displays(files) == ["a.py"]
    assert problems == [
        DiscoveryProblem(display=J("no", "such", "folder"), message="no such file or directory"),
        DiscoveryProblem(display="nope.py", message="no such file or directory"),
    ]


@posix_only
def test_dangling_symlinks(in_tmp):
    touch(in_tmp, "proj/a.py")
    os.symlink("missing.py", in_tmp / "proj" / "broken.py")
    os.symlink("missing.txt", in_tmp / "proj" / "broken.txt")
    os.symlink("gone.py", in_tmp / "dangling.py")
    files, problems = discover(["proj", "dangling.py"])
    assert displays(files) == [J("proj", "a.py")]
    assert [(p.display, p.message) for p in problems] == [
        ("dangling.py", "broken symbolic link (its target does not exist)"),
        (J("proj", "broken.py"), "broken symbolic link, skipped"),
    ]


@posix_only
def test_symlink_loop_into_itself(in_tmp):
    touch(in_tmp, "proj/a.py", "proj/sub/b.py")
    os.symlink(in_tmp / "proj", in_tmp / "proj" / "sub" / "loop")  # a folder linked into itself
    os.symlink("..", in_tmp / "proj" / "up")
    files, problems = discover(["proj"])
    assert displays(files) == [J("proj", "a.py"), J("proj", "sub", "b.py")]
    assert sorted((p.display, p.message.split(" (")[0]) for p in problems) == [
        (J("proj", "sub", "loop"), "symlink loop"),
        (J("proj", "up"), "symlink loop"),
    ]
    assert all("skipped" in p.message for p in problems)


@posix_only
def test_symlink_link_loop(in_tmp):
    touch(in_tmp, "proj/a.py")
    os.symlink("l2", in_tmp / "proj" / "l1")
    os.symlink("l1", in_tmp / "proj" / "l2")
    files, problems = discover(["proj"])
    assert displays(files) == [J("proj", "a.py")]
    assert {p.message for p in problems} == {"symlink loop, skipped"}


@posix_only
def test_symlinked_files_are_followed_and_deduplicated(in_tmp):
    touch(in_tmp, "proj/real.py", "shared/util.py")
    os.symlink("real.py", in_tmp / "proj" / "alias.py")
    os.symlink(in_tmp / "shared" / "util.py", in_tmp / "proj" / "util.py")
    files, _ = discover(["proj"])
    # alias.py is the same file as real.py: listed once, under its real name
    assert displays(files) == [J("proj", "real.py"), J("proj", "util.py")]


@posix_only
def test_symlinked_folders_are_followed_once_preferring_real_paths(in_tmp):
    touch(in_tmp, "proj/a_link_target/x.py", "outside/y.py")
    os.symlink("a_link_target", in_tmp / "proj" / "0_link")  # sorts before its target
    os.symlink(in_tmp / "outside", in_tmp / "proj" / "ext")
    files, problems = discover(["proj"])
    assert problems == []
    assert displays(files) == [J("proj", "a_link_target", "x.py"), J("proj", "ext", "y.py")]


def test_same_file_given_twice_or_inside_a_given_folder(in_tmp):
    touch(in_tmp, "proj/a.py")
    files, _ = discover(["proj", J("proj", "a.py"), J("proj", "a.py"), "proj"])
    assert displays(files) == [J("proj", "a.py")]


def test_nested_roots(in_tmp):
    touch(in_tmp, "proj/sub/a.py", "proj/b.py")
    assert displays(discover([J("proj", "sub"), "proj"])[0]) == [J("proj", "b.py"), J("proj", "sub", "a.py")]


def test_spaces_and_chinese_characters(in_tmp):
    touch(in_tmp, "我的 项目/训练 脚本.py", "我的 项目/子 目录/模型.py")
    files, problems = discover(["我的 项目"])
    assert problems == []
    assert displays(files) == [J("我的 项目", "子 目录", "模型.py"), J("我的 项目", "训练 脚本.py")]
    for f in files:
        assert isinstance(read_source(f.path, f.display), SourceText)


@posix_only
def test_undecodable_file_name(tmp_path):
    name = os.path.join(os.fsencode(str(tmp_path)), b"caf\xe9.py")
    try:
        fd = os.open(name, os.O_CREAT | os.O_WRONLY, 0o644)
    except OSError:
        pytest.skip("the file system refuses non-UTF-8 names")
    os.write(fd, b"x = 1\n")
    os.close(fd)
    files, problems = discover([str(tmp_path)])
    assert problems == []
    (found,) = files
    assert found.display.endswith("caf\\xe9.py")
    found.display.encode("utf-8")  # printable
    assert isinstance(read_source(found.path, found.display), SourceText)


def test_unreadable_folder_is_reported_and_the_walk_goes_on(in_tmp, monkeypatch):
    # chmod 000 does not stop root: simulate the error os.scandir raises for other users
    touch(in_tmp, "proj/a.py", "proj/locked/b.py", "proj/z/c.py")
    real_scandir = os.scandir
    locked = J("proj", "locked")

    def scandir(path="."):
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    files, problems = discover(["proj"])
    assert displays(files) == [J("proj", "a.py"), J("proj", "z", "c.py")]
    assert problems == [DiscoveryProblem(display=locked, message="permission denied: cannot list folder")]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can list anything")
def test_chmod_000_folder(in_tmp):
    touch(in_tmp, "proj/a.py", "proj/locked/b.py")
    (in_tmp / "proj" / "locked").chmod(0)
    try:
        files, problems = discover(["proj"])
    finally:
        (in_tmp / "proj" / "locked").chmod(0o755)
    assert displays(files) == [J("proj", "a.py")]
    assert [p.message for p in problems] == ["permission denied: cannot list folder"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_named_py_in_a_folder_is_skipped(in_tmp):
    touch(in_tmp, "proj/a.py")
    os.mkfifo(in_tmp / "proj" / "pipe.py")
    assert displays(discover(["proj"])[0]) == [J("proj", "a.py")]


def test_folder_named_like_a_python_file(in_tmp):
    touch(in_tmp, "proj/weird.py/inner.py")
    assert displays(discover(["proj"])[0]) == [J("proj", "weird.py", "inner.py")]


def test_deep_folder_tree_is_walked_iteratively(in_tmp):
    parts = ["d"] * 300
    touch(in_tmp, "/".join(parts) + "/deep.py")
    files, problems = discover(["d"])
    assert problems == [] and len(files) == 1


def test_single_string_argument(in_tmp):
    touch(in_tmp, "a.py")
    assert displays(discover("a.py")[0]) == ["a.py"]
    assert displays(discover(Path("a.py"))[0]) == ["a.py"]
