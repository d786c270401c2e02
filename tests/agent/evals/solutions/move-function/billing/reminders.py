from billing.money import format_money


def reminder(name, amount, days_late):
    return f"Dear {name}, {format_money(amount)} is {days_late} days overdue."
