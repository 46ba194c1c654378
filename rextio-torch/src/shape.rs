//! Shape rules the runtime relies on, kept free of libtorch so they are unit-tested everywhere.

/// Whether `b` broadcasts into `a`'s shape without growing it (then `a op= b` is valid in place).
pub fn broadcasts_into(a: &[i64], b: &[i64]) -> bool {
    if b.len() > a.len() {
        return false;
    }
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .all(|(x, y)| y == x || *y == 1)
}

#[cfg(test)]
mod tests {
    use super::broadcasts_into;

    #[test]
    fn in_place_only_when_shape_is_kept() {
        assert!(broadcasts_into(&[4, 3], &[3]));
        assert!(broadcasts_into(&[4, 3], &[4, 3]));
        assert!(broadcasts_into(&[4, 3], &[1, 3]));
        assert!(!broadcasts_into(&[1, 3], &[4, 3]));
        assert!(!broadcasts_into(&[3], &[4, 3]));
        assert!(!broadcasts_into(&[4, 1], &[4, 3]));
    }
}
