//! Fused float32 CPU kernels for small tensors, in pure Rust (no framework library).
//!
//! Every tensor is a row-major contiguous `f32` slice whose dimensions are passed at run time as
//! `usize`s. Each function checks that the slices have exactly the lengths the dimensions call
//! for and returns [`KernelError`] otherwise; nothing here panics on caller input, and nothing
//! allocates in a hot loop. The buffers are thread-local: [`linear`]'s pack cache (from 5 rows:
//! each weight packed once, with a copy of the weight compared bitwise at every use and
//! repacked when it differs, at most 2^22 floats per thread, least recently used first out),
//! and the packing scratch of a weight too large for it and of [`matmul`] (a ragged last column
//! panel), a `Vec` that grows to the largest packed operand seen and is then reused.
//! [`PackedWeight::new`] allocates the packed copy it returns.
//!
//! The semantics are those of eager PyTorch 2.13 on float32 CPU tensors, including NaN, ±inf and
//! signed-zero propagation (see each item; the tests encode the edge values torch returns). Where
//! torch itself is not consistent (it answers differently in its vectorised body and its scalar
//! tail, e.g. `torch.maximum(0.0, -0.0)`), these kernels follow torch's vectorised path and the
//! item says so.
//!
//! # Instruction sets
//!
//! Each kernel is written once over a small SIMD abstraction and compiled for three instruction
//! sets: [`Isa::Avx512`] (AVX-512F, 16 lanes), [`Isa::Avx2Fma`] (AVX2 + FMA, 8 lanes) and
//! [`Isa::Portable`] (plain Rust over 4-lane arrays, no fused multiply-add, any target). [`isa`]
//! detects the best one once per process; [`with_isa`] forces another on the current thread
//! (tests run every kernel on every ISA the machine has).
//!
//! Results are deterministic for a given ISA and shape, but may differ in the last bits between
//! ISAs (summation order, fused multiply-add) — as torch's own results do between CPUs.
//!
//! # Contents
//!
//! - matrix products: [`linear`], [`linear_fused`] (with an [`Epilogue`]), [`linear_packed`]
//!   (with a [`PackedWeight`] packed once), [`linear_cols`] (feature-major: operand and result
//!   transposed, the weight read in place), [`matmul`], [`matmul_fused`] (bias and epilogue);
//! - elementwise: [`unary`], [`unary_inplace`] over [`Unary`]; [`binary`], [`binary_inplace`]
//!   over [`Binary`] with broadcast [`Operand`]s;
//! - row reductions (over the last dim): [`softmax_rows`], [`log_softmax_rows`],
//!   [`argmax_rows`], [`sum_rows`], [`mean_rows`], [`amax_rows`], [`amin_rows`],
//!   [`layer_norm_rows`];
//! - column reductions (over dim 0): [`softmax_cols`], [`log_softmax_cols`], [`argmax_cols`],
//!   [`sum_cols`], [`mean_cols`], [`amax_cols`], [`amin_cols`], [`layer_norm_cols`];
//! - fused: [`softmax_argmax_rows`];
//! - layout: [`transpose`];
//! - vectorised math with documented error bounds: [`exp`], [`log`], [`tanh`], [`sigmoid`],
//!   [`erf`] (and the [`Unary`] ops built on them).

mod elementwise;
mod gemm;
mod layout;
mod math;
mod reduce;
mod simd;

#[cfg(test)]
mod tests;

pub use elementwise::{binary, binary_inplace, unary, unary_inplace, Binary, Operand, Unary};
pub use gemm::{
    linear, linear_cols, linear_cols_min_rows, linear_fused, linear_packed, matmul, matmul_fused,
    Epilogue, PackedWeight,
};
pub use layout::transpose;
pub use math::{elu, erf, exp, log, sigmoid, tanh, GeluEdges};
pub use reduce::{
    amax_cols, amax_rows, amin_cols, amin_rows, argmax_cols, argmax_rows, layer_norm_cols,
    layer_norm_cols_within, layer_norm_rows, layer_norm_rows_within, log_softmax_cols,
    log_softmax_rows, mean_cols, mean_rows, softmax_argmax_rows, softmax_cols, softmax_rows,
    sum_cols, sum_rows,
};

use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use simd::Simd;

