"""Reading and decoding Python source files the way CPython does, without ever failing loudly.

:func:`read_source` returns either a :class:`SourceText` or a :class:`ReadProblem`; it never raises for
anything a file on disk can do (too large, binary, undecodable, unreadable, vanished, a directory, a
FIFO, a broken symlink ...). :func:`decode_source` does the decoding part for bytes that are already in
memory (the language server's unsaved buffers).

Decoding follows PEP 263 and CPython's rules: a UTF-8 BOM selects UTF-8; otherwise a coding cookie
(``# -*- coding: latin-1 -*-``) on line 1, or on line 2 when line 1 is blank or a comment, selects the
codec; otherwise the file must be UTF-8. A BOM together with a cookie naming another encoding is an error
(CPython refuses such files too).
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from dataclasses import dataclass
from typing import Optional

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ReadProblem",
    "SourceText",
    "coding_cookie",
    "decode_source",
    "read_source",
]

DEFAULT_MAX_BYTES = 10 * 1024 * 1024

#: How a hint says to leave a path out of the run, on the command line or in pyproject.toml.
LEAVE_OUT = "leave the path out of the run with --exclude (or exclude in [tool.npu-audit])"
#: The hint of a failure of npu-audit itself.
REPORT_IT = "please report this to npu-audit's developers, with the file if you can"

_CODE = "unreadable-file"


@dataclass(frozen=True)
class ReadProblem:
    """Why a file could not be read or decoded, or (in SourceText.notes) an encoding problem it was read past;
    reported as an unreadable-file finding."""

    display: str
    code: str  # always "unreadable-file"
    message: str
    line: int = 1
    column: int = 1
    severity: str = "error"  # "warning" or "info" for a problem that leaves the file readable (SourceText.notes)
    hint: Optional[str] = None  # what to do about it (the finding's hint)


@dataclass(frozen=True)
class SourceText:
    """A file's text decoded as CPython would, with what fixes need to write it back byte for byte."""

    display: str  # path as shown to the user
    raw: bytes  # file bytes as read
    text: str  # decoded text (BOM removed), newlines as in the file
    encoding: str  # "utf-8", "iso-8859-1", "cp1252", ...; "utf-8-sig" when a BOM was present
    has_bom: bool
    #: encoding problems that did not stop the reading (``lenient``: bytes that are not UTF-8 only inside
    #: comments, each read as U+FFFD); reported as unreadable-file findings at their own severity
    notes: tuple[ReadProblem, ...] = ()

    @property
    def newline(self) -> str:
        """The dominant line ending: "\\n", "\\r\\n" or "\\r" (counted when asked: most files read never need it)."""
        return _dominant_newline(self.raw)


# PEP 263 (the regular expression CPython's tokenize module uses).
_COOKIE_RE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)
# A line that may precede the line holding the cookie: blank or a comment.
_BLANK_OR_COMMENT_RE = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)", re.ASCII)
_FIRST_LINES_RE = re.compile(rb"([^\r\n]*)(\r\n|\r|\n)?([^\r\n]*)")
_FIRST_LINES_TEXT_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?[^\r\n]*")
_NEWLINE_RE = re.compile(rb"\r\n|\r|\n")

_UTF16_32_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


def _normal_name(name: str) -> str:
    """The same normalisation as ``tokenize.detect_encoding``."""
    enc = name[:12].lower().replace("_", "-")
    if enc == "utf-8" or enc.startswith("utf-8-"):
        return "utf-8"
    if enc in ("latin-1", "iso-8859-1", "iso-latin-1") or enc.startswith(
        ("latin-1-", "iso-8859-1-", "iso-latin-1-")
    ):
        return "iso-8859-1"
    return name


def _problem(display: str, message: str, line: int = 1, column: int = 1, severity: str = "error",
             hint: Optional[str] = None) -> ReadProblem:
    return ReadProblem(display=display, code=_CODE, message=message, line=line, column=column, severity=severity,
                       hint=hint)


#: The hint for a path that vanished while the run read the folder holding it.
RUN_AGAIN = "run npu-audit again once nothing is moving or deleting files there"


