"""Rules reported by the pipeline itself, not by looking at configs."""

from npu_audit.checks.base import Expect, Invalid, Rule
from npu_audit.checks.rules import PRELUDE
from npu_audit.parse import MAX_PARSE_TOKENS

_NPU = "from npu_bridge.npu_init import *\n"


class SyntaxError_(Rule):
    code = "NPU001"
    name = "syntax-error"
    severity = "error"
    file_level = True
    summary = "The file is not valid Python 3, so npu-audit cannot check it."
    what = (
        "Reports a file that Python cannot parse, with CPython's own message and position, and a hint when "
        "the construct it stops at is Python 2 only; also files nested too deeply to analyse. The verdict is "
        "the running Python's: a file it accepts is read (tabs and spaces mixed in the indentation included), "
        "and code it rejects is reported even where a more lenient parser would read it (``except X, e:``)."
    )
    why = (
        "npu-audit reads Python 3 only. A file it cannot parse is not checked at all, so any NPU option "
        "mistakes in it stay hidden; a Python 2 script also cannot run under the TensorFlow adapter."
    )
    fix_safety = "No automatic fix."
    invalid = (
        Invalid(
            _NPU + 'run_config = NPURunConfig(iterations_per_loop=10)\nprint "training"\n',
            (Expect(3, 1, "Missing parentheses in call to 'print'. Did you mean print(...)?; looks like Python 2 "
                          "code (print statement at line 3); npu-audit reads Python 3 only",
                    hint="port the file to Python 3: print(...) is a function call"),),
        ),
        Invalid(
            _NPU + "try:\n    run_config = NPURunConfig(iterations_per_loop=10)\nexcept ValueError, e:\n    pass\n",
            (Expect(4, 8, "multiple exception types must be parenthesized; looks like Python 2 code (except X, e: at "
                          "line 4); npu-audit reads Python 3 only",
                    hint="port the file to Python 3: write except X as e: (several types in parentheses: "
                         "except (X, Y) as e:)"),),
        ),
    )
    valid = (_NPU + 'run_config = NPURunConfig(iterations_per_loop=10)\nprint("training")\n',)


