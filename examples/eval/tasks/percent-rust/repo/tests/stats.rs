use scores::report::summary;
use scores::stats::{best, percent};

#[test]
fn percent_of_the_whole() {
    assert_eq!(percent(4, 4), 100);
    assert_eq!(percent(0, 0), 0);
}

#[test]
fn percent_of_a_quarter() {
    assert_eq!(percent(1, 4), 25);
}

#[test]
fn best_score() {
    assert_eq!(best(&[3, 9, 4]), Some(9));
    assert_eq!(best(&[]), None);
}

#[test]
fn summary_line() {
    assert_eq!(summary(4, 4, &[9]), "4/4 passed (100%), best 9");
}
