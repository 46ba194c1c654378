//! Scalar helpers called by generated crates: Python `int` semantics on `i64`.
//!
//! Python ints are unbounded; native code uses `i64` and raises `OverflowError` where Python
//! would have produced a value outside it, so a native function never returns a wrong number.

use pyo3::exceptions::{PyOverflowError, PyZeroDivisionError};
use pyo3::PyResult;

fn overflow(op: &str) -> pyo3::PyErr {
    PyOverflowError::new_err(format!(
        "rextio: int {op} overflowed the native 64-bit range"
    ))
}

/// `a + b`.
pub fn int_add(a: i64, b: i64) -> PyResult<i64> {
    a.checked_add(b).ok_or_else(|| overflow("addition"))
}

/// `a - b`.
pub fn int_sub(a: i64, b: i64) -> PyResult<i64> {
    a.checked_sub(b).ok_or_else(|| overflow("subtraction"))
}

/// `a * b`.
pub fn int_mul(a: i64, b: i64) -> PyResult<i64> {
    a.checked_mul(b).ok_or_else(|| overflow("multiplication"))
}

/// `-a`.
pub fn int_neg(a: i64) -> PyResult<i64> {
    a.checked_neg().ok_or_else(|| overflow("negation"))
}

/// `a // b` (floor division).
pub fn int_floordiv(a: i64, b: i64) -> PyResult<i64> {
    if b == 0 {
        return Err(PyZeroDivisionError::new_err(
            "integer division or modulo by zero",
        ));
    }
    let q = a.checked_div(b).ok_or_else(|| overflow("floor division"))?;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        Ok(q - 1)
    } else {
        Ok(q)
    }
}

/// `a % b` (result has the sign of `b`).
pub fn int_mod(a: i64, b: i64) -> PyResult<i64> {
    if b == 0 {
        return Err(PyZeroDivisionError::new_err("integer modulo by zero"));
    }
    let r = a.checked_rem(b).unwrap_or(0);
    if r != 0 && ((r < 0) != (b < 0)) {
        Ok(r + b)
    } else {
        Ok(r)
    }
}

/// `a / b` on ints (true division, a float).
pub fn int_truediv(a: i64, b: i64) -> PyResult<f64> {
    if b == 0 {
        return Err(PyZeroDivisionError::new_err("division by zero"));
    }
    Ok(a as f64 / b as f64)
}

/// `a / b` on floats.
pub fn float_div(a: f64, b: f64) -> PyResult<f64> {
    if b == 0.0 {
        return Err(PyZeroDivisionError::new_err("float division by zero"));
    }
    Ok(a / b)
}

/// `range(start, stop, step)` iteration with Python's rules (step 0 raises `ValueError`).
pub fn range(start: i64, stop: i64, step: i64) -> PyResult<RangeIter> {
    if step == 0 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "range() arg 3 must not be zero",
        ));
    }
    Ok(RangeIter {
        next: start,
        stop,
        step,
    })
}

/// Iterator behind [`range`].
#[derive(Debug, Clone)]
pub struct RangeIter {
    next: i64,
    stop: i64,
    step: i64,
}

impl Iterator for RangeIter {
    type Item = i64;
    fn next(&mut self) -> Option<i64> {
        let more = if self.step > 0 {
            self.next < self.stop
        } else {
            self.next > self.stop
        };
        if !more {
            return None;
        }
        let v = self.next;
        // An overflow past i64 means the range is exhausted (stop is an i64).
        match self.next.checked_add(self.step) {
            Some(n) => self.next = n,
            None => self.next = self.stop,
        }
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_semantics_match_python() {
        let cases = [
            (7, 2, 3, 1),
            (-7, 2, -4, 1),
            (7, -2, -4, -1),
            (-7, -2, 3, -1),
            (6, 3, 2, 0),
            (-6, 3, -2, 0),
        ];
        for (a, b, q, r) in cases {
            assert_eq!(int_floordiv(a, b).unwrap(), q, "{a}//{b}");
            assert_eq!(int_mod(a, b).unwrap(), r, "{a}%{b}");
        }
    }

    #[test]
    fn range_matches_python() {
        let v: Vec<i64> = range(0, 5, 2).unwrap().collect();
        assert_eq!(v, vec![0, 2, 4]);
        let v: Vec<i64> = range(5, 0, -2).unwrap().collect();
        assert_eq!(v, vec![5, 3, 1]);
        assert_eq!(range(3, 3, 1).unwrap().count(), 0);
        assert_eq!(range(i64::MAX - 1, i64::MAX, 5).unwrap().count(), 1);
    }
}
