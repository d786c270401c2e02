import pytest
from todo.lists import TodoList


def test_add_and_complete():
    todos = TodoList()
    todos.add("write")
    todos.complete("write")
    assert todos.items[0].done


def test_no_duplicates():
    todos = TodoList()
    todos.add("write")
    with pytest.raises(ValueError):
        todos.add("write")
