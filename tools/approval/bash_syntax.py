"""Bash syntax for the approval analysis: the tree-sitter-bash parse, and what each word is.

A word is static (its value is known here, after quote removal and brace expansion) or `Unknown` (it holds a
variable, a command substitution or anything else only bash at run time knows). The analysis treats Unknown
as "could be anything" wherever it matters: fail closed.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from inference.errors import DflashError
from tools.approval.braces import escape, expand_braces, unescape

LANGUAGE = Language(tree_sitter_bash.language())


@dataclass(frozen=True)
class Unknown:
    """A word whose value only bash knows at run time (`$x`, `$(cmd)`, `${a:-b}`, `$((1+2))`...)."""

    text: str  # as written


Arg = str | Unknown


class ParseTimeout(DflashError):
    """The parse ran past its deadline (tree-sitter-bash is quadratic in some inputs: thousands of heredocs)."""


CHUNK = 4096  # bytes per read: tree-sitter reads often, so small slices are cheaper than large ones


def parse(source: bytes, deadline: float | None = None) -> Node:
    """The syntax tree of a command (a new parser each time: parsers keep state and are not thread-safe).
    `deadline` (time.monotonic()): the parse is cancelled past it, raising ParseTimeout. tree-sitter calls
    the progress callback only when it reads the source through a callback, hence the chunked reader."""
    parser = Parser(LANGUAGE)
    if deadline is None:
        return parser.parse(source).root_node
    try:
        tree = parser.parse(
            lambda offset, _point: source[offset : offset + CHUNK],
            progress_callback=lambda *_: time.monotonic() > deadline,
        )
    except ValueError:  # "Parsing failed": the callback cancelled it
        raise ParseTimeout from None
    return tree.root_node


def text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def word_values(node: Node) -> list[Arg]:
    """The words bash makes of one word node: brace expansion can make several; [Unknown] when not static."""
    if node.type == "word" and not PLAIN_NEEDS_WORK.search(raw := text(node)):
        return [raw]
    pieces = _pieces(node)
    if pieces is None:
        return [Unknown(text(node))]
    pattern = "".join(escape(t) if quoted else t for t, quoted in pieces)
    expanded = expand_braces(pattern)
    if expanded is None:
        return [Unknown(text(node))]
    return [unescape(w) for w in expanded]


def static_value(node: Node) -> str | None:
    """The single value of a word without brace expansion, or None when it is not static."""
    pieces = _pieces(node)
    return None if pieces is None else "".join(t for t, _ in pieces)


def _pieces(node: Node) -> list[tuple[str, bool]] | None:
    """(text, quoted) pieces of a word after quote removal; None when any part is an expansion."""
    kind = node.type
    if kind in ("word", "number"):
        raw = text(node)
        return _unquoted_word(raw)
    if kind == "raw_string":
        return [(text(node)[1:-1], True)]
    if kind == "ansi_c_string":
        decoded = decode_ansi_c(text(node)[2:-1])
        return None if decoded is None else [(decoded, True)]
    if kind == "string":
        out: list[tuple[str, bool]] = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type != "string_content":
                return None
            out.append((DQ_ESCAPE.sub(r"\1", text(child)).replace("\\\n", ""), True))
        return out
    if kind == "translated_string":
        inner = node.named_children
        return _pieces(inner[0]) if len(inner) == 1 else None
    if kind == "concatenation":
        out = []
        for child in node.children:
            part = _pieces(child)
            if part is None:
                return None
            out += part
        return out
    if kind == "brace_expression":
        return [(text(node), False)]
    return None


PLAIN_NEEDS_WORK = re.compile(r"[\\{]")
DQ_ESCAPE = re.compile(r"\\([$`\"\\])")


def _unquoted_word(raw: str) -> list[tuple[str, bool]]:
    """An unquoted word: `\\x` is a literal x (quoted), a backslash-newline disappears."""
    out: list[tuple[str, bool]] = []
    i, start = 0, 0
    while i < len(raw):
        if raw[i] == "\\":
            out.append((raw[start:i], False))
            if i + 1 < len(raw) and raw[i + 1] != "\n":
                out.append((raw[i + 1], True))
            i += 2
            start = i
        else:
            i += 1
    out.append((raw[start:], False))
    return [p for p in out if p[0]]


ANSI_C = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL)
SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def decode_ansi_c(body: str) -> str | None:
    """The value of `$'...'` (the body between the quotes), or None when an escape is not understood here."""
    failed = False

    def one(match: re.Match[str]) -> str:
        nonlocal failed
        code = match.group(1)
        try:
            if code[0] in "xuU":
                return chr(int(code[1:], 16))
            if code[0].isdigit():
                return chr(int(code, 8) & 0xFF)
            if code[0] == "c":
                return chr(ord(code[1].upper()) ^ 0x40)
        except (ValueError, OverflowError):
            failed = True
            return ""
        if code in SIMPLE_ESCAPES:
            return SIMPLE_ESCAPES[code]
        return "\\" + code

    value = ANSI_C.sub(one, body)
    return None if failed or "\x00" in value else value


# Node types of tree-sitter-bash, as the analysis walks them
SEQUENCES = {"program", "compound_statement", "do_group", "else_clause", "elif_clause"}
CONDITIONAL = {
    "if_statement",
    "while_statement",
    "until_statement",
    "for_statement",
    "c_style_for_statement",
    "case_statement",
    "case_item",
}
STATEMENTS = (
    SEQUENCES
    | CONDITIONAL
    | {
        "command",
        "list",
        "pipeline",
        "subshell",
        "redirected_statement",
        "negated_command",
        "function_definition",
        "variable_assignment",
        "variable_assignments",
        "declaration_command",
        "unset_command",
        "test_command",
        "ERROR",
    }
)
EMBEDDED = (STATEMENTS | SEQUENCES) - {"variable_assignment", "variable_assignments", "test_command", "ERROR"}
ARITHMETIC = {
    "binary_expression",
    "unary_expression",
    "postfix_expression",
    "parenthesized_expression",
    "ternary_expression",
    "number",
    "variable_name",
}  # `(( x = 1 ))`
DATA = ARITHMETIC | {
    "variable_assignment",
    "variable_assignments",
    "declaration_command",
    "unset_command",
    "test_command",
    "comment",
}
REDIRECTS = {"file_redirect", "heredoc_redirect", "herestring_redirect"}
WORDS = {
    "word",
    "string",
    "raw_string",
    "ansi_c_string",
    "translated_string",
    "concatenation",
    "simple_expansion",
    "expansion",
    "command_substitution",
    "process_substitution",
    "arithmetic_expansion",
    "brace_expression",
    "extglob_pattern",
    "regex",
    "comment",
    "array",
}
DECLARATIONS = {"export", "declare", "typeset", "readonly", "local"}  # reached as commands: `command export X=1`
SUBSTITUTIONS = {"command_substitution", "process_substitution"}


def first_error(root: Node) -> Node | None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            return node
        if node.has_error:
            stack.extend(reversed(node.children))
    return None
