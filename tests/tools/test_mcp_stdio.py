"""The capped stdio transport's handling of one oversized message (the whole path runs against a real
server returning 50 MB in test_mcp_hostile.py)."""

from __future__ import annotations

from tools.mcp_stdio import OversizedMessage, oversized


def result_of(message) -> dict:
    return message.message.result


def test_id_after_the_result_and_an_escape_cut_in_half():
    head = b'{"result":{"content":[{"type":"text","text":"caf\\u00e9 line\\nnext \\u00'
    message = oversized(head, b'...","type":"text"}]},"jsonrpc":"2.0","id":"req-7"}', 9_000_000, 4_000_000)
    assert message.message.id == "req-7"
    note, text = (block["text"] for block in result_of(message)["content"])
    assert text == "café line\nnext " and "9,000,000 bytes" in note and "first 15 characters" in note


def test_a_text_that_closed_inside_the_kept_part():
    head = b'{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"short"},{"type":"image","data":"AAAA'
    assert result_of(oversized(head, b'AAAA"}]}}', 5_000_000, 4_000_000))["content"][1]["text"] == "short"


def test_no_id_means_dropped_and_reported():
    dropped = oversized(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"xxx', b"xx", 5_000_000, 4_000_000)
    assert isinstance(dropped, OversizedMessage) and "5,000,000-byte message" in str(dropped)
