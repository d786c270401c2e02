use CRATE::fib;

#[test]
fn hidden_fib_values() {
    let expected = [0u64, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55];
    for (n, want) in expected.iter().enumerate() {
        assert_eq!(fib(n as u64), *want, "fib({})", n);
    }
    assert_eq!(fib(50), 12586269025);
}
