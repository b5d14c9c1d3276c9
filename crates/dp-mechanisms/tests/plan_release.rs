//! Issue #25 item 1: the mechanisms that read the data through a counting plan — tables
//! other than the workload's — state it from public inputs, every source counts it, and the
//! release from its counts is the release from the records, draw for draw.
//!
//! For each such mechanism (coarse projection and chaining, alone, run over the attributes
//! the workload touches, and chosen at run time; the polynomial release on marginals,
//! conjunctions, disjunctions and thresholds, under both of its noises):
//! - the plan's tables counted by brute force over the records (cell index by hand, the
//!   last attribute fastest) equal what a source counts — the in-memory count
//!   ([`CountingPlan::count_records`]) and a streaming pass over the records as CSV in small
//!   batches;
//! - `release_planned` from those counts equals `release` on the records with the same seed
//!   (answers, synthetic records, notes, diagnostics), bit for bit;
//! - counts that are not the plan's tables of one dataset are refused before any draw.

use dp_core::{PrivacyLoss, seeded_rng};
use dp_mechanisms::polynomial::PolynomialParams;
use dp_mechanisms::{
    ChainingParams, CoarseProjectionParams, CountingPlan, DataAccess, ForQueryClasses, Mechanism,
    OnWorkloadAttributes, Release,
};
use dp_queries::{
    AnyWorkload, ConjunctionWorkload, Dataset, Domain, Literal, Marginal, MarginalWorkload,
    QueryKind, ReadOptions, Schema, StreamSettings, ThresholdQuery, ThresholdWorkload, Universe,
    Workload,
};

/// `sizes.len()` attributes of the given sizes; `n` rows with some dependence between
/// columns.
fn data_over(sizes: &[u32], n: usize) -> Dataset {
    let domain = Domain::new(
        sizes
            .iter()
            .enumerate()
            .map(|(j, &s)| (format!("a{j}"), s))
            .collect(),
    )
    .unwrap();
    let cols = (0..sizes.len())
        .map(|j| {
            (0..n)
                .map(|i| ((i * (j + 3) + i / 3 + (i % 7) * j) % domain.size(j) as usize) as u32)
                .collect()
        })
        .collect();
    Dataset::from_columns(domain, cols).unwrap()
}

/// Tables in unsorted attribute order over `attrs` of `domain` (at least three).
fn workload(domain: &Domain, attrs: &[usize]) -> MarginalWorkload {
    let lists = [
        vec![attrs[2], attrs[0]],
        vec![attrs[1]],
        vec![attrs[1], attrs[2]],
    ];
    let tables = lists
        .iter()
        .map(|l| Marginal::new(domain, l.clone()).unwrap())
        .collect();
    MarginalWorkload::new(domain, tables).unwrap()
}

fn zcdp(rho: f64) -> PrivacyLoss {
    PrivacyLoss::zcdp(rho).unwrap()
}

/// The plan's tables counted by brute force: for every table and record, the cell
/// `Σ_i code_i · Π_{j>i} size_j` over the table's attributes in its order.
fn brute_force(plan: &CountingPlan, data: &Dataset) -> Vec<i64> {
    let mut out = Vec::new();
    for m in plan.tables().marginals() {
        let mut table = vec![0i64; m.num_cells()];
        for r in 0..data.n() {
            let cell = m.attrs().iter().fold(0usize, |cell, &a| {
                cell * data.domain().size(a) as usize + data.column(a)[r] as usize
            });
            table[cell] += 1;
        }
        out.extend(table);
    }
    out
}

/// The plan's tables counted by one streaming pass over the records as CSV, in batches of
/// 7 records: what `dpqr release --stream` counts.
fn streamed(plan: &CountingPlan, data: &Dataset) -> (Vec<i64>, u64) {
    let mut csv = Vec::new();
    data.write_csv(&mut csv).unwrap();
    let settings = StreamSettings {
        batch_rows: 7,
        ..StreamSettings::default()
    };
    let counted = dp_queries::count_csv_streaming(
        csv.as_slice(),
        "records.csv",
        &Schema::codes(data.domain().clone()),
        &ReadOptions::default(),
        plan.tables(),
        &settings,
    )
    .unwrap();
    (counted.counts, counted.rows)
}

/// Two releases are the same: answers, synthetic records and weights, diagnostics.
fn assert_same(a: &Release, b: &Release, what: &str) {
    assert_eq!(a.answers, b.answers, "{what}: answers");
    assert_eq!(a.diagnostics.notes, b.diagnostics.notes, "{what}: notes");
    assert_eq!(a.diagnostics.iterations, b.diagnostics.iterations, "{what}");
    assert_eq!(
        a.diagnostics.oracle_calls, b.diagnostics.oracle_calls,
        "{what}"
    );
    assert_eq!(
        a.diagnostics.frank_wolfe_gap, b.diagnostics.frank_wolfe_gap,
        "{what}"
    );
    assert_eq!(a.diagnostics.noise, b.diagnostics.noise, "{what}: noise");
    assert_eq!(a.certificate, b.certificate, "{what}: certificate");
    match (&a.synthetic, &b.synthetic) {
        (None, None) => {}
        (Some(sa), Some(sb)) => {
            assert_eq!(sa.records, sb.records, "{what}: synthetic records");
            assert_eq!(sa.weights, sb.weights, "{what}: synthetic weights");
        }
        _ => panic!("{what}: synthetic records on one side only"),
    }
}

