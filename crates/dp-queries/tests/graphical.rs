//! The graphical-model estimator (McKenna, Sheldon & Miklau 2019) against brute force on
//! small domains: exact inference, junction-tree invariants, fits with derived convergence
//! tolerances, maximum entropy, monotone loss, warm starts, sampling, bad input.

use std::collections::HashMap;

use dp_geometry::Parallelism;
use dp_queries::{
    CellGroups, Domain, FitReport, GraphicalModel, GraphicalModelSettings, JunctionTree, Marginal,
    NoisyMarginal, QueryError, WarmStart,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn domain(sizes: &[u32]) -> Domain {
    Domain::new(
        sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| (format!("a{i}"), s))
            .collect(),
    )
    .unwrap()
}

/// Every record of the domain, in row-major order.
fn universe(sizes: &[u32]) -> Vec<Vec<u32>> {
    let mut out = vec![vec![]];
    for &s in sizes {
        out = out
            .into_iter()
            .flat_map(|r: Vec<u32>| {
                (0..s).map(move |v| {
                    let mut r = r.clone();
                    r.push(v);
                    r
                })
            })
            .collect();
    }
    out
}

/// Row-major cell of `record` in the table over `attrs` (that order).
fn cell(record: &[u32], attrs: &[usize], sizes: &[u32]) -> usize {
    attrs
        .iter()
        .fold(0, |acc, &a| acc * sizes[a] as usize + record[a] as usize)
}

/// Random log-potentials for each clique of the tree a model on `cliques` gets, and the
/// normalised distribution they define, by brute force over the universe.
struct Truth {
    potentials: HashMap<Vec<usize>, Vec<f64>>,
    p: Vec<f64>,
}

fn truth(d: &Domain, cliques: &[Vec<usize>], scale: f64, rng: &mut ChaCha8Rng) -> Truth {
    let sizes = d.sizes();
    let tree = JunctionTree::build(d, cliques).unwrap();
    let mut potentials = HashMap::new();
    for c in tree.cliques() {
        let n: usize = c.iter().map(|&a| sizes[a] as usize).product();
        let t: Vec<f64> = (0..n)
            .map(|_| scale * (2.0 * rng.random::<f64>() - 1.0))
            .collect();
        potentials.insert(c.clone(), t);
    }
    let univ = universe(sizes);
    let logp: Vec<f64> = univ
        .iter()
        .map(|x| {
            potentials
                .iter()
                .map(|(c, t)| t[cell(x, c, sizes)])
                .sum::<f64>()
        })
        .collect();
    let m = logp.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut p: Vec<f64> = logp.iter().map(|l| (l - m).exp()).collect();
    let s: f64 = p.iter().sum();
    p.iter_mut().for_each(|v| *v /= s);
    Truth { potentials, p }
}

fn model_of(d: &Domain, cliques: &[Vec<usize>], t: &Truth) -> GraphicalModel {
    GraphicalModel::from_potentials(d, cliques, &|c| t.potentials[c].clone(), 1000.0).unwrap()
}

fn brute_marginal(sizes: &[u32], p: &[f64], attrs: &[usize]) -> Vec<f64> {
    let n: usize = attrs.iter().map(|&a| sizes[a] as usize).product();
    let mut out = vec![0.0; n];
    for (x, &px) in universe(sizes).iter().zip(p) {
        out[cell(x, attrs, sizes)] += px;
    }
    out
}

fn random_sizes(rng: &mut ChaCha8Rng, d: usize) -> Vec<u32> {
    (0..d).map(|_| rng.random_range(2..=4u32)).collect()
}

/// Random cliques of 1–3 distinct attributes out of `d`.
fn random_cliques(rng: &mut ChaCha8Rng, d: usize, count: usize) -> Vec<Vec<usize>> {
    (0..count)
        .map(|_| {
            let k = rng.random_range(1..=3usize.min(d));
            let mut c: Vec<usize> = Vec::new();
            while c.len() < k {
                let a = rng.random_range(0..d);
                if !c.contains(&a) {
                    c.push(a);
                }
            }
            c
        })
        .collect()
}

#[test]
fn marginals_match_brute_force_in_and_out_of_clique() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (mut inside, mut outside) = (0, 0);
    for _ in 0..40 {
        let d = rng.random_range(3..=5usize);
        let sizes = random_sizes(&mut rng, d);
        let dom = domain(&sizes);
        let count = rng.random_range(1..=4usize);
        let cliques = random_cliques(&mut rng, d, count);
        let t = truth(&dom, &cliques, 2.0, &mut rng);
        let model = model_of(&dom, &cliques, &t);
        let tree = model.junction_tree().clone();
        for _ in 0..8 {
            let k = rng.random_range(1..=d.min(4));
            let mut attrs: Vec<usize> = Vec::new();
            while attrs.len() < k {
                let a = rng.random_range(0..d);
                if !attrs.contains(&a) {
                    attrs.push(a);
                }
            }
            let mut sorted = attrs.clone();
            sorted.sort_unstable();
            if tree.smallest_containing(&sorted).is_some() {
                inside += 1;
            } else {
                outside += 1;
            }
            let got = model.marginal(&attrs).unwrap();
            let want = brute_marginal(&sizes, &t.p, &attrs);
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() < 1e-10,
                    "{attrs:?} on {cliques:?}: {g} vs {w}"
                );
            }
        }
    }
    // Both paths were exercised.
    assert!(
        inside > 20 && outside > 20,
        "{inside} in-clique, {outside} out"
    );
}