def access_hint(exc: Optional[OSError] = None, link: bool = False) -> str:
    """What to do about a path the run cannot read: by why it cannot (``exc``; None: not a regular file)
    and whether the path is a symbolic link."""
    import errno

    code = exc.errno if exc is not None else None
    if code == errno.EACCES or isinstance(exc, PermissionError):
        return f"give the user that runs npu-audit read access (and, for a folder, execute access), or {LEAVE_OUT}"
    if code == errno.ELOOP:
        return f"remove the symbolic link loop, or {LEAVE_OUT}"
    if code == errno.ENOENT:
        return f"repair or remove the link, or {LEAVE_OUT}" if link else RUN_AGAIN
    if exc is None:  # a folder, a FIFO, a device: npu-audit reads regular files only
        return LEAVE_OUT
    return f"if it cannot be made readable, {LEAVE_OUT}"


def _size_text(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit} ({n:,} bytes)"
    return f"{n:,} bytes"  # pragma: no cover


def _os_reason(exc: OSError) -> str:
    reason = exc.strerror or str(exc) or type(exc).__name__
    return reason[:1].lower() + reason[1:]


def _dominant_newline(raw: bytes) -> str:
    crlf = raw.count(b"\r\n")
    lf = raw.count(b"\n") - crlf
    cr = raw.count(b"\r") - crlf
    best = "\n"
    best_count = lf
    if crlf > best_count:
        best, best_count = "\r\n", crlf
    if cr > best_count:
        best = "\r"
    return best


def _position_of_byte(data: bytes, offset: int, encoding: str) -> tuple[int, int]:
    """1-based line and character column of ``data[offset]`` (``data`` without any BOM)."""
    before = data[:offset]
    line = 1
    line_start = 0
    for m in _NEWLINE_RE.finditer(before):
        line += 1
        line_start = m.end()
    try:
        prefix = before[line_start:].decode(encoding, "replace")
    except Exception:  # exotic codecs without a "replace" handler
        prefix = before[line_start:].decode("latin-1")
    return line, len(prefix) + 1


def _find_cookie(data: bytes) -> tuple[bytes, int] | None:
    """The coding cookie on line 1, or on line 2 when line 1 is blank or a comment.

    Returns the cookie's encoding name (bytes) and its line number. Lines are split on any of ``\\r\\n``,
    ``\\r`` and ``\\n`` like CPython's compiler does.
    """
    m = _FIRST_LINES_RE.match(data)
    assert m is not None  # the pattern matches the empty string
    first = m.group(1)
    found = _COOKIE_RE.match(first)
    if found:
        return found.group(1), 1
    if m.group(2) is None or not _BLANK_OR_COMMENT_RE.match(first):
        return None
    found = _COOKIE_RE.match(m.group(3))
    if found:
        return found.group(1), 2
    return None


def coding_cookie(source: bytes | str) -> str | None:
    """The encoding named by the PEP 263 coding declaration of ``source``, or None.

    ``source`` is a file's bytes (after any BOM) or the text of an editor's buffer; only its first two
    lines are read, by the same rules as :func:`decode_source`. The name is returned as written
    (``"latin-1"``, ``"gbk"``), whether or not Python knows the codec.
    """
    if isinstance(source, str):
        head = _FIRST_LINES_TEXT_RE.match(source)
        assert head is not None  # the pattern matches the empty string
        source = head.group().encode("utf-8", "replace")
    found = _find_cookie(source)
    return found[0].decode("ascii", "replace") if found is not None else None


def decode_source(raw: bytes, display: str, lenient: bool = False) -> SourceText | ReadProblem:
    """Decode the bytes of a Python source file as CPython would; never raises.

    ``lenient``: a UTF-8 file (no coding declaration, a UTF-8 one or a BOM) whose only invalid bytes are
    inside comments is decoded, as CPython does when it imports it (it compiles the bytes and skips
    comments), with each invalid sequence read as U+FFFD (lines and columns unchanged); the problem is
    kept in :attr:`SourceText.notes` at the severity that follows (see :func:`_comment_bytes_note`).
    Without it such a file is a :class:`ReadProblem`, as any file that is not valid in its encoding (for
    callers that write the text back, like the fix engine: U+FFFD would replace the user's bytes).
    """
    try:
        return _decode(bytes(raw), display, lenient)
    except Exception as exc:  # a defect in this function must not stop the run
        return _problem(display, f"could not decode the file: {type(exc).__name__}: {exc}", hint=REPORT_IT)


