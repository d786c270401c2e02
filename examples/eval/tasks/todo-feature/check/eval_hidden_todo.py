from todo.lists import TodoList

todos = TodoList()
assert todos.pending() == []
for title in ("x", "y", "z"):
    todos.add(title)
todos.complete("x")
todos.remove("y")
assert todos.pending() == ["z"], todos.pending()
try:
    todos.remove("y")
except KeyError:
    pass
else:
    raise AssertionError("removing a title twice must raise KeyError")
todos.add("y")  # a removed title can be added again
assert todos.pending() == ["z", "y"]
print("hidden check: ok")
