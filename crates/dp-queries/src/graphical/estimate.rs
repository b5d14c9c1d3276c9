//! The graphical-model estimator: fitting, inference and sampling (McKenna, Sheldon & Miklau,
//! "Graphical-model based estimation and inference for differential privacy", ICML 2019).

use rand::{Rng, RngExt};

use super::exp;
use super::factor::{
    DEFAULT_MAX_ELIMINATION_CELLS, Factor, LogProbability, Probability, RunMap, cells, elementwise,
    eliminate_within, index_map, log_sum_exp, max_with, strides,
};
use super::junction_tree::JunctionTree;
use super::{FitReport, GraphicalModelSettings, NoisyMarginal, WarmStart};
use crate::dataset::Dataset;
use crate::domain::Domain;
use crate::error::{QueryError, Result};
use crate::workload::Marginal;
use dp_geometry::Parallelism;

/// Targets (measured counts divided by the total) are clamped to `±TARGET_CLAMP`, so that
/// every quantity of the fit stays finite whatever the finite input (no real measurement is a
/// count 10^100 times the total).
const TARGET_CLAMP: f64 = 1e100;

/// Most step-size halvings tried in one iteration before the fit stops (no step found that
/// decreases the loss: converged to working precision).
const MAX_HALVINGS: usize = 50;

/// The tables of a junction tree laid out in one flat buffer, with the index maps of message
/// passing.
#[derive(Clone, Debug)]
struct Layout {
    tree: JunctionTree,
    sizes: Vec<u32>,
    /// Start of each clique's table in the flat buffer (and the total at the end).
    offsets: Vec<usize>,
    children: Vec<Vec<usize>>,
    /// Cells of clique `c` → cells of its separator with its parent (empty for the root).
    child_map: Vec<Vec<u32>>,
    /// The same map by runs (for the hot loops).
    child_run: Vec<RunMap>,
    /// Cells of `parent(c)` → cells of the separator of `c` (trivial for the root).
    parent_run: Vec<RunMap>,
    sep_cells: Vec<usize>,
    max_clique: usize,
    max_sep: usize,
}

impl Layout {
    fn new(tree: JunctionTree, sizes: &[u32]) -> Self {
        let m = tree.cliques().len();
        let mut offsets = Vec::with_capacity(m + 1);
        let mut acc = 0usize;
        for c in tree.cliques() {
            offsets.push(acc);
            acc += cells(c, sizes);
        }
        offsets.push(acc);
        let mut children = vec![Vec::new(); m];
        let mut child_map = vec![Vec::new(); m];
        let mut child_run = vec![RunMap::new(&[], &[], sizes); m];
        let mut parent_run = vec![RunMap::new(&[], &[], sizes); m];
        let mut sep_cells = vec![1usize; m];
        for c in 0..m {
            if let Some(p) = tree.parents()[c] {
                children[p].push(c);
                let sep = tree.separator(c);
                child_map[c] = index_map(&tree.cliques()[c], &sep, sizes);
                child_run[c] = RunMap::new(&tree.cliques()[c], &sep, sizes);
                parent_run[c] = RunMap::new(&tree.cliques()[p], &sep, sizes);
                sep_cells[c] = cells(&sep, sizes);
            }
        }
        let max_clique = (0..m)
            .map(|c| offsets[c + 1] - offsets[c])
            .max()
            .unwrap_or(1);
        let max_sep = sep_cells.iter().copied().max().unwrap_or(1);
        Layout {
            tree,
            sizes: sizes.to_vec(),
            offsets,
            children,
            child_map,
            child_run,
            parent_run,
            sep_cells,
            max_clique,
            max_sep,
        }
    }

    fn total(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    fn range(&self, c: usize) -> std::ops::Range<usize> {
        self.offsets[c]..self.offsets[c + 1]
    }
}

/// A measurement prepared for the fit: the target in probability units, the weight, and
/// for a coarsened measurement ([`super::CellGroups`]) the map from the marginal's cells to
/// the target's.
#[derive(Clone, Debug)]
struct Prepared {
    target: Vec<f64>,
    weight: f64,
    groups: Option<Vec<u32>>,
}

impl Prepared {
    /// The residual `Qμ − t` of the marginal `mu` (`Q` the identity or the group sums).
    fn residual(&self, mu: &[f64]) -> Vec<f64> {
        match &self.groups {
            None => mu.iter().zip(&self.target).map(|(a, b)| a - b).collect(),
            Some(map) => {
                let mut r: Vec<f64> = self.target.iter().map(|t| -t).collect();
                for (&c, &v) in map.iter().zip(mu) {
                    r[c as usize] += v;
                }
                r
            }
        }
    }

    /// The weighted squared error `w‖Qμ − t‖₂²`.
    fn loss(&self, mu: &[f64]) -> f64 {
        let sq = match &self.groups {
            None => mu
                .iter()
                .zip(&self.target)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>(),
            Some(_) => self.residual(mu).iter().map(|r| r * r).sum::<f64>(),
        };
        self.weight * sq
    }

