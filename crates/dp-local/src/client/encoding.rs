//! The public encodings of the local mechanisms: how a client turns its record into the
//! per-table blocks it randomizes ([`super::table_sampled`]). They are pre-processing on
//! the client, fixed by public information (the domain, the workload, a cover or a
//! decomposition of the universe computed without data).
//!
//! | encoding | block of table `j` | radius | mechanism |
//! |---|---|---|---|
//! | [`MarginalEncoding`] | the one-hot cell of the record in table `j` | 1 | local projection (seed 004 Thm 5.1) |
//! | [`RoundedEncoding`] | the one-hot cell of the record's nearest cover point | 1 | local coarse projection (Thm 1.6, first protocol) |
//! | [`IncrementEncoding`] | `e(cell of x_l) − e(cell of x_{l−1})` on level `l` of the chain | 1 on level 1, √2 after | local chaining (Thm 1.6, second protocol) |

use super::table_sampled::TableEncoding;
use crate::{LocalError, Result};
use dp_queries::{Marginal, MarginalWorkload, Universe};

/// The record's answer vector `q(x)`, one table at a time: a one-hot block per table.
#[derive(Clone, Debug)]
pub struct MarginalEncoding {
    domain_sizes: Vec<u32>,
    tables: Vec<Marginal>,
    sizes: Vec<usize>,
}

impl MarginalEncoding {
    /// The encoding of `workload`'s answer vectors.
    pub fn new(workload: &MarginalWorkload) -> Self {
        let tables = workload.marginals().to_vec();
        let sizes = tables.iter().map(|t| t.num_cells()).collect();
        MarginalEncoding {
            domain_sizes: workload.domain().sizes().to_vec(),
            tables,
            sizes,
        }
    }

    fn cell(&self, record: &[u32], table: usize) -> Result<usize> {
        let t = self.tables.get(table).ok_or_else(|| LocalError::Input {
            reason: format!("there is no table {table}"),
        })?;
        t.cell_of(record).ok_or_else(|| LocalError::Input {
            reason: "a code is outside its attribute's range".into(),
        })
    }
}

/// Checks a record against the domain's sizes.
fn check_record(sizes: &[u32], record: &[u32]) -> Result<()> {
    if record.len() != sizes.len() {
        return Err(LocalError::Input {
            reason: format!(
                "a record of {} attributes, expected {}",
                record.len(),
                sizes.len()
            ),
        });
    }
    if let Some(i) = record.iter().zip(sizes).position(|(c, s)| c >= s) {
        return Err(LocalError::Input {
            reason: format!(
                "attribute {} has code {}, above its range",
                i + 1,
                record[i]
            ),
        });
    }
    Ok(())
}

impl TableEncoding for MarginalEncoding {
    fn table_sizes(&self) -> &[usize] {
        &self.sizes
    }
    fn radius(&self) -> f64 {
        1.0
    }
    fn check(&self, record: &[u32]) -> Result<()> {
        check_record(&self.domain_sizes, record)
    }
    fn block(&self, record: &[u32], table: usize, out: &mut Vec<(usize, f64)>) -> Result<()> {
        out.clear();
        out.push((self.cell(record, table)?, 1.0));
        Ok(())
    }
}

/// A universe record for every universe record: the public rounding map of a cover
/// (coarse projection) or the `l`-th link of the chain (chaining).
#[derive(Clone, Debug)]
struct UniverseMap {
    base: MarginalEncoding,
    universe: Universe,
}

impl UniverseMap {
    fn new(workload: &MarginalWorkload, universe: &Universe) -> Result<Self> {
        if universe.domain() != workload.domain() {
            return Err(LocalError::InvalidParameter {
                name: "universe",
                value: universe.len().to_string(),
                reason: "the universe must span the workload's domain".into(),
            });
        }
        Ok(UniverseMap {
            base: MarginalEncoding::new(workload),
            universe: universe.clone(),
        })
    }

    fn index(&self, record: &[u32]) -> Result<usize> {
        self.universe
            .index_of(record)
            .map_err(|_| LocalError::Input {
                reason: "the record is not in the universe".into(),
            })
    }

    fn cell_of_index(&self, index: usize, table: usize) -> Result<usize> {
        let record = self.universe.record(index).map_err(|_| LocalError::Input {
            reason: format!("universe index {index} is out of range"),
        })?;
        self.base.cell(&record, table)
    }
}

