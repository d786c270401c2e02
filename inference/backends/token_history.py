"""Token-exact conversation history: the KV cache keeps its prefix from one agent turn to the next.

An agent's conversation is append-only, but its text is not token-stable: the model may generate `<` + `bash`
where the same text re-tokenized reads `<b` + `ash`, and the engine's cached prefix ends at the first
mismatch, so the rest of the last reply is processed again on every turn. Keeping the last prompt and the
tokens the model actually generated, and tokenizing only what the next prompt adds, avoids that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

# A stop string or an end-of-turn token leaves a few generated tokens the reply text lacks; more than this
# many means the texts differ for another reason, and the reply is then simply re-tokenized next turn.
MAX_TRIMMED = 8


class TokenHistory:
    def __init__(self, tokenize: Callable[[str], list[int]], detokenize: Callable[[list[int]], str]):
        self._tokenize, self._detokenize = tokenize, detokenize
        self._text = ""  # the last prompt + reply, as text ...
        self._tokens: list[int] = []  # ... and as the tokens the engine evaluated or generated

    def tokens_for(self, prompt_text: str) -> list[int]:
        """Tokens for a rendered prompt; when it extends the last prompt + reply, those keep their tokens."""
        if self._text and prompt_text.startswith(self._text):
            return self._tokens + self._tokenize(prompt_text[len(self._text) :])
        return self._tokenize(prompt_text)

    def shared_prefix(self, tokens: list[int]) -> int:
        """How many leading `tokens` the last prompt + reply has too: what the engine's cache still holds of
        them, when this conversation was the last one it served."""
        return common_prefix(self._tokens, tokens)

    def remember(self, prompt_text: str, prompt_tokens: list[int], generated: list[int], reply: str) -> None:
        """Keep the prompt and the longest run of generated tokens whose text begins the reply (a stop
        string, or an end-of-turn token, may follow tokens that the reply text does not contain)."""
        generated = list(generated)
        spelled = ""
        for _ in range(MAX_TRIMMED + 1):  # each try may be a request to the engine: bounded
            try:
                spelled = self._detokenize(generated) if generated else ""
                if reply.startswith(spelled):
                    break
            except UnicodeDecodeError:
                pass
            generated.pop()  # not empty here: an empty run spells "", which begins any reply
        else:
            generated, spelled = [], ""
        self._tokens = list(prompt_tokens) + generated
        self._text = prompt_text + spelled


def common_prefix(held: Iterable[int], tokens: Iterable[int]) -> int:
    """How many leading tokens two token sequences share (a KV cache is reused that far)."""
    count = 0
    for a, b in zip(held, tokens):
        if a != b:
            break
        count += 1
    return count