    /// The gradient `2w·Qᵀ(Qμ − t)` of [`Self::loss`] with respect to the marginal, into `g`.
    fn gradient(&self, mu: &[f64], g: &mut [f64]) {
        let w2 = 2.0 * self.weight;
        match &self.groups {
            None => {
                for ((gv, &t), &mv) in g.iter_mut().zip(&self.target).zip(mu) {
                    *gv = w2 * (mv - t);
                }
            }
            Some(map) => {
                let r = self.residual(mu);
                for (gv, &c) in g.iter_mut().zip(map) {
                    *gv = w2 * r[c as usize];
                }
            }
        }
    }
}

/// Where one table a clique answers in the fit's distribute pass is summed from: the
/// clique's own table (`None`) or an earlier, larger table of the same plan (`Some(k)`, its
/// position in [`HostPlan::measured`]), with the map from that source's cells to this
/// table's.
#[derive(Clone, Debug)]
struct Sourced {
    source: Option<usize>,
    map: RunMap,
}

/// The tables one clique answers in each calibration of the fit: the marginals of the
/// measurements it hosts and the separators with its children. Each is summed from the
/// **smallest** table already computed that contains it — a measured 1-way table from a
/// measured 3-way one of a few hundred cells, not from a clique of 10⁵–10⁶ — and the fit's
/// gradient goes the other way (each measurement's gradient is added into its source's before
/// the sources are broadcast onto the clique). Both are exact rearrangements of the sums
/// (`Σ_{clique→j} = Σ_{i→j} ∘ Σ_{clique→i}` for `j ⊆ i`); only the order of floating-point
/// additions changes. Issue #24 (speed at ε = 10): on the adult W64 model of 936 830 cells
/// every measured 1-way and 2-way table had cost a pass over its host clique.
#[derive(Clone, Debug, Default)]
struct HostPlan {
    /// Hosted measurements (index into the fit's measurements), largest first; a source is
    /// always earlier in this list.
    measured: Vec<(usize, Sourced)>,
    /// Children `c` with the source of their separator table.
    separators: Vec<(usize, Sourced)>,
}

impl HostPlan {
    /// The plans of every clique of `layout` for measurements over `attrs[i]` hosted by
    /// `host[i]`.
    fn build(layout: &Layout, attrs: &[&[usize]], host: &[usize]) -> Vec<HostPlan> {
        let sizes = &layout.sizes;
        let cliques = layout.tree.cliques();
        let mut plans = vec![HostPlan::default(); cliques.len()];
        for (c, plan) in plans.iter_mut().enumerate() {
            let mut mine: Vec<usize> = (0..attrs.len()).filter(|&i| host[i] == c).collect();
            // largest first (stable: ties keep measurement order)
            mine.sort_by_key(|&i| std::cmp::Reverse(cells(attrs[i], sizes)));
            let source_of = |target: &[usize], earlier: &[usize]| -> Sourced {
                let best = earlier
                    .iter()
                    .enumerate()
                    .filter(|&(_, &k)| target.iter().all(|a| attrs[k].contains(a)))
                    .min_by_key(|&(_, &k)| cells(attrs[k], sizes));
                match best {
                    Some((pos, &k)) => Sourced {
                        source: Some(pos),
                        map: RunMap::new(attrs[k], target, sizes),
                    },
                    None => Sourced {
                        source: None,
                        map: RunMap::new(&cliques[c], target, sizes),
                    },
                }
            };
            for (pos, &i) in mine.iter().enumerate() {
                let sourced = source_of(attrs[i], &mine[..pos]);
                plan.measured.push((i, sourced));
            }
            for &child in &layout.children[c] {
                let sep = layout.tree.separator(child);
                plan.separators.push((child, source_of(&sep, &mine)));
            }
        }
        plans
    }
}

/// Working buffers of belief propagation (allocated once per fit).
struct Workspace {
    beta: Vec<f64>,
    msgs: Vec<Vec<f64>>,
    scratch: Vec<f64>,
    sep: Vec<f64>,
}

impl Workspace {
    fn new(layout: &Layout) -> Self {
        Workspace {
            beta: vec![0.0; layout.total()],
            msgs: layout.sep_cells.iter().map(|&s| vec![0.0; s]).collect(),
            scratch: vec![0.0; layout.max_clique],
            sep: vec![0.0; layout.max_sep],
        }
    }
}

/// `max(s, MIN_POSITIVE).ln()`: log of a sum of exponentials relative to a maximum; a sum
/// that underflowed (mass below e^-708 of the clique's largest cell) is kept finite.
fn safe_ln(s: f64) -> f64 {
    s.max(f64::MIN_POSITIVE).ln()
}

/// Hugin-style belief propagation in log space on the junction tree (McKenna et al. 2019,
/// §4; Koller & Friedman 2009, §10.3): `ws.beta` ends as the calibrated, **unnormalised**
/// log-beliefs of the cliques (subtract the returned `ln Z` to normalise). Used for the
/// model's stored marginals ([`clique_marginals`], normalised in log space before the one
/// exponential per cell); the fit's inner loop uses [`calibrate_fast`].
fn calibrate(layout: &Layout, theta: &[f64], ws: &mut Workspace) -> f64 {
    let Workspace {
        beta,
        msgs,
        scratch,
        sep,
    } = ws;
    beta.copy_from_slice(theta);
    let order = layout.tree.order();
    let parents = layout.tree.parents();
    // Collect: leaves to root.
    for &c in order.iter().rev() {
        let Some(p) = parents[c] else { continue };
        let block = &beta[layout.range(c)];
        let m = block.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e = &mut scratch[..block.len()];
        for (y, &x) in e.iter_mut().zip(block) {
            *y = (x - m).exp();
        }
        let msg = &mut msgs[c];
        msg.fill(0.0);
        layout.child_run[c].scatter_sum(e, msg);
        for v in msg.iter_mut() {
            *v = m + safe_ln(*v);
        }
        layout.parent_run[c].gather_add(msg, &mut beta[layout.range(p)]);
    }
    let root = order.first().copied().unwrap_or(0);
    let log_z = log_sum_exp(&beta[layout.range(root)]);
    // Distribute: root to leaves.
    for &p in order {
        if layout.children[p].is_empty() {
            continue;
        }
        let r = layout.range(p);
        let block = &beta[r.clone()];
        let m = block.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e = &mut scratch[..r.len()];
        for (y, &x) in e.iter_mut().zip(block) {
            *y = (x - m).exp();
        }
        for &c in &layout.children[p] {
            let s = &mut sep[..layout.sep_cells[c]];
            s.fill(0.0);
            layout.parent_run[c].scatter_sum(e, s);
            for (v, &old) in s.iter_mut().zip(&msgs[c]) {
                *v = m + safe_ln(*v) - old;
            }
            layout.child_run[c].gather_add(s, &mut beta[layout.range(c)]);
        }
    }
    log_z
}

/// `(&v[read], &mut v[write])` for two distinct indices.
fn pair_mut(v: &mut [Vec<f64>], read: usize, write: usize) -> (&[f64], &mut [f64]) {
    assert_ne!(read, write, "pair_mut: the same table twice");
    if read < write {
        let (a, b) = v.split_at_mut(write);
        (&a[read], &mut b[0])
    } else {
        let (a, b) = v.split_at_mut(read);
        (&b[0], &mut a[write])
    }
}

/// The calibrated, normalised clique marginals of the model `θ`, flat as `theta`: their
/// logarithms ln μ_C ([`calibrate`], in log space) and μ_C themselves (one exponential per
/// cell; a cell below e^-745 is zero).
fn clique_marginals(
    layout: &Layout,
    theta: &[f64],
    ws: &mut Workspace,
    par: Parallelism,
) -> (Vec<f64>, Vec<f64>) {
    let lz = calibrate(layout, theta, ws);
    let mut log_mu = std::mem::take(&mut ws.beta);
    elementwise(&mut log_mu, par, |_, v| *v -= lz);
    let mut mu = log_mu.clone();
    elementwise(&mut mu, par, |_, v| *v = v.exp());
    (log_mu, mu)
}

/// Belief propagation for the fit's inner loop: the same schedule as [`calibrate`], but each
/// clique is exponentiated once (in the collect pass, relative to its maximum) and the
/// distribute pass is Hugin's update in probability space, `E_c ← E_c · s_S / t_S` (new over
/// old separator marginal). The potentials are `θ − η·G` when `step = Some((G, η))`. Writes
/// the marginal of every measurement (probabilities) into `out` and returns `ln Z`. Cells
/// whose mass is below e^-708 of their clique's largest are treated as zero. The loops over
/// a clique's cells run over `par` ([`super::factor::elementwise`],
/// [`RunMap::scatter_sum_with`]), with the same result, bit for bit, whatever `par`.
#[allow(clippy::too_many_arguments)]
fn calibrate_fast(
    layout: &Layout,
    theta: &[f64],
    step: Option<(&[f64], f64)>,
    ws: &mut Workspace,
    plans: &[HostPlan],
    out: &mut [Vec<f64>],
    par: Parallelism,
) -> f64 {
    let Workspace {
        beta,
        msgs,
        scratch: _,
        sep,
    } = ws;
    match step {
        Some((g, eta)) => elementwise(beta, par, |i, b| *b = theta[i] - eta * g[i]),
        None => beta.copy_from_slice(theta),
    }
    let order = layout.tree.order();
    let parents = layout.tree.parents();
    // Collect: each clique, complete in log space, goes to probability space relative to
    // its maximum; its separator sums t_S are kept and sent up in log space.
    let mut root_scale = 0.0;
    for &c in order.iter().rev() {
        let block = &mut beta[layout.range(c)];
        let m = max_with(block, par);
        let Some(p) = parents[c] else {
            elementwise(block, par, |_, x| *x = exp::exp(*x - m));
            root_scale = m;
            continue;
        };
        let t = &mut msgs[c];
        t.fill(0.0);
        // exponentiated and summed onto the separator in one pass (the same bits as the
        // two passes)
        layout.child_run[c].exp_scatter_sum_with(block, m, t, par);
        let lt = &mut sep[..t.len()];
        for (l, &v) in lt.iter_mut().zip(t.iter()) {
            *l = m + safe_ln(v);
        }
        layout.parent_run[c].gather_add_with(lt, &mut beta[layout.range(p)], par);
    }
    let root = order.first().copied().unwrap_or(0);
    let z: f64 = beta[layout.range(root)].iter().sum();
    let log_z = root_scale + z.ln();
    let inv_z = 1.0 / z;
    // Distribute: every clique ends relative to the root's scale. The tables a clique
    // answers are summed from the smallest computed table containing them (`HostPlan`):
    // first the measurements (unnormalised, largest first), then the separators, then the
    // measurements are normalised.
    for &p in order {
        let r = layout.range(p);
        let plan = &plans[p];
        for (pos, (i, how)) in plan.measured.iter().enumerate() {
            let mut o = std::mem::take(&mut out[*i]);
            o.fill(0.0);
            match how.source {
                None => how.map.scatter_sum_with(&beta[r.clone()], &mut o, par),
                Some(k) => how
                    .map
                    .scatter_sum_with(&out[plan.measured[k].0], &mut o, par),
            }
            out[*i] = o;
            debug_assert!(how.source.is_none_or(|k| k < pos));
        }
        for (c, how) in &plan.separators {
            let c = *c;
            let s = &mut sep[..layout.sep_cells[c]];
            s.fill(0.0);
            match how.source {
                None => how.map.scatter_sum_with(&beta[r.clone()], s, par),
                Some(k) => how.map.scatter_sum_with(&out[plan.measured[k].0], s, par),
            }
            for (v, &t) in s.iter_mut().zip(&msgs[c]) {
                *v = if t >= f64::MIN_POSITIVE { *v / t } else { 0.0 };
            }
            layout.child_run[c].gather_mul_with(s, &mut beta[layout.range(c)], par);
        }
        for (i, _) in &plan.measured {
            for v in out[*i].iter_mut() {
                *v *= inv_z;
            }
        }
    }
    log_z
}

/// A graphical model on the cliques of a junction tree: the distribution
/// `p(x) ∝ exp(Σ_C θ_C(x_C))` fitted to noisy marginals by [`GraphicalModel::fit`]
/// (McKenna, Sheldon & Miklau 2019, Algorithm 1 with junction-tree inference, §4).
#[derive(Clone)]
pub struct GraphicalModel {
    domain: Domain,
    layout: Layout,
    /// Log-potentials θ_C, flat (one table per clique, sorted attributes, row-major).
    theta: Vec<f64>,
    /// Normalised log-marginals ln μ_C of the cliques, flat as `theta`.
    log_marginals: Vec<f64>,
    /// The same as probabilities, `exp(ln μ_C)` (each clique's summing to 1).
    marginals: Vec<f64>,
    total: f64,
    /// Largest elimination table of [`Self::marginal`] (settings of the fit).
    max_elimination_cells: f64,
}

impl std::fmt::Debug for GraphicalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphicalModel")
            .field("cliques", &self.layout.tree.cliques())
            .field("cells", &self.layout.total())
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

fn bad(reason: String) -> QueryError {
    QueryError::BadWorkload { reason }
}

fn check_measurements(domain: &Domain, measurements: &[NoisyMarginal], total: f64) -> Result<()> {
    if !(total.is_finite() && total > 0.0) {
        return Err(bad(format!(
            "graphical model: the total must be finite and > 0, got {total}"
        )));
    }
    for (i, m) in measurements.iter().enumerate() {
        if !m.marginal.fits(domain) {
            return Err(QueryError::DomainMismatch {
                reason: format!(
                    "measurement #{i}: marginal on attributes {:?} with sizes {:?} does not fit the domain",
                    m.marginal.attrs(),
                    m.marginal.sizes()
                ),
            });
        }
        if let Some(g) = &m.groups
            && !g.fits(&m.marginal)
        {
            return Err(QueryError::DomainMismatch {
                reason: format!(
                    "measurement #{i}: its cell groups do not fit the marginal on attributes {:?}",
                    m.marginal.attrs()
                ),
            });
        }
        if m.values.len() != m.num_values() {
            return Err(QueryError::LengthMismatch {
                expected: m.num_values(),
                found: m.values.len(),
            });
        }
        if let Some(j) = m.values.iter().position(|v| !v.is_finite()) {
            return Err(QueryError::NonFinite {
                what: format!("measurement #{i} values"),
                index: j,
            });
        }
        if !(m.sigma.is_finite() && m.sigma > 0.0) {
            return Err(bad(format!(
                "measurement #{i}: sigma must be finite and > 0, got {}",
                m.sigma
            )));
        }
    }
    Ok(())
}

impl GraphicalModel {
    /// Total cells `Σ_C Π_{a∈C} size(a)` of the junction tree a model on `cliques` would
    /// have (McKenna et al. 2019, §4; the model-size cap of AIM, McKenna et al. 2022, §4),
    /// computed from the elimination order alone without building any table, so that a caller
    /// can filter candidate cliques by model size before measuring them.
    ///
    /// Errors on an attribute out of range or an empty or repeating clique.
    pub fn model_cells(domain: &Domain, cliques: &[Vec<usize>]) -> Result<f64> {
        JunctionTree::model_cells(domain, cliques)
    }

