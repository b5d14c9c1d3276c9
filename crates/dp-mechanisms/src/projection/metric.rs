//! The metric `d(x, y) = ‖q(x) − q(y)‖₂ / √m` of seed 004 §2.4 between the answer vectors of
//! two universe elements under a marginal workload, computed on records instead of on
//! `m`-dimensional vectors, and the covers built with it.
//!
//! The answer vector `q(x) ∈ {0,1}^m` of a record has exactly one 1 per table, at the cell of
//! `x`. Two records `x, y` select the same cell of table `j` iff they agree on every attribute
//! of `j`, so
//!
//! ```text
//!     ‖q(x) − q(y)‖₂² = 2 · D(x, y),   D(x, y) = #{tables j : x and y differ on an attribute of j},
//! ```
//!
//! and `d(x, y) = √(2D/m)`. `D` depends only on the set `A` of attributes where the records
//! differ; this module packs every record into a `u64` (one bit field per attribute),
//! obtains `A` as a bit mask from an XOR, and looks `D(A)` up in a table of size `2^d` (or,
//! for more than [`LOOKUP_MAX_ATTRIBUTES`] attributes, counts the tables meeting `A`).
//! A distance then costs `O(d)` instead of `O(m)`, which is what makes the greedy covers
//! of seed 004 Lemma 2.7 feasible on universes of 10⁵ points in dimension 4 480.
//!
//! The greedy and nearest-point routines follow dp-geometry's
//! [`dp_geometry::maximal_separated_subset`], [`dp_geometry::extend_separated_subset`] and
//! [`dp_geometry::nearest_point_map`] exactly (same scan order, same tie-breaking), so
//! they return the same sets; the tests check this against dp-geometry on small universes.

use crate::{MechanismError, Result};
use dp_queries::{MarginalWorkload, Universe};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

/// Up to this many attributes, `D(A)` is a table lookup (`2^d` entries of 4 bytes).
pub const LOOKUP_MAX_ATTRIBUTES: usize = 20;

/// Distances between universe elements under a marginal workload (module docs).
#[derive(Clone, Debug)]
pub struct MarginalMetric {
    /// Packed record of every universe element.
    codes: Vec<u64>,
    /// Bit field `(shift, mask)` of every attribute.
    fields: Vec<(u32, u64)>,
    /// Attribute mask of every table.
    table_masks: Vec<u64>,
    /// `D(A)` for every attribute mask `A`, when `d ≤ LOOKUP_MAX_ATTRIBUTES`.
    lookup: Option<Vec<u32>>,
    /// Number of queries (cells) `m`.
    m: usize,
    /// Every field is one bit at shift = attribute index: the XOR is the mask.
    single_bits: bool,
    /// The bits of the fields of the attributes some table uses: two elements have the same
    /// answer vector iff their codes agree on these bits.
    class_bits: u64,
    /// Domain size of every attribute.
    sizes: Vec<u64>,
}

/// A ball as attribute sets (see [`MarginalMetric::ball`]).
struct Ball {
    /// `(D(A), A)`, increasing.
    sets: Vec<(u32, u64)>,
    /// Number of neighbours.
    size: u64,
}

