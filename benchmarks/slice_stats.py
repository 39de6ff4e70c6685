"""How much of a tree's NPU files the relevance slice keeps, and what it costs and saves.

    python benchmarks/slice_stats.py FILE_LIST [--root DIR] [--parse]

FILE_LIST holds one path a line (relative to --root), e.g. the files with an NPU marker. Prints the
lines of those files, the lines the slice keeps (all lines, and code lines: not blank, not comment),
the statements kept, the time the slice takes (CPython ``ast`` included) and, with --parse, the time
libcst takes to parse the whole texts and the sliced texts. Figures only; no verdict.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from npu_audit.extract.positions import python_ast  # noqa: E402
from npu_audit.slicing import slice_text  # noqa: E402
from npu_audit.source import SourceText, read_source  # noqa: E402
from npu_audit.text import split_lines_keepends  # noqa: E402


def _code_lines(text: str) -> int:
    return sum(1 for line in split_lines_keepends(text) if line.strip() and not line.lstrip().startswith("#"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file_list")
    ap.add_argument("--root", default=".")
    ap.add_argument("--parse", action="store_true", help="also time libcst on whole and sliced texts")
    args = ap.parse_args()
    with open(args.file_list, encoding="utf-8") as handle:
        paths = [line.strip() for line in handle if line.strip()]
    lines = kept_lines = code = kept_code = statements = kept = read = files = unsliced = 0
    slice_s = ast_s = parse_whole = parse_part = 0.0
    for rel in paths:
        source = read_source(__import__("pathlib").Path(os.path.join(args.root, rel)), rel)
        if not isinstance(source, SourceText):
            continue
        files += 1
        t0 = time.perf_counter()
        tree = python_ast(source.text)
        t1 = time.perf_counter()
        result = slice_text(source.text, tree)
        t2 = time.perf_counter()
        ast_s += t1 - t0
        slice_s += t2 - t1
        n = len(split_lines_keepends(source.text))
        c = _code_lines(source.text)
        lines += n
        code += c
        if result is None:
            unsliced += 1
            kept_lines += n
            kept_code += c
            continue
        kept_lines += n - result.blanked
        # (a line the slice kept is the original line; stand-ins for dropped lines are not counted)
        kept_code += sum(1 for old, new in zip(split_lines_keepends(source.text), split_lines_keepends(result.text))
                         if new == old and _code_lines(old))
        statements += result.statements
        read += result.read
        kept += result.kept
        if args.parse:
            import libcst

            try:
                t0 = time.perf_counter()
                libcst.parse_module(source.text)
                t1 = time.perf_counter()
                libcst.parse_module(result.text)
                t2 = time.perf_counter()
                parse_whole += t1 - t0
                parse_part += t2 - t1
            except Exception:  # noqa: BLE001 - a file libcst cannot read: not timed
                pass
    print(f"files: {files} ({unsliced} without an ast: analysed whole)")
    print(f"lines: {lines:,}; kept {kept_lines:,} ({100 * kept_lines / max(lines, 1):.1f}%)")
    print(f"code lines: {code:,}; kept {kept_code:,} ({100 * kept_code / max(code, 1):.1f}%)")
    print(f"statements (sliced files): {statements:,}; kept {kept:,} ({100 * kept / max(statements, 1):.1f}%); "
          f"read {read:,} ({100 * read / max(statements, 1):.1f}%: the others sit in definitions nothing asked about)")
    print(f"CPython ast: {ast_s:.2f} s; slice: {slice_s:.2f} s")
    if args.parse:
        print(f"libcst parse: whole {parse_whole:.2f} s, sliced {parse_part:.2f} s")


if __name__ == "__main__":
    main()
