//! Issue #25: the central mechanisms that read the data only through the workload's exact
//! counts (and n) release the same from those counts — a stream, an engine — as from the
//! records, draw for draw (`Mechanism::release_counts` against `Mechanism::release` with the
//! same seed: answers, synthetic records, notes, diagnostics); and counts no dataset has are
//! refused. Adaptive projection has its own file (`adaptive_counts.rs`).

use dp_core::{PrivacyLoss, seeded_rng};
use dp_mechanisms::{Mechanism, OnWorkloadAttributes, Release};
use dp_queries::{Dataset, Domain, Marginal, MarginalWorkload, Workload};

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

/// Five attributes (sizes 2, 3, 2, 4, 2): a 96-record universe.
fn data(n: usize) -> Dataset {
    data_over(&[2, 3, 2, 4, 2], n)
}

/// Tables in unsorted attribute order, a 1-way table inside another and a 3-way table, over
/// `domain`'s first five attributes.
fn workload(domain: &Domain) -> MarginalWorkload {
    let lists = [vec![3, 0], vec![4, 1, 2], vec![1], vec![2, 4]];
    let tables = lists
        .iter()
        .map(|l| Marginal::new(domain, l.clone()).unwrap())
        .collect();
    MarginalWorkload::new(domain, tables).unwrap()
}

fn zcdp(rho: f64) -> PrivacyLoss {
    PrivacyLoss::zcdp(rho).unwrap()
}

fn pure(epsilon: f64) -> PrivacyLoss {
    PrivacyLoss::pure(epsilon).unwrap()
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
            assert_eq!(sa.sampled_from_model, sb.sampled_from_model, "{what}");
        }
        _ => panic!("{what}: synthetic records on one side only"),
    }
}

/// `mech` says its counts suffice, and its release from `w`'s exact counts of `d` is its
/// release from `d`, for two seeds; counts one short are refused with the reason.
fn from_counts_is_from_records<W: Workload>(
    mech: &dyn Mechanism<W>,
    d: &Dataset,
    w: &W,
    what: &str,
) {
    assert!(mech.counts_suffice(), "{what}: counts_suffice");
    let counts = Workload::count_all(w, d).unwrap();
    for seed in [3, 11] {
        let a = mech.release(d, w, &mut seeded_rng(seed)).unwrap();
        let b = mech
            .release_counts(counts.clone(), d.n(), w, &mut seeded_rng(seed))
            .unwrap();
        assert_same(&a, &b, &format!("{what}, seed {seed}"));
    }
    let short = counts[..counts.len() - 1].to_vec();
    let e = mech
        .release_counts(short, d.n(), w, &mut seeded_rng(1))
        .map(drop)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!(
            "{} counts for a workload of {} queries",
            counts.len() - 1,
            counts.len()
        )),
        "{what}: {e}"
    );
}

/// Marginal counts no dataset of n records has are refused before any draw, with the
/// reason: a negative count, a table counting another number of records, no records.
fn refuses_counts_of_no_dataset(mech: &dyn Mechanism, d: &Dataset, w: &MarginalWorkload) {
    let counts = Workload::count_all(w, d).unwrap();
    let err = |c: Vec<i64>, n: usize| {
        mech.release_counts(c, n, w, &mut seeded_rng(1))
            .map(drop)
            .unwrap_err()
            .to_string()
    };
    let mut neg = counts.clone();
    neg[1] += 1 + neg[0];
    neg[0] = -1; // the table's total is kept
    assert!(err(neg, d.n()).contains("negative count"));
    let mut moved = counts.clone();
    let last = moved.len() - 1;
    moved[last] += 1;
    let e = err(moved, d.n());
    assert!(e.contains("not the tables of one dataset"), "{e}");
    let e = err(counts.clone(), d.n() + 1);
    assert!(e.contains("not the tables of one dataset"), "{e}");
    let e = err(vec![0; counts.len()], 0);
    assert!(e.contains("no records"), "{e}");
}

#[test]
fn mwem_releases_from_the_counts() {
    use dp_mechanisms::iterative::MwemOutput;
    let d = data(400);
    let w = workload(d.domain());
    for (budget, output) in [
        (pure(1.0), MwemOutput::Last),
        (zcdp(0.5), MwemOutput::Average),
    ] {
        let m = dp_mechanisms::MwemParams::new(budget)
            .rounds(6)
            .output(output)
            .check()
            .unwrap();
        from_counts_is_from_records(&m, &d, &w, &format!("mwem {budget}"));
        let counts = w.count_all(&d).unwrap();
        let (_, a) = m.release_with_trace(&d, &w, &mut seeded_rng(5)).unwrap();
        let (_, b) = m
            .release_counted(&counts, d.n(), &w, &mut seeded_rng(5))
            .unwrap();
        assert_eq!(a.selected, b.selected);
        assert_eq!(a.noisy_counts, b.noisy_counts);
    }
    let m = dp_mechanisms::MwemParams::new(pure(1.0)).check().unwrap();
    refuses_counts_of_no_dataset(&m, &d, &w);
}

