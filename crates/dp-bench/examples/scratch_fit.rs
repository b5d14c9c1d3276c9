use dp_queries::{Dataset, GraphicalModel, GraphicalModelSettings, Marginal, NoisyMarginal};
use std::path::Path;
const MEASURED: &[&[usize]] = &[
    &[4, 6, 7],
    &[6, 8],
    &[3, 5, 13],
    &[4, 13],
    &[0, 4],
    &[9, 10, 13],
    &[5, 6, 7],
    &[1, 4],
    &[1, 3, 8],
    &[7, 12],
    &[8, 11],
    &[7, 11, 12],
    &[3, 4],
    &[1, 11],
    &[0, 6],
    &[5, 11],
    &[4, 5, 13],
    &[4, 8],
    &[0, 1],
    &[1, 7, 13],
    &[2, 7],
    &[8, 13],
    &[2, 8],
    &[1, 2],
    &[0, 13],
    &[1, 9, 13],
    &[2, 13],
    &[1, 3, 4],
    &[0, 8],
    &[7, 8],
    &[5, 6],
    &[3, 9],
    &[5, 7],
    &[8, 12],
    &[3, 13],
    &[1, 4, 7],
    &[2, 6],
    &[1, 8],
    &[3, 6],
];
fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let dir = root.join("adult");
    let data = Dataset::load_csv(&dir.join("adult.csv"), &dir.join("adult-domain.json")).unwrap();
    let domain = data.domain().clone();
    let mut tables: Vec<Vec<usize>> = (0..domain.len()).map(|a| vec![a]).collect();
    tables.extend(MEASURED.iter().map(|t| t.to_vec()));
    let ms: Vec<NoisyMarginal> = tables
        .iter()
        .map(|t| {
            let marginal = Marginal::new(&domain, t.clone()).unwrap();
            let values = marginal
                .try_count(&data)
                .unwrap()
                .into_iter()
                .map(|v| v as f64 + 3.0)
                .collect();
            NoisyMarginal {
                marginal,
                values,
                sigma: 1.0,
            }
        })
        .collect();
    let total = data.n() as f64;
    for it in [100usize, 500] {
        let s = GraphicalModelSettings {
            iterations: it,
            ..Default::default()
        };
        let t = std::time::Instant::now();
        let (m, r) = GraphicalModel::fit(&domain, &ms, total, &s, None).unwrap();
        println!(
            "cold {it}: iters {} calibrations {} loss {:.3e} cells {} {:.2}s",
            r.iterations,
            r.calibrations,
            r.final_loss,
            r.model_cells,
            t.elapsed().as_secs_f64()
        );
        let t = std::time::Instant::now();
        let (_, r2) = GraphicalModel::fit(&domain, &ms, total, &s, Some(&m)).unwrap();
        println!(
            "warm {it}: iters {} calibrations {} loss {:.3e} {:.2}s",
            r2.iterations,
            r2.calibrations,
            r2.final_loss,
            t.elapsed().as_secs_f64()
        );
    }
}
