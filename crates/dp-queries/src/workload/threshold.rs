//! Two query classes of seed 002 (Thaler, Ullman and Vadhan 2012) beyond disjunctions:
//!
//! * [`ThresholdWorkload`] — **k-of-ℓ threshold queries** (§4.2): a query is a list of `ℓ`
//!   one-hot literals "attribute = code" on distinct attributes and a threshold
//!   `1 ≤ k ≤ ℓ`; it is 1 on a record iff at least `k` of its literals hold. With `k = 1` it
//!   is a disjunction, with `k = ℓ` a conjunction. Literals on one-hot bits make both the
//!   monotone queries of the paper (binary attributes, code 1) and the non-monotone ones
//!   (a negated binary attribute is the literal with code 0) expressible.
//! * [`DecisionListWorkload`] — **databases of decision lists queried by points** (§4.3):
//!   every record *is* a decision list of length at most `L` over `m` binary input
//!   variables, a query is a point `y ∈ {0,1}^m`, and its answer is the fraction of the
//!   records whose list outputs 1 on `y`.
//!
//! ## The decision-list data format
//!
//! A decision list "if `ℓ₁` then output `o₁`, else if `ℓ₂` then `o₂`, …, else if `ℓ_L` then
//! `o_L`, else `o_{L+1}`" is stored as one record of `2L + 1` categorical attributes, in this
//! order ([`DecisionListWorkload::domain_for`] builds the domain):
//!
//! | attribute | size | code `c` means |
//! |---|---|---|
//! | `test1` … `testL` | `2m + 1` | `c < 2m`: the literal on variable `v = ⌊c/2⌋`, "`y_v = 1`" when `c` is even and "`y_v = 0`" when odd; `c = 2m`: no test at this position (a shorter list) |
//! | `output1` … `outputL` | 2 | the output bit `o_i` when test `i` is the first to hold (ignored for an empty test) |
//! | `default` | 2 | `o_{L+1}`, the output when no test holds |
//!
//! (the attributes alternate `test1, output1, test2, output2, …, default`). Any domain of
//! this shape — `2L + 1` attributes, sizes alternating `2m + 1` and 2, a last attribute of
//! size 2, `L ≥ 1`, `m ≥ 1` — is accepted whatever its attribute names; `m` and `L` are
//! read from the sizes. A variable may be tested at several positions; only the first
//! test that holds matters.
//!
//! ## Contributions
//!
//! Both classes are 0/1-valued per query, so one record contributes at most 1 to each of
//! the `k` queries: `‖w(x)‖₁, ‖w(x)‖₂² ≤ k` and `‖w(x) − w(x′)‖₁, ‖·‖₂² ≤ k`. For decision
//! lists all four are attained (the list with no tests and default 1 against the one with
//! default 0). For thresholds they are upper bounds, attained when one record satisfies
//! every query and another none (which a given workload need not allow).

use super::conjunctions::{Literal, check_query};
use super::{AnswerLayout, ContributionBounds, QueryClass, Workload};
use crate::domain::Domain;
use crate::error::{QueryError, Result};

/// One k-of-ℓ threshold query: 1 iff at least `k` of the `literals` hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThresholdQuery {
    /// The threshold `k`, `1 ≤ k ≤ literals.len()`.
    pub k: u32,
    /// The `ℓ` literals, on distinct attributes.
    pub literals: Vec<Literal>,
}

/// A workload of k-of-ℓ threshold queries over a categorical domain (module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThresholdWorkload {
    domain: Domain,
    queries: Vec<ThresholdQuery>,
}

impl ThresholdWorkload {
    /// A workload of the given queries, validated: at least one query; each with at least
    /// one literal, on distinct attributes of the domain, codes in range, and
    /// `1 ≤ k ≤ ℓ`.
    pub fn new(domain: &Domain, queries: Vec<ThresholdQuery>) -> Result<Self> {
        if queries.is_empty() {
            return Err(QueryError::BadWorkload {
                reason: "a threshold workload needs at least one query".into(),
            });
        }
        for (i, q) in queries.iter().enumerate() {
            check_query(domain, &q.literals, i)?;
            if q.k == 0 || q.k as usize > q.literals.len() {
                return Err(QueryError::BadWorkload {
                    reason: format!(
                        "query #{i}: the threshold k must lie between 1 and its number of \
                         literals ({}), found {}",
                        q.literals.len(),
                        q.k
                    ),
                });
            }
        }
        Ok(ThresholdWorkload {
            domain: domain.clone(),
            queries,
        })
    }

    /// The queries, in workload order.
    pub fn queries(&self) -> &[ThresholdQuery] {
        &self.queries
    }

    /// Number of queries.
    pub fn len(&self) -> usize {
        self.queries.len()
    }

