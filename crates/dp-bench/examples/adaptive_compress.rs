//! Experiment: `adaptive-projection` on a *compressed* domain against the default, same seed.
//!
//! Each touched attribute's values whose noisy 1-way count falls below `THETA·σ₁` are merged
//! into one value (MST's domain compression, McKenna–Miklau–Sheldon 2021 §3); the release
//! runs on the compressed table and workload, and each fine cell gets its coarse cell's value
//! times its values' shares of their merged groups (from the same noisy 1-way counts).
//! `σ₁ = √(16d / (2·0.9·ρ))` (AIM's 1-way noise) and the compressed run gets ρ less the fine
//! 1-ways' charge `d/(2σ₁²)`, so it spends no more than the default.
//!
//! `DATASET=… adaptive_compress WORKLOAD EPSILON SEED`; env `THETA` (default 3), `CAP=c` (merge
//! the smallest rare values only while their noisy mass stays at most `c·σ₁`), `DS=β` (both
//! runs' direct share), `NODEF=1` (skip the default run). Measured in
//! docs/mechanisms/adaptive.md, "Domain compression".
use dp_bench::experiments::real::ExampleInputs;
use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::adaptive::AdaptiveProjectionParams;
use dp_queries::{Dataset, Domain, Marginal, MarginalWorkload};
use rand::RngExt;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let inputs = ExampleInputs::from_command_line()?;
    let (data, w, eps, seed) = (inputs.data, inputs.workload, inputs.epsilon, inputs.seed);
    let theta: f64 = std::env::var("THETA")
        .ok()
        .map(|v| v.parse().unwrap())
        .unwrap_or(3.0);
    let cap: f64 = std::env::var("CAP")
        .ok()
        .map(|v| v.parse().unwrap())
        .unwrap_or(f64::INFINITY);
    let skip_default = std::env::var("NODEF").is_ok();
    let truth = w.answers(&data).unwrap();
    let rho = dp_core::conversions::rho_for_epsilon_delta(eps, 1e-9).unwrap();
    let touched = w.touched_attributes();
    let d = touched.len() as f64;
    let sigma1 = (16.0 * d / (2.0 * 0.9 * rho)).sqrt();
    let mut nrng = dp_core::seeded_rng(seed ^ 0x5eed_c0de);
    let mut normal = || {
        let u: f64 = nrng.random::<f64>().max(1e-300);
        let v: f64 = nrng.random::<f64>();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    let dom = data.domain();
    // per attribute: fine value → coarse value, and each fine value's share of its group
    let mut maps: Vec<Vec<u32>> = vec![];
    let mut shares: Vec<Vec<f64>> = vec![];
    let mut sizes = vec![];
    let mut merged_total = 0usize;
    let mut merged_mass = 0.0;
    for a in 0..dom.len() {
        let s = dom.size(a) as usize;
        if !touched.contains(&a) {
            maps.push((0..s as u32).collect());
            shares.push(vec![1.0; s]);
            sizes.push(s as u32);
            continue;
        }
        let mut counts = vec![0f64; s];
        for &v in data.column(a) {
            counts[v as usize] += 1.0;
        }
        let noisy: Vec<f64> = counts.iter().map(|c| c + sigma1 * normal()).collect();
        let mut rare: Vec<usize> = (0..s).filter(|&v| noisy[v] < theta * sigma1).collect();
        // `CAP=c`: merge the rare values smallest first only while their noisy mass stays
        // at most c·σ₁
        rare.sort_by(|&x, &y| noisy[x].total_cmp(&noisy[y]));
        let mut mass = 0.0;
        rare.retain(|&v| {
            mass += noisy[v].max(0.0);
            mass <= cap * sigma1
        });
        let mass: f64 = rare.iter().map(|&v| noisy[v].max(0.0)).sum();
        if rare.len() <= 1 {
            maps.push((0..s as u32).collect());
            shares.push(vec![1.0; s]);
            sizes.push(s as u32);
            continue;
        }
        merged_total += rare.len();
        let mut map = vec![0u32; s];
        let mut k = 0u32;
        for (v, slot) in map.iter_mut().enumerate() {
            if !rare.contains(&v) {
                *slot = k;
                k += 1;
            }
        }
        for &v in &rare {
            map[v] = k;
        }
        let mut share = vec![1.0; s];
        let tot: f64 = rare.iter().map(|&v| noisy[v].max(0.0)).sum();
        for &v in &rare {
            share[v] = if tot > 0.0 {
                noisy[v].max(0.0) / tot
            } else {
                1.0 / rare.len() as f64
            };
        }
        eprintln!(
            "attr {} ({}): {} values -> {} ({} merged, noisy mass {:.0} = {:.4} of n)",
            a,
            dom.name(a),
            s,
            k + 1,
            rare.len(),
            mass,
            mass / data.n() as f64
        );
        merged_mass += mass;
        maps.push(map);
        shares.push(share);
        sizes.push(k + 1);
    }
    let cdom = Domain::new(
        (0..dom.len())
            .map(|a| (dom.name(a).to_string(), sizes[a]))
            .collect(),
    )
    .unwrap();
    let cols: Vec<Vec<u32>> = (0..dom.len())
        .map(|a| {
            data.column(a)
                .iter()
                .map(|&v| maps[a][v as usize])
                .collect()
        })
        .collect();
    let cdata = Dataset::from_columns(cdom.clone(), cols).unwrap();
    let cw = MarginalWorkload::new(
        &cdom,
        w.marginals()
            .iter()
            .map(|m| Marginal::new(&cdom, m.attrs().to_vec()).unwrap())
            .collect(),
    )
    .unwrap();
    let rho_c = rho - d / (2.0 * sigma1 * sigma1);
    // `DS=β` sets the direct share of both runs (0: AIM's rule, no direct phase)
    let ds: Option<f64> = std::env::var("DS").ok().map(|v| v.parse().unwrap());
    let mech = |budget: PrivacyLoss| {
        let mut p = AdaptiveProjectionParams::new(budget).neighbouring(Neighbouring::AddRemove);
        if let Some(b) = ds {
            let tau = p.direct_noise_l1;
            p = p.direct(b, tau);
        }
        p.check().unwrap()
    };
    let t = std::time::Instant::now();
    let run = mech(PrivacyLoss::zcdp(rho_c).unwrap())
        .run(&cdata, &cw, &mut dp_core::seeded_rng(seed))
        .unwrap();
    let csecs = t.elapsed().as_secs_f64();
    // expand
    let mut ans = vec![0f64; truth.len()];
    for j in 0..w.len() {
        let m = &w.marginals()[j];
        let cm = &cw.marginals()[j];
        let (fo, co) = (w.offset(j), cw.offset(j));
        for c in 0..m.num_cells() {
            let codes = m.cell_codes(c);
            let mut f = 1.0;
            let cc: Vec<u32> = codes
                .iter()
                .zip(m.attrs())
                .map(|(&v, &a)| {
                    f *= shares[a][v as usize];
                    maps[a][v as usize]
                })
                .collect();
            ans[fo + c] = run.release.answers[co + cm.cell_index(&cc)] * f;
        }
    }
    let score = |a: &[f64]| -> (f64, f64) {
        let (mut s, mut mx) = (0.0, 0.0f64);
        for j in 0..w.len() {
            for i in w.offset(j)..w.offset(j + 1) {
                let e = (a[i] - truth[i]).abs();
                s += e;
                mx = mx.max(e);
            }
        }
        (s / w.len() as f64, mx)
    };
    let (l1, mx) = score(&ans);
    println!(
        "compressed theta {theta} cap {cap} merged {merged_total} mass/n {:.4}: avgL1 {l1:.5} max {mx:.5} rounds {} secs {csecs:.1}",
        merged_mass / data.n() as f64,
        run.rounds.len()
    );
    if !skip_default {
        let t = std::time::Instant::now();
        let run = mech(PrivacyLoss::approx(eps, 1e-9).unwrap())
            .run(&data, &w, &mut dp_core::seeded_rng(seed))
            .unwrap();
        let secs = t.elapsed().as_secs_f64();
        let (l1, mx) = score(&run.release.answers);
        println!(
            "default: avgL1 {l1:.5} max {mx:.5} rounds {} secs {secs:.1}",
            run.rounds.len()
        );
    }
    Ok(())
}