#[test]
fn junction_trees_have_running_intersection_and_cover_the_cliques() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for _ in 0..200 {
        let d = rng.random_range(1..=10usize);
        let sizes = random_sizes(&mut rng, d);
        let dom = domain(&sizes);
        let count = rng.random_range(0..=8usize);
        let cliques = random_cliques(&mut rng, d, count);
        let tree = JunctionTree::build(&dom, &cliques).unwrap();
        let cl = tree.cliques();
        let m = cl.len();
        // sorted, maximal
        for (i, c) in cl.iter().enumerate() {
            assert!(c.windows(2).all(|w| w[0] < w[1]), "{c:?}");
            for (j, o) in cl.iter().enumerate() {
                if i != j {
                    assert!(!c.iter().all(|a| o.contains(a)), "{c:?} ⊆ {o:?}");
                }
            }
        }
        // every input clique and every attribute is inside a tree clique
        for c in &cliques {
            assert!(cl.iter().any(|t| c.iter().all(|a| t.contains(a))), "{c:?}");
        }
        for a in 0..d {
            assert!(cl.iter().any(|t| t.contains(&a)), "attribute {a}");
        }
        // a tree: root 0, m-1 parent edges, pre-order lists parents first
        let parents = tree.parents();
        assert_eq!(parents[0], None);
        assert_eq!(parents.iter().filter(|p| p.is_some()).count(), m - 1);
        let order = tree.order();
        assert_eq!(order.len(), m);
        let pos: HashMap<usize, usize> = order.iter().enumerate().map(|(i, &c)| (c, i)).collect();
        for c in 0..m {
            if let Some(p) = parents[c] {
                assert!(pos[&p] < pos[&c]);
            }
        }
        // running intersection: the cliques holding `a` are connected — exactly one of
        // them has a parent outside the set (the top one)
        for a in 0..d {
            let holding: Vec<usize> = (0..m).filter(|&c| cl[c].contains(&a)).collect();
            let tops = holding
                .iter()
                .filter(|&&c| parents[c].is_none_or(|p| !cl[p].contains(&a)))
                .count();
            assert_eq!(tops, 1, "attribute {a} in {cl:?} with parents {parents:?}");
        }
        // model_cells is the tree's size, and is what a fit builds
        let want: f64 = cl
            .iter()
            .map(|c| c.iter().map(|&a| f64::from(sizes[a])).product::<f64>())
            .sum();
        assert_eq!(GraphicalModel::model_cells(&dom, &cliques).unwrap(), want);
    }
}

/// Noiseless measurements (count units) of `attrs` under the distribution `p`.
fn measure(dom: &Domain, p: &[f64], attrs: &[usize], total: f64, sigma: f64) -> NoisyMarginal {
    let m = Marginal::new(dom, attrs.to_vec()).unwrap();
    NoisyMarginal {
        values: brute_marginal(dom.sizes(), p, attrs)
            .iter()
            .map(|v| v * total)
            .collect(),
        marginal: m,
        sigma,
        groups: None,
    }
}

fn entropy(p: &[f64]) -> f64 {
    -p.iter()
        .filter(|&&v| v > 0.0)
        .map(|v| v * v.ln())
        .sum::<f64>()
}

/// Convergence bound of the fit (docs/mechanisms/estimation.md): every accepted step size is
/// at least 1/(2L), L = 2 Σ w_i the relative smoothness of the normalised loss, so after T
/// steps from the uniform u, f(μ_T) − f* ≤ KL(p*‖u) / Σ_t η_t ≤ 2L·KL(p*‖u)/T.
fn rate_bound(weights: &[f64], kl: f64, t: usize) -> f64 {
    let l = 2.0 * weights.iter().sum::<f64>();
    2.0 * l * kl / t as f64
}

#[test]
fn noiseless_fit_reproduces_measured_marginals_within_the_rate_bound() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let sizes = [2u32, 3, 4, 2, 3];
    let dom = domain(&sizes);
    // a cycle 0-1-2-3-0 (needs triangulation) and a pendant 3-4
    let cliques = vec![vec![0, 1], vec![2, 1], vec![2, 3], vec![3, 0], vec![4, 3]];
    let t = truth(&dom, &cliques, 1.5, &mut rng);
    let total = 5000.0;
    let meas: Vec<NoisyMarginal> = cliques
        .iter()
        .map(|c| measure(&dom, &t.p, c, total, 1.0))
        .collect();
    let iters = 20_000;
    let settings = GraphicalModelSettings {
        iterations: iters,
        ..Default::default()
    };
    let (model, report) = GraphicalModel::fit(&dom, &meas, total, &settings, None).unwrap();
    let kl = (sizes.iter().map(|&s| f64::from(s)).product::<f64>()).ln() - entropy(&t.p);
    let bound = rate_bound(&[1.0; 5], kl, report.iterations);
    eprintln!(
        "noiseless fit: {} iterations (stalled {}), loss {:e} -> {:e}, bound {bound:e}",
        report.iterations, report.stalled, report.initial_loss, report.final_loss
    );
    // the start is far from the bound (the test can fail), the end within it
    assert!(report.initial_loss > 10.0 * rate_bound(&[1.0; 5], kl, iters));
    assert!(
        report.final_loss <= bound,
        "{} > {bound}",
        report.final_loss
    );
    // each measured marginal: w‖μ − y/N‖² ≤ f(μ_T), recomputed from the model's marginals
    let mut loss = 0.0;
    for (c, m) in cliques.iter().zip(&meas) {
        let got = model.marginal(c).unwrap();
        let err2: f64 = got
            .iter()
            .zip(&m.values)
            .map(|(g, y)| (g - y / total).powi(2))
            .sum();
        assert!(err2 <= bound, "{c:?}: {err2} > {bound}");
        loss += err2;
    }
    assert!((loss - report.final_loss).abs() <= 1e-9 * (1.0 + loss));
}

/// Euclidean projection onto the probability simplex (sort-based; Duchi et al. 2008).
fn project_simplex(v: &[f64]) -> Vec<f64> {
    let mut u = v.to_vec();
    u.sort_by(|a, b| b.total_cmp(a));
    let (mut acc, mut theta) = (0.0, 0.0);
    for (j, &x) in u.iter().enumerate() {
        acc += x;
        let t = (acc - 1.0) / (j + 1) as f64;
        if x - t > 0.0 {
            theta = t;
        }
    }
    v.iter().map(|x| (x - theta).max(0.0)).collect()
}

/// The fit's problem on a joint distribution small enough to enumerate: measurement `i` maps
/// each record of the universe to `cells[i][record]` (a cell of its table or of its
/// coarsening), with target `targets[i]` (probabilities) and weight `weights[i]`; the loss
/// is `Σ_i w_i ‖A_i p − t_i‖²` (`A_i` summing the records into the cells).
struct Projection {
    cells: Vec<Vec<usize>>,
    targets: Vec<Vec<f64>>,
    weights: Vec<f64>,
}

impl Projection {
    fn answers(&self, p: &[f64]) -> Vec<Vec<f64>> {
        self.cells
            .iter()
            .zip(&self.targets)
            .map(|(c, t)| {
                let mut a = vec![0.0; t.len()];
                c.iter().zip(p).for_each(|(&j, v)| a[j] += v);
                a
            })
            .collect()
    }

    fn loss(&self, p: &[f64]) -> f64 {
        self.answers(p)
            .iter()
            .zip(&self.targets)
            .zip(&self.weights)
            .map(|((a, t), w)| w * a.iter().zip(t).map(|(x, y)| (x - y).powi(2)).sum::<f64>())
            .sum()
    }

