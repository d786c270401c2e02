def compute_total(prices, discount=0.0):
    """Sum of the prices, less a fractional discount."""
    return round(sum(prices) * (1 - discount), 2)


def describe(prices):
    return f"{len(prices)} items, {compute_total(prices)} total"
