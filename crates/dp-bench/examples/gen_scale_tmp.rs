fn main() {
    let a: Vec<String> = std::env::args().collect();
    let n: u64 = a[1].parse().unwrap();
    dp_bench::experiments::scale::generate(
        &"adult",
        n,
        17,
        std::path::Path::new(&format!("{}.csv", a[2])),
    )
    .unwrap();
    dp_bench::experiments::scale::generate_parquet(
        &"adult",
        n,
        17,
        std::path::Path::new(&format!("{}.parquet", a[2])),
    )
    .unwrap();
}