#[test]
fn ic_mw_releases_from_the_counts() {
    let d = data(2000);
    let w = workload(d.domain());
    for budget in [pure(2.0), PrivacyLoss::approx(2.0, 1e-6).unwrap()] {
        let m = dp_mechanisms::IcParams::new(budget)
            .alpha(0.3)
            .check()
            .unwrap();
        from_counts_is_from_records(&m, &d, &w, &format!("ic-mw {budget}"));
    }
    let m = dp_mechanisms::IcParams::new(pure(2.0))
        .alpha(0.3)
        .check()
        .unwrap();
    refuses_counts_of_no_dataset(&m, &d, &w);
}

/// A universe mechanism run over the attributes the workload touches: the release from the
/// counts runs the inner mechanism on the same restricted workload, so answers, notes and
/// the synthetic records (over the touched attributes only) are the release's from the
/// records; also through `ForQueryClasses`, as the CLI builds it.
#[test]
fn the_restriction_to_touched_attributes_releases_from_the_counts() {
    use dp_mechanisms::ForQueryClasses;
    use dp_queries::AnyWorkload;
    // nine attributes, 2^4·3^3·4·5·2 records: too many for the universe mechanisms
    let d = data_over(&[2, 3, 2, 4, 2, 3, 5, 3, 2], 300);
    let w = workload(d.domain());
    assert_eq!(w.touched_attributes(), vec![0, 1, 2, 3, 4]);
    let mwem = dp_mechanisms::MwemParams::new(pure(1.0))
        .rounds(5)
        .universe_cap(200)
        .check()
        .unwrap();
    let restricted = OnWorkloadAttributes::new(Box::new(mwem.clone()));
    from_counts_is_from_records(&restricted, &d, &w, "mwem on the touched attributes");
    let release = restricted.release(&d, &w, &mut seeded_rng(3)).unwrap();
    assert_eq!(release.synthetic.unwrap().records.domain().len(), 5);
    let any = ForQueryClasses::marginals_only(Box::new(OnWorkloadAttributes::new(Box::new(mwem))));
    from_counts_is_from_records(
        &any,
        &d,
        &AnyWorkload::Marginals(w.clone()),
        "mwem for any class",
    );
}

/// DualQuery on marginals (the cells' counts as conjunctions), on conjunctions and parities
/// directly, and through `AnyWorkload`.
#[test]
fn dualquery_releases_from_the_counts() {
    use dp_queries::{AnyWorkload, ConjunctionWorkload, Literal, QueryKind};
    let d = data(1500);
    let w = workload(d.domain());
    let m = dp_mechanisms::DualQueryParams::new(pure(1.0))
        .rounds(4)
        .samples(30)
        .check()
        .unwrap();
    from_counts_is_from_records(&m, &d, &w, "dualquery, marginals");
    refuses_counts_of_no_dataset(&m, &d, &w);
    let any: &dyn Mechanism<AnyWorkload> = &m;
    from_counts_is_from_records(
        any,
        &d,
        &AnyWorkload::Marginals(w.clone()),
        "dualquery, any",
    );
    let lit = |attr: u32, value: u32| Literal { attr, value };
    let conj = ConjunctionWorkload::new(
        d.domain(),
        QueryKind::Conjunction,
        vec![
            vec![lit(0, 1), lit(3, 2)],
            vec![lit(1, 0)],
            vec![lit(2, 1), lit(4, 0), lit(1, 2)],
        ],
    )
    .unwrap();
    from_counts_is_from_records(&m, &d, &conj, "dualquery, conjunctions");
    from_counts_is_from_records(
        any,
        &d,
        &AnyWorkload::Literals(conj.clone()),
        "dualquery, any conjunctions",
    );
    // a count above n is no dataset's
    let mut counts = Workload::count_all(&conj, &d).unwrap();
    counts[1] = d.n() as i64 + 1;
    let e = Mechanism::<ConjunctionWorkload>::release_counts(
        &m,
        counts,
        d.n(),
        &conj,
        &mut seeded_rng(1),
    )
    .map(drop)
    .unwrap_err()
    .to_string();
    assert!(e.contains("query 1 counts 1501 records"), "{e}");
    let bits = data_over(&[2, 2, 2, 2], 800);
    let parities = ConjunctionWorkload::new(
        bits.domain(),
        QueryKind::Parity,
        vec![
            vec![lit(0, 1), lit(1, 1)],
            vec![lit(2, 1), lit(3, 1), lit(0, 1)],
        ],
    )
    .unwrap();
    from_counts_is_from_records(&m, &bits, &parities, "dualquery, parities");
}

