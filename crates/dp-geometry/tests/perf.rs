//! Timing of the hot kernels on the size of the nltcs all-3-way-marginals workload:
//! 65 536 points in dimension 4 480 (560 blocks of 8 cells, one 1 per block). Ignored by
//! default; run with `cargo test --release -p dp-geometry --test perf -- --ignored
//! --nocapture`. It prints timings and asserts only correctness (no wall-clock limits).

use std::time::Instant;

use dp_geometry::{
    BlockOneHotPoints, ConvexHull, FrankWolfeSettings, FrankWolfeVariant, Parallelism, PointSet,
    frank_wolfe_project_hull,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

#[test]
#[ignore = "timing run, not a test of correctness beyond consistency"]
fn one_hot_blocks_65536_by_4480() {
    let (n, blocks, cells_per) = (65_536usize, 560usize, 8usize);
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let cells: Vec<u16> = (0..n * blocks)
        .map(|_| (rng.next_u32() % 8) as u16)
        .collect();
    let set = BlockOneHotPoints::new(&vec![cells_per; blocks], &cells).unwrap();
    let dim = set.dim();
    let c: Vec<f64> = (0..dim)
        .map(|k| ((k * 7919) % 1000) as f64 / 1000.0)
        .collect();
    let mut seq = vec![0.0; n];
    let mut par = vec![0.0; n];
    let reps = 10;
    for (label, mode, out) in [
        ("sequential", Parallelism::None, &mut seq),
        ("rayon", Parallelism::Rayon, &mut par),
    ] {
        set.inner_all(&c, out, mode);
        let t = Instant::now();
        for _ in 0..reps {
            set.inner_all(&c, out, mode);
        }
        let per = t.elapsed().as_secs_f64() / reps as f64;
        eprintln!("inner_all ({label}): {:.2} ms per oracle call", per * 1e3);
    }
    assert_eq!(seq, par);

    // Frank–Wolfe: y = a noisy average of 1 000 points (the projection mechanism's shape).
    let hull = ConvexHull::new(&set).unwrap();
    let mut y = vec![0.0; dim];
    for i in 0..1000 {
        set.add_scaled(i * 61, 1.0 / 1000.0, &mut y);
    }
    for (k, yk) in y.iter_mut().enumerate() {
        *yk += ((k * 104_729) % 200) as f64 / 1000.0 - 0.1;
    }
    for variant in [FrankWolfeVariant::Classic, FrankWolfeVariant::Pairwise] {
        for par in [Parallelism::None, Parallelism::Rayon] {
            let settings = FrankWolfeSettings {
                max_iterations: 50,
                relative_gap_tolerance: 0.0,
                variant,
                parallelism: par,
                ..FrankWolfeSettings::default()
            };
            let t = Instant::now();
            let res = frank_wolfe_project_hull(&hull, &y, &settings).unwrap();
            let el = t.elapsed().as_secs_f64();
            eprintln!(
                "FW {variant:?} {par:?}: {} iterations, {} oracle calls, {:.2} ms per iteration; objective {:.4}, gap {:.4}, {} atoms",
                res.iterations,
                res.oracle_calls,
                el * 1e3 / res.oracle_calls as f64,
                res.objective,
                res.gap,
                res.atoms.len()
            );
            assert!(res.gap >= 0.0 && res.objective.is_finite());
        }
    }
}
