import pytest
from roman import from_roman, to_roman


def test_round_trip():
    assert to_roman(1994) == "MCMXCIV" and from_roman("MCMXCIV") == 1994


def test_out_of_range():
    with pytest.raises(ValueError):
        to_roman(0)
