from bank import Account

account = Account(10)
assert account.withdraw(4) == 6 and account.balance == 6
for bad in (0, -1, 7):
    try:
        account.withdraw(bad)
    except ValueError:
        pass
    else:
        raise AssertionError(f"withdraw({bad}) with balance 6 must raise ValueError")
    assert account.balance == 6, "a refused withdrawal must leave the balance unchanged"
assert account.withdraw(6) == 0
print("hidden check: ok")