    /// Always false (a workload has at least one query).
    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }

    /// Number of literals of query `q` that `record` holds.
    pub fn holding(&self, q: usize, record: &[u32]) -> usize {
        self.queries[q]
            .literals
            .iter()
            .filter(|l| record.get(l.attr as usize) == Some(&l.value))
            .count()
    }

    /// The answer of query `q` on one record: 1 iff at least `k` of its literals hold.
    pub fn evaluate(&self, q: usize, record: &[u32]) -> u8 {
        u8::from(self.holding(q, record) >= self.queries[q].k as usize)
    }
}

/// 0/1 queries: the bounds of the module docs.
fn zero_one_bounds(k: usize) -> ContributionBounds {
    let k = k as u64;
    ContributionBounds {
        l1: k,
        l2_squared: k,
        change_l1: k,
        change_l2_squared: k,
    }
}

impl Workload for ThresholdWorkload {
    fn domain(&self) -> &Domain {
        &self.domain
    }
    fn class(&self) -> QueryClass {
        QueryClass::Thresholds
    }
    fn num_queries(&self) -> usize {
        self.queries.len()
    }
    fn layout(&self) -> AnswerLayout {
        AnswerLayout::Queries
    }
    fn for_each_contribution(&self, record: &[u32], visit: &mut dyn FnMut(usize, i64)) {
        if record.len() != self.domain.len() {
            return;
        }
        for q in 0..self.queries.len() {
            if self.evaluate(q, record) == 1 {
                visit(q, 1);
            }
        }
    }
    fn contribution_bounds(&self) -> ContributionBounds {
        zero_one_bounds(self.queries.len())
    }
    fn touched_attributes(&self) -> Vec<usize> {
        let mut a: Vec<usize> = self
            .queries
            .iter()
            .flat_map(|q| q.literals.iter().map(|l| l.attr as usize))
            .collect();
        a.sort_unstable();
        a.dedup();
        a
    }
    fn on_attributes(&self, attrs: &[usize]) -> Result<Self> {
        let sub = self.domain.project(attrs)?;
        let queries = self
            .queries
            .iter()
            .map(|q| {
                let literals = q
                    .literals
                    .iter()
                    .map(|l| {
                        let at = attrs
                            .iter()
                            .position(|&b| b == l.attr as usize)
                            .ok_or_else(|| QueryError::UnknownAttribute {
                                name: self.domain.name(l.attr as usize).to_string(),
                            })?;
                        Ok(Literal {
                            attr: at as u32,
                            value: l.value,
                        })
                    })
                    .collect::<Result<Vec<Literal>>>()?;
                Ok(ThresholdQuery { k: q.k, literals })
            })
            .collect::<Result<Vec<_>>>()?;
        ThresholdWorkload::new(&sub, queries)
    }
    fn describe_query(&self, q: usize) -> String {
        let q = &self.queries[q];
        let lits: Vec<String> = q
            .literals
            .iter()
            .map(|l| format!("{}={}", self.domain.name(l.attr as usize), l.value))
            .collect();
        format!("at least {} of ({})", q.k, lits.join(", "))
    }
}

/// The shape of a decision-list domain: `m` input variables, lists of length at most `L`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecisionListShape {
    /// Number of binary input variables `m`.
    pub variables: usize,
    /// Number of test positions `L`.
    pub length: usize,
}

impl DecisionListShape {
    /// Reads the shape from a domain (module docs), or says why it is not one.
    pub fn of(domain: &Domain) -> Result<Self> {
        let bad = |reason: String| QueryError::BadWorkload {
            reason: format!("the data is not a decision-list database: {reason}"),
        };
        let d = domain.len();
        if d < 3 || d.is_multiple_of(2) {
            return Err(bad(format!(
                "it needs 2L + 1 attributes (test1, output1, …, testL, outputL, default) \
                 with L ≥ 1, found {d}"
            )));
        }
        let test_size = domain.size(0);
        if test_size < 3 || test_size.is_multiple_of(2) {
            return Err(bad(format!(
                "a test attribute has 2m + 1 codes (two literals per variable and \"no \
                 test\"), found {test_size} codes for '{}'",
                domain.name(0)
            )));
        }
        for a in 0..d {
            let want = if a % 2 == 0 && a + 1 < d {
                test_size
            } else {
                2
            };
            if domain.size(a) != want {
                return Err(bad(format!(
                    "attribute '{}' has {} codes where {want} were expected",
                    domain.name(a),
                    domain.size(a)
                )));
            }
        }
        Ok(DecisionListShape {
            variables: (test_size as usize - 1) / 2,
            length: (d - 1) / 2,
        })
    }

