from shop.pricing import apply_discount, with_tax


class Cart:
    def __init__(self):
        self.lines = []

    def add(self, name, price, quantity=1):
        self.lines.append((name, price, quantity))

    def subtotal(self):
        return round(sum(price * quantity for _, price, quantity in self.lines), 2)

    def total(self, discount_percent=0):
        return with_tax(apply_discount(self.subtotal(), discount_percent))
