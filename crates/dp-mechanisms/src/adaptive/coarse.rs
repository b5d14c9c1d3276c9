//! Coarsened candidates (issue #24): beside each candidate table of two or more attributes,
//! the same table with each attribute's **rare** values summed into one group — MST's
//! domain compression (McKenna, Miklau & Sheldon, "Winning the NIST Contest", JPC 2021, §4),
//! applied to one measurement instead of to the data, so that the model keeps every value.
//!
//! A value is rare when its noisy 1-way count is below `θ·σ₁` (`σ₁` that 1-way table's
//! noise; MST's θ = 3); an attribute is grouped when at least two of its values are rare
//! (its kept values stay singletons, the rare ones form one group). The groups are a
//! function of the noisy 1-way tables and θ: post-processing, no charge.
//!
//! A round may then measure a coarsened table at the round's σ: it costs what the table
//! costs (a record moves one cell of the coarsening as it moves one of the table, so Δ₁,
//! Δ₂ and Δ∞ are the table's), has fewer noisy cells, and AIM's score
//! `w_r·(‖c_r − T̂p̂_r‖₁ − √(2/π)σn_r)` chooses between the two by itself: the coarsening's
//! error is at most the table's, its noise term smaller by `√(2/π)σ·(n_fine − n_coarse)`,
//! so it wins exactly when the error inside the rare groups is below the noise the extra
//! cells would add. The model is fitted to the group sums (`dp_queries::CellGroups`); the
//! shares inside a group come from every other measurement that tells them apart.

use std::collections::HashMap;

use dp_queries::CellGroups;

use super::Candidate;
use crate::Result;

/// The groups of one attribute from its noisy 1-way counts `noisy` at noise σ: the values
/// with `noisy < θ·σ` in one group (numbered last), every other value alone, in order;
/// `None` when fewer than two values are rare (nothing to merge), when `θ = 0`, or when the
/// cut `θ·σ` is above `max_cut` (the noise is too coarse against the total for a value
/// below the cut to be negligible: `AdaptiveProjectionParams::coarse_resolution`).
pub(crate) fn value_groups(
    noisy: &[f64],
    sigma: f64,
    theta: f64,
    max_cut: f64,
) -> Option<Vec<u32>> {
    if theta <= 0.0 || theta * sigma > max_cut {
        return None;
    }
    let rare: Vec<bool> = noisy.iter().map(|&y| y < theta * sigma).collect();
    let n_rare = rare.iter().filter(|&&r| r).count();
    if n_rare < 2 {
        return None;
    }
    let kept = (noisy.len() - n_rare) as u32;
    let mut next = 0u32;
    Some(
        rare.iter()
            .map(|&r| {
                if r {
                    kept
                } else {
                    next += 1;
                    next - 1
                }
            })
            .collect(),
    )
}

/// The coarsened candidates of `cands`: one per candidate of two or more attributes (not
/// itself coarsened) with at least one grouped attribute (`groups`, by attribute), same
/// attributes, weight and parent; ungrouped attributes keep every value. Each with the index
/// of its table in `cands`.
pub(crate) fn coarsened(
    cands: &[Candidate],
    groups: &HashMap<usize, Vec<u32>>,
    size: impl Fn(usize) -> usize,
) -> Result<Vec<(usize, Candidate)>> {
    let mut out = Vec::new();
    for (i, c) in cands.iter().enumerate() {
        if c.attrs.len() < 2
            || c.groups.is_some()
            || !c.attrs.iter().any(|a| groups.contains_key(a))
        {
            continue;
        }
        let maps = c
            .attrs
            .iter()
            .map(|a| match groups.get(a) {
                Some(g) => g.clone(),
                None => (0..size(*a) as u32).collect(),
            })
            .collect();
        out.push((
            i,
            Candidate {
                attrs: c.attrs.clone(),
                weight: c.weight,
                parent: c.parent.clone(),
                groups: Some(CellGroups::new(maps)?),
            },
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both sides of the threshold, by hand: σ = 2, θ = 3 → rare below 6; and of the
    /// largest cut.
    #[test]
    fn rare_values_are_those_below_theta_sigma() {
        let y = [100.0, 5.9, 6.0, -3.0, 40.0, 2.0];
        // rare: 5.9, −3, 2 → one group, numbered after the three kept values
        let inf = f64::INFINITY;
        assert_eq!(
            value_groups(&y, 2.0, 3.0, inf),
            Some(vec![0, 3, 1, 3, 2, 3])
        );
        // one rare value: nothing to merge
        assert_eq!(value_groups(&[100.0, 5.9, 6.0], 2.0, 3.0, inf), None);
        // θ = 0 never merges; every value rare: one group
        assert_eq!(value_groups(&y, 2.0, 0.0, inf), None);
        assert_eq!(value_groups(&[1.0, 2.0], 2.0, 3.0, inf), Some(vec![0, 0]));
        // the cut θσ = 6 against the largest allowed: at 6 grouped, below it not
        assert_eq!(
            value_groups(&y, 2.0, 3.0, 6.0),
            Some(vec![0, 3, 1, 3, 2, 3])
        );
        assert_eq!(value_groups(&y, 2.0, 3.0, 5.99), None);
    }

    #[test]
    fn coarsened_candidates_group_only_grouped_attributes() {
        let cand = |attrs: Vec<usize>| Candidate {
            parent: attrs.clone(),
            attrs,
            weight: 2.0,
            groups: None,
        };
        let cands = vec![
            cand(vec![0]),
            cand(vec![0, 1]),
            cand(vec![1, 2]),
            cand(vec![2]),
        ];
        let groups = HashMap::from([(0usize, vec![0, 1, 1])]);
        let out = coarsened(&cands, &groups, |a| [3, 2, 4][a]).unwrap();
        // only [0, 1]: the 1-ways and the table without attribute 0 are not coarsened
        assert_eq!(out.len(), 1);
        let (fine, twin) = &out[0];
        assert_eq!(*fine, 1);
        assert_eq!(twin.attrs, vec![0, 1]);
        assert_eq!(twin.weight, 2.0);
        let g = twin.groups.as_ref().unwrap();
        assert_eq!(g.maps(), &[vec![0, 1, 1], vec![0, 1]]);
        assert_eq!(g.num_cells(), 4);
        // a coarsened candidate is not coarsened again
        assert!(
            coarsened(std::slice::from_ref(twin), &groups, |a| [3, 2, 4][a])
                .unwrap()
                .is_empty()
        );
    }
}
