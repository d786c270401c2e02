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

    def remove(self, title):
        for index, item in enumerate(self.items):
            if item.title == title:
                del self.items[index]
                return
        raise KeyError(title)

    def pending(self):
        return [item.title for item in self.items if not item.done]
