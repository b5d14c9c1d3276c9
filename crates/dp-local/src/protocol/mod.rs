//! The local mechanisms of seed 004 §5 as non-interactive protocols, simulated with one
//! client per record: the clients run [`crate::client`] randomizers on their own records
//! (in parallel, each from its own stream of a [`StreamFamily`], so a run is a function of
//! the seed), and the server runs [`crate::server`] aggregation and the central model's
//! projection on the messages alone.
//!
//! | mechanism | client sends (per level) | server | source |
//! |---|---|---|---|
//! | [`LocalMechanismKind::Projection`] | table-sampled `W` of `q(x)` | average, project onto `conv 𝒳` | seed 004 Thm 5.1 |
//! | [`LocalMechanismKind::Coarse`] | table-sampled `W` of `q(π(x))`, `π` the rounding to a maximal α/2-separated cover | average, project onto `conv 𝒳^(1)` | Thm 1.6, first protocol |
//! | [`LocalMechanismKind::Chaining`] | one table-sampled `W` per non-trivial level `l` of `q(x_l) − q(x_{l−1})`, each at ε/L | per level: average, project onto `conv 𝒳^(l)`; sum the levels | Thm 1.6, second protocol |
//!
//! **Guarantee.** Every client's messages together are ε-LDP (one message at ε, or L
//! messages at ε/L: basic composition of pure DP over the messages of one client). The
//! cover and the decomposition are computed from the public universe, workload and n, never
//! from data; everything the server does is post-processing of the messages.

pub mod baselines;

pub use baselines::{BaselineKind, run_baseline};

use rayon::prelude::*;

use crate::client::{
    IncrementEncoding, LocalRandomizer, MarginalEncoding, RoundedEncoding, SampledTableRelease,
    TableEncoding,
};
use crate::server::{Aggregate, TableAggregate};
use crate::{LocalError, Result};
use dp_core::StreamFamily;
use dp_geometry::{FrankWolfeResult, FrankWolfeSettings};
use dp_mechanisms::PrivacyCertificate;
use dp_mechanisms::projection::chaining::ChainDecomposition;
use dp_mechanisms::projection::metric::MarginalMetric;
use dp_mechanisms::projection::points::GatheredPoints;
use dp_mechanisms::projection::{DEFAULT_MAX_UNIVERSE, ProjectionSettings, project_onto};
use dp_queries::{Dataset, MarginalPoints, MarginalWorkload, Universe};

/// Which local mechanism (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalMechanismKind {
    /// Local projection (seed 004 Theorem 5.1).
    Projection,
    /// Local coarse projection (seed 004 Theorem 1.6, first protocol).
    Coarse,
    /// Local chaining (seed 004 Theorem 1.6, second protocol).
    Chaining,
}

impl LocalMechanismKind {
    /// The catalogue name (`local-projection`, `local-coarse`, `local-chaining`).
    pub fn name(self) -> &'static str {
        match self {
            LocalMechanismKind::Projection => "local-projection",
            LocalMechanismKind::Coarse => "local-coarse",
            LocalMechanismKind::Chaining => "local-chaining",
        }
    }
}

/// Solver and universe settings of the local mechanisms.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalSettings {
    /// The Frank–Wolfe settings of the projections (default: the central projection
    /// family's).
    pub frank_wolfe: FrankWolfeSettings,
    /// Largest universe to enumerate.
    pub max_universe: usize,
    /// Target error α of the coarse and chaining protocols (`None`: [`default_alpha`] for
    /// coarse, the exact decomposition for chaining).
    pub alpha: Option<f64>,
}

impl Default for LocalSettings {
    fn default() -> Self {
        LocalSettings {
            frank_wolfe: ProjectionSettings::default().frank_wolfe,
            max_universe: DEFAULT_MAX_UNIVERSE,
            alpha: None,
        }
    }
}

/// The local projection's error scale `(ln|𝒳| / (ε² n))^{1/4}` (seed 004 Theorem 5.1 with
/// `Δ = 1` and constant 1), capped at 1: the default α of local coarse projection.
pub fn default_alpha(universe_size: usize, n: usize, epsilon: f64) -> f64 {
    let log = (universe_size.max(2) as f64).ln();
    (log / (epsilon * epsilon * n.max(1) as f64))
        .powf(0.25)
        .min(1.0)
}

/// What a local protocol releases.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalRelease {
    /// The released answers (workload order).
    pub answers: Vec<f64>,
    /// The server's unbiased estimate before projection (sum over levels for chaining).
    pub estimate: Vec<f64>,
    /// The privacy guarantee, in the local model
    /// ([`dp_mechanisms::PrivacyModel::Local`]): the ε of every client's messages together.
    pub certificate: PrivacyCertificate,
    /// Messages each client sent: one, or one per non-trivial level of `local-chaining`
    /// (their ε's add up to at most the certificate's; known once the public decomposition is
    /// built, so it is stated here and not in the certificate, which depends on the
    /// parameters alone).
    pub messages_per_client: usize,
    /// Human-readable diagnostics.
    pub notes: Vec<String>,
}

