import codecs
import os
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_audit.source import DEFAULT_MAX_BYTES, ReadProblem, SourceText, decode_source, read_source


def write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def read(tmp_path, name, data: bytes, **kwargs):
    return read_source(write(tmp_path, name, data), name, **kwargs)


def assert_problem(result, *fragments, line=None, column=None):
    assert isinstance(result, ReadProblem), result
    assert result.code == "unreadable-file"
    assert "\n" not in result.message
    for fragment in fragments:
        assert fragment in result.message, result.message
    if line is not None:
        assert result.line == line
    if column is not None:
        assert result.column == column
    return result


# --- decoding ---------------------------------------------------------------------------------------


def test_plain_utf8(tmp_path):
    result = read(tmp_path, "a.py", "x = 'héllo 中文'\n".encode())
    assert isinstance(result, SourceText)
    assert result.text == "x = 'héllo 中文'\n"
    assert result.encoding == "utf-8"
    assert not result.has_bom
    assert result.newline == "\n"
    assert result.display == "a.py"
    assert result.raw == "x = 'héllo 中文'\n".encode()


def test_latin1_with_cookie(tmp_path):
    data = b"# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n"
    result = read(tmp_path, "latin.py", data)
    assert isinstance(result, SourceText), result
    assert "café" in result.text
    assert result.encoding == "iso-8859-1"  # CPython's normalised name for latin-1
    assert result.raw == data


def test_cookie_on_second_line_after_shebang(tmp_path):
    data = b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\ns = '\x93quoted\x94'\n"
    result = read(tmp_path, "a.py", data)
    assert isinstance(result, SourceText), result
    assert result.encoding == "cp1252"
    assert "\u201cquoted\u201d" in result.text


def test_cookie_on_second_line_ignored_after_code(tmp_path):
    # PEP 263: line 2 only counts when line 1 is blank or a comment
    data = b"x = 1\n# coding: latin-1\ns = '\xe9'\n"
    assert_problem(read(tmp_path, "a.py", data), "not valid utf-8 at line 3", line=3, column=6)


def test_cookie_with_cr_newlines(tmp_path):
    data = b"#!/usr/bin/python\r# coding: latin-1\rs = '\xe9'\r"
    result = read(tmp_path, "a.py", data)
    assert isinstance(result, SourceText), result
    assert result.newline == "\r"
    assert result.text.endswith("s = 'é'\r")


def test_cp1252_without_cookie_is_a_problem(tmp_path):
    data = b"x = 1\ns = '\x93smart quotes\x94'\n"
    problem = assert_problem(
        read(tmp_path, "win.py", data),
        "not valid utf-8 at line 2, column 6 (byte 0x93)",
        "PEP 263",
        "coding",
        line=2,
        column=6,
    )
    assert problem.display == "win.py"


def test_decode_error_column_counts_characters(tmp_path):
    data = "é中 = '".encode() + b"\xff'\n"
    assert_problem(read(tmp_path, "a.py", data), "line 1, column 7", "0xff", line=1, column=7)


def test_decode_error_with_declared_encoding(tmp_path):
    data = b"# coding: ascii\nx = '\xe9'\n"
    assert_problem(read(tmp_path, "a.py", data), "not valid ascii at line 2", "'ascii' on line 1", line=2)


def test_truncated_multibyte_sequence_at_end(tmp_path):
    data = "x = '中".encode()[:-1]
    assert_problem(read(tmp_path, "a.py", data), "not valid utf-8 at line 1, column 6")


def test_utf8_bom(tmp_path):
    data = codecs.BOM_UTF8 + b"x = '\xc3\xa9'\r\n"
    result = read(tmp_path, "bom.py", data)
    assert isinstance(result, SourceText), result
    assert result.has_bom
    assert result.encoding == "utf-8-sig"
    assert result.text == "x = 'é'\r\n"  # BOM removed
    assert result.newline == "\r\n"
    assert result.raw == data


def test_utf8_bom_with_utf8_cookie(tmp_path):
    data = codecs.BOM_UTF8 + b"# -*- coding: utf-8 -*-\nx = 1\n"
    result = read(tmp_path, "a.py", data)
    assert isinstance(result, SourceText) and result.encoding == "utf-8-sig"


