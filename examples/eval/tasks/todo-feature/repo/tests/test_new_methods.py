import pytest
from todo.lists import TodoList


def test_remove():
    todos = TodoList()
    todos.add("write")
    todos.add("read")
    todos.remove("write")
    assert [item.title for item in todos.items] == ["read"]


def test_remove_missing():
    with pytest.raises(KeyError):
        TodoList().remove("nothing")


def test_pending():
    todos = TodoList()
    for title in ("a", "b", "c"):
        todos.add(title)
    todos.complete("b")
    assert todos.pending() == ["a", "c"]
