from agent.strategies.repetition import RepetitionGuard, repeats_block, repeats_line_shapes, repeats_verbatim

VARIED_TESTS = "\n".join(
    [
        "def test_add():",
        "    assert add(1, 2) == 3",
        "def test_sub():",
        "    assert sub(5, 3) == 2",
        "def test_mul():",
        "    assert mul(2, 4) == 8",
        "def test_div():",
        "    assert div(9, 3) == 3",
        "def test_zero():",
        "    with pytest.raises(ZeroDivisionError):",
        "        div(1, 0)",
        "def test_neg():",
        "    assert add(-1, -1) == -2",
        "class TestRoman:",
        "    def test_one(self):",
        "        assert to_roman(1) == 'I'",
        "    def test_four(self):",
        "        assert to_roman(4) == 'IV'",
        "    def test_nine(self):",
        "        assert to_roman(9) == 'IX'",
        "    def test_big(self):",
        "        assert to_roman(1994) == 'MCMXCIV'",
        "    def test_bad(self):",
        "        with pytest.raises(ValueError):",
        "            to_roman(0)",
        "def helper(x):",
        "    return x * 2",
        "if __name__ == '__main__':",
        "    print(helper(3))",
        "    print(add(1, 1))",
        "    main()",
        "",
    ]
)
LOOPING_TESTS = "def test_to_roman():\n" + "".join(
    f"    assert to_roman({n}) == '{'I' * (n % 4)}'\n" for n in range(1, 60)
)


def stream(text: str) -> int | None:
    """Feed `text` in 8-character pieces; the offset where the guard cut, or None."""
    guard = RepetitionGuard()
    for start in range(0, len(text), 8):
        if guard.feed(text[start : start + 8]):
            return start + 8
    return None


def test_a_reply_of_near_identical_lines_is_cut_while_it_streams():
    cut = stream(LOOPING_TESTS)
    assert cut is not None and cut < len(LOOPING_TESTS) * 0.7


def test_a_verbatim_cycle_is_cut():
    assert stream("Let me fix it. " + "result = f(x)\n" * 80) is not None
    assert stream("1" * 2000) is not None


def test_ordinary_code_and_varied_tests_are_not_cut():
    assert stream(VARIED_TESTS) is None
    assert not repeats_line_shapes(VARIED_TESTS) and not repeats_verbatim(VARIED_TESTS)
    prose = " ".join(f"Step {i} reads file number {i} and checks its {w}." for i, w in enumerate(["size", "mode"] * 30))
    assert stream(prose) is None


PARSER = """    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--name", default="")
    args = parser.parse_args()
    if args.count < 1:
        parser.error("count must be positive")
"""


def test_a_block_written_again_and_again_is_cut_and_one_written_twice_is_not():
    """Six lines have six shapes (too many for the near-identical-lines check) and a period longer than the
    verbatim check's: repeated three times in a row, they are a loop; twice, they may be meant."""
    assert repeats_block("def main():\n" + PARSER * 3 + "x")
    assert not repeats_block("def main():\n" + PARSER * 2 + "    run(args)\n" + PARSER + "x")
    assert stream("def main():\n" + PARSER * 2 + VARIED_TESTS) is None
    cut = stream("def main():\n" + PARSER * 40)
    assert cut is not None and cut < len(PARSER) * 5