def _decode(raw: bytes, display: str, lenient: bool = False) -> SourceText | ReadProblem:
    for bom, name in _UTF16_32_BOMS:
        if raw.startswith(bom):
            return _problem(
                display,
                f"the file is {name} encoded (it starts with a {name} byte order mark); "
                "Python source files must use UTF-8 or an ASCII-compatible encoding",
                hint="re-save the file as UTF-8",
            )
    nul = raw.find(b"\x00")
    if nul >= 0:
        return _problem(
            display,
            f"binary file: it contains a NUL byte (at byte offset {nul}); Python source cannot contain NUL bytes",
            hint=f"if it is Python source, delete the NUL byte (inside a string, write '\\x00'); otherwise "
                 f"{LEAVE_OUT}",
        )

    has_bom = raw.startswith(codecs.BOM_UTF8)
    data = raw[len(codecs.BOM_UTF8) :] if has_bom else raw

    cookie = _find_cookie(data)
    declared: str | None = None
    cookie_line = 0
    if cookie is not None:
        declared = cookie[0].decode("ascii", "replace")
        cookie_line = cookie[1]
        try:
            info = codecs.lookup(declared)
        except LookupError:
            return _problem(
                display,
                f"unknown encoding {declared!r} declared on line {cookie_line} (PEP 263 coding declaration)",
                line=cookie_line,
                hint="declare an encoding Python knows, e.g. '# -*- coding: utf-8 -*-' (or gbk, latin-1)",
            )
        if not getattr(info, "_is_text_encoding", True):
            return _problem(
                display,
                f"{declared!r} declared on line {cookie_line} is not a text encoding, which a Python source "
                "file needs",
                line=cookie_line,
                hint="declare the text encoding the file is in, e.g. '# -*- coding: utf-8 -*-' (or gbk, latin-1)",
            )
        encoding = _normal_name(declared)
        if has_bom and encoding != "utf-8":
            return _problem(
                display,
                f"the file starts with a UTF-8 byte order mark but declares encoding {declared!r} on line "
                f"{cookie_line} (CPython rejects this file too)",
                line=cookie_line,
                hint="remove the byte order mark or the coding declaration, whichever is wrong",
            )
        if encoding != "utf-8" and not _ascii_compatible(encoding):
            return _problem(
                display,
                f"encoding {declared!r} declared on line {cookie_line} is not ASCII-compatible; "
                "Python source files cannot use it",
                line=cookie_line,
                hint="re-save the file as UTF-8 and remove the declaration (or declare utf-8)",
            )
    else:
        encoding = "utf-8"

    codec = "utf-8" if encoding == "utf-8" else encoding
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        if lenient and encoding == "utf-8":
            lenient_text = _comments_only_invalid(data, display, has_bom, declared, cookie_line, raw)
            if lenient_text is not None:
                return lenient_text
        line, column = _position_of_byte(data, exc.start, codec)
        bad = data[exc.start : min(exc.end, exc.start + 4)] or data[exc.start : exc.start + 1]
        shown = " ".join(f"0x{b:02x}" for b in bad) or "end of file"
        plural = "s" if len(bad) > 1 else ""
        if declared is not None:
            said = f"the file declares encoding {declared!r} on line {cookie_line}"
            hint = f"declare the encoding the file is really in, or re-save it as {declared}"
            what = declared
        elif has_bom:
            said = "the file starts with a UTF-8 byte order mark, so it must be UTF-8"
            hint = "re-save the file as UTF-8, or remove the byte order mark and declare the file's encoding"
            what = "utf-8"
        else:
            said = "the file declares no encoding, so Python reads it as UTF-8 (PEP 263)"
            hint = _declare_hint(data, in_code=True)
            what = "utf-8"
        return _problem(
            display,
            f"not valid {what} at line {line}, column {column} (byte{plural} {shown}); {said}",
            line=line,
            column=column,
            hint=hint,
        )
    except (LookupError, UnicodeError, ValueError, TypeError) as exc:
        return _problem(
            display,
            f"cannot decode the file with encoding {declared or encoding!r}: {exc}",
            line=cookie_line or 1,
            hint="declare the encoding the file is really in (PEP 263)",
        )
    if not isinstance(text, str):  # pragma: no cover - codecs returning non-text
        return _problem(display, f"encoding {declared or encoding!r} does not produce text",
                        hint="declare the encoding the file is really in (PEP 263)")

    return SourceText(
        display=display,
        raw=raw,
        text=text,
        encoding="utf-8-sig" if has_bom else encoding,
        has_bom=has_bom,
    )


