"""The language server, end to end: a real LSP client (pytest-lsp) talks to ``python -m npu_audit lsp``
over stdio. A few fast unit tests of the editor-independent helpers come first.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from npu_audit.knowledge.loader import load  # noqa: E402
from npu_audit.lsp import completion, documents, hover, positions, settings  # noqa: E402

TIMEOUT = 15


# -- helpers ------------------------------------------------------------------------------------


def utf16_len(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


def utf16_pos(text: str, line: int, needle: str) -> tuple[int, int]:
    """(start, end) UTF-16 columns of ``needle`` in 0-based ``line`` of ``text``."""
    s = text.split("\n")[line]
    i = s.index(needle)
    return utf16_len(s[:i]), utf16_len(s[: i + len(needle)])


def offset_of(text: str, pos: types.Position) -> int:
    lines = text.split("\n")
    base = sum(len(ln) + 1 for ln in lines[: pos.line])
    return base + positions.client_to_char(lines[pos.line], pos.character, "utf-16")


def apply_edits(text: str, edits) -> str:
    spans = sorted(((offset_of(text, e.range.start), offset_of(text, e.range.end), e.new_text) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


async def wait_for_diagnostics(client: LanguageClient, uri: str, version=None) -> types.PublishDiagnosticsParams:
    """The next publishDiagnostics for ``uri`` (with ``version`` when given)."""

    async def loop():
        while True:
            params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == uri and (version is None or params.version == version):
                return params

    return await asyncio.wait_for(loop(), TIMEOUT)


async def wait_until_diagnostics(client: LanguageClient, uri: str, wanted) -> types.PublishDiagnosticsParams:
    """The first publishDiagnostics for ``uri`` whose diagnostics ``wanted`` accepts: a server may still
    publish for an earlier state (the settings it pulled at start-up) after the change a test waits on."""

    async def loop():
        while True:
            params = await wait_for_diagnostics(client, uri)
            if wanted(params.diagnostics):
                return params

    return await asyncio.wait_for(loop(), TIMEOUT)


def by_code(diagnostics, code: str):
    found = [d for d in diagnostics if d.code == code]
    assert found, f"no {code} in {[(d.code, d.message) for d in diagnostics]}"
    return found[0]


PRELUDE = (
    "import tensorflow as tf\n"
    "\n"
    "config = tf.ConfigProto()\n"
    "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
    'custom_op.name = "NpuOptimizer"\n'
)
TYPO_LINE = 'note = "混合精度 😀"; custom_op.parameter_map["precison_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n'
STR_LINE = 'msg = "精度"; custom_op.parameter_map["precision_mode"].s = "allow_mix_precision"\n'
SCRIPT = PRELUDE + TYPO_LINE + STR_LINE + "sess = tf.Session(config=config)\n"
TYPO_ROW, STR_ROW = 5, 6


def open_doc(client: LanguageClient, path: Path, text: str, version: int = 1, language_id: str = "python") -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language_id, version=version, text=text)))
    return uri


def change_doc(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def client_capabilities(**kwargs) -> types.ClientCapabilities:
    markdown = [types.MarkupKind.Markdown, types.MarkupKind.PlainText]
    return types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
            hover=types.HoverClientCapabilities(content_format=markdown),
            completion=types.CompletionClientCapabilities(
                completion_item=types.ClientCompletionItemOptions(documentation_format=markdown))),
        **kwargs)


def init_params(tmp_path: Path, **kwargs) -> types.InitializeParams:
    caps = kwargs.pop("capabilities", None) or client_capabilities()
    return types.InitializeParams(
        capabilities=caps,
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
        **kwargs,
    )


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "npu_audit", "lsp"]))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


# -- end to end ---------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_diagnostics_actions_hover_completion(client: LanguageClient, tmp_path: Path):
    result = await client.initialize_session(init_params(tmp_path))
    caps = result.capabilities
    assert list(caps.code_action_provider.code_action_kinds) == [types.CodeActionKind.QuickFix, "source.fixAll.npu-audit"]
    assert set(caps.completion_provider.trigger_characters) == {'"', "'", "."}  # ".": TF2 global_options() chains
    assert caps.hover_provider

    # the buffer is analysed, not the file on disk
    path = tmp_path / "train.py"
    path.write_text("print('nothing to see')\n", encoding="utf-8")
    uri = open_doc(client, path, SCRIPT)
    published = await wait_for_diagnostics(client, uri)
    assert published.version == 1
    diags = client.diagnostics[uri]
    assert all(d.source == "npu-audit" for d in diags)

    # UTF-16 columns: an emoji (2 units) and CJK text before the findings on the same line
    typo = by_code(diags, "NPU101")
    start, end = utf16_pos(SCRIPT, TYPO_ROW, '"precison_mode"')
    assert (typo.range.start.line, typo.range.end.line) == (TYPO_ROW, TYPO_ROW)
    assert typo.range == types.Range(types.Position(TYPO_ROW, start), types.Position(TYPO_ROW, end))
    assert start == len('note = "混合精度 😀"; custom_op.parameter_map[') + 1  # the emoji counts 2
    assert typo.severity == types.DiagnosticSeverity.Error
    bytes_required = by_code(diags, "NPU103")
    start, end = utf16_pos(SCRIPT, STR_ROW, '"allow_mix_precision"')
    assert bytes_required.range == types.Range(types.Position(STR_ROW, start), types.Position(STR_ROW, end))

    # code actions at the NPU103 diagnostic: its quickfix applies cleanly to the buffer
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=bytes_required.range,
        context=types.CodeActionContext(diagnostics=[bytes_required])))
    kinds = [a.kind for a in actions]
    assert types.CodeActionKind.QuickFix in kinds and "source.fixAll.npu-audit" in kinds
    quickfix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and a.diagnostics[0].code == "NPU103"
                    and "suppress" not in a.title.lower())
    fixed = apply_edits(SCRIPT, quickfix.edit.changes[uri])
    assert 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")' in fixed
    assert fixed.count("\n") == SCRIPT.count("\n")
    suppress = [a for a in actions if a.title.startswith("Suppress bytes-required")]
    assert suppress and "# npu-audit: ignore[bytes-required]" in apply_edits(SCRIPT, suppress[0].edit.changes[uri])

    # only source.fixAll requested: just the fix-all action (safe fixes only)
    fix_all = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(types.Position(0, 0), types.Position(0, 0)),
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll])))
    assert [a.kind for a in fix_all] == ["source.fixAll.npu-audit"]
    all_fixed = apply_edits(SCRIPT, fix_all[0].edit.changes[uri])
    assert 'tf.compat.as_bytes("allow_mix_precision")\n' in all_fixed
    assert '"precison_mode"' in all_fixed  # the rename of NPU101 is unsafe: not part of fix-all

    # edit the buffer (full sync): two quick changes; the diagnostics of the latest version arrive (those of
    # version 2 only if its analysis ended before version 3 came: a change after a pause is analysed at once)
    change_doc(client, uri, SCRIPT.replace("precision_mode", "precision_mode_x"), 2)
    change_doc(client, uri, fixed, 3)
    published = await wait_for_diagnostics(client, uri)
    if published.version == 2:
        published = await wait_for_diagnostics(client, uri)
    assert published.version == 3
    codes = {d.code for d in client.diagnostics[uri]}
    assert "NPU103" not in codes and "NPU101" in codes

    # hover over the option key
    col = utf16_pos(fixed, STR_ROW, '"precision_mode"')[0] + 3
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(STR_ROW, col)))
    assert hover is not None and hover.contents.kind == types.MarkupKind.Markdown
    assert "# precision_mode" in hover.contents.value and "precision_mode_v2" in hover.contents.value
    assert hover.range == types.Range(types.Position(STR_ROW, col - 3), types.Position(STR_ROW, col - 3 + 16))
    # ... and over its value: value facts and the precision_mode_v2 equivalent
    col = utf16_pos(fixed, STR_ROW, "allow_mix_precision")[0] + 2
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(STR_ROW, col)))
    assert "mixed_float16" in hover.contents.value and "allow_mix_precision_fp16" in hover.contents.value

    # completion of option keys, replacing the partial key
    line = 'custom_op.parameter_map["prec'
    comp_uri = open_doc(client, tmp_path / "complete.py", PRELUDE + line + "\n")
    await wait_for_diagnostics(client, comp_uri)
    completion = await client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=comp_uri), position=types.Position(5, len(line)),
        context=types.CompletionContext(trigger_kind=types.CompletionTriggerKind.Invoked)))
    items = {i.label: i for i in completion.items}
    assert {"precision_mode", "precision_mode_v2"} <= set(items)
    item = items["precision_mode_v2"]
    assert item.text_edit.range == types.Range(types.Position(5, len(line) - 4), types.Position(5, len(line)))
    assert item.text_edit.new_text == "precision_mode_v2"
    assert item.detail.startswith(".s (bytes)")
    assert item.documentation.kind == types.MarkupKind.Markdown and "precision_mode_v2" in item.documentation.value
    deprecated = [i for i in completion.items if i.tags and types.CompletionItemTag.Deprecated in i.tags]
    assert deprecated and "precision_mode" not in {i.label for i in deprecated}

    # completion of enum values inside the value string
    line = 'custom_op.parameter_map["precision_mode_v2"].s = tf.compat.as_bytes("mixed_'
    change_doc(client, comp_uri, PRELUDE + line + "\n", 2)
    completion = await client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=comp_uri), position=types.Position(5, len(line))))
    labels = [i.label for i in completion.items]
    assert "mixed_float16" in labels and "origin" in labels

    # documents in other languages are not checked
    other = open_doc(client, tmp_path / "notes.md", "parameter_map[\"precison_mode\"]\n", language_id="markdown")
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(wait_for_diagnostics(client, other), 1.0)

    # closing clears the diagnostics
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    published = await wait_for_diagnostics(client, uri)
    assert list(published.diagnostics) == []


@pytest.mark.asyncio
async def test_settings_and_utf8_positions(client: LanguageClient, tmp_path: Path):
    """initializationOptions and workspace settings (pushed or pulled) are layered over pyproject
    settings; a client that prefers UTF-8 positions gets UTF-8 columns."""
    (tmp_path / "pyproject.toml").write_text('[tool.npu-audit]\nignore = ["NPU101"]\n', encoding="utf-8")
    caps = client_capabilities(
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16]),
        workspace=types.WorkspaceClientCapabilities(configuration=True))
    result = await client.initialize_session(init_params(
        tmp_path, capabilities=caps, initialization_options={"npu-audit": {"release": "current", "product": "no-such-npu"}}))
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf8

    uri = open_doc(client, tmp_path / "train.py", SCRIPT)
    await wait_for_diagnostics(client, uri, 1)
    codes = {d.code for d in client.diagnostics[uri]}
    assert "NPU101" not in codes and "NPU103" in codes  # ignored by pyproject.toml
    assert any("no-such-npu" in m.message for m in client.messages)  # bad setting reported, not fatal

    d = by_code(client.diagnostics[uri], "NPU103")
    row = SCRIPT.split("\n")[STR_ROW]
    start = len(row[: row.index('"allow_mix_precision"')].encode("utf-8"))
    assert (d.range.start.character, d.range.end.character) == (start, start + len('"allow_mix_precision"'))

    # workspace settings change: select only NPU101 -> NPU103 disappears (NPU101 is still ignored)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"npu-audit": {"select": ["NPU101"]}}))
    await wait_until_diagnostics(client, uri, lambda diagnostics: not diagnostics)
    assert not client.diagnostics[uri]

    # pull model: the server asks for the "npu-audit" section (workspace/configuration)
    client.set_configuration({"select": ["NPU103"]}, section="npu-audit")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await wait_until_diagnostics(client, uri, lambda diagnostics: diagnostics)
    assert {d.code for d in client.diagnostics[uri]} == {"NPU103"}

    # hover positions are UTF-8 too
    col = len(row[: row.index('"precision_mode"')].encode("utf-8")) + 2
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(STR_ROW, col)))
    assert hover is not None and hover.contents.value.startswith("# precision_mode\n")
    assert hover.range.start.character == col - 2



@pytest.mark.asyncio
async def test_folder_with_spaces_and_utf32_positions(client: LanguageClient, tmp_path: Path):
    """A workspace whose path needs percent-escapes in URIs: the document's pyproject.toml is found
    (so the URI became the right path); a client that prefers UTF-32 gets code-point columns."""
    folder = tmp_path / "my project 100% (copy)" / "数据"
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text('[tool.npu-audit]\nignore = ["NPU103"]\n', encoding="utf-8")
    caps = client_capabilities(general=types.GeneralClientCapabilities(
        position_encodings=[types.PositionEncodingKind.Utf32, types.PositionEncodingKind.Utf16]))
    result = await client.initialize_session(init_params(folder, capabilities=caps))
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf32

    uri = open_doc(client, folder / "train script.py", SCRIPT)
    assert "%20" in uri and "%25" in uri
    await wait_for_diagnostics(client, uri, 1)
    codes = {d.code for d in client.diagnostics[uri]}
    assert "NPU101" in codes and "NPU103" not in codes  # ignored by the folder's pyproject.toml
    typo = by_code(client.diagnostics[uri], "NPU101")
    row = SCRIPT.split("\n")[TYPO_ROW]
    start = row.index('"precison_mode"')  # code points: the emoji counts 1
    assert (typo.range.start.character, typo.range.end.character) == (start, start + len('"precison_mode"'))

    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(TYPO_ROW, start + 3)))
    assert hover is not None and "Unknown option" in hover.contents.value
    assert (hover.range.start.character, hover.range.end.character) == (start, start + len('"precison_mode"'))

# -- unit tests of the helpers ----------------------------------------------------------------------


def test_position_encodings_round_trip():
    line = 'x = "混合 😀"; y'
    for enc, expected in (("utf-16", 11), ("utf-8", 17), ("utf-32", 10)):
        i = line.index(";")
        assert positions.char_to_client(line, i, enc) == expected
        assert positions.client_to_char(line, expected, enc) == i
    # a position inside a surrogate pair / UTF-8 sequence maps to that character
    assert positions.client_to_char(line, 9, "utf-16") == line.index("😀")
    assert positions.client_to_char(line, 14, "utf-8") == line.index("😀")



ASTRAL = "a😀𝔘𠀀b 🇯🇵 é中"  # emoji, a mathematical letter, a CJK extension B ideograph, a flag (two characters)


@pytest.mark.parametrize("encoding,codec", [("utf-8", "utf-8"), ("utf-16", "utf-16-le"), ("utf-32", "utf-32-le")])
def test_codec_counts_astral_characters_like_the_encoding(encoding, codec):
    width = {"utf-8": 1, "utf-16": 2, "utf-32": 4}[encoding]  # bytes per unit of the Python codec
    for i in range(len(ASTRAL) + 1):
        units = len(ASTRAL[:i].encode(codec)) // width
        assert positions.char_to_client(ASTRAL, i, encoding) == units
        assert positions.client_to_char(ASTRAL, units, encoding) == i
    # every column inside a character's units maps to that character
    for i, c in enumerate(ASTRAL):
        start = len(ASTRAL[:i].encode(codec)) // width
        for inside in range(start, start + len(c.encode(codec)) // width):
            assert positions.client_to_char(ASTRAL, inside, encoding) == i
    # past the end of the line: one unit per missing character, both ways
    end = len(ASTRAL.encode(codec)) // width
    assert positions.char_to_client(ASTRAL, len(ASTRAL) + 3, encoding) == end + 3
    assert positions.client_to_char(ASTRAL, end + 3, encoding) == len(ASTRAL) + 3


def test_server_and_lsp_format_share_the_utf16_columns():
    from npu_audit.render import lsp as render_lsp

    for i in range(len(ASTRAL) + 3):
        assert render_lsp.to_utf16_column(ASTRAL, i + 1) == positions.char_to_client(ASTRAL, i, "utf-16")
        units = positions.char_to_client(ASTRAL, i, "utf-16")
        assert render_lsp.from_utf16_column(ASTRAL, units) == positions.client_to_char(ASTRAL, units) + 1
    assert positions.encoding_name(types.PositionEncodingKind.Utf32) == "utf-32"
    assert positions.encoding_name(None) == "utf-16"
    assert positions.codec("utf-8").client_num_units("😀") == 4  # pygls's PositionCodec does the counting


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")
def test_file_uris_with_spaces_escapes_and_drive_letters(tmp_path: Path):
    folder = tmp_path / "my project 100% (copy)" / "数据"
    uri = (folder / "train script.py").as_uri()
    assert "%20" in uri and "%25" in uri
    assert documents.uri_to_path(uri) == str(folder / "train script.py")
    assert documents.uri_to_path("file:///home/me/a%20b/c%23d.py") == "/home/me/a b/c#d.py"
    assert documents.uri_to_path("file:///C:/Users/me/train.py") == "c:/Users/me/train.py"  # as pygls does
    assert documents.uri_to_path("file://server/share/train.py") == "//server/share/train.py"  # UNC share
    assert documents.uri_to_path("untitled:Untitled-1") is None
    assert documents.document_file("untitled:Untitled-1", ("/ws",)) == "/ws/Untitled-1.py"
    assert documents.document_file(uri, ("/ws",)) == str(folder / "train script.py")
    assert documents.is_python("file:///a%20b/x.PY", None) and not documents.is_python(uri, "markdown")
    assert documents.job_roots(str(folder / "x.py"), (str(tmp_path),)) == (str(tmp_path),)
    assert documents.job_roots("/elsewhere/x.py", (str(tmp_path),)) == (str(tmp_path), "/elsewhere")


def test_coding_cookie_of_a_buffer_is_read_like_the_file():
    from npu_audit.source import coding_cookie

    for text, expected in (
        ("# -*- coding: latin-1 -*-\nx = 1\n", "latin-1"),
        ("#!/usr/bin/env python\r\n# vim: set fileencoding=gbk :\r\n", "gbk"),
        ("\n# coding=cp1252\n", "cp1252"),
        ("x = 1\n# coding: latin-1\n", None),  # line 1 is code: line 2 is not looked at
        ("# one\n# two\n# coding: latin-1\n", None),  # line 3 is too late
        ("# coding: latin-1", "latin-1"),  # no line break
        ("s = '混合 😀'\n", None),
    ):
        assert coding_cookie(text) == expected, text
        assert coding_cookie(text.encode("utf-8")) == expected, text  # the same reader for files

def test_recode_ranges_only_touches_this_document():
    text = "😀 = 1\n"
    d = {"range": {"start": {"line": 0, "character": 2}, "end": {"line": 0, "character": 3}},
         "relatedInformation": [{"location": {"uri": "file:///other.py",
                                              "range": {"start": {"line": 0, "character": 2}, "end": {"line": 0, "character": 2}}}}]}
    positions.recode_ranges(d, "file:///this.py", text, "utf-8")
    assert d["range"]["start"]["character"] == 4 and d["range"]["end"]["character"] == 5
    assert d["relatedInformation"][0]["location"]["range"]["start"]["character"] == 2


def test_coding_cookie_decides_the_bytes():
    assert documents.encode_buffer('# -*- coding: latin-1 -*-\ns = "é"\n') == '# -*- coding: latin-1 -*-\ns = "é"\n'.encode("latin-1")
    assert documents.encode_buffer('#!/usr/bin/env python\n# vim: fileencoding=gbk\ns = "精"\n').endswith('"精"\n'.encode("gbk"))
    assert documents.encode_buffer('s = "精"\n# coding: latin-1\n') == 's = "精"\n# coding: latin-1\n'.encode()
    # not encodable: one "?" per character keeps the columns
    assert documents.encode_buffer('# coding: latin-1\ns = "精é"\n') == '# coding: latin-1\ns = "?é"\n'.encode("latin-1")
    assert documents.encode_buffer("# coding: no-such-codec\n") == b"# coding: no-such-codec\n"


def test_hover_and_completion_for_npurunconfig_keywords():
    kb = load()
    text = ('cfg = NPURunConfig(\n'
            '    precision_mode="allow_mix_precision",\n'
            '    dump_config=DumpConfig(enable_dump=True, dump_mode="al"),\n'
            ')\n')
    markdown, span = hover.hover_at(kb, "current", text, 1, 6)
    assert "NPURunConfig(precision_mode=...)" in markdown and "# precision_mode" in markdown
    assert (span.start, span.end) == (4, 18)
    markdown, _ = hover.hover_at(kb, "current", text, 2, 30)
    assert "DumpConfig(enable_dump=...)" in markdown
    markdown, _ = hover.hover_at(kb, "current", text, 1, 25)
    assert "mixed_float16" in markdown
    line = text.split("\n")[2]
    items = completion.completion_at(kb, "current", text, 2, line.index('al"') + 2)
    assert {"input", "output", "all"} <= {i["label"] for i in items}
    assert items[0]["textEdit"]["range"]["start"]["character"] == line.index('al"')
    assert completion.completion_at(kb, "current", 'x = "', 0, 5) is None
    markdown, _ = hover.hover_at(kb, "current", 'p.parameter_map["enable_auto_mix_precision"].b = True', 0, 20)
    assert "Not read by any adapter version" in markdown
    # a keyword's hazard and what to write instead, from rules/npurunconfig.toml
    text = ("c = DynamicInputConfig(input_shape='x:-1', dynamic_dims='1;2', dynamic_node_type=1, "
            "compile_hybrid_mode=0)\n")
    markdown, _ = hover.hover_at(kb, "current", text, 0, text.index("compile_hybrid_mode") + 2)
    assert "Three-argument calls" in markdown
    assert "Instead: pass compile_hybrid_mode=0 to keep the behaviour of releases without it." in markdown
    markdown, _ = hover.hover_at(kb, "current", "c = NPURunConfig(auto_tune_mode='RL,GA')\n", 0, 20)
    assert "Instead: remove auto_tune_mode=" in markdown


def test_settings_validation():
    kb = load()
    overrides, problems = settings.parse_settings({"npuAudit": {"release": "legacy", "select": "NPU101, NPU103",
                                                            "scenario": "serving", "ignore": None}}, kb)
    assert overrides == {"release": "legacy", "select": ("NPU101", "NPU103")}
    assert len(problems) == 1 and "scenario" in problems[0]
    assert settings.parse_settings(None, kb) == ({}, [])


def test_a_change_after_a_pause_is_analysed_at_once_and_a_burst_waits_for_the_user():
    """The editor feels the delay between a change and its diagnostics: after a pause there is none
    beyond the analysis itself; while the user types, a change waits as long as the last analysis took
    (bounded), so that a slow analysis is not started for every keystroke."""
    from npu_audit.lsp.analysis import DEBOUNCE_MIN_SECONDS, DEBOUNCE_SECONDS, change_delay

    assert change_delay(quiet=5.0, busy=False, last_duration=0.12) == 0.0
    assert change_delay(quiet=0.05, busy=False, last_duration=0.12) == 0.12  # typing faster than analyses
    assert change_delay(quiet=5.0, busy=True, last_duration=0.12) == 0.12  # one is running: coalesce
    assert change_delay(quiet=0.01, busy=False, last_duration=0.001) == DEBOUNCE_MIN_SECONDS
    assert change_delay(quiet=0.2, busy=False, last_duration=4.0) == DEBOUNCE_SECONDS  # bounded wait
