from bank import Account


def test_deposit():
    account = Account()
    account.deposit(5)
    assert account.balance == 5


def test_withdraw():
    account = Account(10)
    assert account.withdraw(4) == 6
