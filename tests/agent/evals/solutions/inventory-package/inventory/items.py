class Item:
    def __init__(self, name, price, quantity):
        self.name, self.price, self.quantity = name, price, quantity

    def total(self):
        return self.price * self.quantity