/// Runs every record of `data` through `randomizer` as its own client (client `i` draws
/// from stream `base + i` of `family`), in parallel, and sums the messages into `empty()`
/// aggregates (fixed chunks of clients summed in a fixed order: the result is the same for
/// every thread count and schedule).
pub fn simulate<R, A>(
    randomizer: &R,
    data: &Dataset,
    family: &StreamFamily,
    base: u64,
    empty: impl Fn() -> A + Sync,
) -> Result<A>
where
    R: LocalRandomizer<Input = [u32]>,
    A: Aggregate<R::Message>,
{
    let columns = data.columns();
    let n = data.n();
    let chunks: Vec<A> = (0..n.div_ceil(CLIENT_CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut agg = empty();
            let mut record = Vec::with_capacity(columns.len());
            for i in c * CLIENT_CHUNK..((c + 1) * CLIENT_CHUNK).min(n) {
                record.clear();
                record.extend(columns.iter().map(|col| col[i]));
                let mut rng = family.stream(base + i as u64);
                agg.add(&randomizer.randomize(&record, &mut rng)?)?;
            }
            Ok(agg)
        })
        .collect::<Result<_>>()?;
    chunks.into_iter().try_fold(empty(), A::merge)
}

/// [`simulate`] for the table-sampled point release.
pub fn simulate_clients<E: TableEncoding>(
    randomizer: &SampledTableRelease<E>,
    data: &Dataset,
    family: &StreamFamily,
    base: u64,
) -> Result<TableAggregate> {
    let sizes = randomizer.encoding().table_sizes().to_vec();
    simulate(randomizer, data, family, base, || {
        TableAggregate::new(&sizes)
    })
}

/// Clients per parallel task of [`simulate_clients`].
const CLIENT_CHUNK: usize = 4096;

/// A local mechanism over marginal workloads (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct LocalProtocol {
    kind: LocalMechanismKind,
    epsilon: f64,
    settings: LocalSettings,
}

fn fw_summary(fw: &FrankWolfeResult) -> String {
    format!(
        "Frank–Wolfe: {} iterations, gap {:.3e}, {} atoms",
        fw.iterations,
        fw.gap,
        fw.atoms.len()
    )
}

impl LocalProtocol {
    /// The protocol `kind` at `epsilon > 0` (finite) per client.
    pub fn new(kind: LocalMechanismKind, epsilon: f64, settings: LocalSettings) -> Result<Self> {
        if !(epsilon > 0.0 && epsilon.is_finite()) {
            return Err(LocalError::InvalidParameter {
                name: "epsilon",
                value: dp_core::Num(epsilon).to_string(),
                reason: "must be positive and finite".into(),
            });
        }
        if let Some(a) = settings.alpha
            && !(a > 0.0 && a <= 1.0)
        {
            return Err(LocalError::InvalidParameter {
                name: "alpha",
                value: dp_core::Num(a).to_string(),
                reason: "must be in (0, 1]".into(),
            });
        }
        Ok(LocalProtocol {
            kind,
            epsilon,
            settings,
        })
    }

    /// Which mechanism.
    pub fn kind(&self) -> LocalMechanismKind {
        self.kind
    }

    /// The guarantee every release of the protocol carries, stated from the parameters
    /// alone: local ε-DP at the protocol's ε ([`PrivacyCertificate::local`]).
    pub fn certificate(&self) -> PrivacyCertificate {
        PrivacyCertificate::local(self.kind.name(), self.epsilon)
    }

    /// Simulates the protocol with one client per record of `data` (the clients' streams
    /// come from `family`) and returns the server's release.
    pub fn run(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        family: &StreamFamily,
    ) -> Result<LocalRelease> {
        if data.domain() != workload.domain() {
            return Err(LocalError::Input {
                reason: "the data and the workload have different domains".into(),
            });
        }
        if data.n() == 0 {
            return Err(LocalError::Input {
                reason: "there are no clients (the data has no records)".into(),
            });
        }
        let universe = Universe::new(workload.domain(), self.settings.max_universe)
            .map_err(dp_mechanisms::MechanismError::from)?;
        let points = MarginalPoints::new(&universe, workload)
            .map_err(dp_mechanisms::MechanismError::from)?;
        match self.kind {
            LocalMechanismKind::Projection => self.run_projection(data, workload, &points, family),
            LocalMechanismKind::Coarse => {
                self.run_coarse(data, workload, &universe, &points, family)
            }
            LocalMechanismKind::Chaining => {
                self.run_chaining(data, workload, &universe, &points, family)
            }
        }
    }

    fn run_projection(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        points: &MarginalPoints<'_>,
        family: &StreamFamily,
    ) -> Result<LocalRelease> {
        let r = SampledTableRelease::new(self.epsilon, MarginalEncoding::new(workload))?;
        let y = simulate_clients(&r, data, family, 0)?.estimate(r.unbias_factor())?;
        let fw = project_onto(points, &y, &self.settings.frank_wolfe)?;
        Ok(LocalRelease {
            notes: vec![format!("projection onto conv 𝒳: {}", fw_summary(&fw))],
            answers: fw.point,
            estimate: y,
            certificate: self.certificate(),
            messages_per_client: 1,
        })
    }

