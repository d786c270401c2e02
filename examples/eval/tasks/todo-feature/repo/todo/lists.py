from todo.items import Item


class TodoList:
    def __init__(self):
        self.items = []

    def add(self, title):
        if any(item.title == title for item in self.items):
            raise ValueError(f"already listed: {title}")
        self.items.append(Item(title))

    def complete(self, title):
        for item in self.items:
            if item.title == title:
                item.done = True
                return
        raise KeyError(title)
