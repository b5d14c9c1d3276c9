//! `dpqr eval` (NON-PRIVATE): errors of released answers, or of a synthetic records file on
//! any workload, against the true data — overall and per marginal, beside the trivial
//! baselines (uniform tables, all zeros) and, given the release's report, the error its
//! noise predicts.

use clap::Args;
use dp_bench::io::answers::{read_answers, read_query_answers};
use dp_bench::io::output::read_maybe_compressed;
use dp_bench::io::synthetic::{WeightedRecords, read_for_scoring};
use dp_bench::scoring::{
    MarginalEvaluation, Prediction, TableError, absolute_errors, class_answers,
    uniform_class_answers, weighted_answers,
};
use dp_bench::{BenchError, Result, quoted};
use dp_mechanisms::NoiseDescription;
use dp_queries::{AnyWorkload, Domain, ErrorReport, MarginalWorkload, Workload};
use std::path::{Path, PathBuf};

use crate::data::{DataArgs, WeightedData};

#[derive(Args)]
pub(crate) struct EvalArgs {
    #[command(flatten)]
    pub(crate) data: DataArgs,
    /// Answers CSV written by `dpqr release`.
    #[arg(
        long,
        required_unless_present = "synthetic",
        conflicts_with = "synthetic"
    )]
    pub(crate) answers: Option<PathBuf>,
    /// Score a synthetic records CSV (`dpqr release --synthetic-out`) instead: its weighted
    /// answers to --workload are compared with the data's. A file without a weight column
    /// (`--synthetic-out FILE --rows N`, `dpqr synthetic expand`) is read as plain rows
    /// through the schema, each of weight 1.
    #[arg(long, requires = "workload")]
    pub(crate) synthetic: Option<PathBuf>,
    /// The workload the synthetic records are scored on (with --synthetic): all-Kway |
    /// random-Kway:M | FILE.json (marginals, or any query class). With --answers: the
    /// workload of an answers file of another query class (query,class,description,answer).
    #[arg(long)]
    pub(crate) workload: Option<String>,
    /// Seed of random workloads (random-Kway:M).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub(crate) workload_seed: u64,
    /// Name of the weight column of a weighted --data or --synthetic file, when it is not
    /// the one `dpqr release --synthetic-out` writes (`weight`, or `weight_1`, … if an
    /// attribute is called `weight`; that one is found without this flag).
    #[arg(long)]
    pub(crate) weights_column: Option<String>,
    /// The release's --report JSON: the error its noise predicts is printed beside the
    /// measured one (answer-perturbation mechanisms; the others have no prediction).
    #[arg(long)]
    pub(crate) report: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// One overall metric of an [`ErrorReport`].
type Metric = fn(&ErrorReport) -> f64;

/// The prediction of the report at `path` for `answers` answers: `Ok(None)` when the
/// release has none (no noise description: not an answer-perturbation mechanism).
fn prediction(path: &Path, answers: usize) -> Result<Option<Prediction>> {
    let bytes = read_maybe_compressed(path)?;
    let bad = |why: String| BenchError::ReportFile {
        file: path.display().to_string(),
        why,
    };
    let report: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| bad(format!("not valid JSON ({e})")))?;
    let queries = report
        .get("queries")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| bad("it has no number of queries".into()))?;
    if queries != answers as u64 {
        return Err(BenchError::InputFile {
            file: path.display().to_string(),
            line: None,
            message: format!(
                "describes a release of {queries} answers, but the answers scored are \
                 {answers}: give the report of the same release"
            ),
        });
    }
    let diagnostics = report
        .get("diagnostics")
        .ok_or_else(|| bad("it has no diagnostics".into()))?;
    let noise = match diagnostics.get("noise") {
        None | Some(serde_json::Value::Null) => return Ok(None),
        Some(v) => serde_json::from_value::<NoiseDescription>(v.clone())
            .map_err(|_| bad("its noise description is not one dpqr writes".into()))?,
    };
    let post_processed = diagnostics
        .get("notes")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|notes| {
            notes
                .iter()
                .filter_map(serde_json::Value::as_str)
                .any(|n| n.starts_with("post-processing:"))
        });
    Prediction::new(&noise, answers, post_processed)
        .map(Some)
        .map_err(|e| bad(e.to_string()))
}

/// The `--synthetic` file, read through the `--domain` schema (restricted to
/// `--attributes`) over `domain`, the domain of the data it is scored against; a note on
/// stderr when it holds integer codes (`io::synthetic`, "Reading it back").
fn read_synthetic(args: &EvalArgs, path: &Path, domain: &Domain) -> Result<WeightedRecords> {
    let schema = args.data.spec().public_schema()?;
    if schema.domain() != domain {
        return Err(BenchError::InvalidInput(format!(
            "the schema's attributes ({}) are not those of the data ({})",
            quoted(&schema.domain().names().collect::<Vec<_>>().join(",")),
            quoted(&domain.names().collect::<Vec<_>>().join(","))
        )));
    }
    let (synthetic, note) = read_for_scoring(
        path,
        &schema,
        args.weights_column.as_deref(),
        args.data.attributes.is_some(),
    )?;
    if let Some(note) = note {
        errln!("{note}");
    }
    Ok(synthetic)
}

