"""Tests for calc.py: import the functions by name, one test per behaviour."""

import pytest
from calc import add, divide


def test_add():
    assert add(2, 3) == 5


def test_add_floats():
    assert add(0.1, 0.2) == pytest.approx(0.3)


def test_divide_by_zero_raises():
    with pytest.raises(ZeroDivisionError):
        divide(1, 0)