    /// The minimiser over the simplex by projected gradient with step `1/L`,
    /// `L = Σ_i 2w_i·(most records in one cell of measurement i)` (each `A_i` has disjoint 0/1
    /// rows, so `λ_max(A_iᵀA_i)` is its largest row count).
    fn optimum(&self, steps: usize) -> Vec<f64> {
        let n = self.cells[0].len();
        let lip: f64 = self
            .cells
            .iter()
            .zip(&self.targets)
            .zip(&self.weights)
            .map(|((c, t), w)| {
                let mut per = vec![0usize; t.len()];
                c.iter().for_each(|&j| per[j] += 1);
                2.0 * w * *per.iter().max().unwrap() as f64
            })
            .sum();
        let mut p = vec![1.0 / n as f64; n];
        for _ in 0..steps {
            let a = self.answers(&p);
            let mut g = vec![0.0; n];
            for (((c, t), w), a) in self
                .cells
                .iter()
                .zip(&self.targets)
                .zip(&self.weights)
                .zip(&a)
            {
                for (&j, gx) in c.iter().zip(g.iter_mut()) {
                    *gx += 2.0 * w * (a[j] - t[j]);
                }
            }
            let step: Vec<f64> = p.iter().zip(&g).map(|(v, d)| v - d / lip).collect();
            p = project_simplex(&step);
        }
        p
    }

    /// The fit of `model` (its report `report`) on three attributes of `sizes` reaches the
    /// brute-force optimum within the rate bound, the measurements contradict each other
    /// (the optimum's loss is 10× the bound, so the test can fail), and the reported loss is
    /// the loss recomputed from the model's joint marginal. Returns the bound.
    fn assert_fit_reaches_optimum(
        &self,
        model: &GraphicalModel,
        report: &FitReport,
        sizes: &[u32],
        steps: usize,
    ) -> f64 {
        let optimum = self.loss(&self.optimum(steps));
        let n = self.cells[0].len();
        // the fit's weights are (σ_min/σ_i)² with σ_min = 1: the brute force's
        let bound = rate_bound(&self.weights, (n as f64).ln(), report.iterations);
        assert!(
            report.final_loss <= optimum + bound,
            "fit {} above the optimum {optimum} + {bound}",
            report.final_loss
        );
        assert!(
            optimum > 10.0 * bound,
            "the measurements must contradict each other"
        );
        let joint = model.marginal(&[0, 1, 2]).unwrap();
        let fitted: Vec<f64> = universe(sizes)
            .iter()
            .map(|x| joint[cell(x, &[0, 1, 2], sizes)])
            .collect();
        let recomputed = self.loss(&fitted);
        assert!(
            (recomputed - report.final_loss).abs() <= 1e-9 * (1.0 + recomputed),
            "recomputed {recomputed} against reported {}",
            report.final_loss
        );
        bound
    }
}

/// Measurements nested inside one clique — a 3-way table, its 2-way and 1-way sub-tables in
/// other attribute orders, and repeated measurements of the same table — are answered in the
/// fit from the smallest computed table containing them, and their gradients flow back
/// through those tables (the fit's `HostPlan`, issue #24). On three attributes the model is
/// the whole joint distribution (one clique of 24 cells), so the fit's target is the
/// minimiser over the simplex of `Σ_i w_i ‖A_i p − y_i/N‖²`, which this test finds by brute
/// force (projected gradient, strongly convex: the full table is measured). The measurements
/// contradict each other (the sub-tables are drawn from another distribution), so every
/// table's gradient moves the optimum: a gradient lost or counted twice on the way back
/// leaves the fit's loss far above the optimum's (checked: dropping the sub-tables' gradients
/// fails this test). Tolerance: the mirror-descent rate bound `2L·KL(p*‖u)/T ≤ 2L·ln 24 / T`
/// (`rate_bound`). The loss the fit reports must also equal the loss recomputed from the
/// model's marginals (computed by another routine, in log space).
#[test]
fn nested_measurements_fit_the_brute_force_optimum() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let sizes = [2u32, 3, 4];
    let dom = domain(&sizes);
    let joint = truth(&dom, &[vec![0, 1, 2]], 1.5, &mut rng).p;
    let other = truth(&dom, &[vec![0, 1, 2]], 2.0, &mut rng).p;
    let total = 5000.0;
    // (table, drawn from, sigma)
    let spec: Vec<(Vec<usize>, &[f64], f64)> = vec![
        (vec![1], &other, 2.0),
        (vec![2, 0, 1], &joint, 1.0),
        (vec![1, 0], &other, 1.5),
        (vec![0, 1], &other, 1.0),
        (vec![1], &joint, 1.0),
        (vec![2, 0, 1], &other, 3.0),
        (vec![0, 2], &other, 1.0),
        (vec![2], &other, 1.2),
    ];
    let meas: Vec<NoisyMarginal> = spec
        .iter()
        .map(|(c, p, sigma)| measure(&dom, p, c, total, *sigma))
        .collect();
    let univ = universe(&sizes);
    let problem = Projection {
        cells: spec
            .iter()
            .map(|(c, _, _)| univ.iter().map(|x| cell(x, c, &sizes)).collect())
            .collect(),
        targets: meas
            .iter()
            .map(|m| m.values.iter().map(|y| y / total).collect())
            .collect(),
        weights: spec.iter().map(|(_, _, s)| (1.0 / s).powi(2)).collect(),
    };
    let settings = GraphicalModelSettings {
        iterations: 20_000,
        ..Default::default()
    };
    let (model, report) = GraphicalModel::fit(&dom, &meas, total, &settings, None).unwrap();
    // the full table's weight makes the loss 2.2-strongly convex, so 5 000 projected-gradient
    // steps converge to ~e^-200 (condition number < 25)
    problem.assert_fit_reaches_optimum(&model, &report, &sizes, 5_000);
}

