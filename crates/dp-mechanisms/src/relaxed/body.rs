//! The relaxation `L` seen in parity coordinates: the body the relaxed projection projects
//! onto.
//!
//! [`dp_geometry::ParityRelaxation`] lives in `R^{rows·cols}`, one coordinate per entry
//! `(σ, τ)`, holding the parity `σ Δ τ`. The mechanism measures each parity once, so it works
//! in the space of the parities it measured, `R^{1+N}` (coordinate 0 is the empty parity, the
//! constant 1; coordinate `j ≥ 1` is parity `T_j` of the transform), and projects onto the
//! image of `L` under the linear map `A` that averages, for every parity, the entries that hold
//! it (entries holding a parity outside the list are dropped: the coordinate projection of
//! seed 000 Theorem 3.4, item 3):
//!
//! ```text
//!     (A M)_j = (1/r_j) Σ_{(σ,τ) : σΔτ = T_j} M_στ,      r_j = #{(σ,τ) : σΔτ = T_j}.
//! ```
//!
//! `A·L` is convex (a linear image of a convex set) and contains `A·K`, hence every
//! dataset's normalised parity vector (for a record `x`, `A M(x) = (x_{T_j})_j`). Its linear
//! oracle is the Grothendieck SDP with cost `C_στ = c_j / r_j` on the entries of `T_j` (and
//! 0 elsewhere), since `⟨c, A M⟩ = Σ_στ C_στ M_στ`; the solver's certified gap is the
//! answer's slack. Averaging is the natural read-back: for a point `M` of `L` the weighted
//! squared distance `Σ_j ω_j/r_j Σ_{στ→j} (M_στ − y_j)²` is `Σ_j ω_j (A M − y)_j²` plus the
//! spread of the replicas, so the replicated objective and this one have the same averages
//! at their optima' read-back, and this one has `1 + N` coordinates instead of `rows·cols`.

use dp_geometry::{
    GeometryError, GrothendieckSettings, LinearOracle, OracleAnswer, Parallelism, ParityRelaxation,
};
use dp_queries::ParityQueries;
use std::sync::Mutex;

/// `A·L` for a list of parities (module docs), as a [`LinearOracle`] on `R^{1+N}`.
pub struct ParityBody {
    relaxation: ParityRelaxation,
    /// Per entry (row-major): its coordinate, or `usize::MAX` when its parity is not listed.
    entry_coordinate: Vec<usize>,
    /// `r_j`, the number of entries of coordinate `j` (all ≥ 1).
    replicas: Vec<usize>,
    /// Running totals of the oracle's work: (calls, SDP cycles, largest gap).
    work: Mutex<(usize, usize, f64)>,
    /// The last solve, the warm start of the next (Frank–Wolfe's directions change little
    /// from one step to the next).
    last: Mutex<Option<dp_geometry::GrothendieckSolution>>,
}

/// No coordinate.
pub(crate) const NONE: usize = usize::MAX;

/// The relaxation for `parities` and the map from its entries to parity coordinates
/// (`0`: the constant, `q + 1`: parity `q`, [`NONE`]: a parity the workload does not use),
/// with the number of entries of each coordinate; fails when a coordinate has no entry.
/// Shared by [`ParityBody`] and [`super::jl::VectorParityBody`].
pub(crate) fn entry_map(
    parities: &ParityQueries,
    settings: GrothendieckSettings,
) -> Result<(ParityRelaxation, Vec<usize>, Vec<usize>), GeometryError> {
    let relaxation = ParityRelaxation::new(parities.d(), parities.degree(), settings)?;
    let rows = relaxation.row_sets().len();
    let cols = relaxation.col_sets().len();
    let mut entry_coordinate = Vec::with_capacity(rows * cols);
    let mut replicas = vec![0usize; parities.len() + 1];
    for r in 0..rows {
        for c in 0..cols {
            let set = relaxation.entry_parity(r, c)?;
            let j = if set.is_empty() {
                0
            } else {
                parities.position(&set).map_or(NONE, |q| q + 1)
            };
            if j != NONE {
                replicas[j] += 1;
            }
            entry_coordinate.push(j);
        }
    }
    if let Some(j) = replicas.iter().position(|&r| r == 0) {
        return Err(GeometryError::InvalidParameter {
            name: "parities",
            reason: format!("parity number {j} has no entry in the relaxation"),
        });
    }
    Ok((relaxation, entry_coordinate, replicas))
}

