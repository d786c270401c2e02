import pytest
from bank import Account


def test_deposit():
    account = Account()
    account.deposit(5)
    assert account.balance == 5


def test_withdraw():
    account = Account(10)
    assert account.withdraw(4) == 6


def test_withdraw_refused():
    account = Account(10)
    for bad in (0, -1, 11):
        with pytest.raises(ValueError):
            account.withdraw(bad)
    assert account.balance == 10
