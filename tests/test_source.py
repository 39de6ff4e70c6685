import codecs
import os
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_audit.source import (
    DEFAULT_MAX_BYTES,
    LEAVE_OUT,
    RUN_AGAIN,
    ReadProblem,
    SourceText,
    decode_source,
    read_source,
)


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


# --- bytes that are not UTF-8 only inside comments (lenient reading) ---------------------------------
# CPython compiles an imported module from its bytes and skips comments without decoding them, so such a
# module imports; running the file itself reads it as text and fails unless it declares UTF-8.


def _lenient(data: bytes, name: str = "mod.py"):
    return decode_source(data, name, lenient=True)


def test_comment_bytes_are_read_leniently_with_an_info_note():
    data = b"import os\n# \xa3\xac\xc0\xe0 comment\nx = 1  # \xa3\xac\n"
    assert_problem(decode_source(data, "mod.py"), "not valid utf-8 at line 2, column 3")  # strict: as before
    result = _lenient(data)
    assert isinstance(result, SourceText), result
    assert result.text == data.decode("utf-8", "replace")  # positions as an editor shows them
    assert result.encoding == "utf-8" and result.raw == data
    (note,) = result.notes
    assert (note.line, note.column, note.severity) == (2, 3, "info")
    assert "only inside comments" in note.message and "and in the comments of line 3" in note.message
    assert "importing the file as a module works" in note.message
    assert "running it directly ('python mod.py') fails" in note.message
    assert "coding: gbk" in note.hint and "\n" not in note.message
    assert "re-save those comments as UTF-8 or delete the bytes" in note.hint


@pytest.mark.parametrize("data", [
    b"x = 'caf\xe9'  # fine\n",  # a string
    b'"""doc \xa3\xac"""\nx = 1\n',  # a docstring
    b"x\xa3 = 1\n",  # code
    b"# \xa3\ns = '''\n# \xa3 inside a string, not a comment\n'''\n",
])
def test_bytes_outside_comments_stay_fatal(data):
    assert_problem(_lenient(data), "not valid utf-8", "PEP 263")


@pytest.mark.parametrize("data", [
    b"# coding: utf8\nx = 1\n# \xa3\xac\n",  # CPython decodes the whole file with a codec not spelt utf-8
    b"# coding: ascii\nx = 1\n# \xa3\xac\n",
    b"# -*- coding: gbk -*-\nx = 1\n# \xff\xff\n",
])
def test_comment_bytes_under_another_declared_codec_stay_fatal(data):
    assert isinstance(_lenient(data), ReadProblem)


@pytest.mark.parametrize("data, said", [
    (b"# -*- coding: utf-8 -*-\nx = 1\n# \xa3\xac\n", "declares UTF-8 on line 1"),
    (codecs.BOM_UTF8 + b"x = 1\n# \xa3\xac\n", "starts with a UTF-8 byte order mark"),
])
def test_comment_bytes_with_a_utf8_declaration_are_an_info(data, said):
    result = _lenient(data)
    assert isinstance(result, SourceText), result
    (note,) = result.notes
    assert note.severity == "info" and said in note.message
    assert "importing and running it both work" in note.message
    assert note.hint == "re-save those comments as UTF-8, or remove the bytes"


def test_comment_bytes_in_a_script_with_a_main_guard_are_a_warning():
    data = b"#!/usr/bin/env python\nimport os\n\n\ndef main():\n    pass  # \xa3\xac\n\n\nif __name__ == '__main__':\n    main()\n"
    (note,) = _lenient(data, "train.py").notes
    assert (note.line, note.column, note.severity) == (6, 13, "warning")
    assert "('python train.py'), as its main guard at line 9 intends, fails" in note.message
    assert "on line 2, after the #! line" in note.hint


def test_comment_bytes_with_cr_and_crlf_newlines():
    for nl in (b"\r\n", b"\r"):
        data = nl.join([b"x = 1", b"# \xa3\xac", b"y = 2  # \xff", b""])
        result = _lenient(data)
        assert isinstance(result, SourceText), (nl, result)
        assert (result.notes[0].line, result.notes[0].column) == (2, 3)
        assert result.text == data.decode("utf-8", "replace")


def test_gbk_is_suggested_only_when_no_line_is_utf8_text():
    mixed = "# 中文 in UTF-8\n".encode() + b"x = 1  # \xa3\xac\n"
    (note,) = _lenient(mixed).notes
    assert "gbk" not in note.hint and "# -*- coding: ... -*-" in note.hint


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"x = 1", b"# c", b"s = 'a'", b"\xa3", b"\xe4\xb8", b"\xff", b"#", b"'", b"\n",
                                 b"\r\n", b"  ", "中".encode()]), max_size=30))
def test_lenient_reading_never_raises_and_keeps_positions(parts):
    data = b"".join(parts)
    result = _lenient(data)
    assert isinstance(result, (SourceText, ReadProblem))
    if isinstance(result, SourceText):
        assert result.text == data.decode("utf-8", "replace")
        assert all(n.severity in ("info", "warning") and "\n" not in n.message for n in result.notes)