# A main guard at the start of a line: the file is meant to be run as a script.
_MAIN_GUARD_RE = re.compile(
    r"""^if[ \t(]+(?:__name__[ \t]*==[ \t]*(['"])__main__\1|(['"])__main__\2[ \t]*==[ \t]*__name__)""", re.M)


def _decode_replacing(data: bytes) -> tuple[str, list[tuple[int, int, int]]]:
    """``data`` decoded as UTF-8 with each invalid sequence read as U+FFFD (as ``errors="replace"``), and
    the invalid sequences: (offset of their U+FFFD in the text, start and end byte offsets). Linear time."""
    view = memoryview(data)
    pieces: list[str] = []
    bad: list[tuple[int, int, int]] = []
    pos = length = 0
    while pos < len(data):
        try:
            piece, _ = codecs.utf_8_decode(view[pos:], "strict", True)
        except UnicodeDecodeError as exc:
            good = codecs.utf_8_decode(view[pos : pos + exc.start], "strict", True)[0]
            pieces.append(good)
            length += len(good)
            bad.append((length, pos + exc.start, pos + exc.end))
            pieces.append("\ufffd")
            length += 1
            pos += exc.end
        else:
            pieces.append(piece)
            break
    return "".join(pieces), bad


_TEXT_NEWLINE_RE = re.compile(r"\r\n|\r|\n")


def _comment_spans(text: str) -> Optional[dict[int, list[tuple[int, int]]]]:
    """Line -> (start, end) columns (0-based) of the comments of ``text``, by Python's tokenizer; None when
    the text cannot be tokenized up to its end (then nothing is taken as a comment)."""
    import io
    import tokenize

    spans: dict[int, list[tuple[int, int]]] = {}
    normalised = _TEXT_NEWLINE_RE.sub("\n", text)  # the same lines as CPython counts them
    try:
        for tok in tokenize.generate_tokens(io.StringIO(normalised).readline):
            if tok.type == tokenize.COMMENT:
                spans.setdefault(tok.start[0], []).append((tok.start[1], tok.end[1]))
            elif tok.type == tokenize.ERRORTOKEN and not tok.string.isspace():
                return None
    except (tokenize.TokenError, SyntaxError, ValueError):  # IndentationError is a SyntaxError
        return None
    return spans


def _comments_only_invalid(
    data: bytes, display: str, has_bom: bool, declared: str | None, cookie_line: int, raw: bytes
) -> Optional[SourceText]:
    """A UTF-8 file whose invalid bytes are all inside comments, read with U+FFFD for them and the problem
    as a note; None when some invalid byte is elsewhere (a string, a docstring, code): CPython refuses
    such a file however it is loaded."""
    text, bad = _decode_replacing(data)
    comments = _comment_spans(text)
    if not bad or comments is None:
        return None
    starts = [0] + [m.end() for m in _TEXT_NEWLINE_RE.finditer(text)]
    import bisect

    places = []
    for offset, _start, _end in bad:
        line = bisect.bisect_right(starts, offset)
        column = offset - starts[line - 1]
        if not any(a <= column < b for a, b in comments.get(line, ())):
            return None
        places.append((line, column + 1))
    return SourceText(
        display=display,
        raw=raw,
        text=text,
        encoding="utf-8-sig" if has_bom else "utf-8",
        has_bom=has_bom,
        notes=(_comment_bytes_note(display, data, text, bad, places, has_bom, declared, cookie_line),),
    )