/// Why a kernel refused its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelError {
    /// A slice does not have the length its dimensions call for.
    Length {
        /// Which argument.
        what: &'static str,
        /// The length the dimensions call for.
        expected: usize,
        /// The slice's length.
        actual: usize,
    },
    /// The product of the dimensions does not fit in `usize`.
    Overflow,
    /// A reduction without an identity (max, min, argmax) over a dimension of size 0; torch
    /// raises "Expected reduction dim … to have non-zero size" here.
    EmptyReduction {
        /// Which kernel.
        what: &'static str,
    },
    /// [`with_isa`] was asked for an instruction set this CPU lacks.
    IsaUnavailable(Isa),
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::Length {
                what,
                expected,
                actual,
            } => write!(f, "`{what}` has {actual} elements, expected {expected}"),
            KernelError::Overflow => f.write_str("tensor dimensions overflow usize"),
            KernelError::EmptyReduction { what } => {
                write!(f, "{what}: the reduced dimension has size 0")
            }
            KernelError::IsaUnavailable(isa) => {
                write!(
                    f,
                    "instruction set {} is not available on this CPU",
                    isa.name()
                )
            }
        }
    }
}

impl std::error::Error for KernelError {}

/// `a * b`, or [`KernelError::Overflow`].
fn checked_len(a: usize, b: usize) -> Result<usize, KernelError> {
    a.checked_mul(b).ok_or(KernelError::Overflow)
}

/// Checks that `s` has exactly `expected` elements.
fn check_len(what: &'static str, actual: usize, expected: usize) -> Result<(), KernelError> {
    if actual == expected {
        Ok(())
    } else {
        Err(KernelError::Length {
            what,
            expected,
            actual,
        })
    }
}

/// An instruction set the kernels are compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Isa {
    /// AVX-512F (with AVX2 and FMA), 16 lanes.
    Avx512,
    /// AVX2 with FMA, 8 lanes.
    Avx2Fma,
    /// Plain Rust over 4-lane arrays; every target, no fused multiply-add.
    Portable,
}

impl Isa {
    /// Every instruction set, best first.
    pub const ALL: [Isa; 3] = [Isa::Avx512, Isa::Avx2Fma, Isa::Portable];

    /// A short name (`avx512`, `avx2-fma`, `portable`).
    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "avx512",
            Isa::Avx2Fma => "avx2-fma",
            Isa::Portable => "portable",
        }
    }

    /// Whether this CPU (and OS) supports the instruction set.
    pub fn is_available(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2Fma => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    fn code(self) -> u8 {
        match self {
            Isa::Avx512 => 3,
            Isa::Avx2Fma => 2,
            Isa::Portable => 1,
        }
    }

    fn from_code(c: u8) -> Option<Isa> {
        match c {
            3 => Some(Isa::Avx512),
            2 => Some(Isa::Avx2Fma),
            1 => Some(Isa::Portable),
            _ => None,
        }
    }
}

static DETECTED: AtomicU8 = AtomicU8::new(0);

/// Whether [`with_isa`] ever ran in this process: until it does, no thread can have an
/// instruction set forced, and [`active_isa`] reads no thread-local (in a dynamically loaded
/// extension every thread-local read is a call into the loader, paid by every kernel call).
static EVER_FORCED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The instruction set [`with_isa`] forces on this thread (0: none).
    static FORCED: Cell<u8> = const { Cell::new(0) };
}

/// The best instruction set this CPU supports, detected on the first call and cached.
#[inline]
pub fn isa() -> Isa {
    match Isa::from_code(DETECTED.load(Ordering::Relaxed)) {
        Some(isa) => isa,
        None => detect(),
    }
}

/// Detects and caches [`isa`]'s answer.
#[cold]
fn detect() -> Isa {
    let best = Isa::ALL
        .into_iter()
        .find(|i| i.is_available())
        .unwrap_or(Isa::Portable);
    DETECTED.store(best.code(), Ordering::Relaxed);
    best
}

/// The instruction sets this CPU supports, best first (always ends with [`Isa::Portable`]).
pub fn available_isas() -> impl Iterator<Item = Isa> {
    Isa::ALL.into_iter().filter(|i| i.is_available())
}

/// The instruction set kernels called on this thread use now: the one [`with_isa`] forces, else
/// [`isa`].
#[inline]
pub fn active_isa() -> Isa {
    // `with_isa` sets the flag before it forces anything on its own thread, so a thread that
    // forced an instruction set always sees it set (program order on that thread).
    if !EVER_FORCED.load(Ordering::Relaxed) {
        return isa();
    }
    Isa::from_code(FORCED.with(Cell::get)).unwrap_or_else(isa)
}

/// Runs `f` with every kernel on this thread using `isa` (nesting allowed; the previous choice
/// comes back when `f` returns or unwinds). Errors, without running `f`, when the CPU lacks
/// `isa`.
pub fn with_isa<R>(isa: Isa, f: impl FnOnce() -> R) -> Result<R, KernelError> {
    if !isa.is_available() {
        return Err(KernelError::IsaUnavailable(isa));
    }
    struct Restore(u8);
    impl Drop for Restore {
        fn drop(&mut self) {
            FORCED.with(|c| c.set(self.0));
        }
    }
    EVER_FORCED.store(true, Ordering::Relaxed);
    let _restore = Restore(FORCED.with(|c| c.replace(isa.code())));
    Ok(f())
}

