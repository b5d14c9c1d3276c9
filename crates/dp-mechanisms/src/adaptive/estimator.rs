//! The estimate an adaptive mechanism keeps between rounds: a distribution over the records
//! fitted to every noisy measurement so far (pure post-processing of the measurements, no
//! privacy role). It answers any marginal — measured or not — and yields synthetic data.

use dp_queries::{
    CellGroups, Dataset, Domain, FitReport, GraphicalModel, GraphicalModelSettings, Marginal,
    NoisyMarginal,
};
use rand::RngExt;

use crate::{MechanismError, Result};

/// A noisy measurement of one marginal table, in count units.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredMarginal {
    /// The table's attributes, ascending.
    pub attrs: Vec<usize>,
    /// Noisy counts, row-major in `attrs` order.
    pub values: Vec<f64>,
    /// Variance of the noise on each value, in count units squared.
    pub sigma2: f64,
    /// `None`: one value per cell. `Some(g)`: one per cell of the table's coarsening by `g`
    /// (each attribute's values summed over its groups; `adaptive/coarse.rs`).
    pub groups: Option<CellGroups>,
}

impl MeasuredMarginal {
    /// The measurement of the table on `attrs` from its noisy integer counts `y`, each of
    /// noise variance `sigma2`.
    pub fn from_counts(attrs: Vec<usize>, y: &[i64], sigma2: f64) -> Self {
        MeasuredMarginal {
            attrs,
            values: y.iter().map(|&v| v as f64).collect(),
            sigma2,
            groups: None,
        }
    }

    /// The measurement of the coarsening of the table on `attrs` by `groups` from its noisy
    /// integer counts `y` (one per cell of the coarsening), each of noise variance `sigma2`.
    pub fn from_grouped_counts(
        attrs: Vec<usize>,
        groups: CellGroups,
        y: &[i64],
        sigma2: f64,
    ) -> Self {
        MeasuredMarginal {
            groups: Some(groups),
            ..Self::from_counts(attrs, y, sigma2)
        }
    }
}

/// An estimator of the data distribution from noisy marginal measurements.
pub trait MarginalEstimator: Send + Sync {
    /// Short name for release notes.
    fn name(&self) -> &'static str;
    /// Re-fit to all `measurements` so far, with the public total `total` (the public `n`
    /// under replace-one, a noisy estimate under add/remove); may warm-start from the last
    /// fit.
    fn fit(&mut self, measurements: &[MeasuredMarginal], total: f64) -> Result<()>;
    /// The estimate's normalised marginal on `attrs` (ascending), row-major.
    fn marginal(&self, attrs: &[usize]) -> Result<Vec<f64>>;
    /// Whether a model holding these cliques (the measured ones plus a candidate) is within
    /// the estimator's size limit `max_cells` (AIM's model-size filter); estimators without
    /// a size notion accept everything.
    fn admits(&self, _cliques: &[Vec<usize>], _max_cells: f64) -> bool {
        true
    }
    /// The last fit, before the release: by default the same as [`Self::fit`]; estimators
    /// with an iteration budget spend more here. `covered` says that every workload table
    /// lies in a measured table (or was measured beside the model), so that the release
    /// reads no marginal the model must extrapolate: estimators may then fit to convergence
    /// (docs/mechanisms/adaptive.md, "The final fit").
    fn fit_final(
        &mut self,
        measurements: &[MeasuredMarginal],
        total: f64,
        _covered: bool,
    ) -> Result<()> {
        self.fit(measurements, total)
    }
    /// `n` synthetic records drawn from the estimate (post-processing randomness).
    fn sample(&self, n: usize, rng: &mut dyn rand::Rng) -> Result<Dataset>;
    /// Notes on the last fit (iterations, loss, model size) for the release.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The independent (product) estimate: each attribute's distribution from its 1-way
/// measurements (inverse-variance average, clipped at 0 and renormalised); measurements of
/// larger tables are ignored. A baseline and a test double; it cannot represent any
/// dependence.
#[derive(Clone, Debug)]
pub struct IndependentEstimator {
    domain: Domain,
    p: Vec<Vec<f64>>,
}

impl IndependentEstimator {
    /// The uniform distribution over `domain`.
    pub fn new(domain: &Domain) -> Self {
        IndependentEstimator {
            domain: domain.clone(),
            p: domain
                .sizes()
                .iter()
                .map(|&s| vec![1.0 / s as f64; s as usize])
                .collect(),
        }
    }
}

/// Clip negatives to zero and renormalise; uniform if nothing is left.
pub(crate) fn clip_normalise(v: &mut [f64]) {
    for x in v.iter_mut() {
        if !x.is_finite() || *x < 0.0 {
            *x = 0.0;
        }
    }
    let s: f64 = v.iter().sum();
    if s > 0.0 {
        v.iter_mut().for_each(|x| *x /= s);
    } else {
        let u = 1.0 / v.len().max(1) as f64;
        v.iter_mut().for_each(|x| *x = u);
    }
}

impl MarginalEstimator for IndependentEstimator {
    fn name(&self) -> &'static str {
        "independent"
    }