COMMENT_CASES = [
    b"x = 1\n# \xa3\xac\nprint('ran')\n",
    b"x = 1  # \xff\n",
    b"# -*- coding: utf-8 -*-\n# \xa3\xac\nx = 1\n",
    codecs.BOM_UTF8 + b"# \xa3\xac\nx = 1\n",
    b"x = '\xa3'\n",
    b"# coding: utf8\n# \xa3\nx = 1\n",
    b"def f():\n    pass  # \xd1\xad\xbb\xb7\n\nif __name__ == '__main__':\n    f()\n",
]


@pytest.mark.parametrize("data", COMMENT_CASES)
def test_lenient_reading_follows_cpython(tmp_path, data):
    """What the note says against what this Python does: importing (compiling the bytes) works exactly
    when the lenient reading succeeds; running the file as a script works exactly when the note says so."""
    import subprocess

    try:
        compile(data, "<case>", "exec", dont_inherit=True)
        imports = True
    except SyntaxError:
        imports = False
    result = _lenient(data)
    assert isinstance(result, SourceText) == imports, (data, result)
    path = write(tmp_path, "case.py", data)
    runs = subprocess.run([sys.executable, "-B", str(path)], capture_output=True).returncode == 0
    if isinstance(result, SourceText):
        (note,) = result.notes
        assert ("running it both work" in note.message) == runs, (data, note.message)
    else:
        assert not runs


# --- what each read or decoding problem tells the user to do (the finding's hint) -----------------------

_GBK_CODE = "x = '中文'\n".encode("gbk")


@pytest.mark.parametrize("data, message, hint", [
    (codecs.BOM_UTF16_LE + "x = 1\n".encode("utf-16-le"), "the file is UTF-16 encoded", "re-save the file as UTF-8"),
    (b"x = 1\x00\n", "binary file", "if it is Python source, delete the NUL byte (inside a string, write '\\x00'); "
                                    f"otherwise {LEAVE_OUT}"),
    (b"# coding: klingon\nx = 1\n", "unknown encoding 'klingon' declared on line 1",
     "declare an encoding Python knows, e.g. '# -*- coding: utf-8 -*-' (or gbk, latin-1)"),
    (b"# coding: base64\nx = 1\n", "'base64' declared on line 1 is not a text encoding",
     "declare the text encoding the file is in, e.g. '# -*- coding: utf-8 -*-' (or gbk, latin-1)"),
    (codecs.BOM_UTF8 + b"# coding: latin-1\nx = 1\n", "starts with a UTF-8 byte order mark but declares encoding",
     "remove the byte order mark or the coding declaration, whichever is wrong"),
    (b"# coding: utf-16\nx = 1\n", "is not ASCII-compatible",
     "re-save the file as UTF-8 and remove the declaration (or declare utf-8)"),
    (b"# coding: utf-8\nx = 'caf\xe9'\n", "the file declares encoding 'utf-8' on line 1",
     "declare the encoding the file is really in, or re-save it as utf-8"),
    (codecs.BOM_UTF8 + b"x = 'caf\xe9'\n", "starts with a UTF-8 byte order mark, so it must be UTF-8",
     "re-save the file as UTF-8, or remove the byte order mark and declare the file's encoding"),
    # in code a declaration changes the program, so the GBK reading is a condition to check, not advice
    (_GBK_CODE, "the file declares no encoding, so Python reads it as UTF-8",
     "if the text is Chinese (the bytes decode as GBK), declare '# -*- coding: gbk -*-' on line 1; otherwise "
     "declare the file's encoding on line 1 with a '# -*- coding: ... -*-' line (PEP 263), or re-save the file "
     "as UTF-8"),
    (b"x = '\x80\x80'\n", "the file declares no encoding",
     "declare the file's encoding on line 1 with a '# -*- coding: ... -*-' line (PEP 263), or re-save the file "
     "as UTF-8"),
])
def test_a_decoding_problem_says_what_is_wrong_and_what_to_do(data, message, hint):
    result = decode_source(data, "t.py", lenient=True)
    assert_problem(result, message)
    assert result.hint == hint


def test_a_file_problem_says_what_to_do(tmp_path):
    big = tmp_path / "big.py"
    big.write_bytes(b"x = 1\n" * 10)
    result = read_source(big, "big.py", max_bytes=20)
    assert_problem(result, "file too large to analyse")
    assert "--max-file-size" in result.hint
    assert read_source(tmp_path / "gone.py", "gone.py").hint == RUN_AGAIN  # deleted while the run went on
    if hasattr(os, "symlink"):
        os.symlink(tmp_path / "nowhere.py", tmp_path / "link.py")
        assert read_source(tmp_path / "link.py", "link.py").hint == f"repair or remove the link, or {LEAVE_OUT}"
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe.py")
        result = read_source(tmp_path / "pipe.py", "pipe.py")
        assert_problem(result, "named pipe")
        assert result.hint == LEAVE_OUT