/// The plan of `mech` for `w` is counted alike by brute force, in memory and streamed; the
/// release from those counts is the release from `d` (two seeds); counts of no dataset are
/// refused. Returns the plan.
fn planned_is_from_records<W: Workload>(
    mech: &dyn Mechanism<W>,
    d: &Dataset,
    w: &W,
    what: &str,
) -> CountingPlan {
    assert!(!mech.counts_suffice(), "{what}: needs more than the counts");
    let access = DataAccess::of(mech, w).unwrap();
    let DataAccess::Plan(plan) = access else {
        panic!("{what}: no counting plan ({access:?})");
    };
    assert!(plan.needs_n(), "{what}");
    let by_hand = brute_force(&plan, d);
    let in_memory: Vec<i64> = plan
        .count_records(d)
        .unwrap()
        .into_iter()
        .map(|c| c as i64)
        .collect();
    let (stream, rows) = streamed(&plan, d);
    assert_eq!(by_hand, in_memory, "{what}: brute force vs in memory");
    assert_eq!(by_hand, stream, "{what}: brute force vs streamed");
    assert_eq!(rows, d.n() as u64, "{what}: rows");
    for seed in [3, 11] {
        let a = mech.release(d, w, &mut seeded_rng(seed)).unwrap();
        let b = mech
            .release_planned(stream.clone(), d.n(), w, &mut seeded_rng(seed))
            .unwrap();
        assert_same(&a, &b, &format!("{what}, seed {seed}"));
    }
    // counts no dataset of n records has: refused, before any draw, with the reason
    let err = |c: Vec<i64>, n: usize| {
        mech.release_planned(c, n, w, &mut seeded_rng(1))
            .map(drop)
            .unwrap_err()
            .to_string()
    };
    let e = err(stream[1..].to_vec(), d.n());
    assert!(e.contains("counts for a workload of"), "{what}: {e}");
    let mut neg = stream.clone();
    neg[1] += 1 + neg[0];
    neg[0] = -1;
    assert!(err(neg, d.n()).contains("negative count"), "{what}");
    let e = err(stream.clone(), d.n() + 1);
    assert!(e.contains("not the tables of one dataset"), "{what}: {e}");
    let e = err(vec![0; stream.len()], 0);
    assert!(e.contains("no records"), "{what}: {e}");
    plan
}

#[test]
fn coarse_projection_releases_from_its_plan() {
    let d = data_over(&[2, 3, 2, 4], 300);
    let w = workload(d.domain(), &[0, 1, 3]);
    let universe = Universe::new(d.domain(), 1 << 10).unwrap();
    // automatic α (here the cover is the whole universe) and a coarse α (a real rounding)
    let auto = CoarseProjectionParams::new(zcdp(0.5)).check().unwrap();
    let coarse = CoarseProjectionParams::new(zcdp(0.5))
        .alpha(0.9)
        .check()
        .unwrap();
    let cover = coarse.cover(&universe, &w, d.n()).unwrap();
    assert!(
        cover.centers.len() < universe.len(),
        "α = 0.9 rounds: {} of {}",
        cover.centers.len(),
        universe.len()
    );
    for (mech, what) in [(&auto, "coarse, automatic α"), (&coarse, "coarse, α = 0.9")] {
        let plan = planned_is_from_records(mech, &d, &w, what);
        // the plan is the universe histogram: one table over every attribute
        assert_eq!(plan.tables().len(), 1);
        assert_eq!(plan.tables().num_queries(), universe.len());
        assert_eq!(plan.tables().marginals()[0].attrs(), &[0, 1, 2, 3]);
    }
}

#[test]
fn chaining_releases_from_its_plan() {
    let d = data_over(&[2, 3, 2, 4], 300);
    let w = workload(d.domain(), &[0, 1, 3]);
    let exact = ChainingParams::new(zcdp(0.5)).check().unwrap();
    let shallow = ChainingParams::new(zcdp(0.5)).alpha(0.5).check().unwrap();
    for (mech, what) in [
        (&exact, "chaining, exact levels"),
        (&shallow, "chaining, α = 0.5"),
    ] {
        let plan = planned_is_from_records(mech, &d, &w, what);
        assert_eq!(plan.tables().num_queries(), 48);
    }
}

