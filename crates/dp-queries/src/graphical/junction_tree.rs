//! Junction trees of the attribute graph (McKenna, Sheldon & Miklau 2019, §4 "Efficient
//! inference": the model's cliques are those of a triangulation of the graph whose edges
//! join attributes measured together).
//!
//! Construction: a greedy elimination order (two heuristics are tried — min-weight, the
//! fewest cells of the clique created, and min-fill, the fewest fill-in edges — and the order
//! whose maximal cliques have fewer total cells is kept); the cliques `{v} ∪ N(v)` created by
//! elimination, reduced to the maximal ones, are the maximal cliques of a chordal graph, and a
//! maximum-weight spanning tree on them (weight `|C_i ∩ C_j|`) has the running-intersection
//! property (Jensen & Jensen 1994; Koller & Friedman 2009, Thm 10.5). Components of the graph
//! are joined by edges with empty separators, so the result is always one tree.

use crate::domain::Domain;
use crate::error::{QueryError, Result};

/// A junction tree over the attributes of a domain: maximal cliques (each a sorted list of
/// attribute indices) and, for every clique but the root (clique 0), its parent.
///
/// Invariants: every attribute of the domain lies in some clique; for every attribute the
/// cliques containing it form a connected subtree (running intersection).
#[derive(Clone, Debug, PartialEq)]
pub struct JunctionTree {
    cliques: Vec<Vec<usize>>,
    parent: Vec<Option<usize>>,
    /// Pre-order from the root (parents before children).
    order: Vec<usize>,
    cells: Vec<f64>,
}

impl JunctionTree {
    /// The junction tree of the graph on `domain`'s attributes whose edges join the attributes
    /// of each clique in `cliques` (McKenna et al. 2019, §4). Attributes in no clique become
    /// singleton cliques.
    ///
    /// Errors: an attribute out of range ([`QueryError::AttributeOutOfRange`]), an empty or
    /// repeating clique ([`QueryError::BadWorkload`]).
    pub fn build(domain: &Domain, cliques: &[Vec<usize>]) -> Result<Self> {
        let sizes = domain.sizes();
        let d = sizes.len();
        let mut adj = vec![vec![false; d]; d];
        for c in cliques {
            check_clique(domain, c)?;
            for (i, &a) in c.iter().enumerate() {
                for &b in &c[..i] {
                    adj[a][b] = true;
                    adj[b][a] = true;
                }
            }
        }
        let by_weight = eliminate(sizes, adj.clone(), Heuristic::MinWeight);
        let by_fill = eliminate(sizes, adj, Heuristic::MinFill);
        let (w, f) = (total_cells(sizes, &by_weight), total_cells(sizes, &by_fill));
        let maximal = if f < w { by_fill } else { by_weight };
        Ok(Self::from_maximal(sizes, maximal))
    }

    /// Total cells `Σ_C Π_{a∈C} size(a)` of the maximal cliques the tree on `cliques` would
    /// have, computed from the elimination alone (no tables are built).
    pub fn model_cells(domain: &Domain, cliques: &[Vec<usize>]) -> Result<f64> {
        Ok(Self::build(domain, cliques)?.total_cells())
    }

    fn from_maximal(sizes: &[u32], mut cliques: Vec<Vec<usize>>) -> Self {
        // Largest clique first: it becomes the root.
        let cells_of = |c: &Vec<usize>| c.iter().map(|&a| f64::from(sizes[a])).product::<f64>();
        cliques.sort_by(|a, b| cells_of(b).total_cmp(&cells_of(a)).then_with(|| a.cmp(b)));
        let m = cliques.len();
        // Prim's maximum spanning tree on |C_i ∩ C_j| (0-weight edges join components).
        let mut parent = vec![None; m];
        let mut in_tree = vec![false; m];
        let mut best: Vec<(i64, usize)> = vec![(-1, 0); m];
        let mut order = Vec::with_capacity(m);
        if m > 0 {
            in_tree[0] = true;
            order.push(0);
            for j in 1..m {
                best[j] = (intersection(&cliques[0], &cliques[j]) as i64, 0);
            }
        }
        for _ in 1..m {
            let mut pick: Option<usize> = None;
            for j in 0..m {
                if !in_tree[j] && pick.is_none_or(|p| best[j].0 > best[p].0) {
                    pick = Some(j);
                }
            }
            let Some(j) = pick else { break };
            in_tree[j] = true;
            parent[j] = Some(best[j].1);
            order.push(j);
            for k in 0..m {
                if !in_tree[k] {
                    let w = intersection(&cliques[j], &cliques[k]) as i64;
                    if w > best[k].0 {
                        best[k] = (w, j);
                    }
                }
            }
        }
        // Prim's insertion order already lists parents before children.
        let cells = cliques.iter().map(cells_of).collect();
        JunctionTree {
            cliques,
            parent,
            order,
            cells,
        }
    }

    /// The maximal cliques (sorted attribute lists); clique 0 is the root.
    pub fn cliques(&self) -> &[Vec<usize>] {
        &self.cliques
    }

    /// Parent of each clique (`None` for the root, clique 0).
    pub fn parents(&self) -> &[Option<usize>] {
        &self.parent
    }

    /// Cliques in pre-order (every parent before its children; the root first).
    pub fn order(&self) -> &[usize] {
        &self.order
    }

    /// Cells `Π size(a)` of each clique, as `f64`.
    pub fn clique_cells(&self) -> &[f64] {
        &self.cells
    }

    /// Total cells of the cliques.
    pub fn total_cells(&self) -> f64 {
        self.cells.iter().sum()
    }