impl ParityBody {
    /// The body for `parities` over their `d` attributes, degree `k = parities.degree()`
    /// (at least 1), solved with `settings`. Fails when the relaxation is too large
    /// ([`dp_geometry::MAX_RELAXATION_ENTRIES`]) or a parity has no entry (impossible for
    /// degree ≤ k; checked).
    pub fn new(
        parities: &ParityQueries,
        settings: GrothendieckSettings,
    ) -> Result<Self, GeometryError> {
        let (relaxation, entry_coordinate, replicas) = entry_map(parities, settings)?;
        Ok(Self {
            relaxation,
            entry_coordinate,
            replicas,
            work: Mutex::new((0, 0, 0.0)),
            last: Mutex::new(None),
        })
    }

    /// `r_j` per coordinate (coordinate 0: the empty parity).
    pub fn replicas(&self) -> &[usize] {
        &self.replicas
    }

    /// Number of entries `rows·cols` of the underlying relaxation.
    pub fn entries(&self) -> usize {
        self.entry_coordinate.len()
    }

    /// Oracle calls so far, SDP cycles summed over them, and the largest certified gap.
    pub fn work(&self) -> (usize, usize, f64) {
        self.work.lock().map_or((0, 0, f64::NAN), |w| *w)
    }
}

/// The Grothendieck cost `C_στ = c_j / r_j` on the entries of coordinate `j` (0 on entries
/// of unlisted parities) for a direction `c` in parity coordinates; shared by
/// [`ParityBody`] and [`super::jl::VectorParityBody`]. Fails on a direction of the wrong
/// length.
pub(crate) fn entry_cost(
    entry_coordinate: &[usize],
    replicas: &[usize],
    c: &[f64],
) -> Result<Vec<f64>, GeometryError> {
    if c.len() != replicas.len() {
        return Err(GeometryError::DimensionMismatch {
            what: "direction in parity coordinates",
            expected: replicas.len(),
            found: c.len(),
        });
    }
    Ok(entry_coordinate
        .iter()
        .map(|&j| {
            if j == NONE {
                0.0
            } else {
                c[j] / replicas[j] as f64
            }
        })
        .collect())
}

impl LinearOracle for ParityBody {
    fn dim(&self) -> usize {
        self.replicas.len()
    }

    fn linear_max(&self, c: &[f64], par: Parallelism) -> Result<OracleAnswer, GeometryError> {
        let cost = entry_cost(&self.entry_coordinate, &self.replicas, c)?;
        let start = self.last.lock().ok().and_then(|mut l| l.take());
        let sol = self.relaxation.solve_from(&cost, start.as_ref(), par)?;
        let gram = sol.gram_matrix();
        let mut point = vec![0.0; self.dim()];
        for (&j, g) in self.entry_coordinate.iter().zip(&gram) {
            if j != NONE {
                point[j] += g;
            }
        }
        for (p, &r) in point.iter_mut().zip(&self.replicas) {
            *p /= r as f64;
        }
        let value: f64 = point.iter().zip(c).map(|(p, ci)| p * ci).sum();
        let slack = (sol.upper_bound - value).max(0.0);
        if let Ok(mut w) = self.work.lock() {
            w.0 += 1;
            w.1 += sol.cycles;
            w.2 = w.2.max(slack);
        }
        if let Ok(mut l) = self.last.lock() {
            *l = Some(sol);
        }
        Ok(OracleAnswer {
            point,
            value,
            atom: None,
            slack,
        })
    }
}