#[test]
fn measurements_are_weighted_by_their_precision() {
    // Two measurements of one 3-cell marginal; the minimiser of
    // Σ_i ‖(Nμ − y_i)/σ_i‖² is the precision-weighted mean (inside the simplex here), and
    // f(μ) − f* = (w1 + w2)‖μ − μ*‖² exactly (normalised weights w_i = (σ_min/σ_i)²).
    let dom = domain(&[3, 2]);
    let total = 100.0;
    let m = Marginal::new(&dom, vec![0]).unwrap();
    let y1 = vec![20.0, 30.0, 50.0];
    let y2 = vec![50.0, 30.0, 20.0];
    let (s1, s2) = (1.0, 2.0);
    let meas = vec![
        NoisyMarginal {
            marginal: m.clone(),
            values: y1.clone(),
            sigma: s1,
            groups: None,
        },
        NoisyMarginal {
            marginal: m,
            values: y2.clone(),
            sigma: s2,
            groups: None,
        },
    ];
    let (p1, p2) = (1.0 / (s1 * s1), 1.0 / (s2 * s2));
    let want: Vec<f64> = y1
        .iter()
        .zip(&y2)
        .map(|(a, b)| (p1 * a + p2 * b) / (p1 + p2) / total)
        .collect();
    let settings = GraphicalModelSettings {
        iterations: 2000,
        ..Default::default()
    };
    let (model, report) = GraphicalModel::fit(&dom, &meas, total, &settings, None).unwrap();
    let w = [1.0, (s1 / s2).powi(2)];
    let f_star: f64 = [&y1, &y2]
        .iter()
        .zip(w)
        .map(|(y, wi)| {
            wi * y
                .iter()
                .zip(&want)
                .map(|(v, m)| (m - v / total).powi(2))
                .sum::<f64>()
        })
        .sum();
    // KL(μ*‖uniform) on the 6-record universe (attribute 1 stays uniform)
    let kl = 6f64.ln() - entropy(&want) - 2f64.ln();
    let gap = rate_bound(&w, kl, report.iterations);
    assert!(report.final_loss - f_star <= gap);
    let got = model.marginal(&[0]).unwrap();
    let dist2: f64 = got.iter().zip(&want).map(|(g, m)| (g - m).powi(2)).sum();
    assert!(dist2 <= gap / (w[0] + w[1]), "{got:?} vs {want:?}");
    // The unweighted mean (1/σ weights would give yet another point) is far from it.
    assert!((got[0] - 0.26).abs() < 0.01 && (got[2] - 0.44).abs() < 0.01);
}

#[test]
fn one_way_measurements_give_the_product_of_the_one_ways() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let sizes = [3u32, 2, 4, 3];
    let dom = domain(&sizes);
    let total = 1000.0;
    let mut meas = Vec::new();
    let mut targets = Vec::new();
    for (a, &s) in sizes.iter().enumerate() {
        let mut t: Vec<f64> = (0..s).map(|_| 0.2 + rng.random::<f64>()).collect();
        let z: f64 = t.iter().sum();
        t.iter_mut().for_each(|v| *v /= z);
        meas.push(NoisyMarginal {
            marginal: Marginal::new(&dom, vec![a]).unwrap(),
            values: t.iter().map(|v| v * total).collect(),
            sigma: 10.0,
            groups: None,
        });
        targets.push(t);
    }
    // The model has a clique on every attribute, so it could represent any dependence:
    // maximum entropy must still give the product.
    let settings = GraphicalModelSettings {
        iterations: 3000,
        extra_cliques: vec![vec![0, 1, 2, 3]],
        ..Default::default()
    };
    let (model, report) = GraphicalModel::fit(&dom, &meas, total, &settings, None).unwrap();
    assert_eq!(report.cliques, vec![vec![0, 1, 2, 3]]);
    let ones: Vec<Vec<f64>> = (0..4).map(|a| model.marginal(&[a]).unwrap()).collect();
    let joint = model.marginal(&[0, 1, 2, 3]).unwrap();
    for (x, &p) in universe(&sizes).iter().zip(&joint) {
        let prod: f64 = (0..4).map(|a| ones[a][x[a] as usize]).product();
        assert!((p - prod).abs() < 1e-12, "{x:?}: {p} vs {prod}");
    }
    // and the 1-ways are the measured ones, within the rate bound (f* = 0)
    let kl: f64 = targets
        .iter()
        .zip(&sizes)
        .map(|(t, &s)| f64::from(s).ln() - entropy(t))
        .sum();
    let bound = rate_bound(&[1.0; 4], kl, report.iterations);
    for (o, t) in ones.iter().zip(&targets) {
        let e2: f64 = o.iter().zip(t).map(|(a, b)| (a - b).powi(2)).sum();
        assert!(e2 <= bound, "{e2} > {bound}");
    }
}

/// Gaussian noise of standard deviation `sigma` (Box–Muller) on noiseless measurements.
fn noisy(
    dom: &Domain,
    p: &[f64],
    attrs: &[usize],
    total: f64,
    sigma: f64,
    rng: &mut ChaCha8Rng,
) -> NoisyMarginal {
    let mut m = measure(dom, p, attrs, total, sigma);
    for v in m.values.iter_mut() {
        let (u1, u2): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random::<f64>());
        *v += sigma * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    }
    m
}

#[test]
fn loss_never_increases_and_warm_start_does_not_lose_ground() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let sizes = [3u32, 4, 2, 3, 4, 2];
    let dom = domain(&sizes);
    let cliques = vec![
        vec![0, 1],
        vec![1, 2, 3],
        vec![3, 4],
        vec![4, 5, 0],
        vec![2, 5],
    ];
    let t = truth(&dom, &cliques, 1.0, &mut rng);
    let total = 2000.0;
    let meas: Vec<NoisyMarginal> = cliques
        .iter()
        .enumerate()
        .map(|(i, c)| noisy(&dom, &t.p, c, total, 5.0 + 20.0 * i as f64, &mut rng))
        .collect();
    let settings = GraphicalModelSettings {
        iterations: 200,
        ..Default::default()
    };
    let (model, report) = GraphicalModel::fit(&dom, &meas, total, &settings, None).unwrap();
    assert_eq!(report.loss_history.len(), report.iterations + 1);
    assert!(report.loss_history.windows(2).all(|w| w[1] <= w[0]));
    assert!(report.final_loss < report.initial_loss);
    // Warm start on the same measurements starts where the fit ended and ends no worse.
    let (_, again) = GraphicalModel::fit(&dom, &meas, total, &settings, Some(&model)).unwrap();
    assert_eq!(again.warm_start, WarmStart::Exact);
    assert!(
        (again.initial_loss - report.final_loss).abs()
            <= 1e-12 * report.final_loss.max(1e-300) + 1e-15
    );
    assert!(again.final_loss <= report.final_loss);
    assert!(again.loss_history.windows(2).all(|w| w[1] <= w[0]));
    // Warm start from a fit on a subset: the new fit starts from the old distribution.
    let (small, _) = GraphicalModel::fit(&dom, &meas[..2], total, &settings, None).unwrap();
    let (big, rep) = GraphicalModel::fit(&dom, &meas, total, &settings, Some(&small)).unwrap();
    assert_eq!(rep.warm_start, WarmStart::Exact);
    // the initial loss is the old model's loss on all measurements
    let old_loss: f64 = meas
        .iter()
        .map(|m| {
            let w = (5.0 / m.sigma).powi(2);
            let got = small.marginal(m.marginal.attrs()).unwrap();
            w * got
                .iter()
                .zip(&m.values)
                .map(|(g, y)| (g - y / total).powi(2))
                .sum::<f64>()
        })
        .sum();
    assert!((rep.initial_loss - old_loss).abs() <= 1e-9 * old_loss);
    assert!(big.num_cells() >= small.num_cells());
}