    /// Separator of clique `c` with its parent (sorted; empty for the root).
    pub fn separator(&self, c: usize) -> Vec<usize> {
        match self.parent.get(c).copied().flatten() {
            Some(p) => self.cliques[c]
                .iter()
                .copied()
                .filter(|a| self.cliques[p].binary_search(a).is_ok())
                .collect(),
            None => Vec::new(),
        }
    }

    /// The smallest clique (fewest cells) containing every attribute of `attrs`, if any.
    pub fn smallest_containing(&self, attrs: &[usize]) -> Option<usize> {
        (0..self.cliques.len())
            .filter(|&c| {
                attrs
                    .iter()
                    .all(|a| self.cliques[c].binary_search(a).is_ok())
            })
            .min_by(|&a, &b| self.cells[a].total_cmp(&self.cells[b]))
    }
}

fn check_clique(domain: &Domain, c: &[usize]) -> Result<()> {
    if c.is_empty() {
        return Err(QueryError::BadWorkload {
            reason: "a clique needs at least one attribute".into(),
        });
    }
    for (i, &a) in c.iter().enumerate() {
        if a >= domain.len() {
            return Err(QueryError::AttributeOutOfRange {
                index: a,
                len: domain.len(),
            });
        }
        if c[..i].contains(&a) {
            return Err(QueryError::BadWorkload {
                reason: format!("attribute index {a} repeats in clique {c:?}"),
            });
        }
    }
    Ok(())
}

fn intersection(a: &[usize], b: &[usize]) -> usize {
    a.iter().filter(|x| b.binary_search(x).is_ok()).count()
}

fn total_cells(sizes: &[u32], cliques: &[Vec<usize>]) -> f64 {
    cliques
        .iter()
        .map(|c| c.iter().map(|&a| f64::from(sizes[a])).product::<f64>())
        .sum()
}

#[derive(Clone, Copy)]
enum Heuristic {
    MinWeight,
    MinFill,
}

/// Greedy elimination; returns the maximal cliques (sorted attribute lists) it creates.
fn eliminate(sizes: &[u32], mut adj: Vec<Vec<bool>>, h: Heuristic) -> Vec<Vec<usize>> {
    let d = sizes.len();
    let mut alive = vec![true; d];
    let mut created: Vec<Vec<usize>> = Vec::with_capacity(d);
    for _ in 0..d {
        let mut best: Option<(f64, f64, usize)> = None;
        for v in (0..d).filter(|&v| alive[v]) {
            let nb: Vec<usize> = (0..d).filter(|&u| alive[u] && adj[v][u]).collect();
            let weight =
                nb.iter().map(|&u| f64::from(sizes[u])).product::<f64>() * f64::from(sizes[v]);
            let mut fill = 0usize;
            for (i, &a) in nb.iter().enumerate() {
                fill += nb[..i].iter().filter(|&&b| !adj[a][b]).count();
            }
            let key = match h {
                Heuristic::MinWeight => (weight, fill as f64),
                Heuristic::MinFill => (fill as f64, weight),
            };
            if best.is_none_or(|b| (key.0, key.1) < (b.0, b.1)) {
                best = Some((key.0, key.1, v));
            }
        }
        let Some((_, _, v)) = best else { break };
        let nb: Vec<usize> = (0..d).filter(|&u| alive[u] && adj[v][u]).collect();
        for (i, &a) in nb.iter().enumerate() {
            for &b in &nb[..i] {
                adj[a][b] = true;
                adj[b][a] = true;
            }
        }
        let mut clique = nb;
        clique.push(v);
        clique.sort_unstable();
        created.push(clique);
        alive[v] = false;
    }
    // Keep the maximal ones (larger first, so a subset is always seen after its superset).
    created.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    let mut maximal: Vec<Vec<usize>> = Vec::new();
    for c in created {
        let contained = maximal
            .iter()
            .any(|m| c.iter().all(|a| m.binary_search(a).is_ok()));
        if !contained {
            maximal.push(c);
        }
    }
    maximal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_gives_pairs() {
        let d = Domain::new((0..4).map(|i| (format!("a{i}"), 3)).collect()).unwrap();
        let t = JunctionTree::build(&d, &[vec![0, 1], vec![1, 2], vec![2, 3]]).unwrap();
        let mut cl = t.cliques().to_vec();
        cl.sort();
        assert_eq!(cl, vec![vec![0, 1], vec![1, 2], vec![2, 3]]);
        assert_eq!(t.total_cells(), 27.0);
    }

    #[test]
    fn cycle_is_triangulated() {
        let d = Domain::new((0..4).map(|i| (format!("a{i}"), 2)).collect()).unwrap();
        let t = JunctionTree::build(&d, &[vec![0, 1], vec![1, 2], vec![2, 3], vec![3, 0]]).unwrap();
        // A 4-cycle needs one chord: two triangles, 16 cells.
        assert_eq!(t.cliques().len(), 2);
        assert!(t.cliques().iter().all(|c| c.len() == 3));
        assert_eq!(t.total_cells(), 16.0);
    }

    #[test]
    fn rejects_bad_cliques() {
        let d = Domain::new((0..3).map(|i| (format!("a{i}"), 2)).collect()).unwrap();
        assert!(matches!(
            JunctionTree::build(&d, &[vec![0, 3]]),
            Err(QueryError::AttributeOutOfRange { index: 3, len: 3 })
        ));
        assert!(matches!(
            JunctionTree::build(&d, &[vec![1, 1]]),
            Err(QueryError::BadWorkload { .. })
        ));
        assert!(matches!(
            JunctionTree::build(&d, &[vec![]]),
            Err(QueryError::BadWorkload { .. })
        ));
    }
}
