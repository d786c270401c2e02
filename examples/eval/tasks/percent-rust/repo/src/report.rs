use crate::stats::{best, percent};

/// One line about a test's results: "3/4 passed (75%), best 9".
pub fn summary(passed: u32, total: u32, scores: &[u32]) -> String {
    let best = best(scores).map_or("none".to_string(), |b| b.to_string());
    format!("{}/{} passed ({}%), best {}", passed, total, percent(passed, total), best)
}
