"""`EndpointBackend`: any OpenAI-compatible server (our llama-server, vLLM, SGLang, llama.cpp RPC).

Streams through the official `openai` client and reads llama-server's extra `timings` (prompt-cache reuse,
drafted and accepted tokens) from the final chunk when the server sends them. On llama-server, turns without
native tools go through its own `/completion` with the prompt as token ids (see `inference.backends.token_history`),
so every turn after the first reuses the whole cached conversation. Other servers (vLLM, SGLang) send no such
timings: their Prometheus `/metrics`, read before and after each reply, give the same figures
(`inference.backends.metrics`; the server's whole traffic in between, so exact when the agent is its only client).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import openai

from inference.backends import metrics
from inference.backends.backend import (
    CUT,
    BackendError,
    Completion,
    ContextOverflow,
    Message,
    OnPrompt,
    OnText,
    Sampling,
    Timings,
    ToolCallRequest,
)
from inference.backends.token_history import TokenHistory

FINISH_REASONS = {"eos": "stop", "word": "stop", "limit": "length"}


class EndpointBackend:
    def __init__(self, base_url: str, *, model: str | None = None, api_key: str | None = None, timeout: float = 600.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout  # the longest silence accepted from the engine (connects fail after 10 s)
        self.client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key or "no-key",
            max_retries=0,
            timeout=openai.Timeout(timeout, connect=10.0),
        )
        self.model = model or self._first_model()
        self.name = f"endpoint:{self.base_url}"
        root = self.base_url.removesuffix("/v1")
        # no keep-alive: llama-server may close a connection after a stream, and a reused one then fails
        self.http = httpx.Client(
            base_url=root,
            timeout=httpx.Timeout(timeout, connect=10.0),
            limits=httpx.Limits(max_keepalive_connections=0),
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
        )
        self.history = TokenHistory(self._tokenize, self._detokenize) if self._is_llama_server() else None
        self.metrics = self.history is None  # read /metrics around each reply until the server shows it has none

    def _is_llama_server(self) -> bool:
        try:
            props = self.http.get("/props")
            return props.status_code == 200 and "chat_template" in props.json()
        except (httpx.HTTPError, ValueError):
            return False

    def _tokenize(self, text: str) -> list[int]:
        return self._post("/tokenize", {"content": text, "add_special": False, "parse_special": True})["tokens"]

    def _detokenize(self, tokens: list[int]) -> str:
        return self._post("/detokenize", {"tokens": tokens})["content"]

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = self.http.post(path, json=body)
        if response.status_code != 200:
            raise _status_error(self.base_url, response.status_code, _json(response.text))
        return response.json()

    def _first_model(self) -> str:
        try:
            models = self.client.models.list().data
        except openai.APIConnectionError as exc:
            raise BackendError(
                f"cannot reach {self.base_url} ({exc}); start the server (for example `agent serve`) "
                "or pass the right --endpoint"
            ) from exc
        except openai.APIStatusError as exc:
            raise BackendError(f"{self.base_url}/models answered {exc.status_code}: {exc.message}") from exc
        if not models:
            raise BackendError(f"{self.base_url} serves no model")
        return models[0].id

    def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]] | None = None,
        sampling: Sampling | None = None,
        on_text: OnText | None = None,
        on_prompt: OnPrompt | None = None,
        on_call_text: OnText | None = None,
    ) -> Completion:
        """`on_prompt` is told on llama-server's token path only (it knows the prompt's tokens before sending
        them); a chat request leaves the tokenizing to the server, which tells nothing until the reply."""
        sampling = sampling or Sampling()
        with self._errors():
            if self.history is not None and not tools:
                return self._complete_tokens(self.history, messages, sampling, on_text, on_prompt)
            before = self._figures()
            completion = self._stream(self._chat_request(messages, tools, sampling), on_text, on_call_text)
            if before is not None:
                after = self._figures_after(before, completion.timings.completion_tokens)
                if after is not None:
                    completion.timings = metrics.with_figures(completion.timings, after.minus(before))
            return completion

    def _figures(self) -> metrics.Figures | None:
        if not self.metrics:
            return None
        figures = metrics.read(self.http)
        self.metrics = figures is not None
        return figures

    def _figures_after(self, before: metrics.Figures, generated: int, wait: float = 1.0) -> metrics.Figures | None:
        """A snapshot that counts the reply: engines update their counters as the request finishes, which can be
        a moment after the client has the last chunk."""
        deadline = time.monotonic() + wait
        while True:
            after = self._figures()
            counted = after is not None and (after.generated_tokens or 0) - (before.generated_tokens or 0) >= generated
            if after is None or counted or time.monotonic() > deadline:
                return after
            time.sleep(0.05)

    def _chat_request(
        self, messages: list[Message], tools: list[dict[str, Any]] | None, sampling: Sampling
    ) -> dict[str, Any]:
        request: dict[str, Any] = dict(
            model=self.model,
            messages=[m.to_openai() for m in messages],
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_tokens,
            stream=True,
            stream_options={"include_usage": True},
            extra_body={"top_k": sampling.top_k, "min_p": sampling.min_p, "cache_prompt": True},
        )
        if sampling.seed is not None:
            request["seed"] = sampling.seed
        if sampling.stop:
            request["stop"] = sampling.stop
        if tools:
            request["tools"] = tools
        return request

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Every way a request fails, named with its cause and what to do."""
        try:
            yield
        except (openai.APITimeoutError, httpx.TimeoutException) as exc:
            raise BackendError(
                f"{self.base_url} sent nothing for {self.timeout:.0f} s: the engine is hung or overloaded; "
                "check its log, restart it, then resume the run"
            ) from exc
        except (openai.APIConnectionError, httpx.TransportError) as exc:  # httpx: the stream broke mid-reply
            raise BackendError(
                f"lost the connection to {self.base_url} ({type(exc).__name__}: {exc}); the engine "
                "stopped or crashed: check its log, restart it, then resume the run"
            ) from exc
        except openai.APIStatusError as exc:
            raise _status_error(self.base_url, exc.status_code, exc.body, exc.message) from exc

    def _complete_tokens(
        self,
        history: TokenHistory,
        messages: list[Message],
        sampling: Sampling,
        on_text: OnText | None,
        on_prompt: OnPrompt | None = None,
    ) -> Completion:
        """llama-server's own `/completion`, prompt as token ids: the chat template rendered by the server,
        the previous prompt + reply kept as the tokens the model generated (what the server's slot holds)."""
        prompt_text = self._post("/apply-template", {"messages": [m.to_openai() for m in messages]})["prompt"]
        tokens = history.tokens_for(prompt_text)
        if on_prompt:
            on_prompt(len(tokens), min(history.shared_prefix(tokens), len(tokens) - 1))
        body: dict[str, Any] = {
            "prompt": tokens,
            "n_predict": sampling.max_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "top_k": sampling.top_k,
            "min_p": sampling.min_p,
            "stop": sampling.stop,
            "stream": True,
            "return_tokens": True,
            "cache_prompt": True,
        }
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        started = time.perf_counter()
        first_at: float | None = None
        text: list[str] = []
        generated: list[int] = []
        final: dict[str, Any] = {}
        cut = False
        with self.http.stream("POST", "/completion", json=body) as response:
            if response.status_code != 200:
                raise _status_error(
                    self.base_url, response.status_code, _json(response.read().decode(errors="replace"))
                )
            for line in response.iter_lines():
                kind, _, data = line.partition(": ")
                if kind not in ("data", "error") or not data.startswith("{"):
                    continue
                chunk = json.loads(data)
                if kind == "error" or "error" in chunk:
                    raise _status_error(self.base_url, 500, chunk)
                generated += chunk.get("tokens") or []
                if chunk.get("content"):
                    first_at = first_at or time.perf_counter()
                    text.append(chunk["content"])
                    if on_text and on_text(chunk["content"]):
                        cut = True  # leaving the stream closes the connection: the server stops generating
                        break
                if chunk.get("stop"):
                    final = chunk
        if not final and not cut:
            raise httpx.RemoteProtocolError("the stream ended before the engine's final message")
        ended = time.perf_counter()
        reply = "".join(text)
        history.remember(prompt_text, tokens, generated, reply)
        reason = CUT if cut else FINISH_REASONS.get(final.get("stop_type", ""), final.get("stop_type"))
        return Completion(
            text=reply,
            finish_reason=reason,
            timings=_timings(final.get("timings"), None, len(generated), started, first_at or ended, ended),
        )

    def _stream(self, request: dict[str, Any], on_text: OnText | None, on_call_text: OnText | None) -> Completion:
        started = time.perf_counter()
        first_at: float | None = None
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        finish_reason, usage, server_timings, deltas = None, None, None, 0
        stream = self.client.chat.completions.create(**request)
        for chunk in stream:
            extra = chunk.model_extra or {}
            server_timings = extra.get("timings", server_timings)
            usage = chunk.usage or usage
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content or delta.tool_calls:
                    deltas += 1
                    first_at = first_at or time.perf_counter()
                if delta.content:
                    text.append(delta.content)
                    if on_text and on_text(delta.content):
                        finish_reason = CUT
                        break
                for call in delta.tool_calls or []:
                    slot = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                    slot["id"] = call.id or slot["id"]
                    if call.function:
                        slot["name"] += call.function.name or ""
                        slot["arguments"] += call.function.arguments or ""
                        if on_call_text and call.function.arguments and on_call_text(call.function.arguments):
                            finish_reason = CUT
                            break
                if finish_reason == CUT:
                    break
                finish_reason = choice.finish_reason or finish_reason
            if finish_reason == CUT:
                stream.close()  # the server stops generating when the connection goes
                break
        ended = time.perf_counter()
        return Completion(
            text="".join(text),
            tool_calls=[
                ToolCallRequest(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"])
                for i, c in sorted(calls.items())
            ],
            finish_reason=finish_reason,
            timings=_timings(server_timings, usage, deltas, started, first_at or ended, ended),
        )


def _status_error(url: str, status: int, body: Any, message: str | None = None) -> BackendError:
    """An error answer: a context overflow gets its own type (the agent trims and goes on)."""
    body = body if isinstance(body, dict) else {}
    error = body.get("error", body)
    if isinstance(error, dict) and error.get("type") == "exceed_context_size_error":
        return ContextOverflow(f"{error.get('message', message)}; start a new run or raise the context size")
    detail = error.get("message") if isinstance(error, dict) else None
    return BackendError(f"{url} answered {status}: {message or detail or body}")


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return {"error": {"message": text[:500]}}


def _timings(server: dict | None, usage: Any, deltas: int, started: float, first_at: float, ended: float) -> Timings:
    """Prefer the server's own measurements (llama-server `timings`); else usage and the wall clock; a server
    that sends no usage while streaming gets its completion tokens estimated as one per streamed delta."""
    if server:
        cached = int(server.get("cache_n", 0))
        return Timings(
            prompt_tokens=int(server.get("prompt_n", 0)) + cached,
            cached_prompt_tokens=cached,
            completion_tokens=int(server.get("predicted_n", 0)),
            prompt_ms=float(server.get("prompt_ms", 0.0)),
            predicted_ms=float(server.get("predicted_ms", 0.0)),
            draft_n=server.get("draft_n"),
            draft_accepted=server.get("draft_n_accepted"),
        )
    details = getattr(usage, "prompt_tokens_details", None)
    return Timings(
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        cached_prompt_tokens=(getattr(details, "cached_tokens", 0) or 0) if details else 0,
        completion_tokens=(getattr(usage, "completion_tokens", 0) or 0) if usage else deltas,
        prompt_ms=(first_at - started) * 1000,
        predicted_ms=(ended - first_at) * 1000,
    )
