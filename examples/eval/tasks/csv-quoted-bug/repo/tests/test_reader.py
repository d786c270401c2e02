from records.reader import parse_line, read_records
from records.summary import column_total


def test_parse_line():
    assert parse_line("a,b,c\n") == ["a", "b", "c"]


def test_read_records():
    assert read_records("name,qty\npen,2\n") == [{"name": "pen", "qty": "2"}]


def test_column_total():
    assert column_total("name,qty\npen,2\nbook,3\n", "qty") == 5.0
