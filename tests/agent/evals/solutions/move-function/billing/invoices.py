from billing.money import format_money


def invoice_line(description, amount):
    return f"{description}: {format_money(amount)}"


def invoice_total(amounts):
    return f"Total: {format_money(sum(amounts))}"