impl MarginalMetric {
    /// The metric of `universe`'s elements under `workload` (which must share its domain).
    /// Fails if the records do not pack into 64 bits (such a universe could not be
    /// enumerated anyway).
    pub fn new(universe: &Universe, workload: &MarginalWorkload) -> Result<Self> {
        let domain = universe.domain();
        if workload.domain() != domain {
            return Err(MechanismError::Data {
                reason: "the workload's domain is not the universe's".into(),
            });
        }
        let d = domain.len();
        let mut fields = Vec::with_capacity(d);
        let mut shift = 0u32;
        for i in 0..d {
            let size = domain.size(i).max(1);
            let bits = 32 - (size - 1).leading_zeros();
            let bits = bits.max(1);
            if shift + bits > 64 {
                return Err(MechanismError::Data {
                    reason: "records do not pack into 64 bits".into(),
                });
            }
            fields.push((shift, (1u64 << bits) - 1));
            shift += bits;
        }
        let mut codes = vec![0u64; universe.len()];
        let sizes: Vec<u64> = (0..d).map(|i| domain.size(i) as u64).collect();
        // Decode in mixed radix, last attribute fastest (the universe's order).
        codes.par_iter_mut().enumerate().for_each(|(x, c)| {
            let mut rest = x as u64;
            let mut code = 0u64;
            for i in (0..d).rev() {
                let digit = rest % sizes[i];
                rest /= sizes[i];
                code |= digit << fields[i].0;
            }
            *c = code;
        });
        let table_masks: Vec<u64> = workload
            .marginals()
            .iter()
            .map(|mg| mg.attrs().iter().fold(0u64, |acc, &a| acc | (1u64 << a)))
            .collect();
        let lookup = (d <= LOOKUP_MAX_ATTRIBUTES).then(|| {
            (0..1u64 << d)
                .into_par_iter()
                .map(|a| table_masks.iter().filter(|&&t| t & a != 0).count() as u32)
                .collect()
        });
        let single_bits = fields
            .iter()
            .enumerate()
            .all(|(i, &(shift, m))| shift as usize == i && m == 1);
        let class_bits = fields
            .iter()
            .enumerate()
            .filter(|(i, _)| table_masks.iter().any(|&t| t & (1u64 << i) != 0))
            .fold(0u64, |acc, (_, &(shift, m))| acc | (m << shift));
        Ok(MarginalMetric {
            sizes,
            class_bits,
            single_bits,
            codes,
            fields,
            table_masks,
            lookup,
            m: workload.num_queries(),
        })
    }

    /// Number of universe elements.
    pub fn len(&self) -> usize {
        self.codes.len()
    }

    /// Whether the universe is empty (never, for a valid domain).
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// Number of queries `m`.
    pub fn num_queries(&self) -> usize {
        self.m
    }

    /// Number of tables.
    pub fn num_tables(&self) -> usize {
        self.table_masks.len()
    }

    #[inline]
    fn mask(&self, a: u64, b: u64) -> u64 {
        let x = a ^ b;
        if self.single_bits {
            return x;
        }
        let mut mask = 0u64;
        for (i, &(shift, m)) in self.fields.iter().enumerate() {
            if (x >> shift) & m != 0 {
                mask |= 1 << i;
            }
        }
        mask
    }

    #[inline]
    fn tables_meeting(&self, mask: u64) -> u32 {
        match &self.lookup {
            Some(t) => t[mask as usize],
            None => self.table_masks.iter().filter(|&&t| t & mask != 0).count() as u32,
        }
    }

    #[inline]
    fn d_codes(&self, a: u64, b: u64) -> u32 {
        if a == b {
            0
        } else {
            self.tables_meeting(self.mask(a, b))
        }
    }

    /// `D(x, y)`: the number of tables in which `x` and `y` fall in different cells, so that
    /// `‖q(x) − q(y)‖₂² = 2D`. Indices must be `< len()` (panics otherwise; internal kernel).
    pub fn differing_tables(&self, x: usize, y: usize) -> u32 {
        self.d_codes(self.codes[x], self.codes[y])
    }

    /// `d(x, y) = √(2D(x, y)/m)`.
    pub fn distance(&self, x: usize, y: usize) -> f64 {
        (2.0 * self.differing_tables(x, y) as f64 / self.m as f64).sqrt()
    }

    /// `‖q(x)‖₂ / √m = √(#tables/m)`, the same for every element.
    pub fn point_norm(&self) -> f64 {
        (self.num_tables() as f64 / self.m as f64).sqrt()
    }

    /// A lower bound on the distance between two distinct elements, attained: records
    /// differing in a single attribute `a` are at `√(2·#tables containing a / m)`, and two
    /// records differing on a set `A ∋ a` are at least that far apart (every table containing
    /// `a` differs). Attributes of size 1 cannot differ and are skipped; `None` for a
    /// one-element universe. It is 0 when some attribute is in no table.
    pub fn min_positive_distance(&self) -> Option<f64> {
        self.min_positive_d()
            .map(|d| (2.0 * d as f64 / self.m as f64).sqrt())
    }

