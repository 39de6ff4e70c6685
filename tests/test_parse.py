import codecs
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npu_audit.parse as parse
from npu_audit import syntax
from npu_audit.parse import (
    MAX_BRACKET_NESTING,
    SyntaxProblem,
    nesting_estimate,
    parse_module,
)
from npu_audit.source import SourceText, decode_source


def src(text: str, display: str = "t.py") -> SourceText:
    result = decode_source(text.encode("utf-8"), display)
    assert isinstance(result, SourceText), result
    return result


def problem(text: str) -> SyntaxProblem:
    result = parse_module(src(text))
    assert isinstance(result, SyntaxProblem), "expected a syntax problem"
    assert result.code == "syntax-error"
    assert result.display == "t.py"
    assert "\n" not in result.message and "\r" not in result.message
    assert result.line >= 1 and result.column >= 1
    return result


PY2_HINT = "looks like Python 2 code"


# --- valid code -------------------------------------------------------------------------------------


def test_valid_module():
    text = "import tensorflow as tf\n\nconfig = tf.ConfigProto()  # 中文\n"
    module = parse_module(src(text))
    assert isinstance(module, syntax.Module)
    assert module.code == text


def test_empty_module():
    module = parse_module(src(""))
    assert isinstance(module, syntax.Module) and module.code == ""


def test_a_file_in_another_encoding_is_read_with_character_columns():
    data = b"# -*- coding: latin-1 -*-\nname = 'caf\xe9'; other = name\n"
    source = decode_source(data, "a.py")
    module = parse_module(source)
    assert isinstance(module, syntax.Module)
    assert module.code == source.text
    other = module.body[0].body[1].targets[0].target
    assert other.value == "other" and syntax.range_of(other)[1] == 16  # (characters: 17 in UTF-8 bytes)


def test_bom_and_crlf_keep_lines_and_columns():
    data = codecs.BOM_UTF8 + b"x = 1\r\ny = 2\r\n"
    module = parse_module(decode_source(data, "a.py"))
    assert isinstance(module, syntax.Module)
    y = module.body[1].body[0].targets[0].target
    assert syntax.range_of(y)[:2] == (2, 1)


def test_print_function_with_redirect_is_not_an_error():
    # Python 3 syntax (although surely not what was meant)
    assert isinstance(parse_module(src("print >>sys.stderr, 'x'\n")), syntax.Module)


# --- syntax errors and their positions ----------------------------------------------------------------


def test_simple_syntax_error_position_and_message():
    p = problem("x = 1\ny = (1 2)\n")
    assert (p.line, p.column) == (2, 8)
    assert p.message.startswith("invalid syntax at '2'")
    assert PY2_HINT not in p.message


def test_column_is_counted_in_characters():
    p = problem("ééé = '中文' + [1, 2 3]\n")
    assert (p.line, p.column) == (1, 20)  # the "3"


def test_crlf_and_cr_line_endings():
    assert (problem("x = 1\r\ny = (1 2)\r\n").line, problem("x = 1\ry = (1 2)\r").line) == (2, 2)


def test_missing_colon():
    p = problem("if x\n    pass\n")
    assert (p.line, p.column) == (1, 5)
    assert "expected ':'" in p.message


def test_unexpected_indent():
    p = problem("x = 1\n    y = 2\n")
    assert (p.line, p.column) == (2, 5)
    assert "unexpected indent" in p.message


def test_unexpected_end_of_file():
    p = problem("x = foo(1,\n")
    assert "end of file" in p.message
    assert p.line == 1


def test_expected_indented_block():
    p = problem("class A:\npass\n")
    assert "indented block" in p.message
    assert p.line == 2


def test_long_expected_lists_are_dropped():
    p = problem("x = (1 2)\n")
    assert "expected one of" not in p.message  # libcst lists ~30 tokens here
    assert len(p.message) < 200


