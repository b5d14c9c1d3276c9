//! Explicit parallelism (faer's habit): every parallel routine takes a [`Parallelism`]
//! argument; nothing in this crate consults a global setting.

/// Whether a routine may use rayon's thread pool.
///
/// `Rayon` runs on the *current* rayon pool, so a caller controls the thread count with
/// `rayon::ThreadPool::install`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Parallelism {
    /// Run on the calling thread only.
    #[default]
    None,
    /// Split the work over the current rayon pool.
    Rayon,
}

/// Number of points per rayon task in the batch kernels: large enough to amortize
/// scheduling, small enough to balance two to a few dozen threads.
pub(crate) const PAR_CHUNK: usize = 1024;

impl Parallelism {
    /// The same choice as faer's [`faer::Par`]: `None` → `Par::Seq`, `Rayon` →
    /// `Par::rayon(0)` (every thread of the current rayon pool).
    pub fn faer(self) -> faer::Par {
        match self {
            Parallelism::None => faer::Par::Seq,
            Parallelism::Rayon => faer::Par::rayon(0),
        }
    }
}