#[test]
fn samples_follow_the_model() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let sizes = [3u32, 2, 4, 3];
    let dom = domain(&sizes);
    let cliques = vec![vec![0, 1], vec![1, 2], vec![2, 3]];
    let t = truth(&dom, &cliques, 1.5, &mut rng);
    let model = model_of(&dom, &cliques, &t);
    let n = 20_000;
    let data = model.sample(n, &mut rng).unwrap();
    assert_eq!(data.n(), n);
    // every 1-way and 2-way marginal (in-clique and across cliques)
    let mut lists: Vec<Vec<usize>> = (0..4).map(|a| vec![a]).collect();
    for a in 0..4 {
        for b in a + 1..4 {
            lists.push(vec![a, b]);
        }
    }
    let k: usize = lists
        .iter()
        .map(|l| l.iter().map(|&a| sizes[a] as usize).product::<usize>())
        .sum();
    // Bernstein's inequality per cell (Bernoulli(p) indicators, variance v = p(1−p)):
    // P(|p̂ − p| ≥ t) ≤ 2 exp(−n t² / (2v + 2t/3)); with a union bound over the k cells the
    // false-failure rate is ≤ 1e-6 when t solves n t² = L (2v + 2t/3), L = ln(2k / 1e-6).
    let l = (2.0 * k as f64 / 1e-6).ln();
    let nf = n as f64;
    for attrs in &lists {
        let m = Marginal::new(&dom, attrs.clone()).unwrap();
        let counts = m.count(&data);
        let want = brute_marginal(&sizes, &t.p, attrs);
        for (&c, &p) in counts.iter().zip(&want) {
            let v = p * (1.0 - p);
            let tol =
                (2.0 * l / 3.0 + ((2.0 * l / 3.0).powi(2) + 8.0 * nf * l * v).sqrt()) / (2.0 * nf);
            let got = c as f64 / nf;
            assert!(
                (got - p).abs() <= tol,
                "{attrs:?}: {got} vs {p} (tol {tol})"
            );
        }
    }
    assert_eq!(model.sample(0, &mut rng).unwrap().n(), 0);
}

#[test]
fn bad_input_is_an_error() {
    let dom = domain(&[2, 3]);
    let ok = NoisyMarginal {
        marginal: Marginal::new(&dom, vec![0, 1]).unwrap(),
        values: vec![1.0; 6],
        sigma: 1.0,
        groups: None,
    };
    let s = GraphicalModelSettings::default();
    let fit = |m: &NoisyMarginal, total: f64| {
        GraphicalModel::fit(&dom, std::slice::from_ref(m), total, &s, None)
    };
    assert!(fit(&ok, 6.0).is_ok());
    let mut m = ok.clone();
    m.values.pop();
    assert!(matches!(
        fit(&m, 6.0),
        Err(QueryError::LengthMismatch {
            expected: 6,
            found: 5
        })
    ));
    let mut m = ok.clone();
    m.values[2] = f64::NAN;
    assert!(matches!(
        fit(&m, 6.0),
        Err(QueryError::NonFinite { index: 2, .. })
    ));
    for sigma in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let mut m = ok.clone();
        m.sigma = sigma;
        assert!(
            matches!(fit(&m, 6.0), Err(QueryError::BadWorkload { .. })),
            "{sigma}"
        );
    }
    for total in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(fit(&ok, total), Err(QueryError::BadWorkload { .. })),
            "{total}"
        );
    }
    // a marginal of another domain (sizes differ, or attribute out of range)
    let other = domain(&[2, 4, 2]);
    for attrs in [vec![1], vec![2]] {
        let m = NoisyMarginal {
            values: vec![0.0; Marginal::new(&other, attrs.clone()).unwrap().num_cells()],
            marginal: Marginal::new(&other, attrs).unwrap(),
            sigma: 1.0,
            groups: None,
        };
        assert!(matches!(
            fit(&m, 6.0),
            Err(QueryError::DomainMismatch { .. })
        ));
    }
    for bad in [
        GraphicalModelSettings {
            max_model_cells: f64::NAN,
            ..Default::default()
        },
        GraphicalModelSettings {
            max_model_cells: 1e12,
            ..Default::default()
        },
        GraphicalModelSettings {
            tolerance: -1.0,
            ..Default::default()
        },
        GraphicalModelSettings {
            extra_cliques: vec![vec![0, 5]],
            ..Default::default()
        },
    ] {
        assert!(GraphicalModel::fit(&dom, std::slice::from_ref(&ok), 6.0, &bad, None).is_err());
    }
    let small = GraphicalModelSettings {
        max_model_cells: 5.0,
        ..Default::default()
    };
    assert!(matches!(
        GraphicalModel::fit(&dom, std::slice::from_ref(&ok), 6.0, &small, None),
        Err(QueryError::TooLarge { .. })
    ));
    let (model, _) = fit(&ok, 6.0).unwrap();
    assert!(GraphicalModel::fit(&other, &[], 6.0, &s, Some(&model)).is_err());
    assert!(matches!(
        model.marginal(&[2]),
        Err(QueryError::AttributeOutOfRange { .. })
    ));
    assert!(model.marginal(&[0, 0]).is_err());
    assert!(model.marginal(&[]).is_err());
    assert!(GraphicalModel::model_cells(&dom, &[vec![0, 2]]).is_err());
}

