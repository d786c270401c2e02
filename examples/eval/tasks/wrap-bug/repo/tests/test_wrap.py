from textutil.wrap import wrap


def test_breaks_between_words():
    assert wrap("aa bb cc dd", 5)[:1] == ["aa bb"]
