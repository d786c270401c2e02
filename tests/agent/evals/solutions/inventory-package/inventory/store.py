class Store:
    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)

    def find(self, name):
        return next((item for item in self.items if item.name == name), None)

    def total_value(self):
        return sum(item.total() for item in self.items)