fn check_map(map: &[usize], universe: &Universe) -> Result<()> {
    if map.len() != universe.len() || map.iter().any(|&t| t >= universe.len()) {
        return Err(LocalError::InvalidParameter {
            name: "map",
            value: map.len().to_string(),
            reason: format!(
                "a map needs one universe index below {0} for each of the {0} records",
                universe.len()
            ),
        });
    }
    Ok(())
}

/// The answer vector of the record's nearest cover point `π(x)` (public cover).
#[derive(Clone, Debug)]
pub struct RoundedEncoding {
    inner: UniverseMap,
    map: Vec<usize>,
}

impl RoundedEncoding {
    /// The encoding through `map` (universe index → universe index of its cover point).
    pub fn new(workload: &MarginalWorkload, universe: &Universe, map: Vec<usize>) -> Result<Self> {
        check_map(&map, universe)?;
        Ok(RoundedEncoding {
            inner: UniverseMap::new(workload, universe)?,
            map,
        })
    }
}

impl TableEncoding for RoundedEncoding {
    fn table_sizes(&self) -> &[usize] {
        &self.inner.base.sizes
    }
    fn radius(&self) -> f64 {
        1.0
    }
    fn check(&self, record: &[u32]) -> Result<()> {
        check_record(&self.inner.base.domain_sizes, record)
    }
    fn block(&self, record: &[u32], table: usize, out: &mut Vec<(usize, f64)>) -> Result<()> {
        out.clear();
        let target = self.map[self.inner.index(record)?];
        out.push((self.inner.cell_of_index(target, table)?, 1.0));
        Ok(())
    }
}

/// Level `l` (0-based) of the chain `x_1, …, x_k` of seed 004 Lemma 4.2: `q(x_1)` on level
/// 0, `q(x_l) − q(x_{l−1})` after (per table a difference of two one-hot vectors: radius
/// √2). The maps `π_1, …, π_k` are public.
#[derive(Clone, Debug)]
pub struct IncrementEncoding {
    inner: UniverseMap,
    maps: Vec<Vec<usize>>,
    level: usize,
}

impl IncrementEncoding {
    /// Level `level` of the chain defined by `maps` (`maps[j]` = `π_{j+1}`, universe index
    /// → universe index).
    pub fn new(
        workload: &MarginalWorkload,
        universe: &Universe,
        maps: Vec<Vec<usize>>,
        level: usize,
    ) -> Result<Self> {
        if level >= maps.len() {
            return Err(LocalError::InvalidParameter {
                name: "level",
                value: level.to_string(),
                reason: format!("the chain has {} levels", maps.len()),
            });
        }
        for m in &maps {
            check_map(m, universe)?;
        }
        Ok(IncrementEncoding {
            inner: UniverseMap::new(workload, universe)?,
            maps,
            level,
        })
    }

    /// `(x_l, x_{l−1})` for the record at universe index `x` (`None` on level 0).
    fn links(&self, x: usize) -> (usize, Option<usize>) {
        let mut cur = x;
        let mut plus = x;
        for j in (0..self.maps.len()).rev() {
            cur = self.maps[j][cur];
            if j == self.level {
                plus = cur;
            }
            if j + 1 == self.level {
                return (plus, Some(cur));
            }
        }
        (plus, None)
    }
}

impl TableEncoding for IncrementEncoding {
    fn table_sizes(&self) -> &[usize] {
        &self.inner.base.sizes
    }
    fn radius(&self) -> f64 {
        if self.level == 0 { 1.0 } else { 2f64.sqrt() }
    }
    fn check(&self, record: &[u32]) -> Result<()> {
        check_record(&self.inner.base.domain_sizes, record)
    }
    fn block(&self, record: &[u32], table: usize, out: &mut Vec<(usize, f64)>) -> Result<()> {
        out.clear();
        let (plus, minus) = self.links(self.inner.index(record)?);
        let cp = self.inner.cell_of_index(plus, table)?;
        match minus {
            None => out.push((cp, 1.0)),
            Some(m) => {
                let cm = self.inner.cell_of_index(m, table)?;
                if cp != cm {
                    out.push((cp, 1.0));
                    out.push((cm, -1.0));
                }
            }
        }
        Ok(())
    }
}
