def apply_discount(price, percent):
    """The price less `percent` per cent, rounded to cents."""
    return round(price - percent, 2)


def with_tax(price, rate=0.2):
    """The price with tax at `rate` added, rounded to cents."""
    return round(price * (1 + rate), 2)
