//! [`AnyWorkload`]: a workload of any class, chosen at run time, and its JSON forms
//! ([`AnyWorkload::from_json_file`]; the specs `all-Kway` / `random-Kway:M` through
//! [`AnyWorkload::parse_spec`]).

use std::path::Path;

use serde::Deserialize;

use super::conjunctions::{ConjunctionWorkload, Literal, QueryKind};
use super::explicit::ExplicitWorkload;
use super::marginals::MarginalWorkload;
use super::threshold::{DecisionListWorkload, ThresholdQuery, ThresholdWorkload};
use super::{AnswerLayout, ContributionBounds, Parallelism, QueryClass, Workload};
use crate::dataset::Dataset;
use crate::domain::Domain;
use crate::error::{QueryError, Result};

/// A workload of any class, chosen at run time (from a JSON file or a spec): what `dpqr`
/// and the bench pass to mechanisms that accept several classes.
#[derive(Clone, Debug, PartialEq)]
pub enum AnyWorkload {
    /// Marginal tables.
    Marginals(MarginalWorkload),
    /// Conjunctions, disjunctions or parities of one-hot literals.
    Literals(ConjunctionWorkload),
    /// An explicit integer query matrix.
    Explicit(ExplicitWorkload),
    /// k-of-ℓ threshold queries.
    Thresholds(ThresholdWorkload),
    /// Point queries on a database of decision lists.
    DecisionLists(DecisionListWorkload),
}

impl AnyWorkload {
    /// The workload as `&dyn Workload`.
    pub fn as_dyn(&self) -> &dyn Workload {
        match self {
            AnyWorkload::Marginals(w) => w,
            AnyWorkload::Literals(w) => w,
            AnyWorkload::Explicit(w) => w,
            AnyWorkload::Thresholds(w) => w,
            AnyWorkload::DecisionLists(w) => w,
        }
    }

    /// The marginal workload, if this is one.
    pub fn as_marginals(&self) -> Option<&MarginalWorkload> {
        match self {
            AnyWorkload::Marginals(w) => Some(w),
            _ => None,
        }
    }

    /// Parses a workload specification: `all-Kway` and `random-Kway:M` (marginals, see
    /// [`MarginalWorkload::parse_spec`]) or a JSON file ([`Self::from_json_file`]).
    pub fn parse_spec(domain: &Domain, spec: &str, seed: u64) -> Result<Self> {
        if spec.starts_with("all-") || spec.starts_with("random-") {
            return Ok(AnyWorkload::Marginals(MarginalWorkload::parse_spec(
                domain, spec, seed,
            )?));
        }
        Self::from_json_file(domain, Path::new(spec))
    }

    /// Reads a workload JSON file. Two forms:
    ///
    /// * a list of attribute-name lists — marginals, as [`MarginalWorkload::from_json_file`];
    /// * an object with a `"class"`:
    ///   - `{"class": "marginals", "marginals": [["age", "sex"], …]}`;
    ///   - `{"class": "conjunctions" | "disjunctions" | "parities", "queries": [{"age": 3,
    ///     "sex": 1}, …]}` — each query an object from attribute names to codes (its
    ///     literals "attribute = code"; at most one code per attribute);
    ///   - `{"class": "linear", "attributes": ["age", "sex"], "queries": [[w₀, w₁, …], …]}` —
    ///     integer weights over the attributes' cells, row-major (last attribute fastest);
    ///   - `{"class": "thresholds", "queries": [{"k": 2, "literals": {"age": 3, "sex": 1,
    ///     "race": 0}}, …]}` — k-of-ℓ threshold queries: 1 iff at least `k` of the literals
    ///     "attribute = code" hold ([`ThresholdWorkload`]);
    ///   - `{"class": "decision-lists", "points": ["0110", "1011", …]}` — point queries on
    ///     a database of decision lists (the data's domain must have the shape of
    ///     [`super::threshold`]); each point a string of `m` bits, variable 0 first.
    pub fn from_json_file(domain: &Domain, path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| QueryError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_json_slice(domain, &bytes, &path.display().to_string())
    }