    fn fit(&mut self, measurements: &[MeasuredMarginal], _total: f64) -> Result<()> {
        for a in 0..self.domain.len() {
            let size = self.domain.size(a) as usize;
            let mut acc = vec![0.0; size];
            let mut wsum = 0.0;
            for m in measurements
                .iter()
                .filter(|m| m.attrs == [a] && m.groups.is_none())
            {
                if m.values.len() != size {
                    return Err(MechanismError::Numerical {
                        what: format!("1-way measurement of attribute {a} has wrong length"),
                    });
                }
                let w = 1.0 / m.sigma2;
                acc.iter_mut().zip(&m.values).for_each(|(x, v)| *x += w * v);
                wsum += w;
            }
            if wsum > 0.0 {
                clip_normalise(&mut acc);
                self.p[a] = acc;
            }
        }
        Ok(())
    }

    fn marginal(&self, attrs: &[usize]) -> Result<Vec<f64>> {
        let mut out = vec![1.0];
        for &a in attrs {
            let p = self.p.get(a).ok_or_else(|| MechanismError::Data {
                reason: format!("attribute {a} is not in the domain"),
            })?;
            out = out
                .iter()
                .flat_map(|x| p.iter().map(move |y| x * y))
                .collect();
        }
        Ok(out)
    }

    fn sample(&self, n: usize, rng: &mut dyn rand::Rng) -> Result<Dataset> {
        let cols = self
            .p
            .iter()
            .map(|p| {
                (0..n)
                    .map(|_| {
                        let u: f64 = rng.random();
                        let mut acc = 0.0;
                        for (i, x) in p.iter().enumerate() {
                            acc += x;
                            if u < acc {
                                return i as u32;
                            }
                        }
                        (p.len() - 1) as u32
                    })
                    .collect()
            })
            .collect();
        Ok(Dataset::from_columns(self.domain.clone(), cols)?)
    }
}

/// The most the work budget may multiply the final fit's steps by
/// ([`GraphicalModelEstimator::final_cell_steps`]).
pub const FINAL_STEPS_CAP: usize = 10;

/// The maximum-entropy projection onto the marginal polytope: a graphical model on the
/// measured cliques fitted by entropic mirror descent to the noise-weighted squared error
/// (Private-PGM, McKenna–Sheldon–Miklau ICML 2019; [`dp_queries::GraphicalModel`]), warm
/// started from the previous round's model. Among the distributions that fit the
/// measurements equally well it is the one of maximum entropy, so it adds no dependence the
/// measurements do not show — which is why it generalises to unmeasured marginals.
#[derive(Clone, Debug)]
pub struct GraphicalModelEstimator {
    domain: Domain,
    round_settings: GraphicalModelSettings,
    final_iterations: usize,
    final_window: usize,
    final_gain: f64,
    final_cell_steps: f64,
    final_cold_cells: f64,
    model: Option<GraphicalModel>,
    last: Option<FitReport>,
    /// χ² of the final fit from the last round's model, when a fit from the uniform
    /// distribution was also made and kept (`final_cold_start`)
    cold_over: Option<f64>,
}

impl GraphicalModelEstimator {
    /// An estimator with `round_iterations` mirror-descent steps per round, `final_iterations`
    /// for the last fit, a model-size cap of `max_model_cells` and an elimination-table cap
    /// of `max_elimination_cells` (`GraphicalModelSettings`).
    pub fn new(
        domain: &Domain,
        round_iterations: usize,
        final_iterations: usize,
        max_model_cells: f64,
        max_elimination_cells: f64,
    ) -> Self {
        GraphicalModelEstimator {
            domain: domain.clone(),
            round_settings: GraphicalModelSettings {
                iterations: round_iterations,
                max_model_cells,
                max_elimination_cells,
                ..GraphicalModelSettings::default()
            },
            final_iterations,
            final_window: 0,
            final_gain: 0.0,
            final_cell_steps: 0.0,
            final_cold_cells: 0.0,
            model: None,
            last: None,
            cold_over: None,
        }
    }

