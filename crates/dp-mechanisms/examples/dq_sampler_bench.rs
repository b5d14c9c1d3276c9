//! Cost of DualQuery's exact query sampler (issue #9 item 6). Per run: the MW seconds per
//! round as `dual_query` reports them (sampling, update and clause building), the oracle's
//! seconds per round, the mean number of rejection proposals per sample and the largest
//! expected number over the rounds; and, replayed on the run's records, the sampling and
//! update alone — exact ([`ExactQueryWeights`]) and the pre-fix `f64` path (MW update and
//! `s` inverse-CDF draws with [`MultiplicativeWeights`]) for comparison.
//!
//! `cargo run --release -p dp-mechanisms --example dq_sampler_bench -- adult|queries [m…]`
//!
//! * `adult`: the `dq-adult` quick setting (adult one-hot, 2 000 random sensible 3-way
//!   conjunctions, (ε, 10⁻³), ε ∈ {0.25, 1, 5}, η = 2, s = 300, MAX-CSP oracle);
//! * `queries m…`: the seed 003 §7 `dq-queries` setting at the given query counts
//!   (prefixes of one seeded draw of the largest; (1, 10⁻³), η = 1.2, s = 1750).

use std::path::Path;
use std::time::Instant;

use dp_core::{PrivacyLoss, seeded_rng, stream_rng};
use dp_mechanisms::iterative::{
    DualQueryConfig, ExactQueryWeights, FreeAttributes, MaxCspOracle, MultiplicativeWeights,
    dual_query, max_rounds,
};
use dp_queries::{BitColumns, ConjunctionWorkload, Dataset, QueryKind};

type Res<T> = std::result::Result<T, Box<dyn std::error::Error>>;

#[allow(clippy::too_many_arguments)]
fn run(
    label: &str,
    work: &ConjunctionWorkload,
    truth: &[f64],
    n: usize,
    budget: PrivacyLoss,
    eta: f64,
    samples: usize,
    seed: (u64, u64),
) -> Res<()> {
    let rounds = max_rounds(eta, samples, n, &budget, 5000)?;
    let config = DualQueryConfig {
        eta,
        samples,
        rounds,
        free: FreeAttributes::Zero,
    };
    let start = Instant::now();
    let out = dual_query(
        work,
        truth,
        n,
        &config,
        &MaxCspOracle::default(),
        &mut stream_rng(seed.0, seed.1),
    )?;
    let total = start.elapsed().as_secs_f64();
    // Expected proposals per round on the run's history (diagnostic, f64).
    let counts: Vec<u64> = truth
        .iter()
        .map(|&a| (a * n as f64).round() as u64)
        .collect();
    let mut w = ExactQueryWeights::new(counts, n as u64, eta)?;
    let mut worst = 1.0f64;
    for r in &out.records[..rounds - 1] {
        w.observe(work, r)?;
        worst = worst.max(w.sampler()?.expected_proposals());
    }
    // The pre-fix f64 path on the same records: MW gains update + s inverse-CDF draws.
    let k = work.len();
    let mut mw = MultiplicativeWeights::new(2 * k, eta)?;
    let mut gains = vec![0.0f64; 2 * k];
    let mut rng = seeded_rng(1);
    let start = Instant::now();
    for (t, r) in out.records.iter().enumerate() {
        let draws = mw.sample(samples, &mut rng);
        std::hint::black_box(draws);
        if t + 1 < rounds {
            for j in 0..k {
                let a = truth[j] - f64::from(work.evaluate(j, r));
                gains[j] = a;
                gains[k + j] = -a;
            }
            mw.update_gains(&gains)?;
        }
    }
    let old = start.elapsed().as_secs_f64();
    // The exact path alone on the same records: integer update + sampler + s exact draws.
    let counts: Vec<u64> = truth
        .iter()
        .map(|&a| (a * n as f64).round() as u64)
        .collect();
    let mut w = ExactQueryWeights::new(counts, n as u64, eta)?;
    let start = Instant::now();
    for (t, r) in out.records.iter().enumerate() {
        let sampler = w.sampler()?;
        for _ in 0..samples {
            std::hint::black_box(sampler.sample(&mut rng)?);
        }
        drop(sampler);
        if t + 1 < rounds {
            w.observe(work, r)?;
        }
    }
    let exact = start.elapsed().as_secs_f64();
    let per = |x: f64| 1e3 * x / rounds as f64;
    println!(
        "{label} |Q|={} s={samples} T={rounds}: MW incl. clause building {:.2} ms/round; \
         sampling + update alone: exact {:.2} ms/round, f64 path {:.2}; \
         oracle {:.1} ms/round, proposals/sample mean {:.1}, worst round expected {:.1}, total {total:.1} s",
        2 * k,
        per(out.cost.mw_seconds),
        per(exact),
        per(old),
        per(out.cost.oracle_seconds),
        out.cost.proposals as f64 / (rounds * samples) as f64,
        worst,
    );
    Ok(())
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map_or("adult", String::as_str);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/adult");
    let adult = Dataset::load_csv(&root.join("adult.csv"), &root.join("adult-domain.json"))?;
    let bits = BitColumns::from_dataset(&adult)?;
    match which {
        "adult" => {
            let work = ConjunctionWorkload::random_kway(
                adult.domain(),
                QueryKind::Conjunction,
                3,
                2_000,
                &mut seeded_rng(1),
            )?;
            let truth = work.answers(&bits)?;
            for e in [0.25, 1.0, 5.0] {
                run(
                    &format!("dq-adult eps={e}"),
                    &work,
                    &truth,
                    adult.n(),
                    PrivacyLoss::approx(e, 1e-3)?,
                    2.0,
                    300,
                    (7, 0),
                )?;
            }
        }
        "queries" => {
            let ms: Vec<usize> = args[2..]
                .iter()
                .map(|s| s.parse())
                .collect::<std::result::Result<_, _>>()?;
            let max_m = ms.iter().copied().max().unwrap_or(40_000);
            let big = ConjunctionWorkload::random_kway(
                adult.domain(),
                QueryKind::Conjunction,
                3,
                max_m,
                &mut seeded_rng(3),
            )?;
            let big_truth = big.answers(&bits)?;
            for &m in &ms {
                let work = ConjunctionWorkload::new(
                    adult.domain(),
                    QueryKind::Conjunction,
                    (0..m).map(|i| big.query(i).to_vec()).collect(),
                )?;
                run(
                    &format!("dq-queries m={m}"),
                    &work,
                    &big_truth[..m],
                    adult.n(),
                    PrivacyLoss::approx(1.0, 1e-3)?,
                    1.2,
                    1750,
                    (7, 0),
                )?;
            }
        }
        other => return Err(format!("unknown setting {other}").into()),
    }
    Ok(())
}