    /// [`Self::from_json_file`] on the file's bytes; `file` names it in errors.
    pub fn from_json_slice(domain: &Domain, bytes: &[u8], file: &str) -> Result<Self> {
        let bad_json = |e: serde_json::Error| QueryError::BadJson {
            file: file.to_string(),
            message: e.to_string(),
        };
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(bad_json)?;
        if value.is_array() {
            let lists: Vec<Vec<String>> = serde_json::from_value(value).map_err(bad_json)?;
            return Ok(AnyWorkload::Marginals(
                MarginalWorkload::from_attribute_lists(domain, &lists)?,
            ));
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Spec {
            class: String,
            #[serde(default)]
            marginals: Option<Vec<Vec<String>>>,
            #[serde(default)]
            attributes: Option<Vec<String>>,
            #[serde(default)]
            queries: Option<serde_json::Value>,
            #[serde(default)]
            points: Option<Vec<String>>,
        }
        let spec: Spec = serde_json::from_value(value).map_err(bad_json)?;
        let bad = |reason: String| QueryError::BadWorkload {
            reason: format!("{file}: {reason}"),
        };
        let classes = QueryClass::ALL.map(QueryClass::key).join(", ");
        let class = QueryClass::ALL
            .into_iter()
            .find(|c| c.key() == spec.class)
            .ok_or_else(|| {
                bad(format!(
                    "unknown class '{}' (expected one of: {classes})",
                    spec.class
                ))
            })?;
        let need = |field: &str, present: bool| -> Result<()> {
            if present {
                Ok(())
            } else {
                Err(bad(format!("class '{class}' needs the field \"{field}\"")))
            }
        };
        let refuse = |field: &str, present: bool| -> Result<()> {
            if present {
                Err(bad(format!("class '{class}' takes no field \"{field}\"")))
            } else {
                Ok(())
            }
        };
        match class {
            QueryClass::Marginals => {
                need("marginals", spec.marginals.is_some())?;
                refuse("attributes", spec.attributes.is_some())?;
                refuse("queries", spec.queries.is_some())?;
                refuse("points", spec.points.is_some())?;
                let lists = spec.marginals.unwrap_or_default();
                Ok(AnyWorkload::Marginals(
                    MarginalWorkload::from_attribute_lists(domain, &lists)?,
                ))
            }
            QueryClass::Conjunctions | QueryClass::Disjunctions | QueryClass::Parities => {
                need("queries", spec.queries.is_some())?;
                refuse("attributes", spec.attributes.is_some())?;
                refuse("marginals", spec.marginals.is_some())?;
                refuse("points", spec.points.is_some())?;
                let raw: Vec<serde_json::Map<String, serde_json::Value>> = serde_json::from_value(
                    spec.queries.unwrap_or_default(),
                )
                .map_err(|e| {
                    bad(format!(
                        "\"queries\" must be a list of objects from attribute names to codes ({e})"
                    ))
                })?;
                let mut queries = Vec::with_capacity(raw.len());
                for (i, q) in raw.iter().enumerate() {
                    queries.push(literals_of(domain, q, i, &bad)?);
                }
                let kind = match class {
                    QueryClass::Conjunctions => QueryKind::Conjunction,
                    QueryClass::Disjunctions => QueryKind::Disjunction,
                    _ => QueryKind::Parity,
                };
                Ok(AnyWorkload::Literals(ConjunctionWorkload::new(
                    domain, kind, queries,
                )?))
            }
            QueryClass::Explicit => {
                need("attributes", spec.attributes.is_some())?;
                need("queries", spec.queries.is_some())?;
                refuse("marginals", spec.marginals.is_some())?;
                refuse("points", spec.points.is_some())?;
                let attrs = spec
                    .attributes
                    .unwrap_or_default()
                    .iter()
                    .map(|n| domain.index_of(n))
                    .collect::<Result<Vec<usize>>>()?;
                let matrix: Vec<Vec<i64>> =
                    serde_json::from_value(spec.queries.unwrap_or_default()).map_err(|e| {
                        bad(format!(
                            "\"queries\" must be a list of lists of integer weights ({e})"
                        ))
                    })?;
                Ok(AnyWorkload::Explicit(ExplicitWorkload::new(
                    domain, attrs, matrix,
                )?))
            }
            QueryClass::Thresholds => {
                need("queries", spec.queries.is_some())?;
                refuse("attributes", spec.attributes.is_some())?;
                refuse("marginals", spec.marginals.is_some())?;
                refuse("points", spec.points.is_some())?;
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct RawThreshold {
                    k: u32,
                    literals: serde_json::Map<String, serde_json::Value>,
                }
                let raw: Vec<RawThreshold> =
                    serde_json::from_value(spec.queries.unwrap_or_default()).map_err(|e| {
                        bad(format!(
                            "\"queries\" must be a list of objects {{\"k\": threshold, \
                             \"literals\": {{attribute name: code, …}}}} ({e})"
                        ))
                    })?;
                let mut queries = Vec::with_capacity(raw.len());
                for (i, q) in raw.iter().enumerate() {
                    queries.push(ThresholdQuery {
                        k: q.k,
                        literals: literals_of(domain, &q.literals, i, &bad)?,
                    });
                }
                Ok(AnyWorkload::Thresholds(ThresholdWorkload::new(
                    domain, queries,
                )?))
            }
            QueryClass::DecisionLists => {
                need("points", spec.points.is_some())?;
                refuse("attributes", spec.attributes.is_some())?;
                refuse("marginals", spec.marginals.is_some())?;
                refuse("queries", spec.queries.is_some())?;
                let points = spec
                    .points
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        DecisionListWorkload::parse_point(p).ok_or_else(|| {
                            bad(format!(
                                "point #{i} must be a string of 0 and 1, found \"{p}\""
                            ))
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(AnyWorkload::DecisionLists(DecisionListWorkload::new(
                    domain, points,
                )?))
            }
        }
    }
}

/// The literals "attribute = code" of query `i` from a JSON object of names to codes.
fn literals_of(
    domain: &Domain,
    q: &serde_json::Map<String, serde_json::Value>,
    i: usize,
    bad: &dyn Fn(String) -> QueryError,
) -> Result<Vec<Literal>> {
    let mut lits = Vec::with_capacity(q.len());
    for (name, code) in q {
        let attr = domain.index_of(name)?;
        let value = code
            .as_u64()
            .and_then(|c| u32::try_from(c).ok())
            .ok_or_else(|| {
                bad(format!(
                    "query #{i}: the code of '{name}' must be a non-negative integer, found \
                     {code}"
                ))
            })?;
        lits.push(Literal {
            attr: attr as u32,
            value,
        });
    }
    Ok(lits)
}

impl Workload for AnyWorkload {
    fn domain(&self) -> &Domain {
        self.as_dyn().domain()
    }
    fn class(&self) -> QueryClass {
        self.as_dyn().class()
    }
    fn num_queries(&self) -> usize {
        self.as_dyn().num_queries()
    }
    fn layout(&self) -> AnswerLayout {
        self.as_dyn().layout()
    }
    fn for_each_contribution(&self, record: &[u32], visit: &mut dyn FnMut(usize, i64)) {
        self.as_dyn().for_each_contribution(record, visit)
    }
    fn contribution_bounds(&self) -> ContributionBounds {
        self.as_dyn().contribution_bounds()
    }
    fn touched_attributes(&self) -> Vec<usize> {
        self.as_dyn().touched_attributes()
    }
    fn on_attributes(&self, attrs: &[usize]) -> Result<Self> {
        Ok(match self {
            AnyWorkload::Marginals(w) => AnyWorkload::Marginals(w.on_attributes(attrs)?),
            AnyWorkload::Literals(w) => AnyWorkload::Literals(Workload::on_attributes(w, attrs)?),
            AnyWorkload::Explicit(w) => AnyWorkload::Explicit(w.on_attributes(attrs)?),
            AnyWorkload::Thresholds(w) => AnyWorkload::Thresholds(w.on_attributes(attrs)?),
            AnyWorkload::DecisionLists(w) => AnyWorkload::DecisionLists(w.on_attributes(attrs)?),
        })
    }
    fn describe_query(&self, q: usize) -> String {
        self.as_dyn().describe_query(q)
    }
    fn count_all_with(&self, data: &Dataset, parallelism: Parallelism) -> Result<Vec<i64>> {
        self.as_dyn().count_all_with(data, parallelism)
    }
    fn add_counts_with(
        &self,
        data: &Dataset,
        totals: &mut [i128],
        parallelism: Parallelism,
    ) -> Result<()> {
        self.as_dyn().add_counts_with(data, totals, parallelism)
    }
}