    /// Stop the final fit early once `window` steps together lowered χ² by less than `gain`
    /// (`GraphicalModelSettings::chi_square_window`); `window` 0 never does.
    pub fn final_stop(mut self, window: usize, gain: f64) -> Self {
        self.final_window = window;
        self.final_gain = gain;
        self
    }

    /// Let the final fit take up to `cell_steps / model cells` steps (at most
    /// [`FINAL_STEPS_CAP`] × `final_iterations`) when that is more than `final_iterations`:
    /// a budget of work, cells × steps, fixed from public inputs (the measured cliques), so
    /// that small models converge while large ones keep the default. 0 never does.
    pub fn final_cell_steps(mut self, cell_steps: f64) -> Self {
        self.final_cell_steps = cell_steps;
        self
    }

    /// Fit the final model twice when it has at most `cells` cells and its steps are fixed
    /// (not covered: no χ² window lets it run toward convergence) — from the last round's
    /// model (the warm start) and from the uniform distribution — and keep the fit of lower
    /// χ², the one nearer the minimiser both approximate (Private-PGM's estimate; McKenna,
    /// Sheldon, Miklau ICML 2019 §3). Entropic mirror descent moves a cell by a factor per
    /// step, so a cell the earlier rounds drove near zero recovers slowly when later
    /// measurements say otherwise: on small models the warm final fit can stop short of the
    /// fit a cold start reaches in the same steps (docs/mechanisms/adaptive.md, "The final fit
    /// from two starts"). Post-processing of the measurements. 0 never does.
    pub fn final_cold_start(mut self, cells: f64) -> Self {
        self.final_cold_cells = cells;
        self
    }

    /// The final fit's step cap for these measurements.
    fn final_steps(&self, measurements: &[MeasuredMarginal]) -> usize {
        let base = self.final_iterations;
        if self.final_cell_steps <= 0.0 {
            return base;
        }
        let cliques: Vec<Vec<usize>> = measurements.iter().map(|m| m.attrs.clone()).collect();
        match GraphicalModel::model_cells(&self.domain, &cliques) {
            Ok(cells) if cells >= 1.0 => {
                let budget = (self.final_cell_steps / cells).floor();
                let cap = (base * FINAL_STEPS_CAP) as f64;
                (budget.min(cap) as usize).max(base)
            }
            _ => base,
        }
    }