    /// Fits the model: minimises the weighted squared error of the measured marginals,
    ///
    /// ```text
    ///   L(μ) = Σ_i ‖(total·Q_i μ_{C_i} − y_i) / σ_i‖₂²,
    /// ```
    ///
    /// (`Q_i` the identity, or for a coarsened measurement, [`super::NoisyMarginal::groups`],
    /// the sums of the marginal's cells over its groups)
    /// over μ in the marginal polytope (the Gaussian negative log-likelihood up to constants,
    /// i.e. the weights `1/σ_i²` of generalised least squares: each measurement counts by its
    /// precision), parameterised as a graphical model on the cliques of a junction tree that
    /// covers every measured marginal and `settings.extra_cliques`. Entropic mirror descent
    /// (McKenna et al. 2019, Algorithm 1) from the uniform distribution (or from `warm`),
    /// with a backtracking line search on the relative-smoothness condition; see
    /// `docs/mechanisms/estimation.md` for the step-size and convergence argument. The
    /// result is the maximum-entropy distribution among the minimisers (the iterates never
    /// leave the span of the measured cliques' indicator features).
    ///
    /// `warm`: a model fitted earlier on the same domain (e.g. on a subset of these
    /// measurements); its log-potentials are carried over (see [`WarmStart`]). `total` is the
    /// record count the measurements are scaled by (public or itself estimated).
    ///
    /// Errors: non-finite or non-positive `total` or σ, non-finite values, wrong lengths,
    /// marginals or cliques that do not fit `domain`, invalid settings, a junction tree above
    /// `settings.max_model_cells` ([`QueryError::TooLarge`]), a `warm` model on another
    /// domain ([`QueryError::DomainMismatch`]).
    pub fn fit(
        domain: &Domain,
        measurements: &[NoisyMarginal],
        total: f64,
        settings: &GraphicalModelSettings,
        warm: Option<&GraphicalModel>,
    ) -> Result<(GraphicalModel, FitReport)> {
        settings.check()?;
        check_measurements(domain, measurements, total)?;
        if let Some(w) = warm
            && w.domain != *domain
        {
            return Err(QueryError::DomainMismatch {
                reason: "the warm-start model is on another domain".into(),
            });
        }
        let sizes = domain.sizes();
        let mut cliques: Vec<Vec<usize>> = measurements
            .iter()
            .map(|m| m.marginal.attrs().to_vec())
            .collect();
        cliques.extend(settings.extra_cliques.iter().cloned());
        let mut tree = JunctionTree::build(domain, &cliques)?;
        let too_large = |cells: f64| QueryError::TooLarge {
            what: "graphical model (junction tree)".into(),
            estimate: format!(
                "{cells:.4e} cells (limit max_model_cells = {:.4e})",
                settings.max_model_cells
            ),
        };
        if tree.total_cells() > settings.max_model_cells {
            return Err(too_large(tree.total_cells()));
        }
        let mut warm_start = WarmStart::Cold;
        if let Some(w) = warm {
            let covered = |t: &JunctionTree| {
                w.layout
                    .tree
                    .cliques()
                    .iter()
                    .all(|c| t.smallest_containing(c).is_some())
            };
            if covered(&tree) {
                warm_start = WarmStart::Exact;
            } else {
                let mut with_warm = cliques.clone();
                with_warm.extend(w.layout.tree.cliques().iter().cloned());
                let t2 = JunctionTree::build(domain, &with_warm)?;
                if t2.total_cells() <= settings.max_model_cells {
                    tree = t2;
                    warm_start = WarmStart::Exact;
                } else {
                    warm_start = WarmStart::Partial;
                }
            }
        }
        let layout = Layout::new(tree, sizes);
        let mut theta = vec![0.0; layout.total()];
        if let Some(w) = warm {
            for (k, wc) in w.layout.tree.cliques().iter().enumerate() {
                let Some(c) = layout.tree.smallest_containing(wc) else {
                    continue;
                };
                let map = index_map(&layout.tree.cliques()[c], wc, sizes);
                let src = &w.theta[w.layout.range(k)];
                for (t, &j) in theta[layout.range(c)].iter_mut().zip(&map) {
                    *t += src[j as usize];
                }
            }
        }
        // Prepare measurements: weights (σ_min/σ_i)², targets y_i/total.
        let sigma_min = measurements
            .iter()
            .map(|m| m.sigma)
            .fold(f64::INFINITY, f64::min);
        let mut prepared = Vec::with_capacity(measurements.len());
        let mut host_of = Vec::with_capacity(measurements.len());
        for m in measurements {
            let attrs = m.marginal.attrs();
            let mut sorted = attrs.to_vec();
            sorted.sort_unstable();
            let host = layout
                .tree
                .smallest_containing(&sorted)
                .ok_or_else(|| bad("internal: a measured clique is in no tree clique".into()))?;
            host_of.push(host);
            let ratio = sigma_min / m.sigma;
            prepared.push(Prepared {
                target: m
                    .values
                    .iter()
                    .map(|&y| (y / total).clamp(-TARGET_CLAMP, TARGET_CLAMP))
                    .collect(),
                weight: ratio * ratio,
                groups: m.groups.as_ref().map(|g| g.cell_map()),
            });
        }
        // normalised loss × count_scale = χ² in count units (FitReport::chi_square)
        let count_scale = if sigma_min.is_finite() {
            (total / sigma_min).powi(2)
        } else {
            0.0
        };
        let measured_attrs: Vec<&[usize]> =
            measurements.iter().map(|m| m.marginal.attrs()).collect();
        let plans = HostPlan::build(&layout, &measured_attrs, &host_of);
        let mut ws = Workspace::new(&layout);
        // the model's marginal of each measurement (every cell, also for a coarsened one)
        let mut mu: Vec<Vec<f64>> = measurements
            .iter()
            .map(|m| vec![0.0; m.marginal.num_cells()])
            .collect();
        let mut mu_try = mu.clone();
        let mut grad = mu.clone();
        let mut g_full = vec![0.0; layout.total()];
        let loss_of =
            |mu: &[Vec<f64>]| -> f64 { prepared.iter().zip(mu).map(|(p, m)| p.loss(m)).sum() };
        let par = settings.parallelism;
        let mut log_z = calibrate_fast(&layout, &theta, None, &mut ws, &plans, &mut mu, par);
        let mut calibrations = 1usize;
        let mut loss = loss_of(&mu);
        let mut history = vec![loss];
        // Relative smoothness constant of the normalised loss w.r.t. entropy: 2 Σ w_i (also
        // for coarsened measurements: ‖Qv‖₂ ≤ ‖Qv‖₁ ≤ ‖v‖₁ for the group sums Q).
        let smooth: f64 = 2.0 * prepared.iter().map(|p| p.weight).sum::<f64>();
        let safe_step = if smooth > 0.0 { 1.0 / smooth } else { 0.0 };
        let mut step = safe_step;
        let mut streak = 2usize;
        let mut iterations = 0usize;
        let mut stalled = false;
        let mut converged = false;
        if smooth > 0.0 {
            for _ in 0..settings.iterations {
                for ((g, p), m) in grad.iter_mut().zip(&prepared).zip(&mu) {
                    p.gradient(m, g);
                }
                let g_dot_mu: f64 = grad
                    .iter()
                    .zip(&mu)
                    .map(|(g, m)| g.iter().zip(m).map(|(a, b)| a * b).sum::<f64>())
                    .sum();
                // The gradient as a sum of clique tables (only hosting cliques are touched):
                // each measurement's gradient is added into its source's (smallest first),
                // then the tables summed from the clique are broadcast onto it (`HostPlan`).
                for (c, plan) in plans.iter().enumerate() {
                    if plan.measured.is_empty() {
                        continue;
                    }
                    for (i, how) in plan.measured.iter().rev() {
                        if let Some(k) = how.source {
                            let (src, dst) = pair_mut(&mut grad, *i, plan.measured[k].0);
                            how.map.gather_add(src, dst);
                        }
                    }
                    let block = &mut g_full[layout.range(c)];
                    block.fill(0.0);
                    for (i, how) in &plan.measured {
                        if how.source.is_none() {
                            how.map.gather_add_with(&grad[*i], block, par);
                        }
                    }
                }
                // Try twice the last step after two steps in a row were accepted at their first try,
                // else the last step (never below it: see the rate argument in the docs).
                let mut eta = if streak >= 2 { 2.0 * step } else { step };
                let mut accepted = None;
                for trial in 0..MAX_HALVINGS {
                    let lz = calibrate_fast(
                        &layout,
                        &theta,
                        Some((&g_full, eta)),
                        &mut ws,
                        &plans,
                        &mut mu_try,
                        par,
                    );
                    calibrations += 1;
                    let f = loss_of(&mu_try);
                    // f(μ⁺) ≤ f(μ) + ⟨∇f, μ⁺ − μ⟩ + KL(μ⁺‖μ)/η, with
                    // KL(μ⁺‖μ) = −η⟨∇f, μ⁺⟩ − (ln Z⁺ − ln Z).
                    let bound = loss - g_dot_mu - (lz - log_z) / eta;
                    if f.is_finite() && f <= loss && (f <= bound || eta <= safe_step) {
                        accepted = Some((f, lz));
                        streak = if trial == 0 && streak < 2 {
                            streak + 1
                        } else {
                            0
                        };
                        break;
                    }
                    eta *= 0.5;
                }
                let Some((f, lz)) = accepted else {
                    stalled = true;
                    break;
                };
                for (c, plan) in plans.iter().enumerate() {
                    if plan.measured.is_empty() {
                        continue;
                    }
                    let r = layout.range(c);
                    let g = &g_full[r.clone()];
                    elementwise(&mut theta[r], par, |i, t| *t -= eta * g[i]);
                }
                std::mem::swap(&mut mu, &mut mu_try);
                let previous = loss;
                loss = f;
                log_z = lz;
                step = eta;
                iterations += 1;
                history.push(loss);
                if settings.tolerance > 0.0 && previous - loss <= settings.tolerance * loss {
                    converged = true;
                    break;
                }
                let w = settings.chi_square_window;
                if w > 0 && history.len() > w {
                    let gain = (history[history.len() - 1 - w] - loss) * count_scale;
                    if gain < settings.min_chi_square_gain {
                        converged = true;
                        break;
                    }
                }
            }
        }
        let (log_marginals, marginals) = clique_marginals(&layout, &theta, &mut ws, par);
        let chi_square = loss * count_scale;
        let report = FitReport {
            iterations,
            calibrations,
            initial_loss: history[0],
            final_loss: loss,
            chi_square,
            loss_history: history,
            step_size: step,
            model_cells: layout.total(),
            cliques: layout.tree.cliques().to_vec(),
            stalled,
            converged,
            warm_start,
        };
        let model = GraphicalModel {
            domain: domain.clone(),
            layout,
            theta,
            log_marginals,
            marginals,
            total,
            max_elimination_cells: settings.max_elimination_cells,
        };
        Ok((model, report))
    }

