from textutil.box import boxed
from textutil.wrap import wrap

assert wrap("one two three", 7) == ["one two", "three"], wrap("one two three", 7)
assert wrap("aa bb cc dd", 5) == ["aa bb", "cc dd"]
assert wrap("hello", 10) == ["hello"]
assert wrap("", 10) == []
assert wrap("a verylongword b", 4) == ["a", "verylongword", "b"]
assert boxed("hi there", 5) == "+-------+\n| hi    |\n| there |\n+-------+", boxed("hi there", 5)
print("hidden check: ok")