    fn min_positive_d(&self) -> Option<u32> {
        self.fields
            .iter()
            .enumerate()
            .filter(|(_, (_, m))| *m != 0)
            .filter(|(i, _)| self.has_two_values(*i))
            .map(|(i, _)| self.tables_meeting(1 << i))
            .min()
    }

    /// The smallest `D` between two elements with *different* answer vectors, attained:
    /// such elements differ on some attribute `a` that a table uses, so `D ≥ #tables ∋ a`,
    /// with equality for records differing in `a` alone. `None` when every element has the
    /// same answer vector. Unlike [`Self::min_positive_distance`]'s `D`, attributes no
    /// table uses are ignored (elements differing only there are at distance 0).
    pub fn min_distinct_d(&self) -> Option<u32> {
        self.fields
            .iter()
            .enumerate()
            .filter(|(i, _)| self.has_two_values(*i))
            .map(|(i, _)| self.tables_meeting(1 << i))
            .filter(|&d| d > 0)
            .min()
    }

    /// Whether every two elements are either at distance 0 (same answer vector) or more
    /// than `t` apart, so that a `t`-separated set holds one element per answer vector and
    /// the maximal one holds every answer vector.
    pub fn separates_every_answer_vector(&self, t: f64) -> bool {
        let thr = self.threshold(t);
        self.min_distinct_d().is_none_or(|d| d as f64 > thr)
    }

    /// The answer-vector class of an element: equal iff the answer vectors are equal.
    #[inline]
    fn class_of(&self, x: usize) -> u64 {
        self.codes[x] & self.class_bits
    }

    /// Number of distinct answer vectors.
    pub fn num_answer_vectors(&self) -> usize {
        let mut seen = HashSet::with_capacity(self.len().min(1 << 20));
        (0..self.len())
            .filter(|&x| seen.insert(self.class_of(x)))
            .count()
    }

    /// The ball of radius `t` around any element, by the attribute sets where a neighbour
    /// differs: every non-empty set `A` of attributes that some table uses with
    /// `D(A) ≤ t²m/2`, sorted by `D(A)` (then `A`), and the number of neighbours
    /// `Σ_A Π_{a∈A} (size_a − 1)` it describes. Elements with the element's own answer
    /// vector (`A` of unused attributes only) are not in it. `None` without the lookup table
    /// or when the ball has more than `limit` neighbours.
    fn ball(&self, t: f64, limit: u64) -> Option<Ball> {
        let lookup = self.lookup.as_ref()?;
        let thr = self.threshold(t);
        let eligible = (0..self.fields.len())
            .filter(|&i| self.has_two_values(i) && self.tables_meeting(1 << i) > 0)
            .fold(0u64, |acc, i| acc | (1 << i));
        let mut sets = Vec::new();
        let mut size = 0u64;
        // every non-empty submask A of `eligible`
        let mut a = eligible;
        while a != 0 {
            let d = lookup[a as usize];
            if d as f64 <= thr {
                let combos = (0..self.fields.len())
                    .filter(|i| a & (1 << i) != 0)
                    .fold(1u64, |acc, i| {
                        acc.saturating_mul(self.sizes[i].saturating_sub(1))
                    });
                size = size.saturating_add(combos);
                if size > limit {
                    return None;
                }
                sets.push((d, a));
            }
            a = (a - 1) & eligible;
        }
        sets.sort_unstable();
        Some(Ball { sets, size })
    }

