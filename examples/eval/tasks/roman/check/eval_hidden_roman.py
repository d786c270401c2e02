from roman import from_roman, to_roman

CASES = {
    1: "I",
    3: "III",
    4: "IV",
    9: "IX",
    14: "XIV",
    40: "XL",
    44: "XLIV",
    90: "XC",
    400: "CD",
    444: "CDXLIV",
    900: "CM",
    1994: "MCMXCIV",
    2024: "MMXXIV",
    3999: "MMMCMXCIX",
}
for number, numeral in CASES.items():
    assert to_roman(number) == numeral, (number, to_roman(number))
    assert from_roman(numeral) == number, (numeral, from_roman(numeral))
for bad in (0, 4000, -1):
    try:
        to_roman(bad)
    except ValueError:
        pass
    else:
        raise AssertionError(f"to_roman({bad}) must raise ValueError")
try:
    from_roman("ABC")
except ValueError:
    pass
else:
    raise AssertionError("from_roman('ABC') must raise ValueError")
print("hidden check: ok")
