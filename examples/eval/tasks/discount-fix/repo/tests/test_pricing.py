from shop.pricing import apply_discount, with_tax


def test_no_discount():
    assert apply_discount(80.0, 0) == 80.0


def test_percent_discount():
    assert apply_discount(80.0, 25) == 60.0


def test_tax():
    assert with_tax(10.0) == 12.0