/// The projection mechanism over an explicit universe and over an implicit one (the record
/// oracle), and on the touched attributes of a wide table.
#[test]
fn projection_releases_from_the_counts() {
    use dp_mechanisms::{ProjectionParams, ProjectionSettings, UniverseChoice};
    let d = data(500);
    let w = workload(d.domain());
    for universe in [UniverseChoice::Explicit, UniverseChoice::Implicit] {
        let settings = ProjectionSettings {
            universe,
            ..ProjectionSettings::default()
        };
        let m = ProjectionParams::new(zcdp(0.5))
            .settings(settings)
            .check()
            .unwrap();
        from_counts_is_from_records(&m, &d, &w, &format!("projection, {universe:?}"));
        refuses_counts_of_no_dataset(&m, &d, &w);
    }
    let wide = data_over(&[2, 3, 2, 4, 2, 3, 5, 3, 2], 300);
    let w = workload(wide.domain());
    let settings = ProjectionSettings {
        max_universe: 200,
        universe: UniverseChoice::Explicit,
        ..ProjectionSettings::default()
    };
    let m = ProjectionParams::new(zcdp(0.5))
        .settings(settings)
        .check()
        .unwrap();
    from_counts_is_from_records(
        &OnWorkloadAttributes::new(Box::new(m)),
        &wide,
        &w,
        "projection on the touched attributes",
    );
}

/// Chaining for worst-case error: level 1's counts are the workload's (the decomposition
/// keeps every record's answer vector along its chain), the other levels are trivial.
#[test]
fn chaining_worst_case_releases_from_the_counts() {
    let d = data(600);
    let w = workload(d.domain());
    for alpha in [None, Some(0.05)] {
        let mut p = dp_mechanisms::ChainingWorstCaseParams::new(zcdp(0.5)).rounds(6);
        if let Some(a) = alpha {
            p = p.alpha(a);
        }
        let m = p.check().unwrap();
        from_counts_is_from_records(&m, &d, &w, &format!("chaining-worst-case α {alpha:?}"));
        refuses_counts_of_no_dataset(&m, &d, &w);
    }
}

/// Relaxed projection and boosting on binary data (the parities' odd counts read off the
/// tables' counts), and through the one-hot encoding on categorical data (the bit tables'
/// counts derived from the tables' counts); the latter also against the inner mechanism run
/// on the encoded records, as the wrapper used to run it.
#[test]
fn relaxed_projection_and_boosting_release_from_the_counts() {
    use dp_mechanisms::relaxed::RelaxedSettings;
    use dp_mechanisms::{BoostingParams, BoostingSettings, OneHotEncoded, RelaxedProjectionParams};
    use dp_queries::OneHotMarginals;
    let relaxed = RelaxedProjectionParams::new(zcdp(0.5))
        .settings(RelaxedSettings {
            max_iterations: 40,
            ..RelaxedSettings::default()
        })
        .check()
        .unwrap();
    let boosting = BoostingParams::new(zcdp(2.0))
        .settings(BoostingSettings {
            rounds: 3,
            samples: 8,
            ..BoostingSettings::default()
        })
        .check()
        .unwrap();
    let bits = data_over(&[2, 2, 2, 2, 2], 400);
    let w = workload(bits.domain());
    from_counts_is_from_records(&relaxed, &bits, &w, "relaxed-projection");
    refuses_counts_of_no_dataset(&relaxed, &bits, &w);
    from_counts_is_from_records(&boosting, &bits, &w, "boosting");
    refuses_counts_of_no_dataset(&boosting, &bits, &w);
    // categorical: one-hot encoded
    let d = data(400);
    let w = workload(d.domain());
    let plan = OneHotMarginals::new(&w).unwrap();
    assert!(!plan.is_binary());
    let encoded = plan.encode(&d).unwrap();
    let cases: [(&dyn Mechanism, Box<dyn Mechanism>); 2] = [
        (&relaxed, Box::new(OneHotEncoded::new(relaxed.clone()))),
        (&boosting, Box::new(OneHotEncoded::new(boosting.clone()))),
    ];
    for (inner, wrapped) in cases {
        let what = format!("{}, one-hot", inner.name());
        from_counts_is_from_records(wrapped.as_ref(), &d, &w, &what);
        refuses_counts_of_no_dataset(wrapped.as_ref(), &d, &w);
        let on_bits = inner
            .release(&encoded, plan.bit_workload(), &mut seeded_rng(3))
            .unwrap();
        let from_counts = wrapped
            .release_counts(
                Workload::count_all(&w, &d).unwrap(),
                d.n(),
                &w,
                &mut seeded_rng(3),
            )
            .unwrap();
        assert_eq!(
            plan.read_back(&on_bits.answers).unwrap(),
            from_counts.answers,
            "{what}: against the records encoded"
        );
    }
}
