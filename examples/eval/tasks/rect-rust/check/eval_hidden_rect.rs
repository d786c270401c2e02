use geometry::shapes::Rect;

#[test]
fn hidden_perimeter_and_square() {
    assert_eq!(Rect::new(2.0, 3.0).perimeter(), 10.0);
    assert_eq!(Rect::new(0.5, 0.5).perimeter(), 2.0);
    assert!(Rect::new(4.0, 4.0).is_square());
    assert!(!Rect::new(4.0, 5.0).is_square());
    assert_eq!(Rect::new(2.0, 3.0).area(), 6.0);
}