    /// The domain of the model.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// The model's junction tree (its cliques are the model's maximal cliques).
    pub fn junction_tree(&self) -> &JunctionTree {
        &self.layout.tree
    }

    /// Total cells of the model's clique tables.
    pub fn num_cells(&self) -> usize {
        self.layout.total()
    }

    /// The total the model was fitted with (counts = total × probabilities).
    pub fn total(&self) -> f64 {
        self.total
    }

    /// Builds a model directly from log-potentials, one table per clique of the junction tree
    /// on `cliques` (see [`GraphicalModel::junction_tree`]), each over the clique's sorted
    /// attributes in row-major order: `p(x) ∝ exp(Σ_C θ_C(x_C))`. For tests and for callers
    /// that hold potentials from elsewhere.
    ///
    /// Errors: bad cliques, wrong table count or lengths, non-finite entries, a non-finite or
    /// non-positive total.
    pub fn from_potentials(
        domain: &Domain,
        cliques: &[Vec<usize>],
        potentials: &dyn Fn(&[usize]) -> Vec<f64>,
        total: f64,
    ) -> Result<GraphicalModel> {
        check_measurements(domain, &[], total)?;
        let tree = JunctionTree::build(domain, cliques)?;
        let layout = Layout::new(tree, domain.sizes());
        let mut theta = Vec::with_capacity(layout.total());
        for (c, cl) in layout.tree.cliques().iter().enumerate() {
            let t = potentials(cl);
            let want = layout.range(c).len();
            if t.len() != want {
                return Err(QueryError::LengthMismatch {
                    expected: want,
                    found: t.len(),
                });
            }
            if let Some(j) = t.iter().position(|v| !v.is_finite()) {
                return Err(QueryError::NonFinite {
                    what: format!("potential of clique {cl:?}"),
                    index: j,
                });
            }
            theta.extend(t);
        }
        let mut ws = Workspace::new(&layout);
        let (log_marginals, marginals) =
            clique_marginals(&layout, &theta, &mut ws, Parallelism::Rayon);
        Ok(GraphicalModel {
            domain: domain.clone(),
            layout,
            theta,
            log_marginals,
            marginals,
            total,
            max_elimination_cells: DEFAULT_MAX_ELIMINATION_CELLS,
        })
    }