pub(crate) fn eval(args: &EvalArgs) -> Result<()> {
    let data = args.data.load_for_eval(args.weights_column.as_deref())?;
    let domain = data.records().domain();
    // a workload of another query class than marginals
    if let Some(spec) = &args.workload {
        let workload = AnyWorkload::parse_spec(domain, spec, args.workload_seed)?;
        if workload.as_marginals().is_none() {
            return eval_queries(args, &data, &workload);
        }
        if args.answers.is_some() {
            return Err(BenchError::Usage(
                "--workload with --answers is for answers files of other query classes; a \
                 marginal answers file names its tables itself: drop --workload"
                    .into(),
            ));
        }
    }
    let (workload, answers, what) = match (&args.answers, &args.synthetic, &args.workload) {
        (Some(path), None, _) => {
            let (workload, answers) = read_answers(path, domain)?;
            (workload, answers, "released")
        }
        (None, Some(path), Some(spec)) => {
            let workload = MarginalWorkload::parse_spec(domain, spec, args.workload_seed)?;
            let synthetic = read_synthetic(args, path, domain)?;
            let answers = weighted_answers(&workload, &synthetic.records, &synthetic.weights)?;
            (workload, answers, "synthetic")
        }
        _ => {
            return Err(BenchError::Usage(
                "give --answers FILE, or --synthetic FILE with --workload".into(),
            ));
        }
    };
    let truth = match &data {
        WeightedData::Plain(d) => workload.answers(d)?,
        WeightedData::Weighted(w) => weighted_answers(&workload, &w.records, &w.weights)?,
    };
    let evaluation = MarginalEvaluation::new(&workload, &answers, &truth, what)?;
    let (scored, uniform, zeros) = (&evaluation.scored, &evaluation.uniform, &evaluation.zeros);
    let predicted = match &args.report {
        Some(path) => Some(prediction(path, answers.len())?),
        None => None,
    };
    errln!(
        "WARNING: NON-PRIVATE EVALUATION. These error figures are computed from the true data \
         and are not differentially private; use them for benchmarking only, never publish them \
         as part of a release."
    );
    if args.json {
        let mut report = evaluation.to_json();
        if let (Some(obj), Some(p)) = (report.as_object_mut(), &predicted) {
            let value = match p {
                Some(p) => {
                    let mut v = serde_json::to_value(p).map_err(|source| BenchError::Encode {
                        what: "report",
                        source,
                    })?;
                    if let Some(o) = v.as_object_mut() {
                        o.insert("within".into(), p.contains(scored.overall.mean_abs).into());
                    }
                    v
                }
                None => serde_json::Value::Null,
            };
            obj.insert("prediction".into(), value);
        }
        let text = serde_json::to_string(&report).map_err(|source| BenchError::Encode {
            what: "report",
            source,
        })?;
        outln!("{text}");
        return Ok(());
    }
    outln!(
        "marginals: {}  queries: {}  (scored: {what} answers)",
        workload.len(),
        workload.num_queries()
    );
    outln!(
        "{:<20} {:>12} {:>12} {:>12}",
        "",
        what,
        "uniform",
        "all-zeros"
    );
    let rows: [(&str, Metric); 4] = [
        ("max_abs_error:", |r| r.max_abs),
        ("mean_abs_error:", |r| r.mean_abs),
        ("rmse:", |r| r.rmse),
        ("mean_marginal_l1:", |r| r.mean_marginal_l1),
    ];
    for (label, get) in rows {
        outln!(
            "{label:<20} {:>12.4e} {:>12.4e} {:>12.4e}",
            get(&scored.overall),
            get(&uniform.overall),
            get(&zeros.overall)
        );
    }
    outln!("per marginal (ℓ1 distance between tables | largest cell error):");
    let labels: Vec<String> = scored
        .per_marginal
        .iter()
        .map(|t| t.attributes.join(" × "))
        .collect();
    let width = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(8);
    outln!(
        "  {:<width$} {:>21} {:>21} {:>21}",
        "marginal",
        format!("{what} ℓ1 | max"),
        "uniform ℓ1 | max",
        "all-zeros ℓ1 | max"
    );
    for (j, label) in labels.iter().enumerate() {
        let cell = |t: &TableError| format!("{:.3e} | {:.3e}", t.l1, t.max_abs);
        outln!(
            "  {label:<width$} {:>21} {:>21} {:>21}",
            cell(&scored.per_marginal[j]),
            cell(&uniform.per_marginal[j]),
            cell(&zeros.per_marginal[j])
        );
    }
    match predicted {
        None => {}
        Some(None) => outln!(
            "prediction: no prediction for this mechanism (its report describes no noise added \
             to the answers)"
        ),
        Some(Some(p)) => {
            outln!(
                "prediction: noise of standard deviation σ = {:.4e} per answer; {} = {:.4e}, \
                 expected rmse ≈ σ",
                p.answer_std,
                p.formula,
                p.expected_mean_abs
            );
            outln!(
                "prediction: the mean abs error should lie in [{:.4e}, {:.4e}] (expectation ± 3 \
                 standard deviations of the mean of {} independent errors); measured {:.4e}: {}",
                p.mean_abs_low,
                p.mean_abs_high,
                workload.num_queries(),
                scored.overall.mean_abs,
                if p.contains(scored.overall.mean_abs) {
                    "within"
                } else {
                    "OUTSIDE the interval"
                }
            );
            for note in &p.notes {
                outln!("prediction note: {note}");
            }
        }
    }
    Ok(())
}