@pytest.mark.parametrize(
    ("text", "fragment", "line", "column"),
    [
        ("x = 1\ny = 'abc\n", "unterminated string literal", 2, 5),
        ("x = 1\ny = '''abc\n\n", "unterminated triple-quoted string literal", 2, 5),
        ("x = 1\ny = 1 $ 2\n", "'$' is not a valid character", 2, 7),
        ("x = 1\ny = 0b102\n", "binary literal", 2, 5),
        ("x = )\n", "unmatched ')'", 1, 5),
        ("x = (\n1,\n]\n", "does not match", 3, 1),
        ("if x:\n        a\n    b\n", "dedent", 3, 1),
        ("if x:\n\tif y:\n        pass\n", "tabs and spaces", 3, 1),
        ("x = 1 \\ 2\n", "line continuation", 1, 7),
    ],
)
def test_tokenizer_errors_get_a_position(text, fragment, line, column):
    # libcst gives no position for tokenizer errors: npu-audit locates them
    p = problem(text)
    assert fragment in p.message
    assert (p.line, p.column) == (line, column)


# --- Python 2 ------------------------------------------------------------------------------------------


PY2_SCRIPT = """\
import os

def main():
    try:
        run()
    except IOError, e:
        print "failed:", e
"""


def test_python2_script():
    p = problem(PY2_SCRIPT)
    assert PY2_HINT in p.message
    assert "npu-audit reads Python 3 only" in p.message
    # line 6 (`except IOError, e:`) is the first line Python 3 rejects; libcst let it pass and stopped at
    # the print statement on line 7 before CPython gave the verdict
    assert (p.line, p.column) == (6, 12)
    assert "except X, e: at line 6" in p.message


@pytest.mark.parametrize(
    ("text", "evidence"),
    [
        ('print "x"\n', "print statement at line 1"),
        ("x = 1\nif x:\n    print 'a', 'b'\n", "print statement at line 3"),
        ("try:\n    pass\nexcept E, e:\n    pass\nx = (1 2)\n", "except X, e: at line 3"),
        ("x = `y`\n", "backticks at line 1"),
        ("os.chmod(p, 0777)\n", "0777-style octal literal at line 1"),
        ("x = ur'abc'\n", "ur'' string prefix at line 1"),
        ("x = 10L\n", "long literal at line 1"),
        ("exec 'code'\n", "exec statement at line 1"),
        ("raise ValueError, 'bad'\n", "raise E, 'message' at line 1"),
        ("if a <> b:\n    pass\n", "'<>' operator at line 1"),
    ],
)
def test_python2_hints(text, evidence):
    p = problem(text)
    assert PY2_HINT in p.message and evidence in p.message, p.message
    # and the finding's hint says how Python 3 writes the construct
    assert p.hint is not None and p.hint.startswith("port the file to Python 3: "), p.hint


PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"


@pytest.mark.parametrize("code, hint", [
    ("x = (1 2\n", "close the bracket opened here"),
    ("if x:\n\ty = 1\n        z = 2\n", "indent with spaces only throughout the file (convert the tabs)"),
    ("x = 1\n    y = 2\n", "remove the extra indentation, or end the line above with ':' if it opens a block"),
    ("def f():\nreturn 1\n", "indent the block's first line (write pass for an empty block)"),
    ("p = 'C:\\data\\'\n", "close the string on the same line (a backslash before the closing quote escapes it: "
                          "write 'C:\\\\data\\\\' or 'C:/data/'), or use a triple-quoted string"),
    ("s = \"\"\"abc\n", "close the triple-quoted string opened here"),
    ("if x:\n    y = 1\n  z = 2\n", "indent the line exactly like the block it belongs to (the same spaces or tabs)"),
    ("x = 1\uff0c2\n", "write the ASCII character instead (full-width \uff0c \uff08 \uff09 \uff1a come from a Chinese "
                      "input method)"),
    ("x = 1\u200b\n", "delete the invisible character (often pasted from a web page)"),
    ("p = 'C:\\Users\\me'\n", "write the path as a raw string (r'C:\\Users\\me'), with forward slashes, or with "
                            "doubled backslashes"),
    ("if x\n    pass\n", "end the header of the statement with ':'"),
    ("x = (1]\n", "close with the bracket that matches the one opened"),
    ("x = 1)\n", "remove the bracket, or open it where it belongs"),
    ("x = 1 +* 2\n", f"correct the code here (npu-audit parses with Python {PYTHON}: 'python{PYTHON} -m py_compile "
                     "FILE' shows the same error); if the file needs a newer Python, run npu-audit under it"),
])
@pytest.mark.skipif(sys.version_info < (3, 10), reason="Python 3.9 words these errors differently")
def test_a_syntax_error_that_is_not_python2_says_what_to_do(code, hint):
    found = problem(code)
    assert PY2_HINT not in found.message and found.hint == hint