    /// The normalised marginal (probabilities summing to 1) on `attrs`, in the row-major cell
    /// order of that list (as [`Marginal`]). In-clique marginalisation of the calibrated
    /// clique marginals when the attributes lie in one clique; otherwise exact sum-product
    /// variable elimination on the smallest subtree of the junction tree whose cliques cover
    /// `attrs`, using `p(x_T) = Π_{C∈T} μ_C / Π_{S∈T} μ_S` (McKenna et al. 2019, §4). Never
    /// approximate. When the elimination would build a table above the fit's
    /// `max_elimination_cells` (default 10⁷) it conditions on the largest requested attribute
    /// and eliminates once per value (still exact; more time, less memory).
    ///
    /// Errors: an attribute out of range, an empty or repeating list, a table above the
    /// marginal size limit, an elimination table above `max_elimination_cells` even after
    /// conditioning on every requested attribute ([`QueryError::TooLarge`]).
    pub fn marginal(&self, attrs: &[usize]) -> Result<Vec<f64>> {
        Marginal::new(&self.domain, attrs.to_vec())?;
        let sizes = &self.layout.sizes;
        let mut sorted = attrs.to_vec();
        sorted.sort_unstable();
        let tree = &self.layout.tree;
        let mut out;
        if let Some(c) = tree.smallest_containing(&sorted) {
            let map = index_map(&tree.cliques()[c], attrs, sizes);
            out = vec![0.0; cells(attrs, sizes)];
            for (&p, &j) in self.marginals[self.layout.range(c)].iter().zip(&map) {
                out[j as usize] += p;
            }
        } else {
            // p(x_T) = Π_C μ_C / Π_S μ_S over the subtree, in probability space; in log space
            // only when that flushes every cell to zero (an extreme model whose cliques
            // disagree beyond 10⁻³⁰⁸)
            let keep = self.steiner(&sorted);
            let limit = self.max_elimination_cells;
            let factors = self.subtree_factors(&keep, false);
            let borrowed: Vec<_> = factors.iter().map(std::borrow::Cow::Borrowed).collect();
            let mut table =
                eliminate_within::<Probability>(&borrowed, &sorted, sizes, limit)?.table;
            let mass: f64 = table.iter().sum();
            if !(mass.is_finite() && mass > 0.0) {
                let factors = self.subtree_factors(&keep, true);
                let borrowed: Vec<_> = factors.iter().map(std::borrow::Cow::Borrowed).collect();
                table = eliminate_within::<LogProbability>(&borrowed, &sorted, sizes, limit)?.table;
                let m = table.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                table.iter_mut().for_each(|x| *x = (*x - m).exp());
            }
            let map = index_map(&sorted, attrs, sizes);
            out = vec![0.0; table.len()];
            for (&x, &j) in table.iter().zip(&map) {
                out[j as usize] = x;
            }
        }
        let s: f64 = out.iter().sum();
        for v in out.iter_mut() {
            *v /= s;
        }
        Ok(out)
    }

