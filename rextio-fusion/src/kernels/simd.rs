//! The SIMD abstraction the kernels are written over: a zero-sized token per instruction set whose
//! methods are single vector instructions (or short sequences).
//!
//! A token of an x86 flavour can only be made once its features were detected, so its methods
//! can be safe: calling the intrinsics they wrap is sound whenever the token exists. Every method
//! is `#[inline(always)]`; the kernels are inlined into `#[target_feature]` trampolines
//! ([`x86::run_avx2`], [`x86::run_avx512`]), where the intrinsics are inlined too.
//!
//! Lane semantics shared by every flavour (the portable one emulates x86):
//! - `min(a, b)` / `max(a, b)` return `b` when either operand is NaN or when they compare equal
//!   (`minps`/`maxps`);
//! - comparisons are ordered and quiet (false when an operand is NaN), `is_nan` is unordered;
//! - `mul_add(a, b, c)` is fused (one rounding) on x86 and unfused on the portable flavour.

/// One SIMD flavour; see the module docs for the lane semantics.
pub(crate) trait Simd: Copy {
    /// Lanes per vector.
    const LANES: usize;
    /// `LANES` f32.
    type V: Copy;
    /// `LANES` i32 (bit patterns of `V` lanes, indices).
    type I: Copy;
    /// A lane mask.
    type M: Copy;

    fn splat(self, x: f32) -> Self::V;
    #[inline(always)]
    fn zero(self) -> Self::V {
        self.splat(0.0)
    }
    /// # Safety
    /// `p` must be valid for reading `LANES` f32 (no alignment needed).
    unsafe fn loadu(self, p: *const f32) -> Self::V;
    /// # Safety
    /// `p` must be valid for writing `LANES` f32 (no alignment needed).
    unsafe fn storeu(self, p: *mut f32, v: Self::V);
    /// The first `min(s.len(), LANES)` elements of `s`; the other lanes hold `fill`.
    fn load_partial(self, s: &[f32], fill: f32) -> Self::V;
    /// Stores the first `min(s.len(), LANES)` lanes of `v` into `s`.
    fn store_partial(self, s: &mut [f32], v: Self::V);
    /// The first `LANES` elements of `s` (zero-padded if `s` is shorter).
    #[inline(always)]
    fn load(self, s: &[f32]) -> Self::V {
        if s.len() >= Self::LANES {
            // SAFETY: `s` holds at least `LANES` elements.
            unsafe { self.loadu(s.as_ptr()) }
        } else {
            self.load_partial(s, 0.0)
        }
    }
    /// Stores `v` into the first `LANES` elements of `s` (fewer if `s` is shorter).
    #[inline(always)]
    fn store(self, s: &mut [f32], v: Self::V) {
        if s.len() >= Self::LANES {
            // SAFETY: `s` holds at least `LANES` elements.
            unsafe { self.storeu(s.as_mut_ptr(), v) }
        } else {
            self.store_partial(s, v)
        }
    }

    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
    fn div(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a * b + c`.
    fn mul_add(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    fn neg(self, a: Self::V) -> Self::V;
    fn abs(self, a: Self::V) -> Self::V;
    fn sqrt(self, a: Self::V) -> Self::V;
    /// `a < b ? a : b` (so `b` on NaN or equality).
    fn min(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a > b ? a : b` (so `b` on NaN or equality).
    fn max(self, a: Self::V, b: Self::V) -> Self::V;

    fn lt(self, a: Self::V, b: Self::V) -> Self::M;
    fn gt(self, a: Self::V, b: Self::V) -> Self::M;
    fn ge(self, a: Self::V, b: Self::V) -> Self::M;
    fn eq(self, a: Self::V, b: Self::V) -> Self::M;
    fn is_nan(self, a: Self::V) -> Self::M;
    /// `m ? a : b` per lane.
    fn select(self, m: Self::M, a: Self::V, b: Self::V) -> Self::V;
    fn mand(self, a: Self::M, b: Self::M) -> Self::M;
    fn mor(self, a: Self::M, b: Self::M) -> Self::M;
    fn mnot(self, a: Self::M) -> Self::M;
    /// Bit `i` set when lane `i` is.
    fn bitmask(self, m: Self::M) -> u64;

    fn to_bits(self, a: Self::V) -> Self::I;
    fn bitcast_f32(self, a: Self::I) -> Self::V;
    fn isplat(self, x: i32) -> Self::I;
    /// Wrapping.
    fn iadd(self, a: Self::I, b: Self::I) -> Self::I;
    /// Wrapping.
    fn isub(self, a: Self::I, b: Self::I) -> Self::I;
    fn iand(self, a: Self::I, b: Self::I) -> Self::I;
    fn ior(self, a: Self::I, b: Self::I) -> Self::I;
    /// Logical shift left by 23 (into the exponent field).
    fn shl23(self, a: Self::I) -> Self::I;
    /// Logical shift right by 23 (out of the exponent field).
    fn shr23(self, a: Self::I) -> Self::I;
    /// Arithmetic shift right by 1.
    fn sra1(self, a: Self::I) -> Self::I;
    fn i2f(self, a: Self::I) -> Self::V;
    /// `m ? a : b` per lane.
    fn iselect(self, m: Self::M, a: Self::I, b: Self::I) -> Self::I;
    /// Writes the `LANES` lanes of `a` to `out[..LANES]`.
    fn istore(self, a: Self::I, out: &mut [i32; 16]);

    /// `a` itself, through a barrier the optimiser cannot see through, so that it no longer
    /// knows where the value came from. In-place loops pass what they load through it: given
    /// `store(p, select(m, load(p), y))` LLVM stores only the changed lanes, with AVX2's
    /// `vmaskmovps`, which is microcoded on AMD (measured on Zen 3: tanh over 6144 floats in
    /// place 4.3 µs this way, 2.9 µs as a blend and a full store). No instruction is emitted.
    #[inline(always)]
    fn opaque(self, a: Self::V) -> Self::V {
        a
    }

    /// Moves the 8×8 block at `x` (rows `ldx` floats apart) transposed to `out` (rows `ldo`
    /// apart): `out[c·ldo + r] = x[r·ldx + c]` for `r, c < 8`. Element by element here;
    /// flavours with shuffles override it.
    ///
    /// # Safety
    /// `x + r·ldx` must be 8 readable floats and `out + c·ldo` 8 writable ones for each
    /// `r, c < 8`, the two regions disjoint.
    #[inline(always)]
    unsafe fn transpose8(self, x: *const f32, ldx: usize, out: *mut f32, ldo: usize) {
        for r in 0..8 {
            for c in 0..8 {
                // SAFETY: the caller's contract.
                unsafe { *out.add(c * ldo + r) = *x.add(r * ldx + c) };
            }
        }
    }

    /// The sum of the lanes, in a fixed order.
    fn reduce_add(self, a: Self::V) -> f32;
    /// The lane sums of four vectors, in a fixed order.
    fn reduce4(self, a: [Self::V; 4]) -> [f32; 4];
    /// The lane sums of eight vectors, each in [`Simd::reduce4`]'s order (flavours that can
    /// do the eight at once in fewer steps override this). Dot products reduce their tiles'
    /// accumulators with this, so that an output is summed the same way in every tile.
    #[inline(always)]
    fn reduce8(self, a: [Self::V; 8]) -> [f32; 8] {
        let lo = self.reduce4([a[0], a[1], a[2], a[3]]);
        let hi = self.reduce4([a[4], a[5], a[6], a[7]]);
        [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]]
    }
    /// The maximum of the lanes (unspecified if one is NaN).
    fn reduce_max(self, a: Self::V) -> f32;
    /// The minimum of the lanes (unspecified if one is NaN).
    fn reduce_min(self, a: Self::V) -> f32;

