//! The dot-product kernels and the choice between them.
//!
//! Each kernel is a set of `#[target_feature]` functions with one shape: `dot(a, b)`, a row
//! scan `scores(rows, stride, dim, query, out)` and a streaming `sum(data)`. The best kernel the
//! CPU supports is detected once and cached; the scalar kernel is the reference every other one
//! is property-tested against (relative error ≤ 1e-5).
//!
//! Within one kernel a row's score does not depend on where the row sits in a scan (rows are
//! scored in blocks of four, but each row keeps its own accumulators and the same operation
//! order), and `dot(query, row)` equals the row's scan score bit for bit. So a parallel scan
//! that splits rows differently ranks exactly like a serial one.
// Calling a `#[target_feature]` function is unsafe; each call below is guarded by detection.
#![allow(unsafe_code)]

/// The two entry points every vector kernel has, written once: `dot` is a one-row block, and
/// `scores` walks the matrix `BLOCK` rows at a time through the kernel's own `dot_rows`, so a
/// row's arithmetic is the same alone or in a block. Expanded inside each kernel module with its
/// target features, so `dot_rows` inlines with them.
macro_rules! block_drivers {
    ($features:literal) => {
        #[target_feature(enable = $features)]
        pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
            let n = a.len().min(b.len());
            let [score] = dot_rows([&a[..n]], &b[..n]);
            score
        }

        #[target_feature(enable = $features)]
        pub(super) fn scores(rows: &[f32], stride: usize, query: &[f32], out: &mut [f32]) {
            let dim = query.len();
            let mut blocks = out.chunks_exact_mut(BLOCK);
            let mut i = 0;
            for block in &mut blocks {
                let group = std::array::from_fn(|r| row(rows, stride, dim, i + r));
                block.copy_from_slice(&dot_rows::<BLOCK>(group, query));
                i += BLOCK;
            }
            for slot in blocks.into_remainder() {
                let [score] = dot_rows([row(rows, stride, dim, i)], query);
                *slot = score;
                i += 1;
            }
        }
    };
}