    /// The factors of `p(x_T) = Π_C μ_C / Π_S μ_S` on the subtree `keep` of the junction
    /// tree: each clique's marginal and, for each clique whose parent is in `keep`, the
    /// reciprocal of its separator marginal (0/0 = 0: a separator cell of probability 0 has
    /// every clique cell above it at 0). As probabilities, or as logarithms when `log`.
    fn subtree_factors(&self, keep: &[usize], log: bool) -> Vec<Factor> {
        let tree = &self.layout.tree;
        let mut factors = Vec::new();
        for &c in keep {
            let mu = &self.marginals[self.layout.range(c)];
            let log_mu = &self.log_marginals[self.layout.range(c)];
            factors.push(Factor {
                vars: tree.cliques()[c].clone(),
                table: if log { log_mu.to_vec() } else { mu.to_vec() },
            });
            if let Some(p) = tree.parents()[c]
                && keep.contains(&p)
            {
                let mut s = vec![0.0; self.layout.sep_cells[c]];
                let table = if log {
                    let m = log_mu.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    for (&x, &j) in log_mu.iter().zip(&self.layout.child_map[c]) {
                        s[j as usize] += (x - m).exp();
                    }
                    s.iter().map(|&v| -(m + safe_ln(v))).collect()
                } else {
                    for (&x, &j) in mu.iter().zip(&self.layout.child_map[c]) {
                        s[j as usize] += x;
                    }
                    s.iter()
                        .map(|&v| if v > 0.0 { 1.0 / v } else { 0.0 })
                        .collect()
                };
                factors.push(Factor {
                    vars: tree.separator(c),
                    table,
                });
            }
        }
        factors
    }

