"""What a person is shown: hidden characters become visible escapes, everything else is shown as is."""

import pytest

from tools.preview import visible, visible_parts
from tools.shell import BashTool


@pytest.mark.parametrize(
    "hidden, shown",
    [
        ("\x1b[2K", "\\x1b[2K"),  # escape sequence: would erase the line
        ("\r", "\\x0d"),  # carriage return: what follows would overwrite what came before
        ("\x07\x08\x00\x7f", "\\x07\\x08\\x00\\x7f"),
        ("\x9b", "\\x9b"),  # C1 CSI
        ("\u202e", "\\u202e"),  # right-to-left override
        ("\u2066\u2069", "\\u2066\\u2069"),  # bidi isolates
        ("\u200b\u200d\ufeff\u2060", "\\u200b\\u200d\\ufeff\\u2060"),  # zero-width
        ("\u00a0\u3000", "\\xa0\\u3000"),  # spaces that are not spaces to bash
        ("\u2028", "\\u2028"),  # line separator
        ("\U000e0041", "\\U000e0041"),  # tag character
        ("\udcff", "\\udcff"),  # lone surrogate
    ],
)
def test_hidden_characters_are_shown_escaped(hidden, shown):
    assert visible(f"rm -rf x{hidden}y") == f"rm -rf x{shown}y"


def test_ordinary_text_is_shown_as_is():
    text = "git commit -m 'café ünïcode 日本語'\n\tindented line [/a-z]+("
    assert visible(text) == text and visible_parts(text) == [(text, False)]


def test_parts_say_which_pieces_are_escapes():
    assert visible_parts("a\x1bb") == [("a", False), ("\\x1b", True), ("b", False)]


def test_the_preview_of_a_command_is_the_exact_command(tmp_path):
    command = "echo ok\x1b[1A\x1b[2K\rls"
    assert (
        BashTool().preview({"command": command}, tmp_path) == command
    )  # the prompt escapes; the request keeps the truth
