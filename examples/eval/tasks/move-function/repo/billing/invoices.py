def format_money(amount, currency="EUR"):
    """12.5 -> "12.50 EUR"."""
    return f"{amount:.2f} {currency}"


def invoice_line(description, amount):
    return f"{description}: {format_money(amount)}"


def invoice_total(amounts):
    return f"Total: {format_money(sum(amounts))}"