    fn fit_with(
        &mut self,
        measurements: &[MeasuredMarginal],
        total: f64,
        settings: &GraphicalModelSettings,
    ) -> Result<()> {
        let noisy = measurements
            .iter()
            .map(|m| {
                Ok(NoisyMarginal {
                    marginal: Marginal::new(&self.domain, m.attrs.clone())?,
                    values: m.values.clone(),
                    sigma: m.sigma2.sqrt(),
                    groups: m.groups.clone(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let (model, report) =
            GraphicalModel::fit(&self.domain, &noisy, total, settings, self.model.as_ref())?;
        self.model = Some(model);
        self.last = Some(report);
        Ok(())
    }
}

impl MarginalEstimator for GraphicalModelEstimator {
    fn name(&self) -> &'static str {
        "graphical model (maximum-entropy projection onto the marginal polytope)"
    }

    fn fit(&mut self, measurements: &[MeasuredMarginal], total: f64) -> Result<()> {
        let s = self.round_settings.clone();
        self.fit_with(measurements, total, &s)
    }

    fn fit_final(
        &mut self,
        measurements: &[MeasuredMarginal],
        total: f64,
        covered: bool,
    ) -> Result<()> {
        let (iterations, chi_square_window) = if covered {
            (self.final_steps(measurements), self.final_window)
        } else {
            (self.final_iterations, 0)
        };
        let s = GraphicalModelSettings {
            iterations,
            chi_square_window,
            min_chi_square_gain: self.final_gain,
            ..self.round_settings.clone()
        };
        // a second start only where the steps are fixed (a covered fit runs toward
        // convergence, where both starts reach the same fit) and there is a model to start
        // from (without one the fit already starts from the uniform distribution)
        let second_start = !covered && self.model.is_some();
        self.cold_over = None;
        self.fit_with(measurements, total, &s)?;
        let warm_chi = match &self.last {
            Some(r) if second_start && r.model_cells as f64 <= self.final_cold_cells => {
                r.chi_square
            }
            _ => return Ok(()),
        };
        let warm_fit = (self.model.take(), self.last.take());
        // from the uniform distribution: no model to start from
        self.fit_with(measurements, total, &s)?;
        if self.last.as_ref().is_some_and(|r| r.chi_square < warm_chi) {
            self.cold_over = Some(warm_chi);
        } else {
            (self.model, self.last) = warm_fit;
        }
        Ok(())
    }

    fn marginal(&self, attrs: &[usize]) -> Result<Vec<f64>> {
        match &self.model {
            Some(m) => Ok(m.marginal(attrs)?),
            None => IndependentEstimator::new(&self.domain).marginal(attrs),
        }
    }

    fn admits(&self, cliques: &[Vec<usize>], max_cells: f64) -> bool {
        GraphicalModel::model_cells(&self.domain, cliques).is_ok_and(|c| c <= max_cells)
    }

    fn sample(&self, n: usize, rng: &mut dyn rand::Rng) -> Result<Dataset> {
        match &self.model {
            Some(m) => Ok(m.sample(n, rng)?),
            None => IndependentEstimator::new(&self.domain).sample(n, rng),
        }
    }

    fn notes(&self) -> Vec<String> {
        match &self.last {
            Some(r) => vec![format!(
                "last fit: {} mirror-descent steps{}, χ² = {:.1}{}, model of {} cells on {} cliques",
                r.iterations,
                // the rounds and an uncovered final fit run without a window or a tolerance,
                // so only the χ² window of a covered final fit sets `converged`
                if r.converged {
                    format!(
                        " (stopped: the last {} gained less than {} in χ²)",
                        self.final_window, self.final_gain
                    )
                } else {
                    String::new()
                },
                r.chi_square,
                match self.cold_over {
                    Some(warm) => format!(
                        " (from the uniform distribution: {warm:.1} from the last round's model)"
                    ),
                    None => String::new(),
                },
                r.model_cells,
                r.cliques.len()
            )],
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_is_the_product_of_the_averaged_one_ways() {
        let d = Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap();
        let mut e = IndependentEstimator::new(&d);
        let ms = vec![
            MeasuredMarginal {
                attrs: vec![0],
                values: vec![30.0, 10.0],
                sigma2: 1.0,
                groups: None,
            },
            MeasuredMarginal {
                attrs: vec![0],
                values: vec![10.0, 30.0],
                sigma2: 3.0,
                groups: None,
            },
            MeasuredMarginal {
                attrs: vec![1],
                values: vec![-5.0, 10.0, 30.0],
                sigma2: 1.0,
                groups: None,
            },
        ];
        e.fit(&ms, 40.0).unwrap();
        // a: (30·1 + 10/3, 10 + 30/3)/… = (100/3, 20) → (5/8, 3/8); b: (0, 1/4, 3/4)
        let m = e.marginal(&[0, 1]).unwrap();
        let want = [0.0, 5.0 / 32.0, 15.0 / 32.0, 0.0, 3.0 / 32.0, 9.0 / 32.0];
        for (x, y) in m.iter().zip(want) {
            assert!((x - y).abs() < 1e-12, "{m:?}");
        }
    }

    /// The final fit's step cap on both sides of the work budget: a model of `c` cells gets
    /// `⌊budget / c⌋` steps when that lies between `final_iterations` and 10× it, the floor
    /// below and the cap above, and exactly `final_iterations` with the budget off; the fit
    /// then runs exactly that many steps when the χ² window is off (the measurements are
    /// noisy, so no step stalls before it).
    #[test]
    fn the_final_fit_steps_follow_the_work_budget() {
        // a 3×4 table and a 4×5 table sharing attribute 1: a junction tree of 12 + 20 cells
        let d = Domain::new(vec![("a".into(), 3), ("b".into(), 4), ("c".into(), 5)]).unwrap();
        let cells = GraphicalModel::model_cells(&d, &[vec![0, 1], vec![1, 2]]).unwrap();
        assert_eq!(cells, 32.0);
        let ms = vec![
            MeasuredMarginal {
                attrs: vec![0, 1],
                values: (0..12).map(|i| 40.0 + (i * 7 % 11) as f64).collect(),
                sigma2: 4.0,
                groups: None,
            },
            MeasuredMarginal {
                attrs: vec![1, 2],
                values: (0..20).map(|i| 30.0 + (i * 5 % 13) as f64).collect(),
                sigma2: 9.0,
                groups: None,
            },
        ];
        let base = 20;
        let est = |budget: f64| {
            GraphicalModelEstimator::new(&d, 5, base, 1e6, 1e6).final_cell_steps(budget)
        };
        for (budget, want) in [
            (0.0, base),                           // off
            (cells * 5.0, base),                   // below the floor
            (cells * 73.0 + 31.0, 73),             // between: ⌊budget / cells⌋
            (cells * 1e6, base * FINAL_STEPS_CAP), // above the cap
        ] {
            let mut e = est(budget);
            assert_eq!(e.final_steps(&ms), want, "budget {budget}");
            e.fit_final(&ms, 600.0, true).unwrap();
            let r = e.last.as_ref().unwrap();
            assert!(!r.stalled);
            assert_eq!(r.iterations, want, "budget {budget}");
            // not covered: the default steps whatever the budget
            e.fit_final(&ms, 600.0, false).unwrap();
            assert_eq!(e.last.as_ref().unwrap().iterations, base);
        }
    }

    /// The final fit from two starts, on both sides of the cell cap: a warm model driven to
    /// one corner of a 2×2 table by the round's measurement, then a much more precise
    /// measurement of the uniform table. Within the cap the release keeps the fit of lower χ²
    /// — here the one from the uniform distribution, which three steps bring to the
    /// measurements while the warm start's near-empty cells recover by a factor per step —
    /// and its χ² equals a fit made from the uniform distribution alone; above the cap (or
    /// with the cap at 0, or when the fit is covered) the release is the warm fit, the same as
    /// without the rule.
    #[test]
    fn the_final_fit_keeps_the_start_of_lower_chi_square() {
        let d = Domain::new(vec![("a".into(), 2), ("b".into(), 2)]).unwrap();
        let corner = MeasuredMarginal {
            attrs: vec![0, 1],
            values: vec![1000.0, 0.0, 0.0, 0.0],
            sigma2: 1.0,
            groups: None,
        };
        let uniform = MeasuredMarginal {
            attrs: vec![0, 1],
            values: vec![250.0; 4],
            sigma2: 1e-4,
            groups: None,
        };
        let both = vec![corner.clone(), uniform];
        let run = |cap: f64| {
            let mut e = GraphicalModelEstimator::new(&d, 200, 3, 1e6, 1e6).final_cold_start(cap);
            e.fit(std::slice::from_ref(&corner), 1000.0).unwrap();
            e.fit_final(&both, 1000.0, false).unwrap();
            let chi = e.last.as_ref().unwrap().chi_square;
            (e.marginal(&[0, 1]).unwrap(), chi, e.cold_over, e.notes())
        };
        // the two fits on their own
        let (warm_m, warm_chi, over, _) = run(0.0);
        assert_eq!(over, None);
        let mut cold = GraphicalModelEstimator::new(&d, 200, 3, 1e6, 1e6);
        cold.fit_final(&both, 1000.0, false).unwrap();
        let cold_chi = cold.last.as_ref().unwrap().chi_square;
        assert!(cold_chi < warm_chi, "cold {cold_chi} warm {warm_chi}");
        // within the cap (4 cells ≤ 4): the cold fit, and the note says so
        let (m, chi, over, notes) = run(4.0);
        assert_eq!(chi, cold_chi);
        assert_eq!(over, Some(warm_chi));
        assert_eq!(m, cold.marginal(&[0, 1]).unwrap());
        assert!(
            notes[0].contains("from the uniform distribution"),
            "{notes:?}"
        );
        // above the cap (4 cells > 3): the warm fit
        let (m, chi, over, notes) = run(3.0);
        assert_eq!((chi, over), (warm_chi, None));
        assert_eq!(m, warm_m);
        assert!(!notes[0].contains("uniform"), "{notes:?}");
        // covered (the fit runs toward convergence): one fit, from the last round's model
        let mut e = GraphicalModelEstimator::new(&d, 200, 3, 1e6, 1e6).final_cold_start(4.0);
        e.fit(std::slice::from_ref(&corner), 1000.0).unwrap();
        e.fit_final(&both, 1000.0, true).unwrap();
        assert_eq!(e.cold_over, None);
        assert_eq!(e.last.as_ref().unwrap().chi_square, warm_chi);
    }
}
