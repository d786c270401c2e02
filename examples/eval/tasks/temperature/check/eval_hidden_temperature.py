import math

from temperature import c_to_f, f_to_c

for celsius, fahrenheit in [(0, 32), (100, 212), (-40, -40), (37, 98.6), (-273.15, -459.67)]:
    assert math.isclose(c_to_f(celsius), fahrenheit, abs_tol=1e-6), (celsius, c_to_f(celsius))
    assert math.isclose(f_to_c(fahrenheit), celsius, abs_tol=1e-6), (fahrenheit, f_to_c(fahrenheit))
print("hidden check: ok")
