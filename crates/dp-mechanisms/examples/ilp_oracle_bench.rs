//! Compares DualQuery's best-response oracles (MAX-CSP heuristic + branch and bound vs the
//! LP-based [`IlpOracle`]) on two settings of the iterative bench, reporting per-round
//! oracle time and how many rounds each proves optimal:
//!
//! * `adult`: the `dq-adult` quick setting (adult one-hot, 2 000 random sensible 3-way
//!   conjunctions, (ε, 10⁻³) with ε ∈ {0.25, 1, 5}, η = 2, s = 300, free attributes 0);
//! * `fig5`: the seed 003 Fig. 5 setting (7-attribute adult subset, all 3-way marginals,
//!   pure ε ∈ {1, …, 5} with s = 35 … 55, η = 0.4, T from Thm 4.2).
//!
//! `cargo run --release -p dp-mechanisms --example ilp_oracle_bench -- [adult|fig5]
//! [maxcsp,ilp,ilp-cold,exhaustive] [ilp node limit] [compare|run] [adult repeats]`
//!
//! Each listed oracle drives its own DualQuery run. With `compare`, one run is driven by
//! the first oracle and every listed oracle solves each round's problem: per oracle, the
//! rounds where its value is below the best value found by any of them (and, with
//! `exhaustive` listed, the rounds it claims optimal with a value below the exact one,
//! which must be 0).

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use dp_core::{PrivacyLoss, seeded_rng, stream_rng};
use dp_mechanisms::iterative::{
    BestResponse, BestResponseOracle, BestResponseProblem, DualQueryConfig, ExhaustiveOracle,
    FreeAttributes, IlpOracle, MaxCspOracle, dual_query, max_rounds,
};
use dp_queries::{BitColumns, ConjunctionWorkload, Dataset, MarginalWorkload, QueryKind};

type Res<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Per oracle: seconds, proven rounds, rounds below the best value, false "proven" claims.
#[derive(Clone, Copy, Default, Debug)]
struct Stats {
    seconds: f64,
    proven: usize,
    below_best: usize,
    false_claims: usize,
    rounds: usize,
}

/// Solves every problem with all `oracles`, returns the first one's answer.
struct Compare<'a> {
    oracles: &'a [(&'a str, Box<dyn BestResponseOracle>)],
    stats: Mutex<Vec<Stats>>,
}

impl BestResponseOracle for Compare<'_> {
    fn name(&self) -> &'static str {
        "compare"
    }
    fn solve(
        &self,
        problem: &BestResponseProblem,
        seed: u64,
    ) -> dp_mechanisms::Result<BestResponse> {
        let mut answers = Vec::new();
        let mut secs = Vec::new();
        for (_, o) in self.oracles {
            let t = Instant::now();
            answers.push(o.solve(problem, seed)?);
            secs.push(t.elapsed().as_secs_f64());
        }
        let best = answers.iter().map(|a| a.value).max().unwrap_or(0);
        let exact = self
            .oracles
            .iter()
            .zip(&answers)
            .find(|((n, _), _)| *n == "exhaustive")
            .map(|(_, a)| a.value);
        if let Ok(mut st) = self.stats.lock() {
            for (i, a) in answers.iter().enumerate() {
                let s = &mut st[i];
                s.seconds += secs[i];
                s.rounds += 1;
                s.proven += usize::from(a.provably_optimal);
                s.below_best += usize::from(a.value < best);
                s.false_claims +=
                    usize::from(a.provably_optimal && exact.is_some_and(|e| a.value < e));
            }
        }
        answers
            .into_iter()
            .next()
            .ok_or_else(|| dp_mechanisms::MechanismError::Data {
                reason: "no oracle".into(),
            })
    }
}

fn errors(truth: &[f64], got: &[f64]) -> (f64, f64) {
    let mut max = 0.0f64;
    let mut sum = 0.0;
    for (a, b) in truth.iter().zip(got) {
        max = max.max((a - b).abs());
        sum += (a - b).abs();
    }
    (sum / truth.len().max(1) as f64, max)
}

