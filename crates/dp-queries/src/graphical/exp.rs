//! `exp` over a clique's table in the fit's inner loop, written to vectorise.
//!
//! Each calibration of the fit exponentiates every cell of the model once
//! (`calibrate_fast`, relative to the clique's maximum); on adult's W64 model at ε = 10
//! (936 830 cells, ~1.3 calibrations per mirror-descent step) the C library's scalar `exp`
//! and its wrapper were a fifth of a release's time (issue #24, measured with `perf`). This
//! is the textbook reduction (Cody & Waite; Tang, ACM TOMS 1989, §2): `x = k·ln 2 + r` with
//! `k = round(x / ln 2)` and `|r| ≤ ln 2 / 2`, `ln 2` split in two so that `k·ln2_hi` is exact,
//! `e^r` by its Taylor polynomial of degree 13 (truncation below `0.35^14/14! < 5·10⁻¹⁸`,
//! under half an ulp of 1), and `2^k` put straight into the exponent bits. Every operation is
//! a separate IEEE multiply or add (no fused multiply-add, which Rust never contracts to), so
//! the result is the same, bit for bit, on every x86-64 or AArch64 machine and however the
//! compiler vectorises the loop; it is within a few ulp of the correctly rounded `e^x`
//! (unit test: ≤ 4 ulp against the C library on 10⁶ points).
//!
//! Domain: `x ≤ 709` (the callers pass `x − max ≤ 0`). Below `−708` the result is 0 (the
//! subnormal range, which the fit already treats as zero mass); NaN gives NaN.

/// `1/n!` for `n = 13, 12, …, 0` (Horner order).
const TAYLOR: [f64; 14] = [
    1.0 / 6_227_020_800.0,
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
    1.0,
    1.0,
];

/// `ln 2` in two parts: the high part has 32 significant bits (its low 21 mantissa bits are
/// zero), so `k·LN2_HI` is exact for `|k| < 2^21` (fdlibm's split).
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
/// `1.5·2^52`: adding it rounds a double of magnitude below `2^51` to an integer (to nearest)
/// and leaves that integer in the low mantissa bits.
const SHIFT: f64 = 6_755_399_441_055_744.0;
/// Below this `e^x` is subnormal (`e^-708 ≈ 3.3·10⁻³⁰⁸`): returned as 0.
const UNDERFLOW: f64 = -708.0;

/// `e^x` (module docs: domain, accuracy). Inlined into the loops that call it, where it
/// vectorises (no branches, no calls).
#[inline(always)]
pub(crate) fn exp(x: f64) -> f64 {
    let t = x * std::f64::consts::LOG2_E + SHIFT;
    let k = t - SHIFT;
    // 2^k: the low bits of t hold SHIFT's mantissa plus k; adding the bias and shifting the
    // low 12 bits into the exponent field leaves exactly (k + 1023) there
    let scale = f64::from_bits(t.to_bits().wrapping_add(1023) << 52);
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut p = TAYLOR[0];
    for &c in &TAYLOR[1..] {
        p = p * r + c;
    }
    if x < UNDERFLOW { 0.0 } else { p * scale }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Distance in ulps between two positive finite doubles.
    fn ulps(a: f64, b: f64) -> u64 {
        a.to_bits().abs_diff(b.to_bits())
    }

    /// Within 4 ulp of the C library's `exp` (itself within 1 ulp of the true value) on
    /// 10⁶ uniform points of the range the fit uses, [−708, 0], and on a grid near 0 and at
    /// the reduction's boundaries `(k + ½)·ln 2`; exactly 1 at 0, exactly 0 below −708 and at
    /// −∞, NaN for NaN. A wrong coefficient, split or exponent bias fails by far more.
    #[test]
    fn within_four_ulp_of_the_c_library() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut worst = 0u64;
        let mut check = |x: f64| {
            let (got, want) = (exp(x), x.exp());
            let d = ulps(got, want);
            assert!(d <= 4, "exp({x:e}) = {got:e}, libm {want:e}: {d} ulp");
            worst = worst.max(d);
        };
        for _ in 0..1_000_000 {
            check(-708.0 * rng.random::<f64>());
        }
        for i in 0..10_000 {
            check(-(i as f64) * 1e-4);
            check(-(i as f64) * 1e-12);
        }
        for k in 0..1020 {
            let b = (k as f64 + 0.5) * std::f64::consts::LN_2;
            for x in [-b, -b.next_up(), -b.next_down()] {
                check(x);
            }
        }
        // also above 0 (the domain goes up to 709)
        for i in 0..7090 {
            check(i as f64 * 0.1);
        }
        eprintln!("worst: {worst} ulp");
        // the split: LN2_HI's low 21 mantissa bits are zero, and the two parts add to ln 2
        assert_eq!(LN2_HI.to_bits() & ((1 << 21) - 1), 0);
        assert_eq!(LN2_HI + LN2_LO, std::f64::consts::LN_2);
        assert!((LN2_HI - 0.693_147_180_369_123_8).abs() < 1e-16);
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-708.5), 0.0);
        assert_eq!(exp(f64::NEG_INFINITY), 0.0);
        assert!(exp(f64::NAN).is_nan());
    }
}
