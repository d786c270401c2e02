pub mod shapes;
pub mod units;