def _comment_bytes_note(
    display: str, data: bytes, text: str, bad: list[tuple[int, int, int]], places: list[tuple[int, int]],
    has_bom: bool, declared: str | None, cookie_line: int,
) -> ReadProblem:
    """What bytes that are not UTF-8, only inside comments, do to a file, at the severity that follows.

    CPython (3.7 to 3.13 checked) compiles a module it imports from its bytes, and its tokenizer skips a
    comment without decoding it: ``import`` and ``python -m`` work. Running the file itself
    (``python file.py``) reads it as text in its encoding: it fails with the PEP 263 SyntaxError unless the
    file declares UTF-8 (a coding line or a BOM), in which case it runs too. So: with a declaration nothing
    fails (info); without one, a file with a main guard is meant to be run, and fails when it is (warning);
    a module without one is imported, which works (info).
    """
    line, column = places[0]
    _, start, end = bad[0]
    shown = " ".join(f"0x{b:02x}" for b in data[start : min(end, start + 4)])
    plural = "s" if end - start > 1 else ""
    lines = sorted({ln for ln, _ in places})
    where = f"line {line}, column {column} (byte{plural} {shown})"
    if len(lines) > 1:
        more = ", ".join(str(n) for n in lines[1:4]) + (", ..." if len(lines) > 4 else "")
        where += f" and in the comments of line{'s' if len(lines) > 2 else ''} {more}"
    if has_bom or declared is not None:
        said = (f"declares UTF-8 on line {cookie_line}" if declared is not None
                else "starts with a UTF-8 byte order mark")
        return _problem(
            display,
            f"not valid utf-8 at {where}, only inside comments; the file {said}, and CPython skips comments, so "
            "importing and running it both work, but tools that read the file as text (editors, linters, "
            "tokenize) fail on it or show garbage (npu-audit checked the file reading them as U+FFFD)",
            line=line, column=column, severity="info",
            hint="re-save those comments as UTF-8, or remove the bytes",
        )
    guard = _MAIN_GUARD_RE.search(text)
    if guard is not None:
        run = (f"running it directly ('python {os.path.basename(display)}'), as its main guard at line "
               f"{_line_of(text, guard.start())} intends, fails")
        severity = "warning"
    else:
        run = f"running it directly ('python {os.path.basename(display)}') fails"
        severity = "info"
    return _problem(
        display,
        f"not valid utf-8 at {where}, only inside comments: importing the file as a module works (CPython "
        f"skips comments when it compiles an imported file), but {run} with a SyntaxError (PEP 263: no "
        "encoding declared); npu-audit checked the file reading those bytes as U+FFFD",
        line=line, column=column, severity=severity,
        hint=f"{_declare_hint(data)}, or re-save those comments as UTF-8 or delete the bytes",
    )


def _declare_hint(data: bytes, in_code: bool = False) -> str:
    """How to declare the encoding of a file that is not UTF-8, on the line PEP 263 allows, with the codec
    its bytes decode in when one is recognised. ``in_code``: the bytes are in code or strings, where a
    wrong declaration changes the program (latin-1 'Größe' decodes as GBK too), so the guess is a
    condition to check; in comments it only changes what editors show."""
    codec = _legacy_codec(data)
    top = "line 2, after the #! line" if data.startswith(b"#!") else "line 1"
    if in_code:
        guess = (f"if the text is Chinese (the bytes decode as {codec.upper()}), declare '# -*- coding: {codec} -*-' "
                 f"on {top}; otherwise " if codec else "")
        return (f"{guess}declare the file's encoding on {top} with a '# -*- coding: ... -*-' line (PEP 263), or "
                "re-save the file as UTF-8")
    if codec:
        return f"declare the encoding on {top} (the bytes decode as {codec.upper()}: '# -*- coding: {codec} -*-')"
    return f"declare the file's encoding on {top} with a '# -*- coding: ... -*-' line (PEP 263)"


def _line_of(text: str, offset: int) -> int:
    return len(_TEXT_NEWLINE_RE.findall(text, 0, offset)) + 1


def _legacy_codec(data: bytes) -> Optional[str]:
    """"gbk" when the whole file reads as GBK and every line holding non-ASCII bytes is not valid UTF-8
    (no line of UTF-8 text that a GBK declaration would misread); else None. Legacy GBK text often holds
    byte pairs that happen to be valid UTF-8, so the test is per line, not per byte."""
    try:
        data.decode("gbk")
    except UnicodeDecodeError:
        return None
    for line in _NEWLINE_RE.split(data):
        if max(line, default=0) > 127:
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                continue
            return None
    return "gbk"


