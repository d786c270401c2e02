"""Text shown as the characters it is: control characters are written out, the rest kept."""

from __future__ import annotations

from rich.console import Console

from agent.ui.plain import plain, visible


def test_control_characters_are_written_out_and_the_rest_kept():
    assert visible("a\tb\nc") == "a\tb\nc"
    assert visible("\x1b[2J\r\x07\x00\x7f") == "\\x1b[2J\\x0d\\x07\\x00\\x7f"
    assert visible("\x9b31m") == "\\x9b31m"  # the one-byte CSI
    assert visible("safe\u202etxt.exe") == "safe\\u202etxt.exe"  # a right-to-left override reorders the line
    assert visible("ünïcödé ✓ [b]") == "ünïcödé ✓ [b]"


def test_plain_text_is_not_markup():
    console = Console(record=True, width=100, color_system=None)
    console.print(plain("[/a-z]+( [bold]x[/bold] [link=file:///etc]y[/link]", "yellow"))
    assert console.export_text().strip() == "[/a-z]+( [bold]x[/bold] [link=file:///etc]y[/link]"
