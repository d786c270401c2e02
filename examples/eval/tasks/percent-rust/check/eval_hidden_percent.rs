use scores::report::summary;
use scores::stats::percent;

#[test]
fn hidden_percent() {
    assert_eq!(percent(1, 3), 33);
    assert_eq!(percent(2, 3), 66);
    assert_eq!(percent(3, 4), 75);
    assert_eq!(percent(7, 0), 0);
    assert_eq!(summary(3, 4, &[]), "3/4 passed (75%), best none");
}
