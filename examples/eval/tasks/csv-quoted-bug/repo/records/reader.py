def parse_line(line):
    """The fields of one line of comma-separated values."""
    return [field.strip() for field in line.rstrip("\n").split(",")]


def read_records(text, header=True):
    """Each line of `text` as a dict keyed by the header line's fields (or as a list without a header)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not header:
        return [parse_line(line) for line in lines]
    names = parse_line(lines[0])
    return [dict(zip(names, parse_line(line))) for line in lines[1:]]