    /// Calls `f` with the code of every element that differs from `code` exactly on the
    /// attributes of `set`, until `f` returns `true` (then returns `true`).
    fn any_neighbour(&self, code: u64, set: u64, f: &mut impl FnMut(u64) -> bool) -> bool {
        let attrs: Vec<usize> = (0..self.fields.len())
            .filter(|i| set & (1 << i) != 0)
            .collect();
        let own: Vec<u64> = attrs
            .iter()
            .map(|&i| (code >> self.fields[i].0) & self.fields[i].1)
            .collect();
        // odometer over the other values of each attribute (value 0 or 1 first)
        let first = |k: usize| if own[k] == 0 { 1 } else { 0 };
        let mut vals: Vec<u64> = (0..attrs.len()).map(first).collect();
        let clear = attrs.iter().fold(!0u64, |acc, &i| {
            let (shift, m) = self.fields[i];
            acc & !(m << shift)
        });
        loop {
            let y = attrs
                .iter()
                .zip(&vals)
                .fold(code & clear, |acc, (&i, &v)| acc | (v << self.fields[i].0));
            if f(y) {
                return true;
            }
            let mut k = 0;
            loop {
                if k == attrs.len() {
                    return false;
                }
                let mut v = vals[k] + 1;
                if v == own[k] {
                    v += 1;
                }
                if v < self.sizes[attrs[k]] {
                    vals[k] = v;
                    break;
                }
                vals[k] = first(k);
                k += 1;
            }
        }
    }

    fn has_two_values(&self, attr: usize) -> bool {
        // The universe is the whole product of the domain.
        self.sizes[attr] >= 2
    }

    /// Largest `D` with `√(2D/m) ≤ t`, i.e. `x, y` are more than `t` apart iff `D > threshold`.
    fn threshold(&self, t: f64) -> f64 {
        t * t * self.m as f64 / 2.0
    }

    /// Greedy inclusion-maximal `t`-separated subset in index order (seed 004 Lemma 2.7),
    /// identical to [`dp_geometry::maximal_separated_subset`] with
    /// [`dp_geometry::Metric::ScaledL2`] on the answer vectors. Sorted indices.
    pub fn maximal_separated_subset(&self, t: f64) -> Result<Vec<usize>> {
        self.extend_separated_subset(t, Vec::new())
    }