#[test]
fn extreme_but_valid_input_stays_finite() {
    let dom = domain(&[2, 3, 2]);
    let m01 = Marginal::new(&dom, vec![0, 1]).unwrap();
    let m12 = Marginal::new(&dom, vec![2, 1]).unwrap();
    let cases: Vec<(f64, f64, f64, f64)> = vec![
        // (sigma 1, sigma 2, total, value scale)
        (1e-300, 1.0, 10.0, 1.0),
        (1e300, 1e-300, 10.0, -5.0),
        (1.0, 1.0, 1e-300, 1e300),
        (1.0, 1e300, 1e300, -1e300),
        (50.0, 50.0, 1e-3, 100.0),
    ];
    for (s1, s2, total, scale) in cases {
        let meas = vec![
            NoisyMarginal {
                marginal: m01.clone(),
                values: (0..6).map(|i| scale * (i as f64 - 2.5)).collect(),
                sigma: s1,
                groups: None,
            },
            NoisyMarginal {
                marginal: m12.clone(),
                values: (0..6).map(|i| -scale * (i as f64 % 3.0)).collect(),
                sigma: s2,
                groups: None,
            },
        ];
        let settings = GraphicalModelSettings {
            iterations: 50,
            ..Default::default()
        };
        let (model, report) = GraphicalModel::fit(&dom, &meas, total, &settings, None).unwrap();
        assert!(report.final_loss.is_finite() && report.initial_loss.is_finite());
        assert!(report.loss_history.windows(2).all(|w| w[1] <= w[0]));
        for attrs in [vec![0], vec![0, 1], vec![0, 2], vec![2, 1, 0]] {
            let p = model.marginal(&attrs).unwrap();
            assert!(p.iter().all(|v| v.is_finite() && *v >= 0.0), "{p:?}");
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        assert_eq!(model.sample(10, &mut rng).unwrap().n(), 10);
    }
}

/// Speed on adult: all 1-ways and 15 2/3-way marginals with Gaussian noise σ = 50.
/// Run with `cargo test -p dp-queries --release --test graphical -- --ignored --nocapture`.
#[test]
#[ignore]
fn adult_speed() {
    use std::time::Instant;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let data = dp_queries::Dataset::load_csv(
        &root.join("data/adult/adult.csv"),
        &root.join("data/adult/adult-domain.json"),
    )
    .unwrap();
    let dom = data.domain().clone();
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let d = dom.len();
    let mut lists: Vec<Vec<usize>> = (0..d).map(|a| vec![a]).collect();
    let extra: Vec<Vec<usize>> = vec![
        vec![0, 4],
        vec![0, 11],
        vec![3, 5],
        vec![4, 6],
        vec![6, 8],
        vec![5, 13],
        vec![3, 13],
        vec![0, 13],
        vec![7, 12],
        vec![1, 5],
        vec![9, 13],
        vec![10, 13],
        vec![4, 6, 8],
        vec![1, 5, 11],
        vec![0, 3, 13],
    ];
    lists.extend(extra);
    let sigma = 50.0;
    let meas: Vec<NoisyMarginal> = lists
        .iter()
        .map(|l| {
            let m = Marginal::new(&dom, l.clone()).unwrap();
            let values = m
                .count(&data)
                .iter()
                .map(|&c| {
                    let (u1, u2): (f64, f64) =
                        (rng.random::<f64>().max(1e-300), rng.random::<f64>());
                    c as f64
                        + sigma * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
                })
                .collect();
            NoisyMarginal {
                marginal: m,
                values,
                sigma,
                groups: None,
            }
        })
        .collect();
    let total = data.n() as f64;
    let settings = GraphicalModelSettings {
        iterations: 300,
        max_model_cells: 1e7,
        ..Default::default()
    };
    let start = Instant::now();
    let (model, report) = GraphicalModel::fit(&dom, &meas, total, &settings, None).unwrap();
    let secs = start.elapsed().as_secs_f64();
    println!(
        "adult: {} cliques, {} cells; {} iterations, {} calibrations in {:.3} s = {:.2} ms/iteration, {:.2} ms/calibration",
        report.cliques.len(),
        report.model_cells,
        report.iterations,
        report.calibrations,
        secs,
        1e3 * secs / report.iterations as f64,
        1e3 * secs / report.calibrations as f64
    );
    println!("cliques: {:?}", report.cliques);
    println!(
        "loss {:.4e} -> {:.4e}, chi-square {:.1} over {} measured cells",
        report.initial_loss,
        report.final_loss,
        report.chi_square,
        meas.iter().map(|m| m.values.len()).sum::<usize>()
    );
    // error of measured and unmeasured 2-way marginals against the data
    let mut l1_meas = Vec::new();
    let mut l1_un = Vec::new();
    for a in 0..d {
        for b in a + 1..d {
            let m = Marginal::new(&dom, vec![a, b]).unwrap();
            let truth = m.count(&data);
            let est = model.marginal(&[a, b]).unwrap();
            let l1: f64 = truth
                .iter()
                .zip(&est)
                .map(|(&c, e)| (c as f64 / total - e).abs())
                .sum();
            if lists.iter().any(|l| l.contains(&a) && l.contains(&b)) {
                l1_meas.push(l1);
            } else {
                l1_un.push(l1);
            }
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    println!(
        "2-way L1: measured {:.4} ({}), unmeasured {:.4} ({})",
        mean(&l1_meas),
        l1_meas.len(),
        mean(&l1_un),
        l1_un.len()
    );
    let t = Instant::now();
    let _ = model.sample(data.n(), &mut rng).unwrap();
    println!(
        "sampling {} records: {:.3} s",
        data.n(),
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let (_, warm) = GraphicalModel::fit(
        &dom,
        &meas,
        total,
        &GraphicalModelSettings {
            iterations: 50,
            ..settings.clone()
        },
        Some(&model),
    )
    .unwrap();
    println!(
        "warm refit 50 iterations: {:.3} s, loss {:.4e} -> {:.4e}",
        t.elapsed().as_secs_f64(),
        warm.initial_loss,
        warm.final_loss
    );
    // A model near 10^6 cells: force a clique on age × fnlwgt × hours-per-week (841 500 cells).
    let big = GraphicalModelSettings {
        iterations: 100,
        max_model_cells: 1e7,
        extra_cliques: vec![vec![0, 2, 11]],
        ..Default::default()
    };
    let t = Instant::now();
    let (_, r) = GraphicalModel::fit(&dom, &meas, total, &big, None).unwrap();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "big model: {} cells, {} iterations, {} calibrations in {:.3} s = {:.2} ms/iteration",
        r.model_cells,
        r.iterations,
        r.calibrations,
        secs,
        1e3 * secs / r.iterations as f64
    );
}

/// The fit's parallel loops (issue #24: the rounds' fits on two cores) give the same model,
/// bit for bit, as the sequential ones: a clique of 72 000 cells (more than two of the
/// loops' tasks), a second clique sharing one attribute, a pool of three threads.
#[test]
fn parallel_fit_is_the_sequential_fit_bit_for_bit() {
    let dom = domain(&[30, 40, 60, 2, 5]);
    let total = 1e5;
    let noisy = |attrs: Vec<usize>, salt: usize| {
        let marginal = Marginal::new(&dom, attrs).unwrap();
        let cells = marginal.num_cells();
        let values = (0..cells)
            .map(|i| total / cells as f64 * (1.0 + 0.9 * ((i * 31 + salt) as f64).sin()))
            .collect();
        NoisyMarginal {
            marginal,
            values,
            sigma: 3.0,
            groups: None,
        }
    };
    let meas = vec![
        noisy(vec![0, 1, 2], 1),
        noisy(vec![2, 3, 4], 2),
        noisy(vec![4], 3),
    ];
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let fit = |parallelism| {
        let settings = GraphicalModelSettings {
            iterations: 30,
            parallelism,
            ..Default::default()
        };
        pool.install(|| GraphicalModel::fit(&dom, &meas, total, &settings, None).unwrap())
    };
    let (seq, seq_report) = fit(Parallelism::None);
    let (par, par_report) = fit(Parallelism::Rayon);
    assert_eq!(seq_report.iterations, 30);
    assert_eq!(par_report.iterations, seq_report.iterations);
    assert_eq!(
        par_report.final_loss.to_bits(),
        seq_report.final_loss.to_bits()
    );
    // the fit moved (else the comparison would be of two starting points)
    assert!(seq_report.final_loss < seq_report.initial_loss);
    for attrs in [vec![0, 1, 2], vec![2, 3, 4], vec![0, 4]] {
        let (a, b) = (seq.marginal(&attrs).unwrap(), par.marginal(&attrs).unwrap());
        assert!(
            a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
            "{attrs:?}"
        );
    }
}

/// The χ²-window stop (`chi_square_window`, `min_chi_square_gain`): the fit runs while every
/// window of steps lowers χ² (count units: the normalised loss × (total/σ_min)²) by at least
/// the gain, and stops at the first window that does not — checked step by step against the
/// loss history; a gain of 0 never stops it, and a bad gain is refused.
#[test]
fn the_chi_square_window_stops_at_the_first_window_below_the_gain() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let sizes = [3u32, 4, 2, 3, 4, 2];
    let dom = domain(&sizes);
    let cliques = vec![vec![0, 1, 2], vec![2, 3], vec![3, 4, 5], vec![1, 5]];
    let t = truth(&dom, &cliques, 1.0, &mut rng);
    let total = 5000.0;
    let sigma_min = 4.0;
    let meas: Vec<NoisyMarginal> = cliques
        .iter()
        .enumerate()
        .map(|(i, c)| noisy(&dom, &t.p, c, total, sigma_min * (1.0 + i as f64), &mut rng))
        .collect();
    let scale = (total / sigma_min).powi(2);
    let (window, gain) = (20usize, 0.5);
    let settings = GraphicalModelSettings {
        iterations: 20_000,
        chi_square_window: window,
        min_chi_square_gain: gain,
        ..Default::default()
    };
    let (_, r) = GraphicalModel::fit(&dom, &meas, total, &settings, None).unwrap();
    assert!(r.converged, "stopped by the window, not by the step cap");
    assert!(r.iterations < settings.iterations);
    assert!(r.iterations >= window);
    let h = &r.loss_history;
    assert_eq!(h.len(), r.iterations + 1);
    assert!((r.chi_square - r.final_loss * scale).abs() <= 1e-9 * r.chi_square);
    // every earlier complete window gained at least `gain`; the last did not
    for i in window..r.iterations {
        assert!(
            (h[i - window] - h[i]) * scale >= gain,
            "window ending at step {i} gained {} < {gain} but the fit went on",
            (h[i - window] - h[i]) * scale
        );
    }
    let last = (h[r.iterations - window] - h[r.iterations]) * scale;
    assert!(last < gain, "stopped on a window that gained {last}");
    // a gain of 0 never stops the fit early: exactly the steps asked for
    let exact = GraphicalModelSettings {
        iterations: r.iterations + 50,
        chi_square_window: window,
        min_chi_square_gain: 0.0,
        ..Default::default()
    };
    let (_, full) = GraphicalModel::fit(&dom, &meas, total, &exact, None).unwrap();
    if !full.stalled {
        assert_eq!(full.iterations, r.iterations + 50);
    }
    assert!(full.final_loss <= r.final_loss);
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let s = GraphicalModelSettings {
            min_chi_square_gain: bad,
            chi_square_window: window,
            ..Default::default()
        };
        assert!(GraphicalModel::fit(&dom, &meas, total, &s, None).is_err());
    }
}

/// A coarsened measurement of `attrs` (that order) of the distribution `p`: each
/// attribute's values summed over `maps` (value → group), noiseless, in count units.
fn measure_grouped(
    dom: &Domain,
    p: &[f64],
    attrs: &[usize],
    maps: &[Vec<u32>],
    total: f64,
    sigma: f64,
) -> NoisyMarginal {
    let groups = CellGroups::new(maps.to_vec()).unwrap();
    let fine = measure(dom, p, attrs, total, sigma);
    NoisyMarginal {
        values: groups.coarsen(&fine.values).unwrap(),
        groups: Some(groups),
        ..fine
    }
}

/// A coarsened table's cell of `record` (brute force: the groups' row-major index).
fn group_cell(record: &[u32], attrs: &[usize], maps: &[Vec<u32>]) -> usize {
    attrs.iter().zip(maps).fold(0, |acc, (&a, m)| {
        let g = m.iter().copied().max().unwrap() as usize + 1;
        acc * g + m[record[a] as usize] as usize
    })
}

/// `CellGroups` against brute force: every record's cell of the table maps to its cell of
/// the coarsened table, the coarsened counts are the group sums, and malformed groups are
/// errors.
#[test]
fn cell_groups_coarsen_like_brute_force() {
    let sizes = [3u32, 4, 5];
    let dom = domain(&sizes);
    let attrs = [2usize, 0];
    let maps = vec![vec![0, 2, 1, 2, 0], vec![1, 0, 1]];
    let g = CellGroups::new(maps.clone()).unwrap();
    assert_eq!(g.group_counts(), &[3, 2]);
    assert_eq!(g.num_cells(), 6);
    let m = Marginal::new(&dom, attrs.to_vec()).unwrap();
    assert!(g.fits(&m));
    assert!(!g.fits(&Marginal::new(&dom, vec![0, 2]).unwrap()));
    let map = g.cell_map();
    let fine: Vec<u64> = (0..15u64).map(|i| i * i + 1).collect();
    let mut want = vec![0u64; 6];
    for r in universe(&sizes).iter().filter(|r| r[1] == 0) {
        let (f, c) = (cell(r, &attrs, &sizes), group_cell(r, &attrs, &maps));
        assert_eq!(map[f] as usize, c, "{r:?}");
        want[c] += fine[f];
    }
    assert_eq!(g.coarsen(&fine).unwrap(), want);
    assert!(matches!(
        g.coarsen(&fine[1..]),
        Err(QueryError::LengthMismatch { expected: 15, .. })
    ));
    // a group with no value, an empty map, no attribute
    for bad in [vec![vec![0, 2, 2]], vec![vec![]], vec![]] {
        assert!(
            matches!(
                CellGroups::new(bad.clone()),
                Err(QueryError::BadWorkload { .. })
            ),
            "{bad:?}"
        );
    }
    // in a fit: groups that do not fit the marginal, values one per fine cell
    let ok = measure_grouped(&dom, &vec![1.0 / 60.0; 60], &attrs, &maps, 600.0, 1.0);
    let s = GraphicalModelSettings::default();
    let fit =
        |m: &NoisyMarginal| GraphicalModel::fit(&dom, std::slice::from_ref(m), 600.0, &s, None);
    assert!(fit(&ok).is_ok());
    let mut m = ok.clone();
    m.groups = Some(CellGroups::new(vec![vec![0, 1, 1], vec![1, 0, 1, 0, 0]]).unwrap());
    assert!(matches!(fit(&m), Err(QueryError::DomainMismatch { .. })));
    let mut m = ok.clone();
    m.values = vec![10.0; 15];
    assert!(matches!(
        fit(&m),
        Err(QueryError::LengthMismatch {
            expected: 6,
            found: 15
        })
    ));
}

/// A measured table of a test: attributes, groups (value → group per attribute) or none,
/// the distribution it is drawn from, σ.
type Spec<'a> = (Vec<usize>, Option<Vec<Vec<u32>>>, &'a [f64], f64);