    /// Runs `k` compiled for this flavour in a function of its own (inlined or not as the
    /// optimiser sees fit), so that a kernel made of many inlined blocks can bound its stack
    /// frame: unoptimised builds give every inlined callee's locals stack slots of their own.
    fn call<K: Kernel>(self, k: K) -> K::Out;
}

/// Runs `k` on the portable flavour, in a function of its own.
#[inline]
pub(crate) fn run_portable<K: Kernel>(k: K) -> K::Out {
    k.run(Portable)
}

/// Runs `k` on the portable flavour, never inlined: the dispatcher's portable arm, so that
/// choosing a flavour stays a few instructions with a small frame (inlined there, the portable
/// kernel made every call on every instruction set pay its frame).
#[inline(never)]
pub(crate) fn run_portable_apart<K: Kernel>(k: K) -> K::Out {
    k.run(Portable)
}

use crate::kernels::Kernel;

/// Plain Rust over 4-lane arrays (SSE2-sized, so LLVM vectorises it on x86-64 and aarch64).
#[derive(Clone, Copy)]
pub(crate) struct Portable;

const P: usize = 4;

#[inline(always)]
fn map<T: Copy, U>(a: [T; P], f: impl Fn(T) -> U) -> [U; P] {
    [f(a[0]), f(a[1]), f(a[2]), f(a[3])]
}

#[inline(always)]
fn zip<T: Copy, U: Copy, W>(a: [T; P], b: [U; P], f: impl Fn(T, U) -> W) -> [W; P] {
    [f(a[0], b[0]), f(a[1], b[1]), f(a[2], b[2]), f(a[3], b[3])]
}

impl Simd for Portable {
    const LANES: usize = P;
    type V = [f32; P];
    type I = [i32; P];

    #[inline(always)]
    fn call<K: Kernel>(self, k: K) -> K::Out {
        run_portable(k)
    }
    type M = [bool; P];

