"""Property-based fuzzing of every tool-call parser in agent/core/toolcalls.py.

Inputs: random text, and near-valid calls built from the real tool names and parameter tags (XML form,
`<tool_call>` JSON, fenced JSON, bare JSON, native `tool_calls`) with mutations: truncation, unclosed and
nested tags, unicode, NUL bytes, huge values, deep nesting, JSON of the wrong types. Properties: nothing
raises; every call has a name and a JSON-serialisable dict of arguments; every error is a non-empty message;
well-formed calls come back exactly. The number of cases tried is printed at the end of the module.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agent.core.loop import FinishTool
from agent.core.toolcalls import NativeProtocol, ParseResult, TextProtocol, call_from_json, parse_text
from inference.backends.backend import Completion, ToolCallRequest
from skills.loader import SkillCatalog
from skills.tool import ActivateSkillTool
from tools.base import Tool, Toolbox, ToolResult
from tools.files import file_tools
from tools.shell import BashTool


class OddParams(BaseModel):
    query: str
    limit: int | None = None


class OddlyNamedTool(Tool):
    """Like an MCP tool: `<server>__<tool>` with a dash, which must not break the tag regexes."""

    name = "my-srv__look_up"
    description = "x"
    Params = OddParams

    def run(self, params, ctx):
        return ToolResult(output="")


TOOLS: list[Tool] = [BashTool(), *file_tools(), FinishTool(), ActivateSkillTool(SkillCatalog()), OddlyNamedTool()]
TOOLBOX = Toolbox(TOOLS)
NAMES = [t.name for t in TOOLS]
PARAMS = sorted({p for t in TOOLS for p in t.Params.model_fields})
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

CASES: Counter[str] = Counter()  # examples run per property (shrinking included)
ESCAPES: Counter[str] = Counter()  # examples where an exception escaped a parser


@contextmanager
def case(kind: str):
    CASES[kind] += 1
    try:
        yield
    except AssertionError:
        raise
    except BaseException:
        ESCAPES[kind] += 1
        raise


@pytest.fixture(scope="module", autouse=True)
def report_counts(report_fuzz_counts):
    yield
    report_fuzz_counts("tool-call parser fuzzing", CASES, ESCAPES)


# ---------------------------------------------------------------- strategies

SURROGATES = st.sampled_from(["\ud800", "\udfff", "\udc80"])
ANY_CHAR = (
    st.characters(codec=None)
    | SURROGATES
    | st.sampled_from(["\x00", "\n", "\r", "\t", "<", ">", "/", "`", "{", "}", '"'])
)
MARKUP = st.sampled_from(
    [f"<{n}>" for n in NAMES]
    + [f"</{n}>" for n in NAMES]
    + [f"<{p}>" for p in PARAMS]
    + [f"</{p}>" for p in PARAMS]
    + [
        "<tool_call>",
        "</tool_call>",
        "```json\n",
        "```\n",
        "```",
        '{"name": ',
        '"arguments": {',
        "}",
        "<observation",
        "\n",
    ]
)
HUGE = st.builds(
    lambda piece, n: piece * n,
    st.sampled_from(["a", "<", "</content>", "<bash>", "{", "[", "\x00", "é\n"]),
    st.integers(1_000, 20_000),
)


def text_from_pieces(pieces: st.SearchStrategy[str], max_size: int = 40) -> st.SearchStrategy[str]:
    return st.lists(pieces, max_size=max_size).map("".join)


RANDOM_TEXT = st.one_of(
    st.text(ANY_CHAR, max_size=300),
    text_from_pieces(MARKUP | st.text(ANY_CHAR, max_size=8)),
    HUGE,
)

JSON_SCALAR = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(ANY_CHAR, max_size=30)
JSON_VALUE = st.recursive(
    JSON_SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def xml_call(draw, clean: bool = False) -> tuple[str, str, dict[str, str]]:
    """A call in the XML form; `clean` values contain nothing the parser treats specially."""
    tool = draw(st.sampled_from(TOOLS))
    fields = list(tool.Params.model_fields)
    names = draw(st.lists(st.sampled_from(fields), unique=True, min_size=1 if clean else 0))
    if clean:
        value = st.text(st.characters(codec=None, exclude_characters="<`\r"), max_size=40).filter(
            lambda v: not v.startswith("\n") and not v.endswith("\n")
        )
    else:
        value = st.text(ANY_CHAR, max_size=60) | HUGE | MARKUP | JSON_VALUE.map(json.dumps)
        names += draw(st.lists(st.sampled_from(PARAMS) | st.from_regex(r"[a-z_]{1,10}", fullmatch=True), max_size=2))
    arguments = {name: draw(value) for name in names}
    newline = draw(st.sampled_from(["", "\n"]))
    body = "".join(f"<{k}>{newline}{v}{newline}</{k}>{newline}" for k, v in arguments.items())
    return f"<{tool.name}>{newline}{body}</{tool.name}>", tool.name, arguments


@st.composite
def json_call(draw, clean: bool = False) -> tuple[dict, str]:
    name = draw(st.sampled_from(NAMES))
    if clean:
        safe = st.text(st.characters(codec=None, exclude_characters="<`"), max_size=30)
        arguments = draw(
            st.dictionaries(
                st.text(st.characters(codec=None, exclude_characters="<`"), max_size=8),
                st.recursive(
                    st.none() | st.booleans() | st.integers() | safe, lambda i: st.lists(i, max_size=3), max_leaves=6
                ),
                max_size=4,
            )
        )
        return {"name": name, "arguments": arguments}, name
    arguments = draw(JSON_VALUE | JSON_VALUE.map(json.dumps) | st.text(ANY_CHAR, max_size=20))
    shape = draw(st.sampled_from(["name/arguments", "tool/args", "function", "tool_name/input", "junk"]))
    data = {
        "name/arguments": {"name": name, "arguments": arguments},
        "tool/args": {"tool": name, "args": arguments},
        "function": {"function": {"name": name, "arguments": arguments}},
        "tool_name/input": {"tool_name": name, "input": arguments},
        "junk": draw(JSON_VALUE),
    }[shape]
    return data, name


def mutate(draw, text: str) -> str:
    kind = draw(st.sampled_from(["none", "truncate", "drop", "insert", "nest", "duplicate", "nul", "deep"]))
    if not text or kind == "none":
        return text
    at = draw(st.integers(0, len(text)))
    if kind == "truncate":
        return text[:at]
    if kind == "drop":
        end = draw(st.integers(at, min(len(text), at + 12)))
        return text[:at] + text[end:]
    if kind == "insert":
        return text[:at] + draw(MARKUP | st.text(ANY_CHAR, max_size=5)) + text[at:]
    if kind == "nest":
        inner, _, _ = draw(xml_call())
        return text[:at] + inner + text[at:]
    if kind == "duplicate":
        return text[:at] + text + text[at:]
    if kind == "nul":
        return text[:at] + "\x00" + text[at:]
    depth = draw(st.integers(500, 5_000))
    return text[:at] + "[" * depth + '{"a":' * 10 + text[at:]


@st.composite
def near_valid_reply(draw) -> str:
    pieces = []
    for _ in range(draw(st.integers(1, 4))):
        form = draw(st.sampled_from(["xml", "tool_call", "fenced", "bare", "prose"]))
        if form == "xml":
            piece = draw(xml_call())[0]
        elif form == "prose":
            piece = draw(st.text(ANY_CHAR, max_size=40))
        else:
            data, _ = draw(json_call())
            body = json.dumps(data, ensure_ascii=draw(st.booleans()))
            piece = {
                "tool_call": f"<tool_call>\n{body}\n</tool_call>",
                "fenced": f"```json\n{body}\n```",
                "bare": body,
            }[form]
        pieces.append(mutate(draw, piece))
    return "\n".join(pieces)


# ---------------------------------------------------------------- properties


def check(result: ParseResult) -> None:
    assert isinstance(result, ParseResult)
    for call in result.calls:
        assert isinstance(call.name, str) and call.name
        assert isinstance(call.arguments, dict)
        json.dumps(call.arguments)
    for error in result.errors:
        assert isinstance(error, str) and error.strip()


@pytest.mark.slow
@settings(max_examples=400, **SETTINGS)
@given(RANDOM_TEXT)
def test_parse_text_never_raises_on_random_text(text):
    with case("random text"):
        check(parse_text(text, TOOLBOX))
        check(TextProtocol().parse(Completion(text=text), TOOLBOX))


@pytest.mark.slow
@settings(max_examples=400, **SETTINGS)
@given(near_valid_reply())
def test_parse_text_never_raises_on_near_valid_calls(text):
    with case("near-valid calls"):
        result = parse_text(text, TOOLBOX)
        check(result)
        for call in result.calls:
            assert call.name in NAMES or '"' in text  # XML calls only name real tools; JSON may name anything


@pytest.mark.slow
@settings(max_examples=300, **SETTINGS)
@given(
    st.lists(xml_call(clean=True), min_size=1, max_size=4),
    st.text(st.characters(codec=None, exclude_characters="<`{"), max_size=20),
)
def test_well_formed_xml_calls_come_back_exactly(calls, prose):
    with case("well-formed XML"):
        text = prose.join(c[0] for c in calls)
        result = parse_text(text, TOOLBOX)
        assert result.errors == []
        assert [(c.name, c.arguments) for c in result.calls] == [(name, args) for _, name, args in calls]


@pytest.mark.slow
@settings(max_examples=300, **SETTINGS)
@given(json_call(clean=True), st.sampled_from(["tool_call", "fenced", "bare"]), st.booleans())
def test_well_formed_json_calls_come_back_exactly(call, form, ascii_only):
    with case("well-formed JSON"):
        data, name = call
        body = json.dumps(data, ensure_ascii=ascii_only)
        text = {
            "tool_call": f"<tool_call>\n{body}\n</tool_call>",
            "fenced": f"Calling it:\n```json\n{body}\n```",
            "bare": body,
        }[form]
        result = parse_text(text, TOOLBOX)
        assert result.errors == []
        assert [(c.name, c.arguments) for c in result.calls] == [(name, data["arguments"])]


@pytest.mark.slow
@settings(max_examples=400, **SETTINGS)
@given(JSON_VALUE | json_call().map(lambda c: c[0]))
def test_call_from_json_accepts_or_declines_any_json(data):
    with case("call_from_json"):
        call = call_from_json(data)
        if call is not None:
            assert isinstance(call.name, str) and call.name and isinstance(call.arguments, dict)


@settings(max_examples=200, **SETTINGS)
@given(
    st.text(ANY_CHAR, max_size=50)
    | HUGE
    | st.integers(100, 20_000).map(lambda n: "[" * n)
    | st.integers(4_400, 9_000).map(lambda n: '{"a": ' + "7" * n + "}")
)
def test_call_from_json_with_string_arguments(arguments):
    with case("call_from_json string arguments"):
        call = call_from_json({"name": "bash", "arguments": arguments})
        assert call is None or isinstance(call.arguments, dict)


NATIVE_ARGUMENTS = st.one_of(
    JSON_VALUE.map(json.dumps),
    st.dictionaries(st.sampled_from(PARAMS), JSON_VALUE, max_size=4).map(json.dumps),
    st.text(ANY_CHAR, max_size=40),
    st.integers(100, 20_000).map(lambda n: "[" * n + "]" * n),
    st.integers(4_400, 9_000).map(lambda n: '{"command": ' + "9" * n + "}"),
    st.just(""),
    st.just("   "),
    st.just("null"),
)


@pytest.mark.slow
@settings(max_examples=400, **SETTINGS)
@given(
    st.lists(
        st.builds(
            ToolCallRequest,
            id=st.text(max_size=5),
            name=st.sampled_from(NAMES) | st.text(ANY_CHAR, max_size=10),
            arguments=NATIVE_ARGUMENTS,
        ),
        max_size=4,
    ),
    st.text(ANY_CHAR, max_size=40) | near_valid_reply(),
)
def test_native_protocol_parse_never_raises(tool_calls, text):
    with case("native tool_calls"):
        protocol = NativeProtocol()
        result = protocol.parse(Completion(text=text, tool_calls=tool_calls), TOOLBOX)
        check(result)
        if tool_calls:
            assert len(result.calls) + len(result.errors) == len(tool_calls)
            assert all(c.id is not None for c in result.calls)
        messages = protocol.observations([(c, ToolResult(output="x")) for c in result.calls], result.errors)
        assert all(isinstance(m.content, str) for m in messages)


@pytest.mark.slow
@settings(max_examples=200, **SETTINGS)
@given(RANDOM_TEXT | near_valid_reply())
def test_close_stopped_call_only_appends_a_closing_tag(text):
    with case("close_stopped_call"):
        closed = TextProtocol().close_stopped_call(Completion(text=text), TOOLBOX).text
        assert closed.startswith(text)
        assert re.fullmatch(r"\n?(</[\w-]+>)?", closed[len(text) :], re.S)
        check(parse_text(closed, TOOLBOX))
        assert NativeProtocol().close_stopped_call(Completion(text=text), TOOLBOX).text == text


@pytest.mark.slow  # counts what the (slow) properties above ran
def test_each_property_ran_without_escapes():
    assert len(CASES) >= 8 and all(n > 0 for n in CASES.values())
    assert sum(ESCAPES.values()) == 0
