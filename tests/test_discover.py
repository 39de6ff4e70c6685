import os
import sys
from pathlib import Path

import pytest

from npu_audit.discover import DEFAULT_EXCLUDES, DiscoveredFile, DiscoveryProblem, discover
from npu_audit.source import LEAVE_OUT, SourceText, read_source

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
        DiscoveryProblem(display=J("no", "such", "folder"), message="no such file or directory", hint="check the path"),
        DiscoveryProblem(display="nope.py", message="no such file or directory", hint="check the path"),
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
    # named on the command line or found in a folder: a link to repair, not a path to check
    assert {p.hint for p in problems} == {f"repair or remove the link, or {LEAVE_OUT}"}


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
    # nothing of the tree is lost: the folder the link leads back to is walked anyway
    assert all(p.hint.startswith("nothing is missed (the folder it points to is checked)") for p in problems)


@posix_only
def test_symlink_link_loop(in_tmp):
    touch(in_tmp, "proj/a.py")
    os.symlink("l2", in_tmp / "proj" / "l1")
    os.symlink("l1", in_tmp / "proj" / "l2")
    files, problems = discover(["proj"])
    assert displays(files) == [J("proj", "a.py")]
    assert {p.message for p in problems} == {"symlink loop, skipped"}
    assert {p.hint for p in problems} == {f"remove the symbolic link loop, or {LEAVE_OUT}"}


@posix_only
def test_a_symlink_loop_met_while_walking_is_an_info_and_the_run_passes(in_tmp):
    import json

    from npu_audit.cli import main

    touch(in_tmp, "proj/a.py", "proj/sub/b.py")
    os.symlink(in_tmp / "proj", in_tmp / "proj" / "sub" / "up")  # to an enclosing folder
    os.symlink("l2", in_tmp / "proj" / "l1")  # links that lead to each other
    os.symlink("l1", in_tmp / "proj" / "l2")
    _, problems = discover(["proj"])
    assert [(p.display, p.severity) for p in problems] == [
        (J("proj", "l1"), "info"), (J("proj", "l2"), "info"), (J("proj", "sub", "up"), "info")]
    report = in_tmp / "report.json"
    assert main(["--no-cache", "--format", "json", "--output-file", str(report), "proj"]) == 0  # nothing is missed
    found = json.loads(report.read_text())["diagnostics"]
    assert {(d["path"], d["name"], d["severity"]) for d in found} == {
        (J("proj", "l1"), "unreadable-file", "info"), (J("proj", "l2"), "unreadable-file", "info"),
        (J("proj", "sub", "up"), "unreadable-file", "info")}
    assert all("symlink loop" in d["message"] and "skipped" in d["message"] for d in found)


@posix_only
def test_a_symlink_loop_named_like_a_module_stays_an_error(in_tmp):
    touch(in_tmp, "proj/a.py")
    os.symlink("l2.py", in_tmp / "proj" / "l1.py")
    os.symlink("l1.py", in_tmp / "proj" / "l2.py")
    _, problems = discover(["proj"])
    assert [(p.display, p.message, p.severity) for p in problems] == [
        (J("proj", "l1.py"), "symlink loop, skipped", None), (J("proj", "l2.py"), "symlink loop, skipped", None)]


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
    assert problems == [DiscoveryProblem(
        display=locked, message="permission denied: cannot list folder",
        hint=f"give the user that runs npu-audit read access (and, for a folder, execute access), or {LEAVE_OUT}")]


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


# --------------------------------------------------------------------------------------------------
# Speed-ups that must not show: file identities without a stat per file, patterns tried at once,
# paths built from their folder's parts, the garbage collector paused


class _Entry:
    """An os.DirEntry whose listing inode number and stat can be made to lie or fail."""

    def __init__(self, entry, inode=None, stat_error=None):
        self._entry, self._inode, self._stat_error = entry, inode, stat_error
        self.name, self.path = entry.name, entry.path

    def is_symlink(self):
        return self._entry.is_symlink()

    def is_dir(self, *, follow_symlinks=True):
        return self._entry.is_dir(follow_symlinks=follow_symlinks)

    def is_file(self, *, follow_symlinks=True):
        return self._entry.is_file(follow_symlinks=follow_symlinks)

    def inode(self):
        return self._entry.inode() if self._inode is None else self._inode

    def stat(self, *, follow_symlinks=True):
        if self._stat_error is not None and not self._entry.is_dir(follow_symlinks=False):
            raise self._stat_error
        return self._entry.stat(follow_symlinks=follow_symlinks)


def _patched_scandir(monkeypatch, **entry_options):
    real_scandir = os.scandir

    class Listing:
        def __init__(self, path):
            self._it = real_scandir(path)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._it.close()

        def __iter__(self):
            return (_Entry(entry, **entry_options) for entry in self._it)

    monkeypatch.setattr(os, "scandir", Listing)