/// Coarsened measurements in a fit (MST's compressed tables, measured without compressing
/// the model) against brute force on the joint distribution of three attributes: the fit's
/// target is the minimiser over the simplex of `Σ_i w_i ‖Q_i A_i p − y_i/N‖²` (`Q_i` the group
/// sums), found by projected gradient with `L = Σ_i 2w_i·(joint cells per cell of table i's
/// coarsening)` (the operator's rows are disjoint 0/1 indicators, so its largest eigenvalue
/// is the largest row count). The full table measured at σ = 1 makes the loss strongly
/// convex, so the brute force converges; the coarsened tables are drawn from another
/// distribution, so their gradients move the optimum: a fit that ignored the groups (or
/// matched the fine marginal to the coarse target) would sit far above it. Tolerance: the
/// mirror-descent rate bound `2L'·ln 60 / T` with the fit's own `L' = 2 Σ w_i`, which holds
/// for coarsened measurements too (`‖Qv‖₂ ≤ ‖v‖₁`). The reported loss also equals the loss
/// recomputed from the model's marginals.
#[test]
fn coarsened_measurements_fit_the_brute_force_optimum() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let sizes = [3u32, 4, 5];
    let dom = domain(&sizes);
    let joint = truth(&dom, &[vec![0, 1, 2]], 1.5, &mut rng).p;
    // another sharp distribution, its mass where the joint's is not
    let mut other = truth(&dom, &[vec![0, 1, 2]], 4.0, &mut rng).p;
    other.reverse();
    let total = 5000.0;
    // (table, groups or none, drawn from, sigma)
    let spec: Vec<Spec> = vec![
        (vec![0, 1, 2], None, &joint, 1.0),
        (
            vec![2, 1, 0],
            Some(vec![vec![0, 1, 1, 2, 1], vec![0, 0, 1, 0], vec![0, 1, 0]]),
            &other,
            1.5,
        ),
        (
            vec![1, 2],
            Some(vec![vec![1, 0, 0, 1], vec![0, 0, 0, 1, 1]]),
            &other,
            1.0,
        ),
        (vec![2], Some(vec![vec![0, 0, 1, 1, 0]]), &other, 1.2),
        (vec![0, 2], None, &other, 2.0),
    ];
    let meas: Vec<NoisyMarginal> = spec
        .iter()
        .map(|(c, g, p, sigma)| match g {
            Some(maps) => measure_grouped(&dom, p, c, maps, total, *sigma),
            None => measure(&dom, p, c, total, *sigma),
        })
        .collect();
    let univ = universe(&sizes);
    let problem = Projection {
        cells: spec
            .iter()
            .map(|(c, g, _, _)| {
                univ.iter()
                    .map(|x| match g {
                        Some(maps) => group_cell(x, c, maps),
                        None => cell(x, c, &sizes),
                    })
                    .collect()
            })
            .collect(),
        targets: meas
            .iter()
            .map(|m| m.values.iter().map(|y| y / total).collect())
            .collect(),
        weights: spec.iter().map(|s| (1.0 / s.3).powi(2)).collect(),
    };
    let settings = GraphicalModelSettings {
        iterations: 100_000,
        ..Default::default()
    };
    let (model, report) = GraphicalModel::fit(&dom, &meas, total, &settings, None).unwrap();
    let bound = problem.assert_fit_reaches_optimum(&model, &report, &sizes, 20_000);
    // the same tables measured without their groups (fine, noiseless) would be another
    // problem: its optimum is not the fit's
    let fine: Vec<NoisyMarginal> = spec
        .iter()
        .map(|(c, _, p, sigma)| measure(&dom, p, c, total, *sigma))
        .collect();
    let (_, ungrouped) = GraphicalModel::fit(&dom, &fine, total, &settings, None).unwrap();
    assert!(
        (ungrouped.final_loss - report.final_loss).abs() > 10.0 * bound,
        "grouped {} and ungrouped {} fits agree",
        report.final_loss,
        ungrouped.final_loss
    );
}

