"""Tool calls from a model reply, in every shape local models produce, behind one interface.

Two protocols:
- `TextProtocol` describes tools in the system prompt and parses calls out of the reply. It accepts
  XML-style calls whose parameter values travel raw (file contents are not JSON-escaped, so the model writes
  code as code and speculative drafting keeps working), Qwen/Hermes `<tool_call>{json}</tool_call>`,
  fenced JSON, and a bare JSON object.
- `NativeProtocol` sends OpenAI `tools` and reads `tool_calls`; a reply without native calls falls back to
  text parsing, because weak models often write the call as text anyway.
Malformed calls are reported as errors that say what to fix; they never raise.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from inference.backends.backend import Completion, Message
from tools.base import Tool, Toolbox, ToolResult


class ParsedCall(BaseModel):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None  # set for native calls, whose results must quote it


class ParseResult(BaseModel):
    calls: list[ParsedCall] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


class Span(BaseModel):
    start: int
    end: int
    call: ParsedCall | None = None
    error: str | None = None


# ---------------------------------------------------------------- text formats

TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
FENCE = re.compile(r"```[ \t]*(json|tool_call|tool)?[ \t]*\n(.*?)```", re.S | re.I)


def parse_text(text: str, toolbox: Toolbox) -> ParseResult:
    """Every tool call in `text`, in order of appearance; overlapping matches keep the earliest."""
    text = _named_openers(text, toolbox)
    spans = [*_xml_spans(text, toolbox), *_tool_call_tag_spans(text, toolbox), *_fenced_json_spans(text, toolbox)]
    spans.sort(key=lambda s: s.start)
    result, last_end = ParseResult(), -1
    for span in spans:
        if span.start < last_end:
            continue
        last_end = span.end
        if span.call:
            result.calls.append(span.call)
        elif span.error:
            result.errors.append(span.error)
    if not spans and text.strip().startswith("{"):
        whole = _json_span(text.strip(), 0, len(text), toolbox, where="reply")
        if whole:
            result.calls += [whole.call] if whole.call else []
            result.errors += [whole.error] if whole.error else []
    if not result.calls and not result.errors:
        _unknown_tool_tags(text, toolbox, result)
    return result


def _named_openers(text: str, toolbox: Toolbox) -> str:
    """A call whose opening tag is written as the tool's name on a line of its own, in any case, before its
    parameters (`Edit_file\n<path>..</path>`, seen in a refactor run): the name is read as the opening tag."""
    for tool in toolbox:
        parameters = "|".join(map(re.escape, tool.Params.model_fields))
        if parameters:
            opener = re.compile(rf"(?im)^[ \t]*{re.escape(tool.name)}[ \t]*\n(?=[ \t]*<(?:{parameters})>)")
            text = opener.sub(f"<{tool.name}>\n", text)
    return text


def _unknown_tool_tags(text: str, toolbox: Toolbox, result: ParseResult) -> None:
    """A call to a tool that does not exist (`<verify_before_finish><summary>..`): small models invent names,
    often from a skill's name. When its parameters fit exactly one tool (`summary`: finish) it is that tool's
    call; otherwise the model is told which tools exist, which gets it back on track where "no tool call"
    does not."""
    parameters = {name for tool in toolbox for name in tool.Params.model_fields}
    for match in re.finditer(r"<([A-Za-z_][\w-]{1,40})>", text):
        name = match.group(1)
        close = text.find(f"</{name}>", match.end())
        if name in parameters or close == -1:
            continue
        body = text[match.end() : close]
        fits = [t for t in toolbox if _fits(t, body)]
        if len(fits) == 1:
            result.calls.append(ParsedCall(name=fits[0].name, arguments=_xml_parameters(body, fits[0])))
        else:
            result.errors.append(
                f"<{name}> is not a tool. The tools are: {', '.join(t.name for t in toolbox)}. "
                "When the task is done and verified, call <finish>."
            )
        return


def _fits(tool: Tool, body: str) -> bool:
    """The body names every required parameter of `tool`, and only parameters of `tool`."""
    used = set(re.findall(r"<(\w+)>", body))
    fields = tool.Params.model_fields
    required = {n for n, f in fields.items() if f.is_required()}
    return bool(used) and required <= used <= set(fields)


def _xml_spans(text: str, toolbox: Toolbox) -> Iterable[Span]:
    for tool in toolbox:
        opener = re.compile(rf"<{re.escape(tool.name)}(\s[^>]*)?>")
        closes = [m.start() for m in re.finditer(re.escape(f"</{tool.name}>"), text)]
        # A line opening the same tool again ends a call left unclosed (`<edit_file>..<edit_file>..</edit_file>`)
        reopens = [m.start() for m in re.finditer(rf"(?m)^[ \t]*<{re.escape(tool.name)}>", text)]
        for match in opener.finditer(text):
            later = bisect.bisect_left(closes, match.end())  # the first closing tag after the opener
            close = closes[later] if later < len(closes) else -1
            again = bisect.bisect_left(reopens, match.end())
            if again < len(reopens) and close != -1 and reopens[again] < close:
                body = text[match.end() : reopens[again]]
                yield Span(start=match.start(), end=reopens[again], call=_xml_call(tool, match, body))
                continue
            if close == -1:
                yield Span(
                    start=match.start(),
                    end=len(text),
                    error=f"<{tool.name}> was opened but never closed with </{tool.name}>; "
                    "write the whole call again, ending with the closing tag (keep files short enough to fit)",
                )
                continue
            body = text[match.end() : close]
            yield Span(start=match.start(), end=close + len(tool.name) + 3, call=_xml_call(tool, match, body))


def _xml_call(tool: Tool, opener: re.Match[str], body: str) -> ParsedCall:
    arguments = _attributes(opener.group(1) or "")
    arguments.update(_xml_parameters(body, tool))
    required = [n for n, f in tool.Params.model_fields.items() if f.is_required() and n not in arguments]
    if not arguments and len(required) == 1 and body.strip():
        arguments[required[0]] = _sole_value(body, tool, required[0])
    return ParsedCall(name=tool.name, arguments=arguments)


def _sole_value(body: str, tool: Tool, name: str) -> str:
    """The body as the one required value (`<bash>ls</bash>`), also as small models write it: wrapped in a tag of
    another name (`<search><regex>x</regex></search>`), or after the parameter's description copied from the
    tool list (`<search>\nPython regular expression searched line by line\nx\n</search>`)."""
    value = _strip_value(body)
    if wrapped := re.fullmatch(r"\s*<(\w+)>(.*)</\1>\s*", value, re.S):
        value = _strip_value(wrapped.group(2))
    description = (tool.Params.model_fields[name].description or "").strip().rstrip(".")
    first, _, rest = value.partition("\n")
    if description and first.strip().rstrip(".") == description and rest.strip():
        value = rest
    return value


def _attributes(raw: str) -> dict[str, str]:
    return dict(re.findall(r'(\w+)\s*=\s*"([^"]*)"', raw))


def _xml_parameters(body: str, tool: Tool) -> dict[str, Any]:
    """Raw values of `<param>...</param>` children; a value runs to the *last* closing tag of its name
    before the next parameter, so file contents may mention the tag itself."""
    names = list(tool.Params.model_fields)
    found: dict[str, Any] = {}
    openings = sorted((m.start(), m.end(), name) for name in names for m in re.finditer(rf"<{name}>", body))
    for index, (start, value_start, name) in enumerate(openings):
        if name in found:
            continue
        limit = next((s for s, _, n in openings[index + 1 :] if n != name and n not in found and s > start), len(body))
        close = body.rfind(f"</{name}>", value_start, limit if limit != len(body) else None)
        if close == -1:
            close = limit
        found[name] = _strip_value(body[value_start:close])
    return found


def _strip_value(value: str) -> str:
    """Drop the one newline after the opening and before the closing tag, and a fence around the whole value."""
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    fenced = re.fullmatch(r"\s*```[\w+.-]*[ \t]*\n(.*?)\n?```\s*", value, re.S)
    return fenced.group(1) + "\n" if fenced else value


def _tool_call_tag_spans(text: str, toolbox: Toolbox) -> Iterable[Span]:
    for match in TOOL_CALL_TAG.finditer(text):
        body = match.group(1).strip()
        body = re.sub(r"^```(?:json)?\s*|\s*```$", "", body)
        span = _json_span(body, match.start(), match.end(), toolbox, where="<tool_call>")
        if span:
            yield span
        else:
            yield Span(
                start=match.start(),
                end=match.end(),
                error='<tool_call> must hold a JSON object {"name": ..., "arguments": {...}}',
            )


def _fenced_json_spans(text: str, toolbox: Toolbox) -> Iterable[Span]:
    for match in FENCE.finditer(text):
        body = match.group(2).strip()
        if not body.startswith("{"):
            continue
        span = _json_span(body, match.start(), match.end(), toolbox, where="```json block", quiet=True)
        if span:
            yield span


def _json_span(body: str, start: int, end: int, toolbox: Toolbox, where: str, quiet: bool = False) -> Span | None:
    """A call from a JSON object; `quiet` ignores JSON that is not meant as a call (e.g. a config file)."""
    data, problem = load_json(body)
    if problem:
        if quiet and not re.search(r'"(name|tool|function)"\s*:', body):
            return None
        return Span(
            start=start,
            end=end,
            error=f"the JSON in the {where} does not parse ({problem}). "
            "For calls with code or file contents, use the XML form, where values are written raw.",
        )
    call = call_from_json(data)
    if call is None or (quiet and call.name not in toolbox):
        return None if quiet else Span(start=start, end=end, error=f"the JSON in the {where} has no tool name")
    return Span(start=start, end=end, call=call)


def load_json(text: str) -> tuple[Any, str | None]:
    """`json.loads` that never raises: (value, None), or (None, what is wrong). Besides syntax errors, JSON
    nested deeper than the recursion limit and integers over Python's 4300-digit limit fail to load."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    except RecursionError:
        return None, "nested too deeply"
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        return None, str(exc).split(":")[0]