@posix_only
def test_hard_links_are_listed_once(in_tmp):
    touch(in_tmp, "proj/a.py", "proj/z.py")
    (in_tmp / "proj" / "sub").mkdir()
    os.link(in_tmp / "proj" / "a.py", in_tmp / "proj" / "sub" / "b.py")
    os.link(in_tmp / "proj" / "z.py", in_tmp / "proj" / "y.py")
    files, problems = discover(["proj"])
    assert problems == []
    assert displays(files) == [J("proj", "a.py"), J("proj", "y.py")]


@posix_only
def test_identities_do_not_trust_listing_inode_numbers_that_stat_contradicts(in_tmp, monkeypatch):
    # some file systems (FUSE without use_ino, overlays) list inode numbers that stat does not give
    touch(in_tmp, "proj/a.py", "proj/b.py", "proj/c.py", "proj/sub/d.py", "shared/e.py")
    os.symlink(in_tmp / "proj" / "b.py", in_tmp / "proj" / "sub" / "link.py")
    os.symlink(in_tmp / "shared", in_tmp / "proj" / "ext")
    _patched_scandir(monkeypatch, inode=12345)  # the same number for every file
    files, problems = discover(["proj"])
    assert problems == []
    assert displays(files) == [
        J("proj", "a.py"),
        J("proj", "b.py"),
        J("proj", "c.py"),
        J("proj", "ext", "e.py"),
        J("proj", "sub", "d.py"),
    ]


@posix_only
def test_files_that_cannot_be_stat_ed_are_reported(in_tmp, monkeypatch):
    # a folder that can be listed but not searched (r--): every file is reported, as before
    touch(in_tmp, "proj/a.py", "proj/b.py", "proj/notes.txt")
    _patched_scandir(monkeypatch, stat_error=PermissionError(13, "Permission denied"))
    files, problems = discover(["proj"])
    assert files == []
    assert [(p.display, p.message) for p in problems] == [
        (J("proj", "a.py"), "permission denied, skipped"),
        (J("proj", "b.py"), "permission denied, skipped"),
    ]


def test_sort_order_with_names_sorting_around_the_separator(in_tmp):
    # " ", "!", "-", "." sort before "/" and "0", "_" after it: displays sort by path components
    touch(
        in_tmp,
        "a/x.py",
        "a b/x.py",
        "a!.py",
        "a-b/x.py",
        "a.b/x.py",
        "a.py",
        "a0/x.py",
        "a_b.py",
        "a/b/x.py",
        "a/b.py",
        "A.py",
    )
    files, _ = discover(["."])
    shown = displays(files)
    assert shown == sorted(shown, key=lambda d: d.split(os.sep))
    assert shown[:4] == ["A.py", J("a", "b", "x.py"), J("a", "b.py"), J("a", "x.py")]


def test_discovered_paths_are_plain_paths(in_tmp):
    touch(in_tmp, "proj/sub/a.py", "b.py")
    for arg, expected in (
        ("proj", [J("proj", "sub", "a.py")]),
        (J(".", "proj", ""), [J("proj", "sub", "a.py")]),
        (".", ["b.py", J("proj", "sub", "a.py")]),
        (str(in_tmp), [J(str(in_tmp), "b.py"), J(str(in_tmp), "proj", "sub", "a.py")]),
    ):
        files, _ = discover([arg])
        for f, path in zip(files, expected):
            assert type(f.path) is type(Path(path))
            assert f.path == Path(path) and str(f.path) == str(Path(path))
            assert f.path.parts == Path(path).parts and hash(f.path) == hash(Path(path))
        assert [str(f.path) for f in files] == [str(Path(p)) for p in expected]


TRICKY_PATTERNS = [
    "*_pb2.py",
    "!keep_pb2.py",
    "gen/",
    "/top.py",
    "data[0-9].py",
    "**/deep/*.py",
    "a|b.py",
    "x\\|y",
    "[]]z.py",
    "[!a]q.py",
    "lib/**",
    "**/cache",
    "*.py[co]",
    "odd(1).py",
    "!odd(2).py",
    "sp ace.py",
    "trail\\ ",
    "\\#hash.py",
    "\\!bang.py",
    "v?.py",
]


