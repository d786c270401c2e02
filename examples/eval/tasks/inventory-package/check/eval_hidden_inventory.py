from inventory.items import Item
from inventory.store import Store

pen = Item("pen", 1.5, 4)
assert pen.total() == 6.0, pen.total()
store = Store()
assert store.total_value() == 0
assert store.find("pen") is None
store.add(pen)
store.add(Item("book", 12.0, 2))
assert store.find("book").total() == 24.0
assert store.find("pen") is pen
assert store.find("lamp") is None
assert store.total_value() == 30.0, store.total_value()
print("hidden check: ok")
