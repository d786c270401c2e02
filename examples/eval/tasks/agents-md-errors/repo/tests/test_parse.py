import pytest
from settings.errors import SettingsError
from settings.parse import parse_bool


def test_parse_bool():
    assert parse_bool(" Yes ") is True
    assert parse_bool("off") is False


def test_parse_bool_refuses_other_text():
    with pytest.raises(SettingsError):
        parse_bool("maybe")
