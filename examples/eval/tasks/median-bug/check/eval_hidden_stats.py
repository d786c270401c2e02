from stats import mean, median

assert median([3, 1, 2]) == 2
assert median([4, 1, 3, 2]) == 2.5
assert median([5]) == 5
assert median([7, 7, 1, 9, 3]) == 7
assert mean([1, 2, 3]) == 2
print("hidden check: ok")
