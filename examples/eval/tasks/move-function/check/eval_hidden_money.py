import billing.invoices
import billing.money
import billing.reminders

assert billing.money.format_money(12.5) == "12.50 EUR"
assert billing.money.format_money(1, "USD") == "1.00 USD"
for module in (billing.invoices, billing.reminders):
    assert module.format_money is billing.money.format_money, (
        f"{module.__name__} imports format_money from billing.money"
    )
assert billing.invoices.invoice_line("Tea", 3.5) == "Tea: 3.50 EUR"
assert billing.reminders.reminder("Bo", 2, 1) == "Dear Bo, 2.00 EUR is 1 days overdue."
print("hidden check: ok")