#[allow(clippy::too_many_arguments)]
fn run(
    label: &str,
    work: &ConjunctionWorkload,
    truth: &[f64],
    n: usize,
    budget: PrivacyLoss,
    eta: f64,
    samples: usize,
    free: FreeAttributes,
    cap: usize,
    rng_seed: (u64, u64),
    oracles: &[(&str, Box<dyn BestResponseOracle>)],
    compare: bool,
) -> Res<()> {
    let rounds = max_rounds(eta, samples, n, &budget, cap)?;
    let config = DualQueryConfig {
        eta,
        samples,
        rounds,
        free,
    };
    if compare {
        let cmp = Compare {
            oracles,
            stats: Mutex::new(vec![Stats::default(); oracles.len()]),
        };
        dual_query(
            work,
            truth,
            n,
            &config,
            &cmp,
            &mut stream_rng(rng_seed.0, rng_seed.1),
        )?;
        let st = cmp.stats.lock().map_err(|_| "poisoned")?.clone();
        for ((name, _), s) in oracles.iter().zip(st) {
            println!(
                "{label} s={samples} T={rounds} {name:>10} (same problems): {:8.2} ms/round, \
                 proven {:>4}/{}, below best {:>4}, false claims {}",
                1e3 * s.seconds / s.rounds.max(1) as f64,
                s.proven,
                s.rounds,
                s.below_best,
                s.false_claims
            );
        }
        return Ok(());
    }
    for (name, oracle) in oracles {
        let start = Instant::now();
        let out = dual_query(
            work,
            truth,
            n,
            &config,
            oracle.as_ref(),
            &mut stream_rng(rng_seed.0, rng_seed.1),
        )?;
        let secs = start.elapsed().as_secs_f64();
        let synth = work.answers_of_records(&out.records, &vec![1.0; out.records.len()])?;
        let (mean, max) = errors(truth, &synth);
        println!(
            "{label} s={samples} T={rounds} {name:>10}: oracle {:8.2} ms/round, proven {:>4}/{rounds}, \
             mean err {mean:.4}, max err {max:.3}, total {secs:.1} s",
            1e3 * out.cost.oracle_seconds / rounds as f64,
            out.provably_optimal_rounds,
        );
    }
    Ok(())
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map_or("adult", String::as_str);
    let names = args.get(2).map_or("maxcsp,ilp", String::as_str);
    let limit: u64 = args.get(3).map_or(Ok(2_000), |s| s.parse())?;
    let compare = args.get(4).is_some_and(|s| s == "compare");
    let repeats: u64 = args.get(5).map_or(Ok(1), |s| s.parse())?;
    let mut oracles: Vec<(&str, Box<dyn BestResponseOracle>)> = Vec::new();
    for name in names.split(',') {
        let o: Box<dyn BestResponseOracle> = match name {
            "maxcsp" => Box::new(MaxCspOracle::default()),
            "ilp" => Box::new(IlpOracle {
                node_limit: limit,
                ..IlpOracle::default()
            }),
            "ilp-cold" => Box::new(IlpOracle {
                node_limit: limit,
                warm_start: false,
                ..IlpOracle::default()
            }),
            "exhaustive" => Box::new(ExhaustiveOracle::default()),
            other => return Err(format!("unknown oracle {other}").into()),
        };
        oracles.push((name, o));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/adult");
    let adult = Dataset::load_csv(&root.join("adult.csv"), &root.join("adult-domain.json"))?;
    match which {
        "adult" => {
            let bits = BitColumns::from_dataset(&adult)?;
            let work = ConjunctionWorkload::random_kway(
                adult.domain(),
                QueryKind::Conjunction,
                3,
                2_000,
                &mut seeded_rng(1),
            )?;
            let truth = work.answers(&bits)?;
            for (e, rep) in [0.25, 1.0, 5.0]
                .into_iter()
                .flat_map(|e| (0..repeats).map(move |r| (e, r)))
            {
                run(
                    &format!("dq-adult eps={e} rep={rep}"),
                    &work,
                    &truth,
                    adult.n(),
                    PrivacyLoss::approx(e, 1e-3)?,
                    2.0,
                    300,
                    FreeAttributes::Zero,
                    5000,
                    (7, rep),
                    &oracles,
                    compare,
                )?;
            }
        }
        "fig5" => {
            let subset = adult.select_attributes(&[
                "workclass",
                "education-num",
                "marital-status",
                "relationship",
                "race",
                "sex",
                "income>50K",
            ])?;
            let workload = MarginalWorkload::all_kway(subset.domain(), 3)?;
            let truth = workload.answers(&subset)?;
            let queries = ConjunctionWorkload::from_marginals(&workload)?;
            for (i, e) in [1.0f64, 2.0, 3.0, 4.0, 5.0].into_iter().enumerate() {
                run(
                    &format!("fig5 eps={e}"),
                    &queries,
                    &truth,
                    subset.n(),
                    PrivacyLoss::pure(e)?,
                    0.4,
                    [35, 40, 45, 50, 55][i],
                    FreeAttributes::Random,
                    2000,
                    (11, i as u64),
                    &oracles,
                    compare,
                )?;
            }
        }
        other => return Err(format!("unknown setting {other} (adult | fig5)").into()),
    }
    Ok(())
}