    #[inline(always)]
    fn splat(self, x: f32) -> Self::V {
        [x; P]
    }
    #[inline(always)]
    unsafe fn loadu(self, p: *const f32) -> Self::V {
        // SAFETY: the caller guarantees `P` readable f32 at `p`; `read_unaligned` needs no
        // alignment.
        unsafe { p.cast::<[f32; P]>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn storeu(self, p: *mut f32, v: Self::V) {
        // SAFETY: the caller guarantees `P` writable f32 at `p`.
        unsafe { p.cast::<[f32; P]>().write_unaligned(v) }
    }
    #[inline(always)]
    fn load_partial(self, s: &[f32], fill: f32) -> Self::V {
        let mut v = [fill; P];
        for (d, x) in v.iter_mut().zip(s) {
            *d = *x;
        }
        v
    }
    #[inline(always)]
    fn store_partial(self, s: &mut [f32], v: Self::V) {
        for (d, x) in s.iter_mut().zip(v) {
            *d = x;
        }
    }
    #[inline(always)]
    fn add(self, a: Self::V, b: Self::V) -> Self::V {
        zip(a, b, |x, y| x + y)
    }
    #[inline(always)]
    fn sub(self, a: Self::V, b: Self::V) -> Self::V {
        zip(a, b, |x, y| x - y)
    }
    #[inline(always)]
    fn mul(self, a: Self::V, b: Self::V) -> Self::V {
        zip(a, b, |x, y| x * y)
    }
    #[inline(always)]
    fn div(self, a: Self::V, b: Self::V) -> Self::V {
        zip(a, b, |x, y| x / y)
    }
    #[inline(always)]
    fn mul_add(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V {
        // Unfused on purpose: `f32::mul_add` is a slow libm call without hardware FMA.
        self.add(self.mul(a, b), c)
    }
    #[inline(always)]
    fn neg(self, a: Self::V) -> Self::V {
        map(a, |x| -x)
    }
    #[inline(always)]
    fn abs(self, a: Self::V) -> Self::V {
        map(a, f32::abs)
    }
    #[inline(always)]
    fn sqrt(self, a: Self::V) -> Self::V {
        map(a, f32::sqrt)
    }
    #[inline(always)]
    fn min(self, a: Self::V, b: Self::V) -> Self::V {
        zip(a, b, |x, y| if x < y { x } else { y })
    }
    #[inline(always)]
    fn max(self, a: Self::V, b: Self::V) -> Self::V {
        zip(a, b, |x, y| if x > y { x } else { y })
    }
    #[inline(always)]
    fn lt(self, a: Self::V, b: Self::V) -> Self::M {
        zip(a, b, |x, y| x < y)
    }
    #[inline(always)]
    fn gt(self, a: Self::V, b: Self::V) -> Self::M {
        zip(a, b, |x, y| x > y)
    }
    #[inline(always)]
    fn ge(self, a: Self::V, b: Self::V) -> Self::M {
        zip(a, b, |x, y| x >= y)
    }
    #[inline(always)]
    fn eq(self, a: Self::V, b: Self::V) -> Self::M {
        zip(a, b, |x, y| x == y)
    }
    #[inline(always)]
    fn is_nan(self, a: Self::V) -> Self::M {
        map(a, f32::is_nan)
    }
    #[inline(always)]
    fn select(self, m: Self::M, a: Self::V, b: Self::V) -> Self::V {
        [
            if m[0] { a[0] } else { b[0] },
            if m[1] { a[1] } else { b[1] },
            if m[2] { a[2] } else { b[2] },
            if m[3] { a[3] } else { b[3] },
        ]
    }
    #[inline(always)]
    fn mand(self, a: Self::M, b: Self::M) -> Self::M {
        zip(a, b, |x, y| x & y)
    }
    #[inline(always)]
    fn mor(self, a: Self::M, b: Self::M) -> Self::M {
        zip(a, b, |x, y| x | y)
    }
    #[inline(always)]
    fn mnot(self, a: Self::M) -> Self::M {
        map(a, |x| !x)
    }
    #[inline(always)]
    fn bitmask(self, m: Self::M) -> u64 {
        u64::from(m[0]) | u64::from(m[1]) << 1 | u64::from(m[2]) << 2 | u64::from(m[3]) << 3
    }
    #[inline(always)]
    fn to_bits(self, a: Self::V) -> Self::I {
        map(a, |x| x.to_bits() as i32)
    }
    #[inline(always)]
    fn bitcast_f32(self, a: Self::I) -> Self::V {
        map(a, |x| f32::from_bits(x as u32))
    }
    #[inline(always)]
    fn isplat(self, x: i32) -> Self::I {
        [x; P]
    }
    #[inline(always)]
    fn iadd(self, a: Self::I, b: Self::I) -> Self::I {
        zip(a, b, i32::wrapping_add)
    }
    #[inline(always)]
    fn isub(self, a: Self::I, b: Self::I) -> Self::I {
        zip(a, b, i32::wrapping_sub)
    }
    #[inline(always)]
    fn iand(self, a: Self::I, b: Self::I) -> Self::I {
        zip(a, b, |x, y| x & y)
    }
    #[inline(always)]
    fn ior(self, a: Self::I, b: Self::I) -> Self::I {
        zip(a, b, |x, y| x | y)
    }
    #[inline(always)]
    fn shl23(self, a: Self::I) -> Self::I {
        map(a, |x| ((x as u32) << 23) as i32)
    }
    #[inline(always)]
    fn shr23(self, a: Self::I) -> Self::I {
        map(a, |x| ((x as u32) >> 23) as i32)
    }
    #[inline(always)]
    fn sra1(self, a: Self::I) -> Self::I {
        map(a, |x| x >> 1)
    }
    #[inline(always)]
    fn i2f(self, a: Self::I) -> Self::V {
        map(a, |x| x as f32)
    }
    #[inline(always)]
    fn iselect(self, m: Self::M, a: Self::I, b: Self::I) -> Self::I {
        [
            if m[0] { a[0] } else { b[0] },
            if m[1] { a[1] } else { b[1] },
            if m[2] { a[2] } else { b[2] },
            if m[3] { a[3] } else { b[3] },
        ]
    }
    #[inline(always)]
    fn istore(self, a: Self::I, out: &mut [i32; 16]) {
        out[..P].copy_from_slice(&a);
    }
    #[inline(always)]
    fn reduce_add(self, a: Self::V) -> f32 {
        (a[0] + a[2]) + (a[1] + a[3])
    }
    #[inline(always)]
    fn reduce4(self, a: [Self::V; 4]) -> [f32; 4] {
        a.map(|v| self.reduce_add(v))
    }
    #[inline(always)]
    fn reduce_max(self, a: Self::V) -> f32 {
        let m = |x: f32, y: f32| if x > y { x } else { y };
        m(m(a[0], a[2]), m(a[1], a[3]))
    }
    #[inline(always)]
    fn reduce_min(self, a: Self::V) -> f32 {
        let m = |x: f32, y: f32| if x < y { x } else { y };
        m(m(a[0], a[2]), m(a[1], a[3]))
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    //! The AVX2+FMA and AVX-512F flavours and their `#[target_feature]` trampolines.

    use super::Simd;
    use crate::kernels::Kernel;
    use std::arch::x86_64::*;

    /// Runs `k` compiled for AVX2 + FMA.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx,avx2,fma")]
    pub(crate) unsafe fn run_avx2<K: Kernel>(k: K) -> K::Out {
        k.run(Avx2 { _detected: () })
    }

    /// Runs `k` compiled for AVX-512F (+ AVX2, FMA).
    ///
    /// # Safety
    /// The CPU must support AVX-512F, AVX2 and FMA.
    #[target_feature(enable = "avx,avx2,fma,avx512f")]
    pub(crate) unsafe fn run_avx512<K: Kernel>(k: K) -> K::Out {
        k.run(Avx512 { _detected: () })
    }

    /// Proof that the CPU supports AVX2 and FMA: only [`run_avx2`] (whose caller checked) makes
    /// one.
    #[derive(Clone, Copy)]
    pub(crate) struct Avx2 {
        _detected: (),
    }

    /// Proof that the CPU supports AVX-512F, AVX2 and FMA: only [`run_avx512`] makes one.
    #[derive(Clone, Copy)]
    pub(crate) struct Avx512 {
        _detected: (),
    }

    /// Calls value-only intrinsics of the token's instruction set.
    macro_rules! isa {
        ($e:expr) => {
            // SAFETY: the token (`self`) exists only after its instruction set was detected
            // (see `run_avx2`/`run_avx512`), so its intrinsics are supported; they take and
            // return values only.
            unsafe { $e }
        };
    }

    /// [`Simd::opaque`] for a 256-bit vector: an empty `asm!` block that takes `v` and gives
    /// it back in the same register.
    ///
    /// # Safety
    /// The CPU must support AVX (it only names a register; nothing executes).
    #[inline]
    #[target_feature(enable = "avx")]
    unsafe fn opaque256(mut v: __m256) -> __m256 {
        // SAFETY: the block is empty; it reads and writes nothing but `v`'s register.
        unsafe {
            std::arch::asm!("/* {0} */", inout(ymm_reg) v, options(pure, nomem, nostack, preserves_flags));
        }
        v
    }

    /// [`opaque256`] for a 512-bit vector.
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn opaque512(mut v: __m512) -> __m512 {
        // SAFETY: as `opaque256`.
        unsafe {
            std::arch::asm!("/* {0} */", inout(zmm_reg) v, options(pure, nomem, nostack, preserves_flags));
        }
        v
    }

    /// [`Simd::transpose8`] with 256-bit shuffles: pairs of rows interleaved, then pairs of
    /// pairs, then the 128-bit halves exchanged (24 shuffles for 64 elements).
    ///
    /// # Safety
    /// As [`Simd::transpose8`]; the CPU must support AVX (the callers hold a token).
    #[inline(always)]
    unsafe fn transpose8_256(x: *const f32, ldx: usize, out: *mut f32, ldo: usize) {
        // SAFETY: the caller's contract (8 readable rows, 8 writable columns, AVX).
        unsafe {
            let mut r = [_mm256_setzero_ps(); 8];
            for (i, r) in r.iter_mut().enumerate() {
                *r = _mm256_loadu_ps(x.add(i * ldx));
            }
            let t = [
                _mm256_unpacklo_ps(r[0], r[1]),
                _mm256_unpackhi_ps(r[0], r[1]),
                _mm256_unpacklo_ps(r[2], r[3]),
                _mm256_unpackhi_ps(r[2], r[3]),
                _mm256_unpacklo_ps(r[4], r[5]),
                _mm256_unpackhi_ps(r[4], r[5]),
                _mm256_unpacklo_ps(r[6], r[7]),
                _mm256_unpackhi_ps(r[6], r[7]),
            ];
            let q = [
                _mm256_shuffle_ps::<0x44>(t[0], t[2]),
                _mm256_shuffle_ps::<0xEE>(t[0], t[2]),
                _mm256_shuffle_ps::<0x44>(t[1], t[3]),
                _mm256_shuffle_ps::<0xEE>(t[1], t[3]),
                _mm256_shuffle_ps::<0x44>(t[4], t[6]),
                _mm256_shuffle_ps::<0xEE>(t[4], t[6]),
                _mm256_shuffle_ps::<0x44>(t[5], t[7]),
                _mm256_shuffle_ps::<0xEE>(t[5], t[7]),
            ];
            for c in 0..4 {
                _mm256_storeu_ps(
                    out.add(c * ldo),
                    _mm256_permute2f128_ps::<0x20>(q[c], q[c + 4]),
                );
                _mm256_storeu_ps(
                    out.add((c + 4) * ldo),
                    _mm256_permute2f128_ps::<0x31>(q[c], q[c + 4]),
                );
            }
        }
    }

    #[inline(always)]
    fn mask8(n: usize) -> __m256i {
        let n = n.min(8) as i32;
        isa!(_mm256_cmpgt_epi32(
            _mm256_set1_epi32(n),
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
        ))
    }

    impl Simd for Avx2 {
        #[inline(always)]
        fn call<K: Kernel>(self, k: K) -> K::Out {
            // SAFETY: an `Avx2` token exists only once AVX2 and FMA were detected.
            unsafe { run_avx2(k) }
        }

        const LANES: usize = 8;
        type V = __m256;

        #[inline(always)]
        unsafe fn transpose8(self, x: *const f32, ldx: usize, out: *mut f32, ldo: usize) {
            // SAFETY: the caller's contract; AVX is supported (token).
            unsafe { transpose8_256(x, ldx, out, ldo) }
        }
        type I = __m256i;
        type M = __m256;

        #[inline(always)]
        fn splat(self, x: f32) -> __m256 {
            isa!(_mm256_set1_ps(x))
        }
        #[inline(always)]
        unsafe fn loadu(self, p: *const f32) -> __m256 {
            // SAFETY: the caller guarantees 8 readable f32 at `p`; AVX is supported (token).
            unsafe { _mm256_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn storeu(self, p: *mut f32, v: __m256) {
            // SAFETY: the caller guarantees 8 writable f32 at `p`; AVX is supported (token).
            unsafe { _mm256_storeu_ps(p, v) }
        }
        #[inline(always)]
        fn load_partial(self, s: &[f32], fill: f32) -> __m256 {
            if s.is_empty() {
                return self.splat(fill);
            }
            let m = mask8(s.len());
            // SAFETY: `maskload` reads only the lanes `m` selects, the first `min(len, 8)`, all
            // inside `s`; AVX is supported (token).
            let v = unsafe { _mm256_maskload_ps(s.as_ptr(), m) };
            isa!(_mm256_blendv_ps(
                _mm256_set1_ps(fill),
                v,
                _mm256_castsi256_ps(m)
            ))
        }
        #[inline(always)]
        fn store_partial(self, s: &mut [f32], v: __m256) {
            // Plain stores of 4, 2 and 1 lanes rather than `vmaskmovps`: AMD's Zen 1 to 3
            // run a masked store as microcode (tens of cycles), which narrow rows pay on every
            // row.
            let mut n = s.len().min(8);
            if n == 8 {
                // SAFETY: `s` holds 8 elements; AVX is supported (token).
                unsafe { _mm256_storeu_ps(s.as_mut_ptr(), v) };
                return;
            }
            let mut p = s.as_mut_ptr();
            let mut part = isa!(_mm256_castps256_ps128(v));
            // SAFETY (each store below): it writes lanes `[p, p + 4 / 2 / 1)`, all among the
            // first `n` elements of `s` that are left; AVX is supported (token).
            if n >= 4 {
                unsafe { _mm_storeu_ps(p, part) };
                part = isa!(_mm256_extractf128_ps::<1>(v));
                // SAFETY: at most the end of `s`'s first `n` elements.
                p = unsafe { p.add(4) };
                n -= 4;
            }
            if n >= 2 {
                unsafe { _mm_storel_epi64(p.cast::<__m128i>(), _mm_castps_si128(part)) };
                part = isa!(_mm_movehl_ps(part, part));
                // SAFETY: as above.
                p = unsafe { p.add(2) };
                n -= 2;
            }
            if n == 1 {
                unsafe { _mm_store_ss(p, part) };
            }
        }
        #[inline(always)]
        fn add(self, a: __m256, b: __m256) -> __m256 {
            isa!(_mm256_add_ps(a, b))
        }
        #[inline(always)]
        fn sub(self, a: __m256, b: __m256) -> __m256 {
            isa!(_mm256_sub_ps(a, b))
        }
        #[inline(always)]
        fn mul(self, a: __m256, b: __m256) -> __m256 {
            isa!(_mm256_mul_ps(a, b))
        }
        #[inline(always)]
        fn div(self, a: __m256, b: __m256) -> __m256 {
            isa!(_mm256_div_ps(a, b))
        }
        #[inline(always)]
        fn mul_add(self, a: __m256, b: __m256, c: __m256) -> __m256 {
            isa!(_mm256_fmadd_ps(a, b, c))
        }
        #[inline(always)]
        fn neg(self, a: __m256) -> __m256 {
            isa!(_mm256_xor_ps(a, _mm256_set1_ps(-0.0)))
        }
        #[inline(always)]
        fn abs(self, a: __m256) -> __m256 {
            isa!(_mm256_andnot_ps(_mm256_set1_ps(-0.0), a))
        }
        #[inline(always)]
        fn sqrt(self, a: __m256) -> __m256 {
            isa!(_mm256_sqrt_ps(a))
        }
        #[inline(always)]
        fn min(self, a: __m256, b: __m256) -> __m256 {
            isa!(_mm256_min_ps(a, b))
        }
        #[inline(always)]
        fn max(self, a: __m256, b: __m256) -> __m256 {
            isa!(_mm256_max_ps(a, b))
        }
        #[inline(always)]
        fn lt(self, a: __m256, b: __m256) -> __m256 {
            isa!(_mm256_cmp_ps::<_CMP_LT_OQ>(a, b))
        }
        #[inline(always)]
        fn gt(self, a: __m256, b: __m256) -> __m256 {
            isa!(_mm256_cmp_ps::<_CMP_GT_OQ>(a, b))
        }
        #[inline(always)]
        fn ge(self, a: __m256, b: __m256) -> __m256 {
            isa!(_mm256_cmp_ps::<_CMP_GE_OQ>(a, b))
        }
        #[inline(always)]
        fn eq(self, a: __m256, b: __m256) -> __m256 {
            isa!(_mm256_cmp_ps::<_CMP_EQ_OQ>(a, b))
        }
        #[inline(always)]
        fn is_nan(self, a: __m256) -> __m256 {
            isa!(_mm256_cmp_ps::<_CMP_UNORD_Q>(a, a))
        }
        #[inline(always)]
        fn select(self, m: __m256, a: __m256, b: __m256) -> __m256 {
            isa!(_mm256_blendv_ps(b, a, m))
        }
        #[inline(always)]
        fn mand(self, a: __m256, b: __m256) -> __m256 {
            isa!(_mm256_and_ps(a, b))
        }
        #[inline(always)]
        fn mor(self, a: __m256, b: __m256) -> __m256 {
            isa!(_mm256_or_ps(a, b))
        }
        #[inline(always)]
        fn mnot(self, a: __m256) -> __m256 {
            isa!(_mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(-1))))
        }
        #[inline(always)]
        fn opaque(self, a: __m256) -> __m256 {
            // SAFETY: AVX is supported (token).
            unsafe { opaque256(a) }
        }
        #[inline(always)]
        fn bitmask(self, m: __m256) -> u64 {
            isa!(_mm256_movemask_ps(m)) as u32 as u64
        }
        #[inline(always)]
        fn to_bits(self, a: __m256) -> __m256i {
            isa!(_mm256_castps_si256(a))
        }
        #[inline(always)]
        fn bitcast_f32(self, a: __m256i) -> __m256 {
            isa!(_mm256_castsi256_ps(a))
        }
        #[inline(always)]
        fn isplat(self, x: i32) -> __m256i {
            isa!(_mm256_set1_epi32(x))
        }
        #[inline(always)]
        fn iadd(self, a: __m256i, b: __m256i) -> __m256i {
            isa!(_mm256_add_epi32(a, b))
        }
        #[inline(always)]
        fn isub(self, a: __m256i, b: __m256i) -> __m256i {
            isa!(_mm256_sub_epi32(a, b))
        }
        #[inline(always)]
        fn iand(self, a: __m256i, b: __m256i) -> __m256i {
            isa!(_mm256_and_si256(a, b))
        }
        #[inline(always)]
        fn ior(self, a: __m256i, b: __m256i) -> __m256i {
            isa!(_mm256_or_si256(a, b))
        }
        #[inline(always)]
        fn shl23(self, a: __m256i) -> __m256i {
            isa!(_mm256_slli_epi32::<23>(a))
        }
        #[inline(always)]
        fn shr23(self, a: __m256i) -> __m256i {
            isa!(_mm256_srli_epi32::<23>(a))
        }
        #[inline(always)]
        fn sra1(self, a: __m256i) -> __m256i {
            isa!(_mm256_srai_epi32::<1>(a))
        }
        #[inline(always)]
        fn i2f(self, a: __m256i) -> __m256 {
            isa!(_mm256_cvtepi32_ps(a))
        }
        #[inline(always)]
        fn iselect(self, m: __m256, a: __m256i, b: __m256i) -> __m256i {
            isa!(_mm256_castps_si256(_mm256_blendv_ps(
                _mm256_castsi256_ps(b),
                _mm256_castsi256_ps(a),
                m
            )))
        }
        #[inline(always)]
        fn istore(self, a: __m256i, out: &mut [i32; 16]) {
            // SAFETY: `out` has room for 8 i32; AVX is supported (token).
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast::<__m256i>(), a) }
        }
        #[inline(always)]
        fn reduce_add(self, a: __m256) -> f32 {
            isa!({
                let s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps::<1>(a));
                let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
                _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps::<1>(s, s)))
            })
        }
        #[inline(always)]
        fn reduce4(self, a: [__m256; 4]) -> [f32; 4] {
            let mut out = [0.0f32; 4];
            let v = isa!({
                let t0 = _mm256_hadd_ps(a[0], a[1]);
                let t1 = _mm256_hadd_ps(a[2], a[3]);
                let t = _mm256_hadd_ps(t0, t1);
                _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps::<1>(t))
            });
            // SAFETY: `out` has room for 4 f32; SSE is part of x86-64.
            unsafe { _mm_storeu_ps(out.as_mut_ptr(), v) };
            out
        }
        #[inline(always)]
        fn reduce8(self, a: [__m256; 8]) -> [f32; 8] {
            // `reduce4`'s additions for `a[0..4]` and `a[4..8]` side by side: the two halves'
            // lane sums end up in one vector's lower and upper 128 bits.
            let mut out = [0.0f32; 8];
            let v = isa!({
                let u0 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
                let u1 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
                _mm256_add_ps(
                    _mm256_permute2f128_ps::<0x20>(u0, u1),
                    _mm256_permute2f128_ps::<0x31>(u0, u1),
                )
            });
            // SAFETY: `out` has room for 8 f32; AVX is supported (token).
            unsafe { _mm256_storeu_ps(out.as_mut_ptr(), v) };
            out
        }
        #[inline(always)]
        fn reduce_max(self, a: __m256) -> f32 {
            isa!({
                let s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps::<1>(a));
                let s = _mm_max_ps(s, _mm_movehl_ps(s, s));
                _mm_cvtss_f32(_mm_max_ss(s, _mm_shuffle_ps::<1>(s, s)))
            })
        }
        #[inline(always)]
        fn reduce_min(self, a: __m256) -> f32 {
            isa!({
                let s = _mm_min_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps::<1>(a));
                let s = _mm_min_ps(s, _mm_movehl_ps(s, s));
                _mm_cvtss_f32(_mm_min_ss(s, _mm_shuffle_ps::<1>(s, s)))
            })
        }
    }

    /// The 128-bit quarters of `x` and `y` added across halves:
    /// `[x.q0 + x.q2, x.q1 + x.q3, y.q0 + y.q2, y.q1 + y.q3]`.
    #[inline(always)]
    fn pair_halves(x: __m512, y: __m512) -> __m512 {
        isa!(_mm512_add_ps(
            _mm512_shuffle_f32x4::<0x44>(x, y),
            _mm512_shuffle_f32x4::<0xEE>(x, y),
        ))
    }

    /// Quarter `j` of the result: vector `j`'s four lanes of `(q0 + q2) + (q1 + q3)`, for
    /// `b0 = pair_halves(a0, a1)` and `b1 = pair_halves(a2, a3)`.
    #[inline(always)]
    fn quarters4(b0: __m512, b1: __m512) -> __m512 {
        isa!(_mm512_add_ps(
            _mm512_shuffle_f32x4::<0x88>(b0, b1),
            _mm512_shuffle_f32x4::<0xDD>(b0, b1),
        ))
    }

    #[inline(always)]
    fn mask16(n: usize) -> __mmask16 {
        if n >= 16 {
            0xffff
        } else {
            ((1u32 << n) - 1) as __mmask16
        }
    }

    impl Simd for Avx512 {
        #[inline(always)]
        fn call<K: Kernel>(self, k: K) -> K::Out {
            // SAFETY: an `Avx512` token exists only once AVX-512F, AVX2 and FMA were detected.
            unsafe { run_avx512(k) }
        }

        const LANES: usize = 16;
        type V = __m512;

        #[inline(always)]
        unsafe fn transpose8(self, x: *const f32, ldx: usize, out: *mut f32, ldo: usize) {
            // SAFETY: the caller's contract; AVX is supported (the token's AVX-512F implies it).
            unsafe { transpose8_256(x, ldx, out, ldo) }
        }
        type I = __m512i;
        type M = __mmask16;

        #[inline(always)]
        fn splat(self, x: f32) -> __m512 {
            isa!(_mm512_set1_ps(x))
        }
        #[inline(always)]
        unsafe fn loadu(self, p: *const f32) -> __m512 {
            // SAFETY: the caller guarantees 16 readable f32 at `p`; AVX-512F is supported.
            unsafe { _mm512_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn storeu(self, p: *mut f32, v: __m512) {
            // SAFETY: the caller guarantees 16 writable f32 at `p`; AVX-512F is supported.
            unsafe { _mm512_storeu_ps(p, v) }
        }
        #[inline(always)]
        fn load_partial(self, s: &[f32], fill: f32) -> __m512 {
            if s.is_empty() {
                return self.splat(fill);
            }
            // SAFETY: the masked load touches only the first `min(len, 16)` lanes (faults are
            // suppressed for the others), all inside `s`; AVX-512F is supported (token).
            unsafe { _mm512_mask_loadu_ps(_mm512_set1_ps(fill), mask16(s.len()), s.as_ptr()) }
        }
        #[inline(always)]
        fn store_partial(self, s: &mut [f32], v: __m512) {
            if s.is_empty() {
                return;
            }
            // SAFETY: the masked store writes only the first `min(len, 16)` lanes, all inside
            // `s`; AVX-512F is supported (token).
            unsafe { _mm512_mask_storeu_ps(s.as_mut_ptr(), mask16(s.len()), v) }
        }
        #[inline(always)]
        fn add(self, a: __m512, b: __m512) -> __m512 {
            isa!(_mm512_add_ps(a, b))
        }
        #[inline(always)]
        fn sub(self, a: __m512, b: __m512) -> __m512 {
            isa!(_mm512_sub_ps(a, b))
        }
        #[inline(always)]
        fn mul(self, a: __m512, b: __m512) -> __m512 {
            isa!(_mm512_mul_ps(a, b))
        }
        #[inline(always)]
        fn div(self, a: __m512, b: __m512) -> __m512 {
            isa!(_mm512_div_ps(a, b))
        }
        #[inline(always)]
        fn mul_add(self, a: __m512, b: __m512, c: __m512) -> __m512 {
            isa!(_mm512_fmadd_ps(a, b, c))
        }
        #[inline(always)]
        fn neg(self, a: __m512) -> __m512 {
            // Integer xor: `_mm512_xor_ps` needs AVX-512DQ.
            isa!(_mm512_castsi512_ps(_mm512_xor_si512(
                _mm512_castps_si512(a),
                _mm512_set1_epi32(i32::MIN)
            )))
        }
        #[inline(always)]
        fn abs(self, a: __m512) -> __m512 {
            isa!(_mm512_castsi512_ps(_mm512_and_si512(
                _mm512_castps_si512(a),
                _mm512_set1_epi32(i32::MAX)
            )))
        }
        #[inline(always)]
        fn sqrt(self, a: __m512) -> __m512 {
            isa!(_mm512_sqrt_ps(a))
        }
        #[inline(always)]
        fn min(self, a: __m512, b: __m512) -> __m512 {
            isa!(_mm512_min_ps(a, b))
        }
        #[inline(always)]
        fn max(self, a: __m512, b: __m512) -> __m512 {
            isa!(_mm512_max_ps(a, b))
        }
        #[inline(always)]
        fn lt(self, a: __m512, b: __m512) -> __mmask16 {
            isa!(_mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b))
        }
        #[inline(always)]
        fn gt(self, a: __m512, b: __m512) -> __mmask16 {
            isa!(_mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b))
        }
        #[inline(always)]
        fn ge(self, a: __m512, b: __m512) -> __mmask16 {
            isa!(_mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, b))
        }
        #[inline(always)]
        fn eq(self, a: __m512, b: __m512) -> __mmask16 {
            isa!(_mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, b))
        }
        #[inline(always)]
        fn is_nan(self, a: __m512) -> __mmask16 {
            isa!(_mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, a))
        }
        #[inline(always)]
        fn select(self, m: __mmask16, a: __m512, b: __m512) -> __m512 {
            // `mask_blend(k, x, y)` takes `y` where `k` is set.
            isa!(_mm512_mask_blend_ps(m, b, a))
        }
        #[inline(always)]
        fn mand(self, a: __mmask16, b: __mmask16) -> __mmask16 {
            a & b
        }
        #[inline(always)]
        fn mor(self, a: __mmask16, b: __mmask16) -> __mmask16 {
            a | b
        }
        #[inline(always)]
        fn mnot(self, a: __mmask16) -> __mmask16 {
            !a
        }
        #[inline(always)]
        fn opaque(self, a: __m512) -> __m512 {
            // SAFETY: AVX-512F is supported (token).
            unsafe { opaque512(a) }
        }
        #[inline(always)]
        fn bitmask(self, m: __mmask16) -> u64 {
            u64::from(m)
        }
        #[inline(always)]
        fn to_bits(self, a: __m512) -> __m512i {
            isa!(_mm512_castps_si512(a))
        }
        #[inline(always)]
        fn bitcast_f32(self, a: __m512i) -> __m512 {
            isa!(_mm512_castsi512_ps(a))
        }
        #[inline(always)]
        fn isplat(self, x: i32) -> __m512i {
            isa!(_mm512_set1_epi32(x))
        }
        #[inline(always)]
        fn iadd(self, a: __m512i, b: __m512i) -> __m512i {
            isa!(_mm512_add_epi32(a, b))
        }
        #[inline(always)]
        fn isub(self, a: __m512i, b: __m512i) -> __m512i {
            isa!(_mm512_sub_epi32(a, b))
        }
        #[inline(always)]
        fn iand(self, a: __m512i, b: __m512i) -> __m512i {
            isa!(_mm512_and_si512(a, b))
        }
        #[inline(always)]
        fn ior(self, a: __m512i, b: __m512i) -> __m512i {
            isa!(_mm512_or_si512(a, b))
        }
        #[inline(always)]
        fn shl23(self, a: __m512i) -> __m512i {
            isa!(_mm512_slli_epi32::<23>(a))
        }
        #[inline(always)]
        fn shr23(self, a: __m512i) -> __m512i {
            isa!(_mm512_srli_epi32::<23>(a))
        }
        #[inline(always)]
        fn sra1(self, a: __m512i) -> __m512i {
            isa!(_mm512_srai_epi32::<1>(a))
        }
        #[inline(always)]
        fn i2f(self, a: __m512i) -> __m512 {
            isa!(_mm512_cvtepi32_ps(a))
        }
        #[inline(always)]
        fn iselect(self, m: __mmask16, a: __m512i, b: __m512i) -> __m512i {
            isa!(_mm512_mask_blend_epi32(m, b, a))
        }
        #[inline(always)]
        fn istore(self, a: __m512i, out: &mut [i32; 16]) {
            // SAFETY: `out` has room for 16 i32; AVX-512F is supported (token).
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast::<__m512i>(), a) }
        }
        #[inline(always)]
        fn reduce_add(self, a: __m512) -> f32 {
            isa!({
                let s = _mm256_add_ps(
                    _mm512_castps512_ps256(a),
                    _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(a))),
                );
                let s = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps::<1>(s));
                let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
                _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps::<1>(s, s)))
            })
        }
        /// Pairwise sums, the same for every vector: 128-bit quarters `(q0 + q2) + (q1 + q3)`,
        /// then lanes `(l0 + l2) + (l1 + l3)` (and so in `reduce8`). Shuffles within and across
        /// quarters only: no horizontal adds, which are several micro-ops each.
        #[inline(always)]
        fn reduce4(self, a: [__m512; 4]) -> [f32; 4] {
            let mut out = [0.0f32; 4];
            let v = isa!({
                let q = quarters4(pair_halves(a[0], a[1]), pair_halves(a[2], a[3]));
                // Quarter `j` holds vector `j`'s four partial sums.
                let d = _mm512_add_ps(q, _mm512_permute_ps::<0x4E>(q));
                let e = _mm512_add_ps(d, _mm512_permute_ps::<0xB1>(d));
                _mm512_castps512_ps128(_mm512_permutexvar_ps(
                    _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                    e,
                ))
            });
            // SAFETY: `out` has room for 4 f32; SSE is part of x86-64.
            unsafe { _mm_storeu_ps(out.as_mut_ptr(), v) };
            out
        }
        #[inline(always)]
        fn reduce8(self, a: [__m512; 8]) -> [f32; 8] {
            let mut out = [0.0f32; 8];
            let v = isa!({
                let c0 = quarters4(pair_halves(a[0], a[1]), pair_halves(a[2], a[3]));
                let c1 = quarters4(pair_halves(a[4], a[5]), pair_halves(a[6], a[7]));
                // Quarter `j`: vector `j`'s and `4 + j`'s `l0 + l2`, then their `l1 + l3`.
                let d = _mm512_add_ps(_mm512_unpacklo_ps(c0, c1), _mm512_unpackhi_ps(c0, c1));
                let e = _mm512_add_ps(d, _mm512_permute_ps::<0x4E>(d));
                _mm512_castps512_ps256(_mm512_permutexvar_ps(
                    _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0),
                    e,
                ))
            });
            // SAFETY: `out` has room for 8 f32; AVX is supported (token).
            unsafe { _mm256_storeu_ps(out.as_mut_ptr(), v) };
            out
        }
        #[inline(always)]
        fn reduce_max(self, a: __m512) -> f32 {
            isa!({
                let s = _mm256_max_ps(
                    _mm512_castps512_ps256(a),
                    _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(a))),
                );
                let s = _mm_max_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps::<1>(s));
                let s = _mm_max_ps(s, _mm_movehl_ps(s, s));
                _mm_cvtss_f32(_mm_max_ss(s, _mm_shuffle_ps::<1>(s, s)))
            })
        }
        #[inline(always)]
        fn reduce_min(self, a: __m512) -> f32 {
            isa!({
                let s = _mm256_min_ps(
                    _mm512_castps512_ps256(a),
                    _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(a))),
                );
                let s = _mm_min_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps::<1>(s));
                let s = _mm_min_ps(s, _mm_movehl_ps(s, s));
                _mm_cvtss_f32(_mm_min_ss(s, _mm_shuffle_ps::<1>(s, s)))
            })
        }
    }
}