@pytest.mark.parametrize("join_after", [0, 1_000_000_000])
def test_patterns_match_as_pathspec_matches_them(monkeypatch, join_after):
    from pathspec import GitIgnoreSpec

    from npu_audit.discover import _Matcher

    monkeypatch.setattr(_Matcher, "_JOIN_AFTER", join_after)
    paths = [
        "a.py",
        "a_pb2.py",
        "keep_pb2.py",
        "gen/",
        "gen/x.py",
        "sub/gen/",
        "top.py",
        "sub/top.py",
        "data1.py",
        "dataX.py",
        "x/deep/y.py",
        "deep/y.py",
        "a|b.py",
        "x|y",
        "x|y/",
        "]z.py",
        "bq.py",
        "aq.py",
        "lib/",
        "lib/m.py",
        "s/lib/m.py",
        "cache",
        "s/cache/",
        "m.pyc",
        "odd(1).py",
        "odd(2).py",
        "sp ace.py",
        "trail ",
        "#hash.py",
        "!bang.py",
        "v1.py",
        "v12.py",
        "d/ordinary/path/name.py",
    ]
    for count in range(len(TRICKY_PATTERNS) + 1):
        lines = TRICKY_PATTERNS[:count]
        spec = GitIgnoreSpec.from_lines(lines)
        matcher = _Matcher(spec)
        for path in paths:
            assert matcher.check(path) == spec.check_file(path).include, (lines, path)
            assert matcher.match(path) == spec.match_file(path), (lines, path)


@pytest.mark.parametrize("join_after", [0, 1_000_000_000])
def test_a_big_gitignore_in_a_big_folder(in_tmp, monkeypatch, join_after):
    from npu_audit.discover import _Matcher

    monkeypatch.setattr(_Matcher, "_JOIN_AFTER", join_after)
    names = [f"m{i}.py" for i in range(150)] + [f"m{i}_pb2.py" for i in range(150)]
    touch(in_tmp, *(f"proj/{name}" for name in names), "proj/keep_pb2.py", "proj/gen/x.py")
    touch(in_tmp, "proj/deep/a.py", "proj/sub/deep/b.py", "proj/sub/top.py", "proj/top.py")
    (in_tmp / "proj" / ".gitignore").write_text("\n".join(TRICKY_PATTERNS) + "\n")
    files, problems = discover(["proj"], exclude=["m1*.py", "sub/deep"])
    assert problems == []
    expected = sorted(
        [J("proj", f"m{i}.py") for i in range(150) if not str(i).startswith("1")]
        + [J("proj", "keep_pb2.py"), J("proj", "sub", "top.py")],
        key=lambda d: d.split(os.sep),
    )
    assert displays(files) == expected


def test_identical_gitignore_files(in_tmp):
    touch(in_tmp, "p/a/x.py", "p/a/y.py", "p/b/x.py", "p/b/y.py", "p/c/x.py", "p/d/x.py")
    for folder in ("a", "b"):
        (in_tmp / "p" / folder / ".gitignore").write_text("x.py\n")
    for folder in ("c", "d"):
        (in_tmp / "p" / folder / ".gitignore").write_text("ok.py\n!\n")  # "!" alone is invalid
    files, problems = discover(["p"])
    assert displays(files) == [
        J("p", "a", "y.py"),
        J("p", "b", "y.py"),
        J("p", "c", "x.py"),
        J("p", "d", "x.py"),
    ]
    assert [p.display for p in problems] == [J("p", "c", ".gitignore"), J("p", "d", ".gitignore")]
    assert all(p.message.startswith("invalid .gitignore (") for p in problems)
    assert all(p.hint.startswith("remove or correct the pattern (git skips it and applies the file's other "
                                 "patterns)") for p in problems)


def test_garbage_collector_state_is_restored(in_tmp):
    import gc

    touch(in_tmp, "a.py")
    assert gc.isenabled()
    discover(["."])
    assert gc.isenabled()
    gc.disable()
    try:
        discover(["."])
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_project_settings_decide_excludes_and_gitignore_below_their_root(in_tmp):
    from npu_audit.settings import Settings, SettingsResolver

    touch(in_tmp, "repo/a_gen.py", "repo/keep.py", "repo/vendor/v.py", "repo/inner/b_gen.py", "repo/inner/c.py",
          "repo/inner/skip/d.py")
    (in_tmp / "repo" / ".git").mkdir()
    (in_tmp / "repo" / ".gitignore").write_text("*_gen.py\n")
    (in_tmp / "repo" / "pyproject.toml").write_text('[tool.npu-audit]\nrespect-gitignore = false\nexclude = ["vendor"]\n')
    (in_tmp / "repo" / "inner" / "pyproject.toml").write_text('[tool.npu-audit]\nexclude = ["skip/**"]\n')
    expected_outer = {J("repo", "a_gen.py"), J("repo", "keep.py")}  # the outer project ignores .gitignore
    expected_inner = {J("repo", "inner", "c.py")}  # the inner one honours the work tree's .gitignore

    def found(path):
        files, problems = discover([path], settings=SettingsResolver(Settings()))
        assert problems == []
        return {os.path.relpath(str(f.path)) for f in files}

    assert found("repo") == expected_outer | expected_inner
    assert found(J("repo", "inner")) == expected_inner
    os.chdir(in_tmp / "repo" / "inner")
    assert {os.path.relpath(p, in_tmp) for p in map(os.path.abspath, found("."))} == expected_inner
    without = discover(["../../repo"], respect_gitignore=True)[0]  # no resolver: one rule for the whole walk
    assert not any(f.path.name == "a_gen.py" for f in without)
