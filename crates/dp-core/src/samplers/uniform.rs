//! Exact uniform sampling of integers below a bound.
//!
//! # Documented consumption of the random stream
//!
//! Golden tests (and anyone reproducing a run by hand) rely on this:
//! * bound 1: returns 0 and draws nothing;
//! * bound `b ∈ [2, 2⁶⁴)`: draw `x = rng.next_u64()`; let `m = x · b` as a 128-bit
//!   product; if `m mod 2⁶⁴ < 2⁶⁴ mod b` reject and draw again, else return
//!   `⌊m / 2⁶⁴⌋` (Lemire, "Fast Random Integer Generation in an Interval", 2019 —
//!   exactly uniform because each output keeps exactly `⌊2⁶⁴ / b⌋` values of `x`);
//! * larger bounds (u128 / big integers): draw `⌈bits/64⌉` words with `next_u64`,
//!   least significant first, mask the top word to the bit length of `b − 1`, reject
//!   if `≥ b`.

use num_bigint::BigUint;
use num_traits::ToPrimitive;
use rand::{CryptoRng, Rng};

use crate::error::{CoreError, Result};

/// A uniformly random integer in `{0, …, bound − 1}`, exactly (rejection sampling, see
/// the module docs for the consumption of the stream). `bound = 0` is an error.
pub fn sample_uniform_below<R: Rng + CryptoRng + ?Sized>(rng: &mut R, bound: u64) -> Result<u64> {
    if bound == 0 {
        return Err(CoreError::invalid("bound", bound, "must be >= 1"));
    }
    Ok(uniform_u64(rng, bound))
}

/// Uniform on `{0, …, bound − 1}` for `bound >= 1`.
#[inline]
pub(crate) fn uniform_u64<R: Rng + ?Sized>(rng: &mut R, bound: u64) -> u64 {
    if bound <= 1 {
        return 0;
    }
    loop {
        let x = rng.next_u64();
        let m = (x as u128) * (bound as u128);
        let lo = m as u64;
        if lo < bound {
            let threshold = bound.wrapping_neg() % bound;
            if lo < threshold {
                continue;
            }
        }
        return (m >> 64) as u64;
    }
}

/// Uniform on `{0, …, bound − 1}` for `bound >= 1`.
pub(crate) fn uniform_u128<R: Rng + ?Sized>(rng: &mut R, bound: u128) -> u128 {
    if let Ok(b) = u64::try_from(bound) {
        return uniform_u64(rng, b) as u128;
    }
    let bits = 128 - (bound - 1).leading_zeros();
    let mask = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    loop {
        let lo = rng.next_u64() as u128;
        let hi = rng.next_u64() as u128;
        let x = (lo | (hi << 64)) & mask;
        if x < bound {
            return x;
        }
    }
}

/// Uniform on `{0, …, bound − 1}` for `bound >= 1`.
pub(crate) fn uniform_big<R: Rng + ?Sized>(rng: &mut R, bound: &BigUint) -> BigUint {
    if let Some(b) = bound.to_u128() {
        return BigUint::from(uniform_u128(rng, b.max(1)));
    }
    let top = bound - 1u32;
    let bits = top.bits();
    let words = bits.div_ceil(64) as usize;
    let top_bits = bits - 64 * (words as u64 - 1);
    let top_mask = if top_bits == 64 {
        u64::MAX
    } else {
        (1u64 << top_bits) - 1
    };
    let mut buf = vec![0u32; 2 * words];
    loop {
        for w in 0..words {
            let mut x = rng.next_u64();
            if w == words - 1 {
                x &= top_mask;
            }
            buf[2 * w] = x as u32;
            buf[2 * w + 1] = (x >> 32) as u32;
        }
        let candidate = BigUint::new(buf.clone());
        if &candidate < bound {
            return candidate;
        }
    }
}
