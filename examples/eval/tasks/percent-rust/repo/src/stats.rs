/// `part` as a whole percentage of `whole`, rounded down (0 when `whole` is 0).
pub fn percent(part: u32, whole: u32) -> u32 {
    if whole == 0 {
        return 0;
    }
    part / whole * 100
}

/// The highest score, or None for no scores.
pub fn best(scores: &[u32]) -> Option<u32> {
    scores.iter().copied().max()
}
