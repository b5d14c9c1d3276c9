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

/// A family of independent ChaCha20 streams under one fresh 256-bit key drawn from a
/// caller's generator: the way parallel code splits randomness deterministically.
///
/// `StreamFamily::fork(rng)` consumes 32 bytes of `rng`; `stream(i)` is the ChaCha20
/// keystream with that key and stream number `i`. Streams with different numbers are
/// independent (distinct ChaCha20 nonces), so work split into numbered chunks draws the
/// same noise whatever the thread count or schedule, and the key keeps the full 256 bits of
/// the caller's generator (unlike seeding from a `u64`).
#[derive(Clone)]
pub struct StreamFamily {
    key: [u8; 32],
}

impl StreamFamily {
    /// Draw a fresh key from `rng`.
    pub fn fork<R: rand::CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        StreamFamily { key }
    }

    /// The generator of stream `index`.
    pub fn stream(&self, index: u64) -> ChaCha20Rng {
        let mut rng = ChaCha20Rng::from_seed(self.key);
        rng.set_stream(index);
        rng
    }
}

impl std::fmt::Debug for StreamFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // never print key material
        f.write_str("StreamFamily { key: <hidden> }")
    }
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
    fn stream_family_is_deterministic_and_streams_differ() {
        let fam_a = StreamFamily::fork(&mut seeded_rng(3));
        let fam_b = StreamFamily::fork(&mut seeded_rng(3));
        let draw = |f: &StreamFamily, i| -> Vec<u64> {
            let mut r = f.stream(i);
            (0..4).map(|_| r.next_u64()).collect()
        };
        assert_eq!(draw(&fam_a, 5), draw(&fam_b, 5));
        assert_ne!(draw(&fam_a, 5), draw(&fam_a, 6));
        // the key is the first 32 bytes of the parent stream
        let mut parent = seeded_rng(3);
        let mut key = [0u8; 32];
        parent.fill_bytes(&mut key);
        let mut direct = ChaCha20Rng::from_seed(key);
        direct.set_stream(5);
        assert_eq!(
            draw(&fam_a, 5),
            (0..4).map(|_| direct.next_u64()).collect::<Vec<_>>()
        );
        assert_eq!(format!("{fam_a:?}"), "StreamFamily { key: <hidden> }");
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