/// The quantized-row scan, written once: row `i` (`query.len()` bytes at `i * stride`) scores
/// its own `dot_i8` times its scale, so a scan equals the one-row score bit for bit. Expanded in
/// each byte kernel's module, with its target features when it has any.
macro_rules! byte_scan {
    ($($attr:meta)?) => {
        $(#[$attr])?
        pub(super) fn scores_i8(
            rows: &[i8],
            stride: usize,
            scales: &[f32],
            query: &[f32],
            out: &mut [f32],
        ) {
            let dim = query.len();
            for (i, (slot, &scale)) in out.iter_mut().zip(scales).enumerate() {
                *slot = dot_i8(&rows[i * stride..i * stride + dim], query) * scale;
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "aarch64")]
mod neon;
mod scalar;

use std::sync::OnceLock;

use super::{Matrix, SimdError};

/// A dot-product implementation, chosen at run time from what the CPU offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// 16 lanes, x86-64 with AVX-512F.
    Avx512,
    /// 8 lanes with fused multiply-add, x86-64 with AVX2 and FMA.
    Avx2Fma,
    /// 4 lanes with fused multiply-add, aarch64 (Raspberry Pi 4/5 and friends).
    Neon,
    /// Portable code; eight independent accumulators, which the compiler may vectorise with
    /// whatever the target baseline offers.
    Scalar,
}

impl Kernel {
    /// Every kernel, best first.
    pub const ALL: [Kernel; 4] = [
        Kernel::Avx512,
        Kernel::Avx2Fma,
        Kernel::Neon,
        Kernel::Scalar,
    ];

    /// The fastest kernel this CPU supports, detected on first use and cached.
    pub fn best() -> Kernel {
        static BEST: OnceLock<Kernel> = OnceLock::new();
        *BEST.get_or_init(|| {
            Self::ALL
                .into_iter()
                .find(|kernel| kernel.is_supported())
                .unwrap_or(Kernel::Scalar)
        })
    }

    /// Every kernel this CPU supports, best first; always ends with [`Kernel::Scalar`].
    pub fn available() -> Vec<Kernel> {
        Self::ALL
            .into_iter()
            .filter(|kernel| kernel.is_supported())
            .collect()
    }

    /// Whether this CPU has the features the kernel needs (std caches the CPUID probe).
    pub fn is_supported(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2Fma => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            Kernel::Scalar => true,
            _ => false,
        }
    }

    /// A short lower-case name for logs and bench output.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Avx512 => "avx512",
            Kernel::Avx2Fma => "avx2+fma",
            Kernel::Neon => "neon",
            Kernel::Scalar => "scalar",
        }
    }

    /// The dot product of `a` and `b`.
    ///
    /// # Panics
    /// If the lengths differ (like `copy_from_slice`), or if the kernel is not supported by this
    /// CPU (use [`Kernel::best`] or [`Kernel::available`] to pick one).
    pub fn dot(self, a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len(), "dot of vectors of different lengths");
        assert!(self.is_supported(), "kernel {self:?} is not supported");
        match self {
            // SAFETY: `is_supported` just confirmed the CPU has AVX-512F.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { avx512::dot(a, b) },
            // SAFETY: `is_supported` just confirmed the CPU has AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2Fma => unsafe { avx2::dot(a, b) },
            // SAFETY: `is_supported` just confirmed the CPU has NEON.
            #[cfg(target_arch = "aarch64")]
            #[allow(unused_unsafe)]
            Kernel::Neon => unsafe { neon::dot(a, b) },
            _ => scalar::dot(a, b),
        }
    }

    /// Writes `query · row` for every row of `matrix` into `out[..matrix.len()]`. Rows are unit
    /// length, so with a unit-length `query` these are cosine similarities.
    pub fn scores(self, matrix: &Matrix, query: &[f32], out: &mut [f32]) -> Result<(), SimdError> {
        if !self.is_supported() {
            return Err(SimdError::Unsupported(self));
        }
        if query.len() != matrix.dim() {
            return Err(SimdError::DimMismatch {
                expected: matrix.dim(),
                got: query.len(),
            });
        }
        if out.len() < matrix.len() {
            return Err(SimdError::OutputTooShort {
                needed: matrix.len(),
                got: out.len(),
            });
        }
        self.scan(
            matrix.as_slice(),
            matrix.stride(),
            query,
            &mut out[..matrix.len()],
        );
        Ok(())
    }

    /// The sum of `data`, read in one forward sweep with the kernel's widest loads. This is the
    /// floor a scan is measured against: the same bytes, the least possible arithmetic.
    ///
    /// # Panics
    /// If the kernel is not supported by this CPU.
    pub fn sum(self, data: &[f32]) -> f32 {
        assert!(self.is_supported(), "kernel {self:?} is not supported");
        match self {
            // SAFETY: `is_supported` just confirmed the CPU has AVX-512F.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { avx512::sum(data) },
            // SAFETY: `is_supported` just confirmed the CPU has AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2Fma => unsafe { avx2::sum(data) },
            // SAFETY: `is_supported` just confirmed the CPU has NEON.
            #[cfg(target_arch = "aarch64")]
            #[allow(unused_unsafe)]
            Kernel::Neon => unsafe { neon::sum(data) },
            _ => scalar::sum(data),
        }
    }

    /// `Σ rowᵢ · queryᵢ` of a quantized row (multiply by the row's scale for its cosine). x86
    /// kernels share one AVX2 implementation (AVX-512 adds nothing that matters at byte width);
    /// NEON uses the portable loop, which the compiler vectorises for it.
    ///
    /// # Panics
    /// If the lengths differ, or if the kernel is not supported by this CPU.
    pub fn dot_i8(self, row: &[i8], query: &[f32]) -> f32 {
        assert_eq!(
            row.len(),
            query.len(),
            "dot of vectors of different lengths"
        );
        assert!(self.is_supported(), "kernel {self:?} is not supported");
        match self {
            // SAFETY: `avx2_fma` just confirmed the CPU has AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 | Kernel::Avx2Fma if avx2_fma() => unsafe { avx2::dot_i8(row, query) },
            _ => scalar::dot_i8(row, query),
        }
    }

    /// Writes each quantized row's cosine with `query` into `out`: `out.len()` rows laid out
    /// `stride` bytes apart in `rows`, each `query.len()` wide, row `i` scaled by `scales[i]`.
    /// A row scores bit for bit what [`Kernel::dot_i8`] times its scale gives.
    ///
    /// # Panics
    /// If the kernel is not supported, or the slices are too short for `out.len()` rows.
    pub(crate) fn scan_i8(
        self,
        rows: &[i8],
        stride: usize,
        scales: &[f32],
        query: &[f32],
        out: &mut [f32],
    ) {
        assert!(self.is_supported(), "kernel {self:?} is not supported");
        assert!(scales.len() >= out.len(), "a scale per scored row");
        match self {
            // SAFETY: `avx2_fma` just confirmed the CPU has AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 | Kernel::Avx2Fma if avx2_fma() => unsafe {
                avx2::scores_i8(rows, stride, scales, query, out)
            },
            _ => scalar::scores_i8(rows, stride, scales, query, out),
        }
    }

    /// Scores `out.len()` rows laid out `stride` floats apart in `rows`, each `query.len()` wide.
    /// Wrong lengths panic inside the kernel (slice indexing); they never read out of bounds.
    ///
    /// # Panics
    /// If the kernel is not supported (callers check first and report
    /// [`SimdError::Unsupported`]; the assertion keeps this function sound on its own).
    pub(crate) fn scan(self, rows: &[f32], stride: usize, query: &[f32], out: &mut [f32]) {
        assert!(self.is_supported(), "kernel {self:?} is not supported");
        match self {
            // SAFETY: `is_supported` just confirmed the CPU has AVX-512F.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { avx512::scores(rows, stride, query, out) },
            // SAFETY: `is_supported` just confirmed the CPU has AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2Fma => unsafe { avx2::scores(rows, stride, query, out) },
            // SAFETY: `is_supported` just confirmed the CPU has NEON.
            #[cfg(target_arch = "aarch64")]
            #[allow(unused_unsafe)]
            Kernel::Neon => unsafe { neon::scores(rows, stride, query, out) },
            _ => scalar::scores(rows, stride, query, out),
        }
    }
}

/// Whether the AVX2 byte kernel can run (std caches the CPUID probe).
#[cfg(target_arch = "x86_64")]
fn avx2_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// Row `i` of a scan: `dim` floats starting at `i * stride`.
#[inline(always)]
fn row(rows: &[f32], stride: usize, dim: usize, i: usize) -> &[f32] {
    &rows[i * stride..i * stride + dim]
}
