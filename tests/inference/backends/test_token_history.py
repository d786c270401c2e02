"""TokenHistory's bookkeeping on a toy tokenizer (one token per character); the real engines are tested in
test_embedded.py and test_server.py, which fail without it."""

from __future__ import annotations

from typing import ClassVar

from inference.backends.token_history import MAX_TRIMMED, TokenHistory


class Toy:
    SPECIAL: ClassVar[dict[int, str]] = {
        1000: "a",
        1001: "b",
        9999: "<end>",
    }  # the model's own tokens, unlike the toy tokenizer's

    def __init__(self):
        self.detokenized = 0

    def tokenize(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def detokenize(self, tokens: list[int]) -> str:
        self.detokenized += 1
        return "".join(self.SPECIAL.get(t, chr(t)) for t in tokens)


def test_a_prompt_that_extends_the_last_reply_keeps_its_generated_tokens():
    toy = Toy()
    history = TokenHistory(toy.tokenize, toy.detokenize)
    history.remember("P:", [80, 58], [1000, 1001, 9999], "ab")  # 9999: an end-of-turn token the text lacks
    assert history.tokens_for("P:ab|next") == [80, 58, 1000, 1001] + [ord(c) for c in "|next"]
    assert history.tokens_for("other") == [ord(c) for c in "other"]


def test_a_reply_that_never_matches_costs_a_bounded_number_of_detokenize_calls():
    toy = Toy()
    history = TokenHistory(toy.tokenize, toy.detokenize)
    history.remember("P:", [80, 58], [ord("x")] * 1000, "y" * 1000)
    assert toy.detokenized == MAX_TRIMMED + 1
    assert history.tokens_for("P:" + "y" * 1000 + "!") == [ord(c) for c in "P:" + "y" * 1000 + "!"]


def test_the_shared_prefix_is_what_the_last_prompt_and_reply_have_in_common():
    toy = Toy()
    history = TokenHistory(toy.tokenize, toy.detokenize)
    assert history.shared_prefix([1, 2]) == 0
    history.remember("P:", [80, 58], [1000, 1001], "ab")
    assert history.shared_prefix(history.tokens_for("P:ab|next")) == 4
    assert history.shared_prefix([80, 59]) == 1
