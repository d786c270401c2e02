from dataclasses import dataclass


@dataclass
class Item:
    title: str
    done: bool = False
