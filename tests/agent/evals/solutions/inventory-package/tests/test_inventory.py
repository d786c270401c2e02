from inventory.items import Item
from inventory.store import Store


def test_store():
    store = Store()
    store.add(Item("pen", 2.0, 3))
    assert store.find("pen").total() == 6.0 and store.total_value() == 6.0