def test_python2_words_in_strings_and_comments_are_not_evidence():
    p = problem("# print 'x'\ns = \"`backtick` 0777 except E, e:\"\nx = (1 2)\n")
    assert PY2_HINT not in p.message


# --- robustness: nothing escapes, nothing crashes -------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "(" * 1000,
        "(" * 1000 + ")" * 1000,
        "x = " + "[" * 1000 + "]" * 1000,
        "(" * 100_000,
        "x = " + "f'{" * 500,
    ],
)
def test_deep_brackets_are_refused_like_cpython(text):
    p = problem(text + "\n")
    assert "too many nested parentheses" in p.message
    assert str(MAX_BRACKET_NESTING) in p.message


@pytest.mark.parametrize(
    "text",
    [
        "x = " + "-" * 100_000 + "1",
        "x = " + "not " * 20_000 + "y",
        "x = " + " + ".join(["a"] * 10_000),
        "x = " + " and ".join(["a"] * 10_000),
        "x = a" + ".b" * 10_000,
        "x = f" + "()" * 10_000,
        "x = " + "lambda: " * 10_000 + "1",
        "x = (\n" + "    'line'\n" * 20_000 + ")",
        "if x == -1:\n    pass\n" + "".join(f"elif x == {i}:\n    pass\n" for i in range(10_000)),
    ],
)
def test_pathological_nesting_does_not_crash(text):
    # libcst's native parser overflows the C stack (SIGSEGV) on these without the guard
    started = time.perf_counter()
    p = problem(text + "\n")
    assert "too deeply nested" in p.message
    assert time.perf_counter() - started < 30


def test_deep_but_walkable_code_is_parsed():
    text = "x = " + " + ".join(["a"] * 100) + "\n"
    module = parse_module(src(text))
    assert isinstance(module, syntax.Module)
    assert _depth(module) > 100


def _depth(node) -> int:
    """How deep the tree goes (recursively, as the interpreter walks it)."""
    deepest = 0
    for name in node._fields:
        value = getattr(node, name, None)
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, syntax.CSTNode):
                deepest = max(deepest, _depth(child))
    return deepest + 1


def test_trees_too_deep_for_the_recursion_limit_are_refused(monkeypatch):
    monkeypatch.setattr(sys, "getrecursionlimit", lambda: 1000)
    text = "x = " + " + ".join(f"'{i}'" for i in range(400)) + "\n"
    p = problem(text)
    assert "too deeply nested" in p.message and "recursion limit" in p.message


def test_a_higher_recursion_limit_accepts_deeper_trees(monkeypatch):
    text = "x = " + " + ".join(f"'{i}'" for i in range(400)) + "\n"
    monkeypatch.setattr(sys, "getrecursionlimit", lambda: 5000)
    module = parse_module(src(text))
    assert isinstance(module, syntax.Module)
    assert module.code == text


def test_generated_lookup_table_with_many_elifs():
    text = "def f(x):\n    if x == 0:\n        return 0\n" + "".join(
        f"    elif x == {i}:\n        return {i}\n" for i in range(1, 150)
    )
    assert isinstance(parse_module(src(text)), syntax.Module)


@pytest.mark.parametrize(
    "exc",
    [RecursionError("maximum recursion depth exceeded"), MemoryError(), ValueError("odd")],
)
def test_parser_exceptions_become_problems(monkeypatch, exc):
    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(syntax, "parse_module", boom)
    p = problem("x = 1\n")
    assert p.message.startswith(f"could not parse: {type(exc).__name__}")


def test_base_exceptions_of_the_tree_builder_become_problems(monkeypatch):
    class Odd(BaseException):
        pass

    def boom(*args, **kwargs):
        raise Odd("index out of bounds")

    monkeypatch.setattr(syntax, "parse_module", boom)
    p = problem("x = 1\n")
    assert "could not parse: Odd: index out of bounds" in p.message


def test_keyboard_interrupt_is_not_swallowed(monkeypatch):
    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(syntax, "parse_module", boom)
    with pytest.raises(KeyboardInterrupt):
        parse_module(src("x = 1\n"))


