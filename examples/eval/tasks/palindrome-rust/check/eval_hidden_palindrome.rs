use CRATE::is_palindrome;

#[test]
fn hidden_palindromes() {
    assert!(is_palindrome("A man, a plan, a canal: Panama"));
    assert!(is_palindrome("racecar"));
    assert!(is_palindrome("No 'x' in Nixon"));
    assert!(is_palindrome(""));
    assert!(is_palindrome("12321"));
    assert!(!is_palindrome("hello"));
    assert!(!is_palindrome("ab1"));
}
