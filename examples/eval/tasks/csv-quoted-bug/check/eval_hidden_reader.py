from records.reader import parse_line, read_records
from records.summary import column_total

assert parse_line('a,"b,c",d') == ["a", "b,c", "d"], parse_line('a,"b,c",d')
assert parse_line("a,b,c\n") == ["a", "b", "c"]
assert parse_line('"x, y",2') == ["x, y", "2"]
assert read_records('name,qty\n"pens, blue",2\n') == [{"name": "pens, blue", "qty": "2"}]
assert column_total('name,qty\n"a,b",2\nc,3\n', "qty") == 5.0
print("hidden check: ok")