/// Maximum entropy within groups: fitted to one noiseless coarsened 2-way table alone, the
/// model matches the group sums (within the rate bound) and spreads each group's mass evenly
/// over its cells — the gradient is constant on a group, so the iterates never tell its
/// cells apart — as MST's expansion of a compressed domain does.
#[test]
fn a_coarsened_measurement_alone_spreads_each_group_evenly() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let sizes = [4u32, 5];
    let dom = domain(&sizes);
    let p = truth(&dom, &[vec![0, 1]], 4.0, &mut rng).p;
    let maps = vec![vec![0, 1, 1, 1], vec![2, 0, 2, 1, 2]];
    let total = 1000.0;
    let m = measure_grouped(&dom, &p, &[0, 1], &maps, total, 1.0);
    let settings = GraphicalModelSettings {
        iterations: 20_000,
        ..Default::default()
    };
    let (model, report) =
        GraphicalModel::fit(&dom, std::slice::from_ref(&m), total, &settings, None).unwrap();
    let bound = rate_bound(&[1.0], 20f64.ln(), report.iterations);
    assert!(report.initial_loss > 10.0 * bound);
    let got = model.marginal(&[0, 1]).unwrap();
    let g = m.groups.as_ref().unwrap();
    let coarse = g.coarsen(&got).unwrap();
    let err2: f64 = coarse
        .iter()
        .zip(&m.values)
        .map(|(a, y)| (a - y / total).powi(2))
        .sum();
    assert!(err2 <= bound, "{err2} > {bound}");
    let map = g.cell_map();
    let mut per = vec![0usize; coarse.len()];
    map.iter().for_each(|&c| per[c as usize] += 1);
    for (f, &c) in map.iter().enumerate() {
        let even = coarse[c as usize] / per[c as usize] as f64;
        assert!(
            (got[f] - even).abs() <= 1e-9 * even.max(1e-12),
            "cell {f}: {} against the even share {even}",
            got[f]
        );
    }
}