def test_utf8_bom_with_conflicting_cookie(tmp_path):
    data = codecs.BOM_UTF8 + b"# -*- coding: latin-1 -*-\nx = 1\n"
    assert_problem(read(tmp_path, "a.py", data), "byte order mark", "latin-1", line=1)


def test_utf8_bom_then_invalid_utf8(tmp_path):
    data = codecs.BOM_UTF8 + b"x = '\xff'\n"
    assert_problem(read(tmp_path, "a.py", data), "not valid utf-8 at line 1, column 6", "byte order mark")


def test_unknown_encoding(tmp_path):
    data = b"# -*- coding: klingon-8 -*-\nx = 1\n"
    assert_problem(read(tmp_path, "a.py", data), "unknown encoding 'klingon-8'", "line 1", line=1)


@pytest.mark.parametrize("codec", ["hex", "rot13", "base64"])
def test_non_text_encoding(tmp_path, codec):
    data = f"# coding: {codec}\nx = 1\n".encode()
    assert_problem(read(tmp_path, "a.py", data), codec)


def test_non_ascii_compatible_cookie(tmp_path):
    assert_problem(read(tmp_path, "a.py", b"# coding: utf-16\nx = 1\n"), "not ASCII-compatible")


@pytest.mark.parametrize("bom", [codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE])
def test_utf16_and_utf32_files(tmp_path, bom):
    data = bom + "x = 1\n".encode("utf-16-le")
    assert_problem(read(tmp_path, "a.py", data), "encoded", "UTF-8")


def test_nul_bytes_mean_binary(tmp_path):
    data = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00"
    assert_problem(read(tmp_path, "tool.py", data), "binary file", "NUL")


def test_empty_file(tmp_path):
    result = read(tmp_path, "__init__.py", b"")
    assert isinstance(result, SourceText)
    assert result.text == ""
    assert result.encoding == "utf-8"
    assert result.newline == "\n"


@pytest.mark.parametrize(
    ("data", "newline"),
    [
        (b"a\nb\n", "\n"),
        (b"a\r\nb\r\nc\n", "\r\n"),
        (b"a\rb\rc", "\r"),
        (b"no newline at all", "\n"),
    ],
)
def test_dominant_newline(tmp_path, data, newline):
    result = read(tmp_path, "a.py", data)
    assert isinstance(result, SourceText)
    assert result.newline == newline
    assert result.text == data.decode()  # newlines kept as in the file


# --- reading ----------------------------------------------------------------------------------------


def test_oversize_file(tmp_path):
    problem = assert_problem(
        read(tmp_path, "big.py", b"x = 1\n" * 100, max_bytes=100), "too large", "600 bytes", "100 bytes"
    )
    assert problem.line == 1


def test_oversize_file_is_not_read(tmp_path):
    path = tmp_path / "huge.py"
    with open(path, "wb") as handle:
        try:
            handle.truncate(1 << 40)  # a sparse 1 TiB file: reading it would never finish
        except OSError:
            pytest.skip("the filesystem has no sparse files")
    assert_problem(read_source(path, "huge.py"), "too large", "1.0 TiB", "10.0 MiB")
    assert DEFAULT_MAX_BYTES == 10 * 1024 * 1024


def test_exactly_max_bytes_is_accepted(tmp_path):
    assert isinstance(read(tmp_path, "a.py", b"x" * 100, max_bytes=100), SourceText)


def test_missing_file(tmp_path):
    assert_problem(read_source(tmp_path / "gone.py", "gone.py"), "no such file")


def test_directory(tmp_path):
    (tmp_path / "pkg.py").mkdir()
    assert_problem(read_source(tmp_path / "pkg.py", "pkg.py"), "directory")


def test_dangling_symlink(tmp_path):
    link = tmp_path / "link.py"
    os.symlink(tmp_path / "nowhere.py", link)
    assert_problem(read_source(link, "link.py"), "broken symbolic link")