    /// The smallest connected set of cliques covering `attrs` (sorted): one clique per
    /// attribute, then every clique on a tree path between two of them.
    fn steiner(&self, attrs: &[usize]) -> Vec<usize> {
        let tree = &self.layout.tree;
        let m = tree.cliques().len();
        let mut needed = vec![false; m];
        for &a in attrs {
            if let Some(c) = tree.smallest_containing(&[a]) {
                needed[c] = true;
            }
        }
        let mut alive = vec![true; m];
        let mut degree = vec![0usize; m];
        for c in 0..m {
            if let Some(p) = tree.parents()[c] {
                degree[c] += 1;
                degree[p] += 1;
            }
        }
        loop {
            let mut changed = false;
            for c in 0..m {
                if alive[c] && !needed[c] && degree[c] <= 1 {
                    alive[c] = false;
                    changed = true;
                    if let Some(p) = tree.parents()[c]
                        && alive[p]
                    {
                        degree[p] -= 1;
                    }
                    for &ch in &self.layout.children[c] {
                        if alive[ch] {
                            degree[ch] -= 1;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        (0..m).filter(|&c| alive[c]).collect()
    }

    /// `n` synthetic records drawn independently from the model by forward sampling along
    /// the junction tree (root clique from its marginal, then each clique's new attributes
    /// from its marginal conditioned on the separator with its parent), with the caller's
    /// `rng`. Post-processing of the fitted model. `n = 0` gives the empty dataset.
    pub fn sample<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Result<Dataset> {
        let d = self.domain.len();
        if n == 0 {
            return Ok(Dataset::empty(self.domain.clone()));
        }
        let sizes = &self.layout.sizes;
        let tree = &self.layout.tree;
        let mut columns = vec![vec![0u32; n]; d];
        for &c in tree.order() {
            let clique = &tree.cliques()[c];
            let sep = tree.separator(c);
            let rest: Vec<usize> = clique
                .iter()
                .copied()
                .filter(|a| sep.binary_search(a).is_err())
                .collect();
            if rest.is_empty() {
                continue;
            }
            let r_cells = cells(&rest, sizes);
            let rest_map = index_map(clique, &rest, sizes);
            let sep_map: Vec<u32> = if sep.is_empty() {
                vec![0; rest_map.len()]
            } else {
                self.layout.child_map[c].clone()
            };
            let block = &self.marginals[self.layout.range(c)];
            let mut cum = vec![0.0; block.len()];
            for ((&x, &s), &r) in block.iter().zip(&sep_map).zip(&rest_map) {
                cum[s as usize * r_cells + r as usize] = x;
            }
            for seg in cum.chunks_exact_mut(r_cells) {
                let mut acc = 0.0;
                for v in seg.iter_mut() {
                    acc += *v;
                    *v = acc;
                }
            }
            let sep_st = strides(&sep, sizes);
            let rest_st = strides(&rest, sizes);
            // separator cell of every record, from the attributes sampled so far
            let mut idx = vec![0usize; n];
            for (&a, &st) in sep.iter().zip(&sep_st) {
                for (s, &code) in idx.iter_mut().zip(&columns[a]) {
                    *s += code as usize * st;
                }
            }
            // then the cell of the new attributes, drawn from the conditional
            for s in idx.iter_mut() {
                let seg = &cum[*s * r_cells..(*s + 1) * r_cells];
                let mass = seg[r_cells - 1];
                *s = if mass > 0.0 {
                    let u = rng.random::<f64>() * mass;
                    seg.partition_point(|&v| v <= u).min(r_cells - 1)
                } else {
                    rng.random_range(0..r_cells)
                };
            }
            for (&a, &st) in rest.iter().zip(&rest_st) {
                let size = sizes[a] as usize;
                for (code, &r) in columns[a].iter_mut().zip(&idx) {
                    *code = ((r / st) % size) as u32;
                }
            }
        }
        Dataset::from_columns(self.domain.clone(), columns)
    }
}
