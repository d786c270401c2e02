NUMERALS = [
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
]


def to_roman(number):
    if not isinstance(number, int) or not 1 <= number <= 3999:
        raise ValueError(f"out of range: {number!r}")
    parts = []
    for value, numeral in NUMERALS:
        count, number = divmod(number, value)
        parts.append(numeral * count)
    return "".join(parts)


def from_roman(text):
    for number in range(1, 4000):
        if to_roman(number) == text:
            return number
    raise ValueError(f"not a numeral: {text!r}")