/// `dpqr eval` for a workload of another class than marginals (conjunctions, disjunctions,
/// parities, linear): overall errors beside the all-zeros baseline and the uniform
/// distribution over the attributes the workload touches (when they have at most 2^20
/// combinations); no per-marginal table.
fn eval_queries(args: &EvalArgs, data: &WeightedData, workload: &AnyWorkload) -> Result<()> {
    let (answers, what) = match (&args.answers, &args.synthetic) {
        (Some(path), None) => (read_query_answers(path, workload)?, "released"),
        (None, Some(path)) => {
            let synthetic = read_synthetic(args, path, workload.domain())?;
            (
                class_answers(workload, &synthetic.records, Some(&synthetic.weights))?,
                "synthetic",
            )
        }
        _ => {
            return Err(BenchError::Usage(
                "give --answers FILE, or --synthetic FILE with --workload".into(),
            ));
        }
    };
    let truth = match data {
        WeightedData::Plain(d) => class_answers(workload, d, None)?,
        WeightedData::Weighted(w) => class_answers(workload, &w.records, Some(&w.weights))?,
    };
    let scored = absolute_errors(&answers, &truth)?;
    let zeros = absolute_errors(&vec![0.0; truth.len()], &truth)?;
    let uniform = match uniform_class_answers(workload) {
        Some(u) => Some(absolute_errors(&u, &truth)?),
        None => None,
    };
    let predicted = match &args.report {
        Some(path) => Some(prediction(path, answers.len())?),
        None => None,
    };
    errln!(
        "WARNING: NON-PRIVATE EVALUATION. These error figures are computed from the true data \
         and are not differentially private; use them for benchmarking only, never publish them \
         as part of a release."
    );
    let names = ["max_abs", "mean_abs", "rmse"];
    if args.json {
        let obj =
            |e: [f64; 3]| serde_json::json!({ names[0]: e[0], names[1]: e[1], names[2]: e[2] });
        let mut report = serde_json::json!({
            "class": workload.class().key(),
            "queries": workload.num_queries(),
            "scored": what,
            "max_abs": scored[0],
            "mean_abs": scored[1],
            "rmse": scored[2],
            "baselines": {
                "uniform": uniform.map(obj),
                "all_zeros": obj(zeros),
            },
        });
        if let (Some(o), Some(p)) = (report.as_object_mut(), &predicted) {
            o.insert(
                "prediction".into(),
                match p {
                    Some(p) => serde_json::json!({
                        "answer_std": p.answer_std,
                        "expected_mean_abs": p.expected_mean_abs,
                        "mean_abs_low": p.mean_abs_low,
                        "mean_abs_high": p.mean_abs_high,
                        "within": p.contains(scored[1]),
                    }),
                    None => serde_json::Value::Null,
                },
            );
        }
        let text = serde_json::to_string(&report).map_err(|source| BenchError::Encode {
            what: "report",
            source,
        })?;
        outln!("{text}");
        return Ok(());
    }
    outln!(
        "{} queries of class {}  (scored: {what} answers)",
        workload.num_queries(),
        workload.class()
    );
    outln!(
        "{:<16} {:>12} {:>12} {:>12}",
        "",
        what,
        "uniform",
        "all-zeros"
    );
    for (i, name) in names.iter().enumerate() {
        let u = uniform.map_or("not computed".to_string(), |u| format!("{:.4e}", u[i]));
        outln!(
            "{:<16} {:>12.4e} {:>12} {:>12.4e}",
            format!("{name}_error:"),
            scored[i],
            u,
            zeros[i]
        );
    }
    if uniform.is_none() {
        outln!("uniform: not computed (the touched attributes have more than 2^20 combinations)");
    }
    match predicted {
        None => {}
        Some(None) => outln!("prediction: no prediction for this mechanism"),
        Some(Some(p)) => outln!(
            "prediction: σ = {:.4e} per answer; the mean abs error should lie in [{:.4e}, \
             {:.4e}]; measured {:.4e}: {}",
            p.answer_std,
            p.mean_abs_low,
            p.mean_abs_high,
            scored[1],
            if p.contains(scored[1]) {
                "within"
            } else {
                "OUTSIDE the interval"
            }
        ),
    }
    Ok(())
}