/// Run over the attributes the workload touches and chosen at run time, as `dpqr release`
/// runs them: the plan is the histogram over the touched attributes, lifted to the data's
/// domain, and it is counted on the full records.
#[test]
fn the_restricted_and_run_time_mechanisms_release_from_the_lifted_plan() {
    let d = data_over(&[2, 3, 2, 4, 5, 2], 250);
    let w = workload(d.domain(), &[1, 3, 5]);
    let builds: [(Box<dyn Mechanism>, &str); 2] = [
        (
            Box::new(CoarseProjectionParams::new(zcdp(0.5)).check().unwrap()),
            "coarse",
        ),
        (
            Box::new(ChainingParams::new(zcdp(0.5)).check().unwrap()),
            "chaining",
        ),
    ];
    for (inner, name) in builds {
        let restricted = OnWorkloadAttributes::new(inner);
        let plan = planned_is_from_records(&restricted, &d, &w, &format!("{name}, restricted"));
        assert_eq!(plan.tables().len(), 1);
        assert_eq!(plan.tables().marginals()[0].attrs(), &[1, 3, 5]);
        assert_eq!(plan.tables().num_queries(), 3 * 4 * 2);
        let any = ForQueryClasses::marginals_only(Box::new(restricted));
        let aw = AnyWorkload::Marginals(w.clone());
        let any_plan = planned_is_from_records(&any, &d, &aw, &format!("{name}, run time"));
        assert_eq!(any_plan, plan);
    }
}

/// A plan is public: built from the workload's domain alone, refused above the universe's
/// cap (the release's own refusal), and without a plan the default refuses planned counts.
#[test]
fn plans_are_public_and_checked() {
    let wide = Domain::new((0..23).map(|i| (format!("a{i}"), 2)).collect()).unwrap();
    let w = MarginalWorkload::all_kway(&wide, 2).unwrap();
    let coarse = CoarseProjectionParams::new(zcdp(1.0)).check().unwrap();
    let e = coarse.counting_plan(&w).unwrap_err().to_string();
    assert!(e.contains("explicit universe is too large"), "{e}");
    // restricted to one table's attributes: a 4-cell plan
    let one =
        MarginalWorkload::new(&wide, vec![Marginal::new(&wide, vec![3, 7]).unwrap()]).unwrap();
    let restricted = OnWorkloadAttributes::new(Box::new(coarse));
    let plan = restricted.counting_plan(&one).unwrap().unwrap();
    assert_eq!(plan.tables().num_queries(), 4);
    assert_eq!(plan.tables().domain(), &wide);
    // the baselines read the workload's counts: no plan
    let g = dp_mechanisms::GaussianParams::new(zcdp(1.0))
        .check()
        .unwrap();
    assert_eq!(
        DataAccess::of(&g as &dyn Mechanism, &one).unwrap(),
        DataAccess::WorkloadCounts
    );
    let e =
        Mechanism::<MarginalWorkload>::release_planned(&g, vec![1; 4], 4, &one, &mut seeded_rng(1))
            .unwrap_err()
            .to_string();
    assert!(e.contains("no counting plan"), "{e}");
}

/// The polynomial release counts the tables over at most `D` of the attributes its queries
/// touch and releases from them what it releases from the records, for every class it
/// plans (decision lists read the records).
#[test]
fn polynomial_releases_from_its_plan() {
    let d = data_over(&[2, 3, 2, 4], 300);
    let w = workload(d.domain(), &[0, 1, 3]);
    let lit = |attr: u32, value: u32| Literal { attr, value };
    let disjunctions = ConjunctionWorkload::new(
        d.domain(),
        QueryKind::Disjunction,
        vec![vec![lit(0, 1), lit(3, 2)], vec![lit(1, 0)]],
    )
    .unwrap();
    let conjunctions = ConjunctionWorkload::new(
        d.domain(),
        QueryKind::Conjunction,
        vec![vec![lit(0, 1), lit(2, 0), lit(3, 3)], vec![lit(1, 2)]],
    )
    .unwrap();
    let thresholds = ThresholdWorkload::new(
        d.domain(),
        vec![ThresholdQuery {
            k: 2,
            literals: vec![lit(0, 1), lit(1, 1), lit(3, 1)],
        }],
    )
    .unwrap();
    for budget in [zcdp(0.5), PrivacyLoss::pure(1.0).unwrap()] {
        let poly = PolynomialParams::new(budget).check().unwrap();
        let what = |class: &str| format!("polynomial, {class}, {budget}");
        let plan = planned_is_from_records(
            &poly as &dyn Mechanism<MarginalWorkload>,
            &d,
            &w,
            &what("marginals"),
        );
        // tables over the touched attributes only, each of at most D attributes
        assert!(
            plan.tables()
                .marginals()
                .iter()
                .all(|m| m.attrs().iter().all(|a| [0, 1, 3].contains(a)))
        );
        let any = AnyWorkload::Marginals(w.clone());
        let any_plan = planned_is_from_records(
            &poly as &dyn Mechanism<AnyWorkload>,
            &d,
            &any,
            &what("marginals at run time"),
        );
        assert_eq!(any_plan, plan);
        planned_is_from_records(
            &poly as &dyn Mechanism<ConjunctionWorkload>,
            &d,
            &disjunctions,
            &what("disjunctions"),
        );
        planned_is_from_records(
            &poly as &dyn Mechanism<ConjunctionWorkload>,
            &d,
            &conjunctions,
            &what("conjunctions"),
        );
        planned_is_from_records(
            &poly as &dyn Mechanism<ThresholdWorkload>,
            &d,
            &thresholds,
            &what("thresholds"),
        );
    }
}
