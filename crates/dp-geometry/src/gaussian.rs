//! Standard normal samples by the Box–Muller transform, from the core `Rng` trait only
//! (no `rand_distr` dependency), and the Gaussian mean width of a body (seed 004 §2.2).

use rand::Rng;

use crate::bodies::LinearOracle;
use crate::error::{GeometryError, Result};
use crate::parallel::Parallelism;

/// A uniform number in the open interval `(0, 1)`: 53 random bits, offset by half a step.
fn open_unit<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

/// Fills `out` with independent `N(0, 1)` samples (Box–Muller: for `U₁, U₂` uniform on
/// `(0,1)`, `√(−2 ln U₁)·cos(2πU₂)` and `√(−2 ln U₁)·sin(2πU₂)` are independent standard
/// normals).
pub fn fill_standard_normal<R: Rng + ?Sized>(rng: &mut R, out: &mut [f64]) {
    let mut chunks = out.chunks_exact_mut(2);
    for pair in &mut chunks {
        let (z0, z1) = box_muller(rng);
        pair[0] = z0;
        pair[1] = z1;
    }
    if let [last] = chunks.into_remainder() {
        *last = box_muller(rng).0;
    }
}

fn box_muller<R: Rng + ?Sized>(rng: &mut R) -> (f64, f64) {
    let u1 = open_unit(rng);
    let u2 = open_unit(rng);
    let r = (-2.0 * u1.ln()).sqrt();
    let (s, c) = (std::f64::consts::TAU * u2).sin_cos();
    (r * c, r * s)
}

/// Monte-Carlo estimate of the Gaussian mean width `g(K) = E sup_{v∈K} ⟨g, v⟩`,
/// `g ~ N(0, I_dim)` (seed 004 §2.2, the quantity in Lemma 2.2's error bound).
///
/// Returns `(mean, standard error)` of `samples ≥ 2` independent oracle values; the
/// standard error is the sample standard deviation over `√samples`. With an approximate
/// oracle each value is low by at most its reported slack.
pub fn gaussian_mean_width<O: LinearOracle + ?Sized, R: Rng + ?Sized>(
    body: &O,
    samples: usize,
    par: Parallelism,
    rng: &mut R,
) -> Result<(f64, f64)> {
    if samples < 2 {
        return Err(GeometryError::InvalidParameter {
            name: "samples",
            reason: "at least two samples are needed for a standard error".into(),
        });
    }
    let mut g = vec![0.0; body.dim()];
    // Welford's running mean and sum of squared deviations.
    let (mut mean, mut m2) = (0.0f64, 0.0f64);
    for k in 0..samples {
        fill_standard_normal(rng, &mut g);
        let value = body.linear_max(&g, par)?.value;
        let delta = value - mean;
        mean += delta / (k + 1) as f64;
        m2 += delta * (value - mean);
    }
    let var = m2 / (samples - 1) as f64;
    Ok((mean, (var / samples as f64).sqrt()))
}
