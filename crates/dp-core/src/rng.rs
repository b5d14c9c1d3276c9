//! Seeded random-number plumbing: ChaCha20 everywhere, no global state.
//!
//! Every randomized function in dpqr takes `rng: &mut R` with
//! `R: Rng + CryptoRng + ?Sized`; these helpers make the generators.

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::error::{CoreError, Result};

/// A reproducible ChaCha20 generator from a 64-bit seed
/// (`ChaCha20Rng::seed_from_u64`, stream 0).
pub fn seeded_rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// A ChaCha20 generator keyed from the operating system's entropy source.
pub fn os_seeded_rng() -> Result<ChaCha20Rng> {
    ChaCha20Rng::try_from_rng(&mut rand::rngs::SysRng).map_err(|e| CoreError::Entropy {
        reason: e.to_string(),
    })
}

/// The generator for parallel task `stream` of a run seeded with `seed`: the same key
/// as [`seeded_rng`]`(seed)` on ChaCha20 stream number `stream` (`set_stream`), so
/// streams are independent and the result does not depend on scheduling.
/// `stream_rng(seed, 0)` equals `seeded_rng(seed)`.
pub fn stream_rng(seed: u64, stream: u64) -> ChaCha20Rng {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams() {
        let mut a = seeded_rng(7);
        let mut b = stream_rng(7, 0);
        let mut c = stream_rng(7, 1);
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn os_rng_works() -> Result<()> {
        let mut a = os_seeded_rng()?;
        let mut b = os_seeded_rng()?;
        // Two 256-bit keys from the OS collide with probability 2^-256.
        assert_ne!(a.next_u64(), b.next_u64());
        Ok(())
    }
}
