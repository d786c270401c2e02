"""The files and names a task asks for: read conservatively from its text, both ways (what must be there, and
the ordinary tasks that name nothing to be made), and checked on real files."""

from __future__ import annotations

import pytest

from agent.checks.finish import FinishGate
from agent.checks.named import asked_for, missing
from agent.settings.config import Config
from tests.agent.checks.test_project import write


@pytest.mark.parametrize(
    "task, files, names",
    [
        ("A Node module `slugify.js` with tests.", ["slugify.js"], []),
        ("A Node module slugify.js with a function slugify(text).", ["slugify.js"], ["slugify"]),
        ("Write a function c_to_f(celsius) in temp.py.", ["temp.py"], ["c_to_f"]),
        ("A Python module calc.py with add(a, b), with pytest tests.", ["calc.py"], ["add"]),
        ("A Rust crate with a function sum(a, b).", [], ["sum"]),  # a kind word makes a builtin's name the task's
        ("A package `shop` with `shop/cart.py` and class Cart.", ["shop/cart.py"], ["Cart"]),
        ("A tool; the function named `parse_args` reads argv.", [], ["parse_args"]),
    ],
)
def test_a_new_project_must_have_what_it_names(tmp_path, task, files, names):
    asked = asked_for(task, tmp_path, new_project=True)
    assert (asked.files, asked.names) == (files, names)


@pytest.mark.parametrize(
    "task",
    [
        "A CLI that reads its settings from config.json and uses `sorted()`.",  # read, not made; a builtin
        "A small Node.js project that prints the date.",  # a framework's name, not a file
        "A to-do list where item(s) can be marked done; use json.dumps() for output.",  # prose, a dotted name
        "A parser with a clear class hierarchy and method chaining.",  # kind words before English words
        "A calculator that must not use eval(x) or `exec()`.",  # what must not be
        "Write a module; the old `helper.py` is gone.",  # what is gone
    ],
)
def test_a_new_project_is_not_held_to_words_that_are_not_names(tmp_path, task):
    asked = asked_for(task, tmp_path, new_project=True)
    assert (asked.files, asked.names) == ([], []), asked


def test_in_a_repository_what_was_there_stays_and_only_made_things_are_new(tmp_path):
    write(tmp_path, {"README.md": "teh docs\n", "src/strings.js": "function title(s) {\n  return s;\n}\n"})
    assert asked_for("Fix the typo 'teh' in README.md.", tmp_path) == asked_for("", tmp_path).model_copy(
        update={"files": ["README.md"]}
    )
    ordinary = [
        "Rename `title` to `heading` in strings.js.",  # the old name must go
        "Add type hints to `utils.py`.",  # a file that is not there, not asked to be made
        "Make `word_count(text)` ignore punctuation.",  # changed, not made
        "Remove title() and delete src/strings.js.",
        "Call `format_date()` from the config loader instead of `fmt()`.",
    ]
    for task in ordinary:
        asked = asked_for(task, tmp_path)
        assert (asked.files, asked.names) == ([], []), (task, asked)
    made = asked_for("Add a function `slugify(text)` to strings.js and create `cli.js` with class Runner.", tmp_path)
    assert made.files == ["strings.js", "cli.js"] and made.names == ["slugify", "Runner"], made
    kept = asked_for("Make the function `title` trim the text in strings.js.", tmp_path)
    assert kept.names == ["title"] and kept.files == ["strings.js"], "named things that exist must still"


@pytest.mark.parametrize(
    "path, text",
    [
        ("slugify.js", "function slugify(text) {\n  return text;\n}\nmodule.exports = { slugify };\n"),
        ("slugify.js", "const slugify = (text) => text.toLowerCase();\n"),
        ("slug.py", "def slugify(text):\n    return text\n"),
        ("src/lib.rs", "pub fn slugify(text: &str) -> String {\n    text.to_string()\n}\n"),
        ("slug.go", "package slug\n\nfunc slugify(text string) string {\n\treturn text\n}\n"),
        ("Slug.java", "class Slug {\n    static String slugify(String text) {\n        return text;\n    }\n}\n"),
        ("lib.js", "class Slug {\n  slugify(text) {\n    return text;\n  }\n}\n"),
    ],
)
def test_a_name_is_defined_in_any_language_the_project_knows(tmp_path, path, text):
    asked = asked_for("A module with a function slugify(text).", tmp_path, new_project=True)
    assert missing(asked, tmp_path) == ["slugify (no source file defines it)"]
    write(tmp_path, {path: text})
    assert missing(asked, tmp_path) == []


def test_a_test_that_calls_a_name_does_not_define_it(tmp_path):
    asked = asked_for("A Python module temp.py with c_to_f(celsius).", tmp_path, new_project=True)
    write(tmp_path, {"test_temp.py": "from temp import c_to_f\n\n\ndef test_it():\n    assert c_to_f(0) == 32\n"})
    assert missing(asked, tmp_path) == ["temp.py (no such file)", "c_to_f (no source file defines it)"]
    write(tmp_path, {"lib/temp.py": "def c_to_f(celsius):\n    return celsius * 9 / 5 + 32\n"})
    assert missing(asked, tmp_path) == [], "a bare file name may be in any folder"


def test_the_gate_refuses_finish_every_time_while_a_named_file_is_missing(tmp_path):
    gate = FinishGate(tmp_path, Config(), "there are no tests yet", task="A Node module `slugify.js` with tests.")
    write(tmp_path, {"package.json": '{"scripts": {"test": "node --test"}}'})
    verdicts = [gate() or "" for _ in range(4)]
    assert all("The task asks for what is not there yet: slugify.js (no such file)" in v for v in verdicts)
    assert gate.missing() == ["slugify.js (no such file)"]