def _ascii_compatible(encoding: str) -> bool:
    sample = b"# -*- coding: x -*-\nimport os\n"
    try:
        return sample.decode(encoding) == sample.decode("ascii")
    except Exception:
        return False


_FILE_KINDS = (
    (stat.S_ISDIR, "is a directory"),
    (stat.S_ISFIFO, "is a named pipe (FIFO), not a regular file"),
    (stat.S_ISSOCK, "is a socket, not a regular file"),
    (stat.S_ISCHR, "is a character device, not a regular file"),
    (stat.S_ISBLK, "is a block device, not a regular file"),
)


def read_source(
    path: str | os.PathLike[str] | bytes, display: str, max_bytes: int = DEFAULT_MAX_BYTES, lenient: bool = False
) -> SourceText | ReadProblem:
    """Read and decode one file; every failure becomes a :class:`ReadProblem`, nothing is raised.

    The size is checked with ``fstat`` on the opened descriptor before anything is read, and at most
    ``max_bytes + 1`` bytes are ever read (a file growing meanwhile is still caught). The file is opened
    non-blocking so that a FIFO cannot hang the run. ``lenient``: as for :func:`decode_source`.
    """
    try:
        raw = _read_bytes(path, display, max_bytes)
    except Exception as exc:  # defensive: never let one file stop the run
        return _problem(display, f"cannot read the file: {type(exc).__name__}: {exc}",
                        hint=access_hint(exc) if isinstance(exc, OSError) else REPORT_IT)
    if isinstance(raw, ReadProblem):
        return raw
    return decode_source(raw, display, lenient)


def _read_bytes(path, display: str, max_bytes: int) -> bytes | ReadProblem:
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        return _problem(display, _open_error_message(path, exc), hint=access_hint(exc, link=is_link(path)))
    try:
        try:
            st = os.fstat(fd)
        except OSError as exc:
            return _problem(display, f"cannot read the file: {_os_reason(exc)}", hint=access_hint(exc))
        if not stat.S_ISREG(st.st_mode):
            for test, text in _FILE_KINDS:
                if test(st.st_mode):
                    return _problem(display, f"cannot read the file: it {text}", hint=access_hint())
            return _problem(display, "cannot read the file: it is not a regular file", hint=access_hint())
        if st.st_size > max_bytes:
            return _too_large(display, st.st_size, max_bytes)
        chunks = []
        remaining = max_bytes + 1
        while remaining > 0:
            try:
                chunk = os.read(fd, min(remaining, 1024 * 1024))
            except InterruptedError:  # pragma: no cover - retried by Python itself since 3.5
                continue
            except OSError as exc:
                return _problem(display, f"cannot read the file: {_os_reason(exc)}", hint=access_hint(exc))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:  # the file grew after fstat
            return _too_large(display, len(data), max_bytes, at_least=True)
        return data
    finally:
        os.close(fd)


def _too_large(display: str, size: int, max_bytes: int, at_least: bool = False) -> ReadProblem:
    size_text = ("more than " if at_least else "") + _size_text(size)
    return _problem(
        display,
        f"file too large to analyse: {size_text} exceeds the limit of {_size_text(max_bytes)}; skipped",
        hint="to analyse it, raise the limit with --max-file-size BYTES (or max-file-size in [tool.npu-audit])",
    )


def is_link(path) -> bool:
    """Whether ``path`` is a symbolic link (False when that cannot be told)."""
    try:
        return os.path.islink(path)
    except (OSError, ValueError):
        return False


def _open_error_message(path, exc: OSError) -> str:
    import errno

    if exc.errno == errno.ENOENT:
        if is_link(path):
            return "cannot read the file: broken symbolic link (its target does not exist)"
        return "cannot read the file: no such file (it may have been deleted)"
    if exc.errno == errno.ELOOP:
        return "cannot read the file: symbolic link loop"
    if exc.errno == errno.EISDIR:
        return "cannot read the file: it is a directory"
    return f"cannot read the file: {_os_reason(exc)}"