@pytest.mark.parametrize("guard", ["nesting_estimate", "_visitable_depth"])
def test_internal_defects_become_problems(monkeypatch, guard):
    def broken(*args):
        raise AssertionError("bug in the guard")

    monkeypatch.setattr(parse, guard, broken)
    text = "x = 1\n" if guard == "_visitable_depth" else "x = (1\n"  # (the scan runs on what CPython rejects)
    assert problem(text).message.startswith("could not parse: AssertionError")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("()[]{}'\"#\\:;,.=+-*/ \t\n\rabcif0ü`$@")), max_size=80))
def test_parse_module_never_raises(text):
    result = parse_module(SourceText("f.py", text.encode(), text, "utf-8", False))
    assert isinstance(result, (syntax.Module, SyntaxProblem))
    if isinstance(result, SyntaxProblem):
        assert "\n" not in result.message and result.line >= 1 and result.column >= 1
        lines = len(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
        assert result.line <= lines


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_nesting_estimate_never_raises(text):
    estimate = nesting_estimate(text)
    assert estimate.brackets >= 0 and estimate.expression >= 0


def test_nesting_estimate_values():
    assert nesting_estimate("x = ((((1))))\n").brackets == 4
    assert nesting_estimate("x = '(((('  # ((((\n").brackets == 0
    assert nesting_estimate("x = " + " + ".join(["a"] * 50) + "\n").expression >= 49
    assert nesting_estimate("x = [" + ", ".join(["-1"] * 5000) + "]\n").expression < 10
    assert nesting_estimate("a = b = c = d = e\n").expression < 3
    est = nesting_estimate("if a:\n    pass\n" + "elif b:\n    pass\n" * 7)
    assert est.elif_chain == 7


# --- indentation that mixes tabs and spaces ------------------------------------------------------------
# Python compares indentation widths (libcst, which built npu-audit's tree before, wanted the indentation
# *text* of a block to extend that of the block around it). The real case: one line of a space-indented
# script indented with a tab and spaces.


def _nodes(node, kind) -> list:
    found = [node] if isinstance(node, kind) else []
    for name in node._fields:
        value = getattr(node, name, None)
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, syntax.CSTNode):
                found += _nodes(child, kind)
    return found


def _names_in_place(module: syntax.Module, text: str) -> int:
    """Assert that every name of the tree sits at its line and column in ``text``; return how many."""
    import re

    from npu_audit.extract.positions import node_ranges

    names = _nodes(module, syntax.Name)
    lines = re.split(r"\r\n|\r|\n", text)
    ranges = node_ranges(names)
    for node in names:
        r = ranges[id(node)]
        assert lines[r.line - 1][r.column - 1 : r.end_column - 1] == node.value, (node.value, r)
    return len(names)


TAB_INDENTED = {
    # a tab and four spaces (width 12) as the body of a block indented with four spaces
    "tab_and_spaces_in_space_block": "def build(flag):\n    if flag:\n\t    mode = 'a'\n    return mode\n",
    # one branch of an elif chain indented with a tab and eight spaces, the others with spaces
    "one_elif_branch": (
        "def pick(kind):\n"
        "    if kind == 'a':\n"
        "        model = 1\n"
        "    elif kind == 'b':\n"
        "\t        model = 2\n"
        "    elif kind == 'c':\n"
        "        model = 3\n"
        "    return model\n"
    ),
    # a parameter list continued with a tab
    "block_and_brackets": "def f(\n    a,\n\t    b=2,\n):\n    if a:\n\t    return (a,\n\t\tb)\n    return b\n",
    # a string whose lines start with tabs, inside a block that needs normalising: the string is kept
    "string_with_tabs": "if x:\n    if y:\n\t    s = '''\n\tkeep\n\t    this'''\n    t = s\n",
    # comment and blank lines with tabs inside such a block
    "comments": "if x:\n    if y:\n\t    # a comment\n\t    a = 1\n\t\n\t    # another\n    b = 2\n",
    "crlf": "if x:\r\n    if y:\r\n\t    a = 1\r\n    b = 2\r\n",
    "cr": "if x:\r    if y:\r\t    a = 1\r    b = 2\r",
}


