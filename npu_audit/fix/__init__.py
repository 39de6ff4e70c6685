"""Fixes: one engine for ``--fix``, ``--diff`` and the language server (see :mod:`.engine`).

* :mod:`.engine` chooses and applies fixes in rounds, checks that the result parses and that safe
  fixes keep the effective configuration (:mod:`.effective`); it returns data and never prints;
* :mod:`.edits` applies edits at 1-based character positions;
* :mod:`.diff` renders a fix as a unified diff in the file's own bytes;
* :mod:`.atomic` writes fixed files atomically, refusing what would change more than the content;
* :mod:`.write` is the temporary-file writing under it and under ``-o FILE``: it leaves no temporary file.

Printing and exit codes belong to the callers (``npu_audit.cli``, ``npu_audit.lsp``).
"""

from npu_audit.fix.engine import (
    CHANGES_CONFIG,
    FILE_EXISTS,
    MAX_ROUNDS,
    NOT_VALID,
    FileFix,
    Fixer,
    Rejected,
    applicable,
    fix_file,
    fix_files,
    select,
)

__all__ = [
    "CHANGES_CONFIG",
    "FILE_EXISTS",
    "MAX_ROUNDS",
    "NOT_VALID",
    "FileFix",
    "Fixer",
    "Rejected",
    "applicable",
    "fix_file",
    "fix_files",
    "select",
]