    /// Evaluates the decision list `record` (codes in domain order) at the point `y`
    /// (`y.len() = m`); `None` when the record has the wrong length or a code outside the
    /// shape.
    pub fn evaluate(&self, record: &[u32], y: &[bool]) -> Option<bool> {
        if record.len() != 2 * self.length + 1 || y.len() != self.variables {
            return None;
        }
        let none = 2 * self.variables as u32;
        for i in 0..self.length {
            let test = record[2 * i];
            if test > none {
                return None;
            }
            if test == none {
                continue;
            }
            let want = test.is_multiple_of(2);
            if y[(test / 2) as usize] == want {
                return Some(record[2 * i + 1] == 1);
            }
        }
        Some(record[2 * self.length] == 1)
    }
}

/// A database of decision lists queried by points (module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecisionListWorkload {
    domain: Domain,
    shape: DecisionListShape,
    points: Vec<Vec<bool>>,
}

impl DecisionListWorkload {
    /// The domain of decision lists of length at most `length` over `variables` binary
    /// inputs, with the attribute names of the module docs.
    ///
    /// Errors: `variables` or `length` zero, or a domain too large to describe.
    pub fn domain_for(variables: usize, length: usize) -> Result<Domain> {
        if variables == 0 || length == 0 {
            return Err(QueryError::BadWorkload {
                reason: "decision lists need at least one variable and one test position".into(),
            });
        }
        let test_size = u32::try_from(2 * variables + 1).map_err(|_| QueryError::TooLarge {
            what: "the number of decision-list variables".into(),
            estimate: variables.to_string(),
        })?;
        let mut attrs = Vec::with_capacity(2 * length + 1);
        for i in 1..=length {
            attrs.push((format!("test{i}"), test_size));
            attrs.push((format!("output{i}"), 2));
        }
        attrs.push(("default".to_string(), 2));
        Domain::new(attrs)
    }

    /// A workload of point queries on a decision-list domain, validated: the domain has the
    /// shape of the module docs, at least one point, each of `m` bits.
    pub fn new(domain: &Domain, points: Vec<Vec<bool>>) -> Result<Self> {
        let shape = DecisionListShape::of(domain)?;
        if points.is_empty() {
            return Err(QueryError::BadWorkload {
                reason: "a decision-list workload needs at least one point".into(),
            });
        }
        if let Some((i, p)) = points
            .iter()
            .enumerate()
            .find(|(_, p)| p.len() != shape.variables)
        {
            return Err(QueryError::BadWorkload {
                reason: format!(
                    "point #{i} has {} bits; the lists are over {} variables",
                    p.len(),
                    shape.variables
                ),
            });
        }
        Ok(DecisionListWorkload {
            domain: domain.clone(),
            shape,
            points,
        })
    }

    /// Parses a point written as a string of `0` and `1` (variable 0 first).
    pub fn parse_point(text: &str) -> Option<Vec<bool>> {
        text.chars()
            .map(|c| match c {
                '0' => Some(false),
                '1' => Some(true),
                _ => None,
            })
            .collect()
    }

    /// The shape of the lists.
    pub fn shape(&self) -> DecisionListShape {
        self.shape
    }

    /// The query points, in workload order.
    pub fn points(&self) -> &[Vec<bool>] {
        &self.points
    }
}

impl Workload for DecisionListWorkload {
    fn domain(&self) -> &Domain {
        &self.domain
    }
    fn class(&self) -> QueryClass {
        QueryClass::DecisionLists
    }
    fn num_queries(&self) -> usize {
        self.points.len()
    }
    fn layout(&self) -> AnswerLayout {
        AnswerLayout::Queries
    }
    fn for_each_contribution(&self, record: &[u32], visit: &mut dyn FnMut(usize, i64)) {
        for (q, y) in self.points.iter().enumerate() {
            if self.shape.evaluate(record, y) == Some(true) {
                visit(q, 1);
            }
        }
    }
    fn contribution_bounds(&self) -> ContributionBounds {
        zero_one_bounds(self.points.len())
    }
    /// Every attribute: a list's output depends on all its positions.
    fn touched_attributes(&self) -> Vec<usize> {
        (0..self.domain.len()).collect()
    }
    /// Only the whole domain, in its order (a decision list cannot be split).
    fn on_attributes(&self, attrs: &[usize]) -> Result<Self> {
        if attrs.iter().copied().ne(0..self.domain.len()) {
            return Err(QueryError::BadWorkload {
                reason: "decision-list queries read every attribute of the list, in order".into(),
            });
        }
        Ok(self.clone())
    }
    fn describe_query(&self, q: usize) -> String {
        let bits: String = self.points[q]
            .iter()
            .map(|&b| if b { '1' } else { '0' })
            .collect();
        format!("point {bits}")
    }
}
