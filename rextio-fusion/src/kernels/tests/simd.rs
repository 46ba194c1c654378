//! The SIMD layer's lane semantics on special values, on every instruction set this CPU has:
//! the ISA-specific code is only these primitives, so their NaN, infinity and signed-zero rules
//! (the module docs of `simd`) are what every kernel's special values rest on. The expected
//! values are plain scalar Rust written from those rules.

use super::super::simd::Simd;
use super::super::{dispatch, Isa, Kernel};
use super::{each_isa, same};

const NAN: f32 = f32::NAN;
const INF: f32 = f32::INFINITY;
const VALUES: [f32; 9] = [NAN, -INF, -1.5, -0.0, 0.0, 1e-45, 1.0, 3.0e38, INF];

/// Every ordered pair of `VALUES`, as two columns.
fn pairs() -> (Vec<f32>, Vec<f32>) {
    let mut a = Vec::new();
    let mut b = Vec::new();
    for &x in &VALUES {
        for &y in &VALUES {
            a.push(x);
            b.push(y);
        }
    }
    (a, b)
}

/// Each primitive applied lane by lane over `a`, `b`; results in the order of `NAMES`.
struct Lanes<'a>(&'a [f32], &'a [f32]);

const NAMES: [&str; 15] = [
    "add", "sub", "mul", "div", "min", "max", "mul_add", "neg", "abs", "sqrt", "lt", "gt", "ge",
    "eq", "is_nan",
];

impl Kernel for Lanes<'_> {
    type Out = Vec<Vec<f32>>;
    #[inline(always)]
    fn run<S: Simd>(self, s: S) -> Vec<Vec<f32>> {
        let Lanes(a, b) = self;
        let mut out = vec![vec![0.0f32; a.len()]; NAMES.len()];
        let mask = |m: S::M| s.select(m, s.splat(1.0), s.zero());
        let mut i = 0;
        while i < a.len() {
            let (x, y) = (s.load(&a[i..]), s.load(&b[i..]));
            let r = [
                s.add(x, y),
                s.sub(x, y),
                s.mul(x, y),
                s.div(x, y),
                s.min(x, y),
                s.max(x, y),
                s.mul_add(x, y, s.splat(-0.0)),
                s.neg(x),
                s.abs(x),
                s.sqrt(x),
                mask(s.lt(x, y)),
                mask(s.gt(x, y)),
                mask(s.ge(x, y)),
                mask(s.eq(x, y)),
                mask(s.is_nan(x)),
            ];
            for (o, v) in out.iter_mut().zip(r) {
                s.store(&mut o[i..], v);
            }
            i += S::LANES;
        }
        out
    }
}

fn expected(name: &str, x: f32, y: f32, fused: bool) -> f32 {
    let flag = |c: bool| if c { 1.0 } else { 0.0 };
    match name {
        "add" => x + y,
        "sub" => x - y,
        "mul" => x * y,
        "div" => x / y,
        // `minps`/`maxps`: the second operand on NaN or equality.
        "min" => {
            if x < y {
                x
            } else {
                y
            }
        }
        "max" => {
            if x > y {
                x
            } else {
                y
            }
        }
        "mul_add" if fused => x.mul_add(y, -0.0),
        "mul_add" => x * y + -0.0,
        "neg" => -x,
        "abs" => x.abs(),
        "sqrt" => x.sqrt(),
        // Ordered, quiet comparisons: false on NaN.
        "lt" => flag(x < y),
        "gt" => flag(x > y),
        "ge" => flag(x >= y),
        "eq" => flag(x == y),
        "is_nan" => flag(x.is_nan()),
        _ => unreachable!(),
    }
}

#[test]
fn lane_semantics_on_special_values_are_the_documented_ones_on_every_isa() {
    let (a, b) = pairs();
    each_isa(|isa| {
        let got = dispatch(Lanes(&a, &b));
        for (name, col) in NAMES.iter().zip(&got) {
            for ((&x, &y), &g) in a.iter().zip(&b).zip(col) {
                let want = expected(name, x, y, isa != Isa::Portable);
                // `neg` and `abs` are bit operations: NaN's sign bit is specified too.
                let ok = if matches!(*name, "neg" | "abs") {
                    g.to_bits() == want.to_bits()
                } else {
                    same(g, want)
                };
                assert!(ok, "{isa:?} {name}({x:e}, {y:e}) = {g:e}, want {want:e}");
            }
        }
    });
}

/// `load_partial` then `store_partial` of every length from 0 to past a vector, each into the
/// front of a longer buffer: results as the documented lanes (`fill` past the slice), and not
/// one element written past the slice.
struct Partial<'a>(&'a [f32]);

impl Kernel for Partial<'_> {
    type Out = Vec<(Vec<f32>, Vec<f32>)>;
    #[inline(always)]
    fn run<S: Simd>(self, s: S) -> Self::Out {
        let src = self.0;
        (0..=S::LANES + 1)
            .map(|len| {
                let v = s.load_partial(&src[..len], -7.0);
                let mut lanes = vec![0.0f32; S::LANES];
                s.store(&mut lanes, v);
                let mut dst = vec![f32::NAN; S::LANES + 2];
                s.store_partial(&mut dst[..len], v);
                (lanes, dst)
            })
            .collect()
    }
}

#[test]
fn partial_loads_and_stores_touch_only_their_lanes_on_every_isa() {
    let src: Vec<f32> = (1..=32).map(|i| i as f32).collect();
    each_isa(|isa| {
        for (len, (lanes, dst)) in dispatch(Partial(&src)).into_iter().enumerate() {
            let width = lanes.len();
            for (i, &l) in lanes.iter().enumerate() {
                let want = if i < len { src[i] } else { -7.0 };
                assert!(l == want, "{isa:?} load_partial len {len} lane {i}: {l}");
            }
            for (i, &d) in dst.iter().enumerate() {
                let stored = i < len.min(width);
                assert!(
                    if stored { d == src[i] } else { d.is_nan() },
                    "{isa:?} store_partial len {len} element {i}: {d}"
                );
            }
        }
    });
}

/// `reduce8` of eight vectors and `reduce4` of each half, as bits.
struct Reductions<'a>(&'a [f32]);

impl Kernel for Reductions<'_> {
    type Out = (Vec<u32>, Vec<u32>);
    #[inline(always)]
    fn run<S: Simd>(self, s: S) -> Self::Out {
        let v: [S::V; 8] = std::array::from_fn(|i| s.load(&self.0[i * S::LANES..]));
        let eight = s.reduce8(v);
        let lo = s.reduce4([v[0], v[1], v[2], v[3]]);
        let hi = s.reduce4([v[4], v[5], v[6], v[7]]);
        let bits = |x: &[f32]| x.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        (bits(&eight), bits(&[lo, hi].concat()))
    }
}

#[test]
fn reduce8_sums_each_vector_in_reduce4_order_on_every_isa() {
    // Magnitudes 2^-24..2^24 apart, so that any other order of the additions rounds
    // differently (and the sums are not all equal).
    let src: Vec<f32> = (0..8 * 16)
        .map(|i| {
            let e = [24, -24, 0, 12, -12, 6, 18, -6][i % 8] + (i / 8) as i32 % 3;
            let sign = if i % 5 == 0 { -1.0 } else { 1.0 };
            sign * (1.0 + i as f32 / 7.0) * 2f32.powi(e)
        })
        .collect();
    each_isa(|isa| {
        let (eight, four) = dispatch(Reductions(&src));
        assert_eq!(eight, four, "{isa:?}: reduce8 and reduce4 differ");
    });
}