    fn run_coarse(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        universe: &Universe,
        points: &MarginalPoints<'_>,
        family: &StreamFamily,
    ) -> Result<LocalRelease> {
        let metric = MarginalMetric::new(universe, workload)?;
        let alpha = self
            .settings
            .alpha
            .unwrap_or_else(|| default_alpha(universe.len(), data.n(), self.epsilon));
        let centers = metric.maximal_separated_subset(alpha / 2.0)?;
        let map = metric.nearest_point_map_cover(&centers, alpha / 2.0)?;
        let r =
            SampledTableRelease::new(self.epsilon, RoundedEncoding::new(workload, universe, map)?)?;
        let y = simulate_clients(&r, data, family, 0)?.estimate(r.unbias_factor())?;
        let fw = if centers.len() == universe.len() {
            project_onto(points, &y, &self.settings.frank_wolfe)?
        } else {
            let hull = GatheredPoints::subset(points, &centers)?;
            project_onto(hull, &y, &self.settings.frank_wolfe)?
        };
        Ok(LocalRelease {
            notes: vec![
                format!(
                    "cover: α = {alpha:.4}, {} of {} records",
                    centers.len(),
                    universe.len()
                ),
                format!("projection onto conv 𝒳^(1): {}", fw_summary(&fw)),
            ],
            answers: fw.point,
            estimate: y,
            certificate: self.certificate(),
            messages_per_client: 1,
        })
    }

    fn run_chaining(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        universe: &Universe,
        points: &MarginalPoints<'_>,
        family: &StreamFamily,
    ) -> Result<LocalRelease> {
        let metric = MarginalMetric::new(universe, workload)?;
        let exact = ChainDecomposition::exact_levels(&metric);
        let k = match self.settings.alpha {
            None => exact,
            Some(a) => dp_geometry::MultiscaleDecomposition::levels_for_alpha(a.min(0.999_999))
                .map_err(dp_mechanisms::MechanismError::from)?
                .min(exact),
        };
        let dec = ChainDecomposition::new(&metric, k)?;
        let nontrivial: Vec<usize> = (0..k).filter(|&j| dec.is_nontrivial(j)).collect();
        let levels = nontrivial.len();
        let eps_l = level_epsilon(self.epsilon, levels);
        let maps: Vec<Vec<usize>> = dec.levels.iter().map(|l| l.map.clone()).collect();
        let dim = workload.num_queries();
        let mut answers = vec![0.0; dim];
        let mut estimate = vec![0.0; dim];
        let mut notes = vec![format!(
            "decomposition: {k} levels, |S_l| = {:?} of {} records; {levels} non-trivial \
             level(s) at ε/{levels} = {} each",
            dec.levels
                .iter()
                .map(|l| l.centers.len())
                .collect::<Vec<_>>(),
            universe.len(),
            dp_core::Num(eps_l)
        )];
        if !dec.is_nontrivial(0) {
            // |S_1| = 1: the first level's mean is that public point
            let q0 = dec.levels[0].centers[0];
            dp_geometry::PointSet::add_scaled(points, q0, 1.0, &mut answers);
            dp_geometry::PointSet::add_scaled(points, q0, 1.0, &mut estimate);
        }
        for &j in &nontrivial {
            let enc = IncrementEncoding::new(workload, universe, maps.clone(), j)?;
            let r = SampledTableRelease::new(eps_l, enc)?;
            let y = simulate_clients(&r, data, family, (j as u64 + 1) << 40)?
                .estimate(r.unbias_factor())?;
            let fw = if j == 0 && dec.levels[0].centers.len() == universe.len() {
                project_onto(points, &y, &self.settings.frank_wolfe)?
            } else {
                let (plus, minus) = dec.level_hull(j);
                project_onto(
                    GatheredPoints::new(points, plus, minus)?,
                    &y,
                    &self.settings.frank_wolfe,
                )?
            };
            notes.push(format!(
                "level {}: projection onto conv 𝒳^({}): {}",
                j + 1,
                j + 1,
                fw_summary(&fw)
            ));
            for (a, v) in answers.iter_mut().zip(&fw.point) {
                *a += v;
            }
            for (a, v) in estimate.iter_mut().zip(&y) {
                *a += v;
            }
        }
        Ok(LocalRelease {
            answers,
            estimate,
            certificate: self.certificate(),
            messages_per_client: levels.max(1),
            notes,
        })
    }
}

/// The ε of each of the `levels` messages of `local-chaining` (one per non-trivial level):
/// ε/L **rounded down** ([`dp_core::rounding::split_down`], issue #23 §2), so that the L
/// messages of one client compose (basic composition, in `f64` or rounded up as dp-core
/// composes) to at most ε. `levels = 0` is treated as one message.
pub fn level_epsilon(epsilon: f64, levels: usize) -> f64 {
    dp_core::rounding::split_down(epsilon, levels.max(1) as u64)
}
