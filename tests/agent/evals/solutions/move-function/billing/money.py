def format_money(amount, currency="EUR"):
    """12.5 -> "12.50 EUR"."""
    return f"{amount:.2f} {currency}"
