from records.reader import read_records


def column_total(text, column):
    """The sum of one numeric column of a CSV text with a header line."""
    return sum(float(record[column]) for record in read_records(text))