@pytest.mark.parametrize("name", sorted(TAB_INDENTED))
def test_tab_indentation_python_accepts_is_parsed_with_exact_positions(name):
    import ast

    text = TAB_INDENTED[name]
    ast.parse(text)  # Python accepts it
    module = parse_module(src(text))
    assert isinstance(module, syntax.Module), module
    assert _names_in_place(module, text) >= 2
    # string literals keep their characters, tabs included
    strings = [n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    found = [ast.literal_eval(n.value) for n in _nodes(module, syntax.SimpleString)]
    assert found == strings


def test_every_indentation_python_accepts_is_parsed():
    import ast
    import itertools

    parents = ["", "    ", "\t", "  ", "        ", "    \t"]
    bodies = ["\t", "\t ", " \t", "\t    ", "    \t", "\t\t", "        ", "\t        ", "            ", "\t\t    "]
    accepted = 0
    for p, c, c2 in itertools.product(parents, bodies, bodies):
        text = f"if a:\n{p}if b:\n{c}x = 1\n{c2}y = 2\n{p}z = 3\nw = 4\n" if p else f"if b:\n{c}x = 1\n{c2}y = 2\nw = 4\n"
        try:
            ast.parse(text)
        except SyntaxError:
            assert isinstance(parse_module(src(text)), SyntaxProblem)
            continue
        accepted += 1
        module = parse_module(src(text))
        assert isinstance(module, syntax.Module), (text, module)
        _names_in_place(module, text)
    assert accepted > 40


def test_code_python_rejects_is_reported_even_where_libcst_is_lenient():
    # libcst reads `except X, e:` (Python 2); the interpreter that runs the script does not
    p = problem("try:\n    pass\nexcept IOError, e:\n    pass\n")
    assert (p.line, PY2_HINT in p.message) == (3, True)


# --- memory budget ---------------------------------------------------------------------------------------


def test_files_above_the_token_budget_are_refused_before_parsing(monkeypatch):
    parsed = []
    monkeypatch.setattr(syntax, "parse_module", lambda *a: parsed.append(a))
    monkeypatch.setattr(parse, "MAX_PARSE_TOKENS", 1000)
    text = "TABLE = [\n" + "    (1, 'a', 2.5),\n" * 200 + "]\n"
    result = parse_module(src(text))
    assert isinstance(result, SyntaxProblem) and not parsed
    assert result.code == "unreadable-file"
    assert "too large to parse" in result.message and "1,000 tokens" in result.message
    assert nesting_estimate(text).tokens > 1000


def test_files_above_the_character_budget_are_refused_without_scanning(monkeypatch):
    monkeypatch.setattr(parse, "MAX_PARSE_CHARS", 100)
    monkeypatch.setattr(parse, "nesting_estimate", lambda text: pytest.fail("scanned"))
    result = parse_module(src("x = 1\n" * 50))
    assert isinstance(result, SyntaxProblem) and result.code == "unreadable-file"
    assert "300 characters, more than the 100 characters" in result.message


# --- depth checked as the tree is built ----------------------------------------------------------------

DEEP_CHAIN = " and ".join(["ready"] * 3000)  # CPython accepts it; the tree is built left-nested


def test_a_deep_statement_is_refused_where_it_is():
    p = problem(f"import os\n\nx = 1\nif os.sep:\n    flag = {DEEP_CHAIN}\n")
    assert "too deeply nested" in p.message and "recursion limit" in p.message
    assert (p.line, p.column) == (5, 12)  # the chain, not the file's first line


def test_a_deep_statement_the_build_leaves_out_does_not_refuse_the_file():
    import ast

    text = f"x = 1\nflag = {DEEP_CHAIN}\ny = 2\n"
    tree = ast.parse(text)
    module = parse_module(src(text), tree=tree, skip={id(tree.body[1])})
    assert isinstance(module, syntax.Module) and len(module.body) == 2


def test_the_parser_limits_the_fix_engine_checks():
    assert parse.within_parser_limits("x = a and b\n")
    assert not parse.within_parser_limits(f"x = {DEEP_CHAIN}\n")  # libcst's parser would overflow the stack
    assert not parse.within_parser_limits("x = " + "(" * 300 + ")" * 300 + "\n")
