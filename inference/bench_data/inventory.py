"""A small inventory module: the file the bench's edit turn asks the model to re-emit with one rename."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field


@dataclass
class Item:
    sku: str
    name: str
    unit_price: float
    quantity: int = 0
    tags: list[str] = field(default_factory=list)

    def value(self) -> float:
        return self.unit_price * self.quantity


class Inventory:
    def __init__(self) -> None:
        self.items: dict[str, Item] = {}

    def add(self, item: Item) -> None:
        if item.sku in self.items:
            raise ValueError(f"duplicate sku {item.sku}")
        self.items[item.sku] = item

    def remove(self, sku: str) -> Item:
        try:
            return self.items.pop(sku)
        except KeyError:
            raise KeyError(f"unknown sku {sku}") from None

    def restock(self, sku: str, amount: int) -> None:
        if amount <= 0:
            raise ValueError("amount must be positive")
        self.items[sku].quantity += amount

    def sell(self, sku: str, amount: int) -> float:
        item = self.items[sku]
        if amount > item.quantity:
            raise ValueError(f"only {item.quantity} of {sku} left")
        item.quantity -= amount
        return item.unit_price * amount

    def total_value(self) -> float:
        return sum(item.value() for item in self.items.values())

    def low_stock(self, threshold: int = 5) -> list[Item]:
        return [item for item in self.items.values() if item.quantity < threshold]

    def by_tag(self, tag: str) -> list[Item]:
        return [item for item in self.items.values() if tag in item.tags]

    def report(self) -> dict:
        return {
            "items": len(self.items),
            "units": sum(item.quantity for item in self.items.values()),
            "value": round(self.total_value(), 2),
            "low_stock": [item.sku for item in self.low_stock()],
        }

    def to_json(self) -> str:
        return json.dumps([asdict(item) for item in self.items.values()], indent=2)

    @classmethod
    def from_json(cls, text: str) -> Inventory:
        inventory = cls()
        for data in json.loads(text):
            inventory.add(Item(**data))
        return inventory


def test_value_after_sale():
    inventory = Inventory()
    inventory.add(Item("A1", "bolt", 0.5, 100))
    inventory.sell("A1", 10)
    assert inventory.total_value() == 45.0


def test_report_lists_low_stock():
    inventory = Inventory()
    inventory.add(Item("B2", "nut", 0.2, 3))
    assert inventory.report()["low_stock"] == ["B2"]
