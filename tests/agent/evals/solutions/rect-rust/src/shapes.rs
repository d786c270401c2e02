#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub width: f64,
    pub height: f64,
}

impl Rect {
    pub fn new(width: f64, height: f64) -> Rect {
        Rect { width, height }
    }

    pub fn area(&self) -> f64 {
        self.width * self.height
    }

    pub fn perimeter(&self) -> f64 {
        2.0 * (self.width + self.height)
    }

    pub fn is_square(&self) -> bool {
        self.width == self.height
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn area() {
        assert_eq!(Rect::new(2.0, 3.0).area(), 6.0);
    }

    #[test]
    fn perimeter_and_square() {
        assert_eq!(Rect::new(2.0, 3.0).perimeter(), 10.0);
        assert!(Rect::new(2.0, 2.0).is_square());
    }
}