/// Runs `f` with denormal float inputs read as zero and denormal results flushed to zero on this
/// thread, as TensorFlow runs its CPU kernels (x86-64: MXCSR's DAZ and FTZ bits; aarch64: FPCR's
/// FZ bit); the previous mode comes back when `f` returns or unwinds. Only on those targets.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn with_denormals_flushed<R>(f: impl FnOnce() -> R) -> R {
    let old = fp_mode::get();
    struct Restore(u64);
    impl Drop for Restore {
        fn drop(&mut self) {
            fp_mode::set(self.0);
        }
    }
    let _restore = Restore(old);
    fp_mode::set(old | fp_mode::FLUSH);
    f()
}

/// The thread's floating-point control register, where it has flush-to-zero bits.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod fp_mode {
    /// MXCSR: DAZ (bit 6) and FTZ (bit 15).
    #[cfg(target_arch = "x86_64")]
    pub const FLUSH: u64 = (1 << 6) | (1 << 15);
    /// FPCR: FZ (bit 24).
    #[cfg(target_arch = "aarch64")]
    pub const FLUSH: u64 = 1 << 24;

    pub fn get() -> u64 {
        #[cfg(target_arch = "x86_64")]
        {
            let mut v: u32 = 0;
            // SAFETY: `stmxcsr` stores the 32-bit MXCSR into `v`; it touches nothing else.
            unsafe {
                std::arch::asm!("stmxcsr [{}]", in(reg) &mut v, options(nostack, preserves_flags))
            };
            u64::from(v)
        }
        #[cfg(target_arch = "aarch64")]
        {
            let v: u64;
            // SAFETY: reading FPCR has no side effects.
            unsafe { std::arch::asm!("mrs {}, fpcr", out(reg) v, options(nomem, nostack)) };
            v
        }
    }

    pub fn set(v: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            // MXCSR is 32 bits; `v` came from `get` (plus flush bits).
            let v = v as u32;
            // SAFETY: `ldmxcsr` loads a value read by `stmxcsr` with only the DAZ/FTZ bits
            // changed: a valid MXCSR (no reserved bit set).
            unsafe {
                std::arch::asm!("ldmxcsr [{}]", in(reg) &v, options(nostack, readonly, preserves_flags))
            };
        }
        #[cfg(target_arch = "aarch64")]
        {
            // SAFETY: writes back FPCR as read, with only the FZ bit changed.
            unsafe { std::arch::asm!("msr fpcr, {}", in(reg) v, options(nomem, nostack)) };
        }
    }
}

/// A kernel body generic over the SIMD flavour; [`dispatch`] instantiates it for the active ISA.
///
/// Implementations must mark `run` `#[inline(always)]` (and so every generic helper it calls), so
/// that the body is compiled inside the `#[target_feature]` trampolines below. A kernel that
/// inlines many blocks (one per register-block height, say) runs each through
/// [`Simd::call`], another `Kernel` in a frame of its own, so that its stack stays small in
/// every build: a test runs every kernel on a 256 KiB thread.
pub(crate) trait Kernel {
    type Out;
    fn run<S: Simd>(self, s: S) -> Self::Out;
}

/// Runs `k` with the active instruction set, or with AVX2 where that is AVX-512 and the kernel's
/// rows are at most `narrow` floats wide (8 or fewer: half an AVX-512 vector would be padding,
/// and its masked blocks measured 2.7x slower than AVX2's full ones on a 128×32·32×8 product,
/// and 1.2-1.45x slower on softmax with argmax over 128 rows of 8, the two alternating).
#[inline(always)]
fn dispatch_narrow<K: Kernel>(k: K, width: usize) -> K::Out {
    #[cfg(target_arch = "x86_64")]
    if width <= 8 && active_isa() == Isa::Avx512 {
        // SAFETY: `Avx512` is active only once AVX-512F, AVX2 and FMA were detected, so the AVX2
        // and FMA code runs on this CPU.
        return unsafe { simd::x86::run_avx2(k) };
    }
    let _ = width;
    dispatch(k)
}

/// Runs `k` with the active instruction set. Inlined: the kernel's arguments are built in the
/// caller's frame and handed to the flavour's function as they are, not copied once more.
#[inline(always)]
fn dispatch<K: Kernel>(k: K) -> K::Out {
    match active_isa() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `active_isa` returns `Avx512` only when `Isa::is_available` detected AVX-512F,
        // AVX2 and FMA on this CPU (in `isa`, or when `with_isa` accepted it).
        Isa::Avx512 => unsafe { simd::x86::run_avx512(k) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above, `Avx2Fma` is returned only once AVX2 and FMA were detected.
        Isa::Avx2Fma => unsafe { simd::x86::run_avx2(k) },
        _ => simd::run_portable_apart(k),
    }
}