class UnreadableFile(Rule):
    code = "NPU002"
    name = "unreadable-file"
    severity = "error"
    file_level = True
    summary = "The file cannot be read or decoded (permissions, encoding, binary content, size cap)."
    what = (
        "Reports a file that could not be read: permission denied, a binary file, bytes that do not decode "
        "in the file's declared (PEP 263) or default UTF-8 encoding, a file above the size cap "
        f"(`--max-file-size`, 10 MB by default), or an NPU file too large to parse (more than "
        f"{MAX_PARSE_TOKENS:,} tokens, roughly 1 to 1.5 MB of code: checking a fix of it with libcst would "
        "need up to a gigabyte of memory). Bytes that are not UTF-8 only inside comments of a UTF-8 file are not fatal: "
        "CPython skips comments when it compiles an imported module, so the file is still checked (those "
        "bytes read as U+FFFD) and the finding says what fails. Without a coding declaration, running the "
        "file itself (`python file.py`) fails with the PEP 263 SyntaxError: a warning when the file has a "
        "main guard (it is meant to be run), an info for a module (importing it works). With a UTF-8 "
        "declaration or BOM, importing and running both work: an info (tools that read the file as text "
        "still fail on it)."
    )
    why = (
        "A file npu-audit cannot read is not checked, so its NPU settings are not verified; a file Python "
        "cannot read does not run at all."
    )
    fix_safety = "No automatic fix."
    invalid = (
        Invalid(
            b'# -*- coding: utf-8 -*-\n' + _NPU.encode() + b'model_dir = "/home/caf\xe9/model"\n',
            (Expect(3, 23, "not valid utf-8 at line 3, column 23 (byte 0xe9); the file declares encoding 'utf-8' on "
                           "line 1",
                    hint="declare the encoding the file is really in, or re-save it as utf-8"),),
        ),
        # GBK in a comment of a module: importing it works, and its NPU config is still checked (NPU101)
        Invalid(
            _NPU.encode() + b'config = tf.ConfigProto()\n'
            b'custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n'
            b'custom_op.name = "NpuOptimizer"\n'
            b'# \xbb\xec\xba\xcf\xbe\xab\xb6\xc8\n'
            b'custom_op.parameter_map["precison_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n',
            (Expect(5, 3, "not valid utf-8 at line 5, column 3 (byte 0xbb), only inside comments: importing the file "
                          "as a module works (CPython skips comments when it compiles an imported file), but running "
                          "it directly ('python example.py') fails with a SyntaxError (PEP 263: no encoding "
                          "declared); npu-audit checked the file reading those bytes as U+FFFD", severity="info",
                    hint="declare the encoding on line 1 (the bytes decode as GBK: '# -*- coding: gbk -*-'), or "
                         "re-save those comments as UTF-8 or delete the bytes"),),
        ),
        # the same in a script: its main guard says it is run directly, which fails
        Invalid(
            _NPU.encode() + b'def main():\n    run_config = NPURunConfig(iterations_per_loop=10)  # \xd1\xad\xbb\xb7\n\n'
            b'if __name__ == "__main__":\n    main()\n',
            (Expect(3, 59, "not valid utf-8 at line 3, column 59 (byte 0xbb), only inside comments: importing the "
                           "file as a module works (CPython skips comments when it compiles an imported file), but "
                           "running it directly ('python example.py'), as its main guard at line 5 intends, fails "
                           "with a SyntaxError (PEP 263: no encoding declared); npu-audit checked the file reading "
                           "those bytes as U+FFFD",
                    severity="warning",
                    hint="declare the encoding on line 1 (the bytes decode as GBK: '# -*- coding: gbk -*-'), or "
                         "re-save those comments as UTF-8 or delete the bytes"),),
        ),
    )
    valid = (b'# -*- coding: latin-1 -*-\n' + _NPU.encode() + b'model_dir = "/home/caf\xe9/model"\n',)


class InternalError(Rule):
    code = "NPU003"
    name = "internal-error"
    severity = "error"
    file_level = True
    summary = "npu-audit failed on this file; the other files were still checked."
    what = (
        "Reports an unexpected failure of npu-audit itself while analysing one file, with a short traceback "
        "hint, and a file whose worker process died (killed by the out-of-memory killer, a crash in native "
        "code): the other files of that worker are analysed again, so only that file is lost."
    )
    why = "The file was not (fully) checked. The run exits with code 2 so that CI notices; please report the bug."
    fix_safety = "No automatic fix."


class UnusedSuppression(Rule):
    code = "NPU004"
    name = "unused-suppression"
    severity = "warning"
    file_level = True
    tags = ("unnecessary",)
    summary = "A `# npu-audit: ignore[...]` comment suppresses nothing."
    what = "Reports an inline suppression comment (or one of its codes) that no finding on that line needs."
    why = (
        "Stale suppressions hide future mistakes on that line and mislead readers about what is wrong. "
        "Remove them once the finding is gone."
    )
    fix_safety = "The fix removes the unused code or the whole comment; it is safe."
    fix = "always"
    fix_applicability = ("safe",)
    invalid = (
        Invalid(
            PRELUDE + 'custom_op.parameter_map["local_rank_id"].i = 7  # npu-audit: ignore[out-of-range]\n',
            (Expect(7, 49, "unused suppression: nothing to ignore for out-of-range on this line"),),
            fixed=PRELUDE + 'custom_op.parameter_map["local_rank_id"].i = 7\n',
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["local_rank_id"].i = 8  # npu-audit: ignore[out-of-range, NPU303]\n',
            (Expect(7, 49, "unused suppression: nothing to ignore for NPU303 on this line"),),
            fixed=PRELUDE + 'custom_op.parameter_map["local_rank_id"].i = 8  # npu-audit: ignore[out-of-range]\n',
        ),
    )
    valid = (PRELUDE + 'custom_op.parameter_map["local_rank_id"].i = 8  # npu-audit: ignore[out-of-range]\n',)