    /// Maximal `t`-separated superset of `initial` (which must be `t`-separated, and is
    /// kept), as [`dp_geometry::extend_separated_subset`]. Sorted indices.
    pub fn extend_separated_subset(&self, t: f64, initial: Vec<usize>) -> Result<Vec<usize>> {
        if !(t.is_finite() && t >= 0.0) {
            return Err(MechanismError::InvalidParameter {
                name: "t",
                value: t.to_string(),
                reason: "a separation must be finite and non-negative".into(),
            });
        }
        let n = self.len();
        let thr = self.threshold(t);
        let mut is_chosen = vec![false; n];
        // When every two distinct elements are more than t apart, any set of distinct
        // elements is t-separated and the maximal one is everything: no distance needed.
        let all_separated = self.min_positive_d().is_none_or(|d| d as f64 > thr);
        let mut chosen_codes: Vec<u64> = Vec::with_capacity(initial.len());
        let mut chosen = Vec::with_capacity(initial.len());
        // The ball of radius t, when it is smaller than the universe: then "is a chosen
        // element within t of x" is answered by looking x's neighbours up among the chosen
        // answer vectors, in O(ball) instead of O(|chosen|) — the same predicate, so the
        // same greedy set.
        let ball = self.ball(t, n as u64);
        let chosen_in_ball = |classes: &HashSet<u64>, code: u64, ball: &Ball| {
            ball.sets.iter().any(|&(_, a)| {
                self.any_neighbour(code, a, &mut |y| classes.contains(&(y & self.class_bits)))
            })
        };
        let mut chosen_classes: HashSet<u64> = HashSet::new();
        let validate_by_ball = ball
            .as_ref()
            .is_some_and(|b| !all_separated && b.size < initial.len() as u64);
        if validate_by_ball {
            for &i in &initial {
                if i < n && !chosen_classes.insert(self.class_of(i)) {
                    return Err(MechanismError::InvalidParameter {
                        name: "initial",
                        value: i.to_string(),
                        reason: format!("point {i} is within {t} of another initial point"),
                    });
                }
            }
        }
        for &i in &initial {
            if i >= n {
                return Err(MechanismError::InvalidParameter {
                    name: "initial",
                    value: i.to_string(),
                    reason: format!("index out of range for {n} points"),
                });
            }
            let c = self.codes[i];
            let too_close = if all_separated {
                false
            } else if validate_by_ball {
                ball.as_ref()
                    .is_some_and(|b| chosen_in_ball(&chosen_classes, c, b))
            } else {
                chosen_codes
                    .iter()
                    .any(|&o| self.d_codes(o, c) as f64 <= thr)
            };
            if is_chosen[i] || too_close {
                return Err(MechanismError::InvalidParameter {
                    name: "initial",
                    value: i.to_string(),
                    reason: format!("point {i} is within {t} of another initial point"),
                });
            }
            is_chosen[i] = true;
            chosen_codes.push(c);
            chosen.push(i);
        }
        if all_separated {
            return Ok((0..n).collect());
        }
        if self.separates_every_answer_vector(t) {
            // Every two elements are at distance 0 or > t: the greedy scan keeps exactly
            // the first element of each answer vector not already represented (an initial
            // element represents its own, and no other, since it is > t from the rest).
            let mut seen: HashSet<u64> = chosen.iter().map(|&i| self.class_of(i)).collect();
            for (i, taken) in is_chosen.iter().enumerate() {
                if !taken && seen.insert(self.class_of(i)) {
                    chosen.push(i);
                }
            }
            chosen.sort_unstable();
            return Ok(chosen);
        }
        // Elements with equal answer vectors have equal distances to everything, so only
        // the first element of each answer vector (in scan order) can be kept: a later one
        // is at distance 0 from it if it was kept, and within t of the element that
        // excluded it otherwise. Skipping them saves the scans when some attribute is in
        // no table (otherwise every class is a single element and the set stays empty).
        let all_bits = self
            .fields
            .iter()
            .fold(0u64, |acc, &(shift, m)| acc | (m << shift));
        let mut decided: HashSet<u64> = HashSet::new();
        let track_classes = self.class_bits != all_bits;
        if track_classes {
            decided.extend(chosen.iter().map(|&i| self.class_of(i)));
        }
        if ball.is_some() && !validate_by_ball {
            chosen_classes = chosen.iter().map(|&i| self.class_of(i)).collect();
        }
        for (i, taken) in is_chosen.iter_mut().enumerate() {
            if *taken {
                continue;
            }
            if track_classes && !decided.insert(self.class_of(i)) {
                continue;
            }
            let c = self.codes[i];
            let far = if let Some(b) = ball.as_ref().filter(|b| b.size < chosen_codes.len() as u64)
            {
                !chosen_in_ball(&chosen_classes, c, b)
            } else if chosen_codes.len() >= 4096 {
                chosen_codes
                    .par_chunks(1024)
                    .all(|ch| ch.iter().all(|&o| self.d_codes(o, c) as f64 > thr))
            } else {
                chosen_codes
                    .iter()
                    .all(|&o| self.d_codes(o, c) as f64 > thr)
            };
            if far {
                *taken = true;
                chosen_codes.push(c);
                chosen.push(i);
                if ball.is_some() {
                    chosen_classes.insert(c & self.class_bits);
                }
            }
        }
        chosen.sort_unstable();
        Ok(chosen)
    }

    /// For every element, the index (into the universe, not into `centers`) of a nearest
    /// element of `centers` (sorted, non-empty), the first in `centers` order on ties — the
    /// map of [`dp_geometry::nearest_point_map`].
    pub fn nearest_point_map(&self, centers: &[usize]) -> Result<Vec<usize>> {
        self.nearest_point_map_within(centers, None)
    }

    /// [`Self::nearest_point_map`] when `centers` is known to be a `t`-cover (as a maximal
    /// `t`-separated set is): the nearest center of an element is searched in its ball of
    /// radius `t` (`Self::ball`) in increasing distance when that ball is smaller than
    /// `centers`, and by the scan otherwise (also if the ball holds no center). Same map.
    pub fn nearest_point_map_cover(&self, centers: &[usize], t: f64) -> Result<Vec<usize>> {
        self.nearest_point_map_within(centers, Some(t))
    }

