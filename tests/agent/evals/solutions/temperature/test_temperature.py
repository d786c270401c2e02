from temperature import c_to_f, f_to_c


def test_both_ways():
    assert c_to_f(100) == 212
    assert f_to_c(32) == 0
