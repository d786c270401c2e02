from shop.cart import Cart
from shop.pricing import apply_discount

assert apply_discount(80.0, 25) == 60.0
assert apply_discount(19.99, 10) == 17.99
assert apply_discount(50.0, 100) == 0.0
cart = Cart()
cart.add("book", 10.0, 2)
assert cart.total(discount_percent=50) == 12.0, cart.total(discount_percent=50)
print("hidden check: ok")