    fn nearest_point_map_within(&self, centers: &[usize], t: Option<f64>) -> Result<Vec<usize>> {
        if centers.is_empty() {
            return Err(MechanismError::InvalidParameter {
                name: "centers",
                value: "[]".into(),
                reason: "a nearest-point map needs a center".into(),
            });
        }
        let n = self.len();
        if let Some(&bad) = centers.iter().find(|&&c| c >= n) {
            return Err(MechanismError::InvalidParameter {
                name: "centers",
                value: bad.to_string(),
                reason: format!("index out of range for {n} points"),
            });
        }
        let min_d = self.min_distinct_d().unwrap_or(0);
        // The first center (in `centers` order) of every answer vector: an element whose
        // answer vector has a center is at distance 0 from it, the minimum, and it is the
        // first center at that distance. O(|X|) in total instead of O(|X|·|centers|).
        let mut first_of_class: HashMap<u64, usize> = HashMap::with_capacity(centers.len());
        for &c in centers {
            first_of_class.entry(self.class_of(c)).or_insert(c);
        }
        let center_codes: Vec<u64> = centers.iter().map(|&c| self.codes[c]).collect();
        let ball = t
            .and_then(|t| self.ball(t, centers.len() as u64))
            .filter(|b| b.size < centers.len() as u64);
        // The smallest center index among the nearest centers in the ball, if any: the
        // sets come in increasing D, and the first D with a center decides.
        let in_ball = |code: u64, ball: &Ball| -> Option<usize> {
            let mut best: Option<(u32, usize)> = None;
            for &(d, a) in &ball.sets {
                if best.is_some_and(|(bd, _)| d > bd) {
                    break;
                }
                self.any_neighbour(code, a, &mut |y| {
                    if let Some(&c) = first_of_class.get(&(y & self.class_bits))
                        && best.is_none_or(|(_, bc)| c < bc)
                    {
                        best = Some((d, c));
                    }
                    false
                });
            }
            best.map(|(_, c)| c)
        };
        let map = (0..n)
            .into_par_iter()
            .map(|x| {
                if let Some(&c) = first_of_class.get(&self.class_of(x)) {
                    return c;
                }
                if let Some(c) = ball.as_ref().and_then(|b| in_ball(self.codes[x], b)) {
                    return c;
                }
                // Scanning in `centers` order and stopping at the smallest possible
                // positive distance (no center has x's answer vector) keeps the first
                // nearest center.
                let stop = min_d;
                let cx = self.codes[x];
                let mut best = (0usize, u32::MAX);
                for (k, &cc) in center_codes.iter().enumerate() {
                    let d = self.d_codes(cc, cx);
                    if d < best.1 {
                        best = (k, d);
                        if d <= stop {
                            break;
                        }
                    }
                }
                centers[best.0]
            })
            .collect();
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_queries::Domain;

    #[test]
    fn distance_is_twice_the_differing_tables_over_m() {
        // 3 binary attributes, all 2-way tables (3 tables of 4 cells, m = 12). Records
        // 000 and 011 differ on b and c: every table meets {b, c}, so D = 3.
        let d = Domain::new(vec![("a".into(), 2), ("b".into(), 2), ("c".into(), 2)]).unwrap();
        let w = MarginalWorkload::all_kway(&d, 2).unwrap();
        let u = Universe::new(&d, 100).unwrap();
        let mm = MarginalMetric::new(&u, &w).unwrap();
        assert_eq!(mm.differing_tables(0, 3), 3);
        // 000 vs 100: tables ab and ac differ, bc agrees.
        assert_eq!(mm.differing_tables(0, 4), 2);
        assert!((mm.distance(0, 4) - (4.0f64 / 12.0).sqrt()).abs() < 1e-15);
        assert_eq!(mm.min_positive_distance(), Some((4.0f64 / 12.0).sqrt()));
        assert!((mm.point_norm() - 0.5).abs() < 1e-15);
    }
}
