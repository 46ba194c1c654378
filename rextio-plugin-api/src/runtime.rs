//! Scalar helpers called by generated crates: Python `int` semantics on `i64`.
//!
//! Python ints are unbounded; native code uses `i64` and raises `OverflowError` where Python
//! would have produced a value outside it, so a native function never returns a wrong number.

use pyo3::exceptions::{PyOverflowError, PyValueError, PyZeroDivisionError};
use pyo3::PyResult;

pub mod boundary;
pub mod entry;
pub mod gil;
pub mod memo;
pub mod modules;

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

/// `abs(a)`.
pub fn int_abs(a: i64) -> PyResult<i64> {
    a.checked_abs().ok_or_else(|| overflow("abs"))
}

fn domain() -> pyo3::PyErr {
    PyValueError::new_err("math domain error")
}

/// `math.sqrt(x)`: `ValueError` below zero, as CPython.
pub fn float_sqrt(x: f64) -> PyResult<f64> {
    if x < 0.0 {
        return Err(domain());
    }
    Ok(x.sqrt())
}

/// `math.log(x)`: `ValueError` at zero and below, as CPython.
pub fn float_log(x: f64) -> PyResult<f64> {
    if x <= 0.0 {
        return Err(domain());
    }
    Ok(x.ln())
}

/// `math.exp(x)`: `OverflowError` when a finite argument overflows, as CPython.
pub fn float_exp(x: f64) -> PyResult<f64> {
    let r = x.exp();
    if r.is_infinite() && x.is_finite() {
        return Err(PyOverflowError::new_err("math range error"));
    }
    Ok(r)
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

/// `a / b` on ints (true division, a float), correctly rounded as Python rounds it.
///
/// Operands within 2^53 convert exactly, so one f64 division rounds once. Larger operands would
/// round twice that way; they take an exact integer quotient with at least 55 significant bits
/// and a sticky bit, rounded once by the (round-half-even) u128 -> f64 conversion.
pub fn int_truediv(a: i64, b: i64) -> PyResult<f64> {
    if b == 0 {
        return Err(PyZeroDivisionError::new_err("division by zero"));
    }
    const EXACT: u64 = 1 << 53;
    if a.unsigned_abs() <= EXACT && b.unsigned_abs() <= EXACT {
        return Ok(a as f64 / b as f64);
    }
    let (ua, ub) = (u128::from(a.unsigned_abs()), u128::from(b.unsigned_abs()));
    let bits = |x: u128| 128 - x.leading_zeros() as i32;
    // bits(ua) + shift <= 56 + 64: the shifted numerator fits in u128.
    let shift = (56 + bits(ub) - bits(ua)).max(0);
    let n = ua << shift;
    let (q, r) = (n / ub, n % ub);
    let magnitude = ((q | u128::from(r != 0)) as f64) * 2f64.powi(-shift);
    Ok(if (a < 0) != (b < 0) {
        -magnitude
    } else {
        magnitude
    })
}

/// `a / b` on floats.
pub fn float_div(a: f64, b: f64) -> PyResult<f64> {
    if b == 0.0 {
        return Err(PyZeroDivisionError::new_err("float division by zero"));
    }
    Ok(a / b)
}

/// Element `index` of a list a compiled body reads (a module list's element states) where the
/// body already checked the list's length: a shorter list is an internal error, not a panic.
pub fn list_item<T: Clone>(list: &[T], index: usize) -> PyResult<T> {
    list.get(index).cloned().ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err(format!(
            "internal: a compiled body read element {index} of a list of {}",
            list.len()
        ))
    })
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
    fn true_division_is_correctly_rounded_like_python() {
        // Expected values are CPython 3.11's `repr(a / b)`.
        // The first three are cases where converting both operands to f64 first rounds twice.
        let cases: [(i64, i64, f64); 8] = [
            (4865782901354085936, -129944532029, -37445076.182722166),
            (-224005144201187700, -918664801511, 243837.73475673486),
            (-8659086330061188717, 713073860282, -12143323.170809783),
            (i64::MAX, 3, 3.0744573456182584e18),
            (9007199254740993, 1, 9007199254740992.0),
            (9007199254740995, 1, 9007199254740996.0),
            (7, -2, -3.5),
            (0, -5, -0.0),
        ];
        for (a, b, want) in cases {
            let got = int_truediv(a, b).unwrap();
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "{a} / {b}: {got:e} != {want:e}"
            );
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
