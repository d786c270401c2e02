from shop.cart import Cart


def test_subtotal():
    cart = Cart()
    cart.add("pen", 1.5, 4)
    cart.add("book", 12.0)
    assert cart.subtotal() == 18.0


def test_total_without_discount():
    cart = Cart()
    cart.add("book", 10.0)
    assert cart.total() == 12.0
