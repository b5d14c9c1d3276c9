//! The registry of bundled datasets.
//!
//! The files live in the repository's `data/` folder (origin and licence in
//! `data/README.md`) and are compiled into the binaries, so every default command works on a
//! machine with no network and from any working directory.

use crate::Result;
use dp_queries::{Dataset, Domain};

/// One bundled dataset: the CSV of integer codes and its `{"attr": size}` domain.
#[derive(Clone, Copy, Debug)]
pub struct BundledDataset {
    /// Registry name (`"adult"`, `"nltcs"`).
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
    /// Where the files come from.
    pub origin: &'static str,
    /// The licence they are used under.
    pub license: &'static str,
    /// The CSV bytes.
    pub csv: &'static [u8],
    /// The domain JSON text.
    pub domain_json: &'static str,
}

impl BundledDataset {
    /// Parse and validate the dataset (same loader and checks as user files).
    pub fn load(&self) -> Result<Dataset> {
        let file = format!("{}.csv (bundled)", self.name);
        let domain =
            Domain::from_json_str(self.domain_json, &format!("{}-domain.json", self.name))?;
        Ok(Dataset::from_csv_reader(self.csv, &file, domain)?)
    }
}

/// Every bundled dataset.
pub const BUNDLED: &[BundledDataset] = &[
    BundledDataset {
        name: "adult",
        description: "UCI Adult, 48 842 records, 14 attributes (private-pgm discretization)",
        origin: "ryan112358/private-pgm data/adult.csv @ a07c9f5 (2019-04-11)",
        license: "repo Apache-2.0; UCI Adult data CC BY 4.0",
        csv: include_bytes!("../../../../data/adult/adult.csv"),
        domain_json: include_str!("../../../../data/adult/adult-domain.json"),
    },
    BundledDataset {
        name: "nltcs",
        description: "National Long Term Care Survey, 21 574 records, 16 binary attributes",
        origin: "ryan112358/hd-datasets clean/nltcs.csv @ 678dd87 (2018-11-12)",
        license: "redistribution statement of the source (see data/README.md)",
        csv: include_bytes!("../../../../data/nltcs/nltcs.csv"),
        domain_json: include_str!("../../../../data/nltcs/nltcs-domain.json"),
    },
    BundledDataset {
        name: "acs",
        description: "ACS (PrivBayes / PrivMRF extract), 47 461 records, 23 binary attributes",
        origin: "caicre/PrivMRF data/acs.csv @ b6feb08",
        license: "repo Apache-2.0",
        csv: include_bytes!("../../../../data/acs/acs.csv"),
        domain_json: include_str!("../../../../data/acs/acs-domain.json"),
    },
    BundledDataset {
        name: "titanic",
        description: "Kaggle Titanic, 1 304 records, 9 attributes",
        origin: "ryan112358/hd-datasets clean/titanic.csv @ 4fe5e5d (2021-10-05)",
        license: "none stated in the source repository",
        csv: include_bytes!("../../../../data/titanic/titanic.csv"),
        domain_json: include_str!("../../../../data/titanic/titanic-domain.json"),
    },
    BundledDataset {
        name: "temporal-match2",
        description: "IPUMS ACS extract (NIST 2020 style), 170 254 records, 35 attributes, |X| ≈ 10^33.5",
        origin: "ryan112358/hd-datasets clean/temporal-match2.zip @ 1369ff5 (2021-10-29)",
        license: "none stated; the underlying data follows IPUMS terms",
        csv: include_bytes!("../../../../data/temporal-match2/temporal-match2.csv"),
        domain_json: include_str!("../../../../data/temporal-match2/temporal-match2-domain.json"),
    },
];

/// Look a bundled dataset up by name.
pub fn bundled(name: &str) -> Result<&'static BundledDataset> {
    BUNDLED.iter().find(|d| d.name == name).ok_or_else(|| {
        let names: Vec<&str> = BUNDLED.iter().map(|d| d.name).collect();
        crate::BenchError::Usage(format!(
            "no bundled dataset named {}; bundled: {}",
            crate::quoted(name),
            names.join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row and column counts from `data/README.md` (checked there by an independent script).
    #[test]
    fn bundled_datasets_load_with_the_documented_shapes() {
        let adult = bundled("adult").unwrap().load().unwrap();
        assert_eq!((adult.n(), adult.domain().len()), (48_842, 14));
        let nltcs = bundled("nltcs").unwrap().load().unwrap();
        assert_eq!((nltcs.n(), nltcs.domain().len()), (21_574, 16));
        let acs = bundled("acs").unwrap().load().unwrap();
        assert_eq!((acs.n(), acs.domain().len()), (47_461, 23));
        let titanic = bundled("titanic").unwrap().load().unwrap();
        assert_eq!((titanic.n(), titanic.domain().len()), (1_304, 9));
        let tm2 = bundled("temporal-match2").unwrap().load().unwrap();
        assert_eq!((tm2.n(), tm2.domain().len()), (170_254, 35));
        assert!((tm2.domain().log10_universe_size() - 33.5).abs() < 0.05);
        assert!(bundled("nope").is_err());
    }
}
