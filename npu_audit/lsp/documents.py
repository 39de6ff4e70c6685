"""Open documents: their analysis state, where they live, and the bytes their text stands for.

The text of a buffer comes from pygls's workspace (it applies the client's incremental changes); this
module keeps what npu-audit knows about each open document (:class:`DocState`) and turns a URI into a
file-system path with :mod:`pygls.uris` (percent-escapes, spaces, UNC shares and Windows drive
letters as pygls handles them). The buffer is encoded as the file would be saved, per its PEP 263
coding cookie, read by the one reader in :mod:`npu_audit.source`.
"""

from __future__ import annotations

import asyncio
import codecs
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional
from urllib.parse import unquote, urlparse

from pygls.uris import to_fs_path

from npu_audit.source import coding_cookie

PYTHON_SUFFIXES = (".py", ".pyw", ".pyi")


@dataclass
class DocState:
    """What the server knows about one open Python document."""

    generation: int = 0  # bumped by every change: an analysis of an older generation is stale
    pending: Optional[asyncio.Future] = None  # the scheduled or running analysis
    report: Any = None  # FileReport of the last published analysis
    version: Optional[int] = None
    text: Optional[str] = None
    # the last analysis made for a request (code actions) on the current text
    fresh: Optional[tuple[str, Any]] = None
    dependencies: tuple[str, ...] = field(default_factory=tuple)
    release: Optional[str] = None  # from the settings of the last analysis (pyproject + client)
    last_duration: float = 0.0  # seconds the last analysis took (the next debounce)
    last_change: float = float("-inf")  # time.monotonic() of the last change (a pause before a change: no wait)

    def cancel(self) -> None:
        """Cancel the scheduled or running analysis, if any."""
        if self.pending is not None and not self.pending.done():
            self.pending.cancel()


def encode_buffer(text: str) -> bytes:
    """The bytes a file with this text would hold: encoded per its PEP 263 coding cookie, else (no
    cookie, or a codec Python does not know) UTF-8.

    Characters the cookie's encoding cannot represent (the file could not be saved like that) become
    ``?``: one character for one, so every position the analysis reports stays right, where UTF-8
    bytes read back under the cookie would shift columns or make the file unreadable.
    """
    cookie = coding_cookie(text)
    if cookie:
        try:
            if codecs.lookup(cookie).name != "utf-8":
                return text.encode(cookie, "replace")
        except (LookupError, UnicodeError):
            pass
    return text.encode("utf-8", "replace")


def uri_to_path(uri: str) -> Optional[str]:
    """The file-system path of a ``file:`` URI, else None (untitled buffers and other schemes)."""
    return to_fs_path(uri)


def _uri_name(uri: str) -> str:
    """The last part of a URI's (decoded) path: the name of an untitled buffer."""
    return Path(unquote(urlparse(uri).path)).name


def document_file(uri: str, roots: tuple[str, ...]) -> str:
    """Where a document lives (or would live: untitled buffers are placed in the first root)."""
    path = uri_to_path(uri)
    if path:
        return path
    name = _uri_name(uri) or "untitled"
    if not name.endswith(".py"):
        name += ".py"
    return str(Path(roots[0] if roots else os.getcwd()) / name)


def job_roots(file: str, workspace_roots: tuple[str, ...]) -> tuple[str, ...]:
    """Job.roots: the workspace folders, plus the document's folder when it lies outside them."""
    folder = str(Path(file).parent)
    roots = list(workspace_roots)
    inside = any(folder == r or folder.startswith(r.rstrip(os.sep) + os.sep) for r in roots)
    if not inside:
        roots.append(folder)
    return tuple(dict.fromkeys(roots))


def is_python(uri: str, language_id: Optional[str]) -> bool:
    """Whether an opened document is checked: Python by language id, or by file name."""
    if language_id:
        return language_id.lower() == "python"
    return unquote(urlparse(uri).path).lower().endswith(PYTHON_SUFFIXES)


def workspace_roots(workspace: Any) -> tuple[str, ...]:
    """Workspace roots as file-system paths: the workspace folders, else rootUri/rootPath."""
    roots: list[str] = []
    for folder in getattr(workspace, "folders", {}).values():
        path = uri_to_path(folder.uri)
        if path:
            roots.append(path)
    if not roots and workspace.root_uri:
        path = uri_to_path(workspace.root_uri)
        if path:
            roots.append(path)
    return tuple(dict.fromkeys(str(Path(r)) for r in roots))