def call_from_json(data: Any) -> ParsedCall | None:
    """Accept the common JSON call shapes: name/arguments, tool/args, function{name, arguments}."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("function"), dict):
        data = data["function"]
    name = data.get("name") or data.get("tool") or data.get("tool_name")
    if not isinstance(name, str):
        return None
    arguments: Any = next((data[k] for k in ("arguments", "parameters", "args", "input") if k in data), {})
    if isinstance(arguments, str):
        arguments, problem = load_json(arguments) if arguments.strip() else ({}, None)
        if problem:
            return None
    return ParsedCall(name=name, arguments=arguments if isinstance(arguments, dict) else {})


# ---------------------------------------------------------------- protocols


def describe_tool_xml(tool: Tool) -> str:
    """How a tool is called in the text protocol, generated from its parameter model."""
    lines = [f"<{tool.name}>"]
    for name, field in tool.Params.model_fields.items():
        hint = (field.description or name).rstrip(".")
        if not field.is_required():
            hint += " (optional)"
        multiline = name in tool.multiline_params
        lines.append(f"<{name}>\n{hint}\n</{name}>" if multiline else f"<{name}>{hint}</{name}>")
    lines.append(f"</{tool.name}>")
    return f"### {tool.name}\n{tool.description}\n" + "\n".join(lines)


# What tool output could use to leave its place in the prompt: our observation tags, the tool-result tags
# chat templates wrap native results in, and `<|...|>` control tokens (`<|im_end|>`, `<|im_start|>`,
# `<|eot_id|>`), which the engine's tokenizer would read as real turn boundaries. Operators like `<|>` and
# `<|` (Haskell, Elm) are not control tokens and stay as they are.
STRUCTURE_TAG = re.compile(r"<(?=\s*/?\s*(?:observation|tool_response)\b|\|[^|<>\n]{1,64}\|>)", re.I)


def neutralise_tags(text: str) -> str:
    """Tool output is data: an `<observation ...>`, `</observation>` or `</tool_response>` (any case or
    spacing) or a `<|control|>` token in it has its `<` written as `&lt;`, so output cannot end its own
    observation or turn and forge another one."""
    return STRUCTURE_TAG.sub("&lt;", text)


def observation_text(name: str, result: ToolResult) -> str:
    status = "error" if result.is_error else "ok"
    return f'<observation tool="{name}" status="{status}">\n{neutralise_tags(result.output)}\n</observation>'


class TextProtocol:
    """Tools described in the prompt, calls parsed from the reply, results sent back as one user message."""

    name = "text"

    def stop_sequences(self, toolbox: Toolbox) -> list[str]:
        """Stop at `<observation` (the model must not invent results) and after any call whose result the
        model needs before it can go on; batchable calls (file writes) may come several per reply."""
        return ["<observation", *(f"</{t.name}>" for t in toolbox if not t.batchable)]

    def close_stopped_call(self, completion: Completion, toolbox: Toolbox) -> Completion:
        """Put back the closing tag that a stop sequence cut off, so history shows well-formed calls."""
        text = completion.text
        last = max(toolbox, key=lambda t: text.rfind(f"<{t.name}"))
        opened = text.rfind(f"<{last.name}")
        if opened == -1 or last.batchable or text.rfind(f"</{last.name}>") > opened:
            return completion
        tail = "" if text.endswith("\n") else "\n"
        return completion.model_copy(update={"text": f"{text}{tail}</{last.name}>"})

    def api_tools(self, toolbox: Toolbox) -> list[dict[str, Any]] | None:
        return None

    def instructions(self, toolbox: Toolbox) -> str:
        return "\n\n".join(describe_tool_xml(t) for t in toolbox)

    def parse(self, completion: Completion, toolbox: Toolbox) -> ParseResult:
        return parse_text(completion.text, toolbox)

    def observations(self, results: list[tuple[ParsedCall, ToolResult]], errors: list[str]) -> list[Message]:
        parts = [observation_text(call.name, result) for call, result in results]
        parts += [
            f'<observation status="error">\nmalformed tool call: {neutralise_tags(e)}\n</observation>' for e in errors
        ]
        return [Message(role="user", content="\n".join(parts))] if parts else []


class NativeProtocol(TextProtocol):
    """OpenAI function calling; text-written calls in the reply are still honoured."""

    name = "native"

    def api_tools(self, toolbox: Toolbox) -> list[dict[str, Any]] | None:
        return toolbox.schemas()

    def instructions(self, toolbox: Toolbox) -> str:
        return "Call the tools provided through the function-calling interface."

    def stop_sequences(self, toolbox: Toolbox) -> list[str]:
        return []

    def close_stopped_call(self, completion: Completion, toolbox: Toolbox) -> Completion:
        return completion

    def parse(self, completion: Completion, toolbox: Toolbox) -> ParseResult:
        if not completion.tool_calls:
            return super().parse(completion, toolbox)
        result = ParseResult()
        for native in completion.tool_calls:
            if not native.name.strip():
                result.errors.append("a tool call without a function name; name one of the tools provided")
                continue
            arguments, problem = load_json(native.arguments) if native.arguments.strip() else ({}, None)
            if problem:
                result.errors.append(f"arguments of {native.name} are not valid JSON ({problem}); send a JSON object")
                continue
            if not isinstance(arguments, dict):
                result.errors.append(f"arguments of {native.name} must be a JSON object")
                continue
            result.calls.append(ParsedCall(name=native.name, arguments=arguments, id=native.id))
        return result

    def observations(self, results: list[tuple[ParsedCall, ToolResult]], errors: list[str]) -> list[Message]:
        native = [(c, r) for c, r in results if c.id]
        textual = [(c, r) for c, r in results if not c.id]
        messages = [
            Message(role="tool", content=neutralise_tags(r.output), tool_call_id=c.id, name=c.name) for c, r in native
        ]
        return messages + super().observations(textual, errors)


PROTOCOLS = {"text": TextProtocol, "native": NativeProtocol}