def test_symlink_loop(tmp_path):
    os.symlink(tmp_path / "b.py", tmp_path / "a.py")
    os.symlink(tmp_path / "a.py", tmp_path / "b.py")
    assert_problem(read_source(tmp_path / "a.py", "a.py"), "loop")


def test_symlinked_file_is_followed(tmp_path):
    write(tmp_path, "real.py", b"x = 1\n")
    os.symlink(tmp_path / "real.py", tmp_path / "link.py")
    result = read_source(tmp_path / "link.py", "link.py")
    assert isinstance(result, SourceText) and result.text == "x = 1\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_does_not_hang(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    assert_problem(read_source(tmp_path / "pipe.py", "pipe.py"), "named pipe")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file(tmp_path):
    path = write(tmp_path, "secret.py", b"x = 1\n")
    path.chmod(0)
    try:
        assert_problem(read_source(path, "secret.py"), "permission denied")
    finally:
        path.chmod(0o600)


def test_permission_error_is_reported(tmp_path, monkeypatch):
    # works as root too: simulate what chmod 000 does for other users
    path = write(tmp_path, "secret.py", b"x = 1\n")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", refuse)
    assert_problem(read_source(path, "secret.py"), "cannot read the file: permission denied")


def test_path_with_spaces_and_chinese(tmp_path):
    folder = tmp_path / "训练 脚本"
    folder.mkdir()
    path = write(folder, "模型 train.py", "print('你好')\n".encode())
    display = os.path.join("训练 脚本", "模型 train.py")
    result = read_source(path, display)
    assert isinstance(result, SourceText)
    assert result.display == display
    assert result.text == "print('你好')\n"


def test_str_and_pathlike_paths(tmp_path):
    path = write(tmp_path, "a.py", b"x = 1\n")
    assert isinstance(read_source(str(path), "a.py"), SourceText)
    assert isinstance(read_source(path, "a.py"), SourceText)


# --- decode_source (unsaved buffers) -----------------------------------------------------------------


def test_decode_source_matches_read_source(tmp_path):
    data = b"# coding: latin-1\nx = '\xe9'\n"
    assert decode_source(data, "a.py") == read(tmp_path, "a.py", data)


def test_decode_source_accepts_bytearray_and_memoryview():
    assert decode_source(bytearray(b"x = 1\n"), "a.py").text == "x = 1\n"
    assert decode_source(memoryview(b"x = 1\n"), "a.py").text == "x = 1\n"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_decode_source_never_raises(data):
    result = decode_source(data, "fuzz.py")
    assert isinstance(result, (SourceText, ReadProblem))
    if isinstance(result, ReadProblem):
        assert "\n" not in result.message and result.line >= 1 and result.column >= 1


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["latin-1", "cp1252", "utf-8", "gbk", "shift_jis", "koi8-r"]), st.text(max_size=50))
def test_declared_encodings_round_trip(codec, text):
    body = f"s = {text!r}\n"
    try:
        data = f"# -*- coding: {codec} -*-\n{body}".encode(codec)
    except UnicodeEncodeError:
        return
    result = decode_source(data, "a.py")
    assert isinstance(result, SourceText), result
    assert result.text == data.decode(codec)


def test_matches_cpython_on_simple_cases():
    # files CPython compiles are decoded; files it refuses for encoding reasons are problems
    cases = [
        b"x = 1\n",
        b"# coding: latin-1\nx = '\xe9'\n",
        codecs.BOM_UTF8 + b"x = 1\n",
        codecs.BOM_UTF8 + b"# coding: latin-1\nx = 1\n",
        b"x = '\xe9'\n",
        b"# coding: nonsense\nx = 1\n",
    ]
    for data in cases:
        try:
            compile(data, "<case>", "exec", dont_inherit=True)
            cpython_ok = True
        except SyntaxError:
            cpython_ok = False
        assert isinstance(decode_source(data, "a.py"), SourceText) == cpython_ok, data


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file names")
def test_read_source_accepts_bytes_path(tmp_path):
    path = write(tmp_path, "a.py", b"x = 1\n")
    assert isinstance(read_source(os.fsencode(str(path)), "a.py"), SourceText)
