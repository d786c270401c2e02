/// Centimetres to inches.
pub fn cm_to_inches(cm: f64) -> f64 {
    cm / 2.54
}
