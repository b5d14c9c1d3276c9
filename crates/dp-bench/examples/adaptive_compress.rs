//! Experiment: `adaptive-projection` on a *compressed* domain against the default, same seed.
//!
//! Each touched attribute's values whose noisy 1-way count falls below `THETA·σ₁` are merged
//! into one value (MST's domain compression, McKenna–Miklau–Sheldon 2021 §3); the release
//! runs on the compressed table and workload, and each fine cell gets its coarse cell's value
//! times its values' shares of their merged groups (from the same noisy 1-way counts).
//! σ₁ is the default release's 1-way noise (its noise schedule: AIM's `T = 16d`) and the
//! compressed run gets ρ less the fine 1-ways' charge, so it spends no more than the default.
//!
//! `DATASET=… adaptive_compress WORKLOAD EPSILON SEED`; env `THETA` (default 3), `CAP=c` (merge
//! the smallest rare values only while their noisy mass stays at most `c·σ₁`), `DS=β` (both
//! runs' direct share), `NODEF=1` (skip the default run). Measured in
//! docs/mechanisms/adaptive.md, "Domain compression".
use dp_bench::experiments::real::ExampleInputs;
use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::adaptive::AdaptiveProjectionParams;
use dp_queries::{Dataset, Domain, ErrorReport, Marginal, MarginalWorkload};

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
    let default = mech(PrivacyLoss::approx(eps, 1e-9)?);
    // the default's 1-ways: their noise and what they charge
    let schedule = default.schedule(&w)?;
    let sigma1 = schedule.one_way.sigma();
    let one_ways_rho = schedule.attributes as f64 * schedule.one_way.measure_rho;
    let noise = dp_core::Gaussian::new(sigma1)?;
    let mut nrng = dp_core::seeded_rng(seed ^ 0x5eed_c0de);
    let touched = w.touched_attributes();
    let dom = data.domain();
    // per attribute: fine value → coarse value, and each fine value's share of its group
    let mut maps: Vec<Vec<u32>> = vec![];
    let mut shares: Vec<Vec<f64>> = vec![];
    let mut sizes = vec![];
    let mut merged_total = 0usize;
    let mut merged_mass = 0.0;
    for a in 0..dom.len() {
        let s = dom.size(a) as usize;
        // the values to merge (none for an attribute the workload does not touch)
        let (mut rare, mut noisy) = (vec![], vec![]);
        if touched.contains(&a) {
            let mut counts = vec![0f64; s];
            for &v in data.column(a) {
                counts[v as usize] += 1.0;
            }
            noisy = counts.iter().map(|c| c + noise.sample(&mut nrng)).collect();
            rare = (0..s).filter(|&v| noisy[v] < theta * sigma1).collect();
            // `CAP=c`: merge the rare values smallest first only while their noisy mass
            // stays at most c·σ₁
            rare.sort_by(|&x, &y| noisy[x].total_cmp(&noisy[y]));
            let mut mass = 0.0;
            rare.retain(|&v| {
                mass += noisy[v].max(0.0);
                mass <= cap * sigma1
            });
        }
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
        let mass: f64 = rare.iter().map(|&v| noisy[v].max(0.0)).sum();
        let mut share = vec![1.0; s];
        for &v in &rare {
            share[v] = if mass > 0.0 {
                noisy[v].max(0.0) / mass
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
    let rho_c = default.rho() - one_ways_rho;
    let t = std::time::Instant::now();
    let run = mech(PrivacyLoss::zcdp(rho_c)?)
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
    let score = |a: &[f64]| -> Result<(f64, f64), dp_queries::QueryError> {
        let e = ErrorReport::compute(&w, a, &truth)?;
        Ok((e.mean_marginal_l1, e.max_abs))
    };
    let (l1, mx) = score(&ans)?;
    println!(
        "compressed theta {theta} cap {cap} merged {merged_total} mass/n {:.4}: avgL1 {l1:.5} max {mx:.5} rounds {} secs {csecs:.1}",
        merged_mass / data.n() as f64,
        run.rounds.len()
    );
    if !skip_default {
        let t = std::time::Instant::now();
        let run = default.run(&data, &w, &mut dp_core::seeded_rng(seed))?;
        let secs = t.elapsed().as_secs_f64();
        let (l1, mx) = score(&run.release.answers)?;
        println!(
            "default: avgL1 {l1:.5} max {mx:.5} rounds {} secs {secs:.1}",
            run.rounds.len()
        );
    }
    Ok(())
}
