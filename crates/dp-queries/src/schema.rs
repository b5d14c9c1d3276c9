//! Public schemas: how the raw values of a CSV column become the integer codes of a
//! [`Domain`].
//!
//! A schema is the domain file extended, per attribute, with what its codes *mean*. Each
//! entry of the JSON object is either
//!
//! * a size, `"age": 10` (or `{"size": 10}`): the column holds integer codes `0..10`,
//!   exactly as in a plain domain file;
//! * category labels, `{"labels": ["female", "male"]}`: the column holds those strings,
//!   label `i` is code `i`, the size is the number of labels. Labels are matched exactly
//!   (case and spaces count) after CSV unquoting; they must be non-empty and distinct;
//! * numeric bin edges, `{"bins": [e0, e1, …, ek]}`: the column holds numbers, `k` bins,
//!   code `i` for a value `v` with `e_i <= v < e_{i+1}` — half-open — except the **last bin,
//!   which is closed**: `e_{k-1} <= v <= e_k`. Edges must be finite and strictly
//!   increasing (at least two). Numbers are read after trimming surrounding spaces, in the
//!   usual decimal or scientific notation (`3`, `-2.5`, `1e3`);
//!
//! and a labels or bins entry may add
//!
//! * `"missing": true`: one more code for **empty cells** — a field that is empty or holds
//!   only whitespace (and is not itself a label), or a null in a Parquet file — named
//!   `missing` in labelled outputs ([`AttributeSchema::missing_name`]) and written back as
//!   an empty field;
//! * `"other": true`: one more code, always the last (`size - 1`), that collects every
//!   value outside the schema — an unknown label, a number outside `[e0, ek]`, a
//!   non-number in a bins column, `NaN` — and the empty cells too when the attribute
//!   declares no `missing` code.
//!
//! **Code order**: the declared values (labels or bins) `0..k`, then `missing` (code `k`,
//! when declared), then `other` (the last code). Without `other`, a value outside the
//! schema is an error naming the file, line and column ([`QueryError::OutsideSchema`]);
//! without `missing` and `other`, so is an empty cell. `dpqr schema check` (NON-PRIVATE,
//! `io::check`) reports, per column, how many values would go to each of these codes.
//!
//! Example (`people-schema.json`):
//!
//! ```json
//! {
//!   "sex":    {"labels": ["female", "male"]},
//!   "age":    {"bins": [0, 18, 30, 50, 65, 120]},
//!   "region": {"labels": ["north", "south"], "missing": true, "other": true},
//!   "flag":   2
//! }
//! ```
//!
//! gives the domain `sex: 2, age: 5, region: 4, flag: 2` (`region`: `north` 0, `south` 1,
//! `missing` 2, `other` 3).
//!
//! **The schema is public.** It is part of what a release discloses (the answers are laid
//! out over it) and it must be fixed without looking at the private data: nothing in dpqr
//! infers it from the data, except the explicitly non-private helper [`draft_schema`]
//! (`dpqr schema draft`), whose output must be reviewed and coarsened before use.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::domain::Domain;
use crate::error::{QueryError, Result};

/// How the raw values of one attribute are encoded as codes.
#[derive(Clone, Debug, PartialEq)]
pub enum Encoding {
    /// The column holds integer codes already (the plain domain-file format).
    Codes,
    /// The column holds category labels; label `i` is code `i`.
    Labels(Vec<String>),
    /// The column holds numbers, binned by these strictly increasing finite edges
    /// (`k + 1` edges give `k` bins, half-open except the last, which is closed).
    Bins(Vec<f64>),
}

/// The encoding of one attribute: its [`Encoding`] and whether it has a `missing` code and
/// an `other` bucket.
#[derive(Clone, Debug, PartialEq)]
pub struct AttributeSchema {
    encoding: Encoding,
    missing: bool,
    other: bool,
    lookup: HashMap<String, u32>,
}

impl AttributeSchema {
    /// The encoding.
    pub fn encoding(&self) -> &Encoding {
        &self.encoding
    }

    /// Whether the last code is an `other` bucket for values outside the schema.
    pub fn has_other(&self) -> bool {
        self.other
    }

    /// Whether empty cells have their own code (`"missing": true`), right after the
    /// declared values.
    pub fn has_missing(&self) -> bool {
        self.missing
    }

    /// The code of empty cells: the `missing` code when declared, else the `other` bucket
    /// when declared, else `None` (an empty cell is then an error).
    pub fn empty_code(&self) -> Option<u32> {
        // `missing` is code k; without it, `other` is
        let k = self.declared()?;
        (self.missing || self.other).then_some(k)
    }

    /// The `other` bucket's code (the last), or `None` without one.
    pub fn other_code(&self) -> Option<u32> {
        let k = self.declared()?;
        self.other.then_some(k + u32::from(self.missing))
    }

    /// The number of codes the schema's own values take (without the `missing` and `other`
    /// codes), or `None` for [`Encoding::Codes`].
    fn declared(&self) -> Option<u32> {
        match &self.encoding {
            Encoding::Codes => None,
            Encoding::Labels(l) => u32::try_from(l.len()).ok(),
            Encoding::Bins(e) => u32::try_from(e.len() - 1).ok(),
        }
    }

    /// The human-readable name of code `code` (a label, a bin such as `[18, 30)`, the
    /// [`missing_name`](Self::missing_name), `other`, or the code itself for
    /// [`Encoding::Codes`]).
    pub fn describe_code(&self, code: u32) -> String {
        let i = code as usize;
        match &self.encoding {
            Encoding::Codes => return code.to_string(),
            Encoding::Labels(l) if i < l.len() => return l[i].clone(),
            Encoding::Bins(e) if i + 1 < e.len() => {
                let close = if i + 2 == e.len() { ']' } else { ')' };
                return format!("[{}, {}{close}", e[i], e[i + 1]);
            }
            _ => {}
        }
        if self.missing && Some(code) == self.declared() {
            return self.missing_name().unwrap_or_default();
        }
        "other".into()
    }

    /// The name of the `missing` code in labelled outputs (answers' `label` column, the
    /// report): `missing`, or — when that is one of the labels — the first of `missing_1`,
    /// `missing_2`, … that is not. `None` when the attribute has no `missing` code. (In
    /// synthetic files the `missing` code is written as an empty field, which reads back as
    /// that code.)
    pub fn missing_name(&self) -> Option<String> {
        if !self.missing {
            return None;
        }
        let taken = |v: &str| self.lookup.contains_key(v);
        if !taken("missing") {
            return Some("missing".into());
        }
        (1u64..).map(|i| format!("missing_{i}")).find(|v| !taken(v))
    }

    /// The field dpqr writes for the `other` bucket of this attribute: `other`, or — when
    /// that is one of its labels — the first of `other_1`, `other_2`, … that is not.
    /// Never empty and never a label, and no bin value (it is not a number), so it reads
    /// back as the `other` bucket; `None` when the attribute has no `other` bucket.
    ///
    /// (Not an empty field: a file of one column would hold blank lines, which the loader
    /// skips.)
    pub fn other_value(&self) -> Option<String> {
        if !self.other {
            return None;
        }
        let taken = |v: &str| self.lookup.contains_key(v);
        if !taken("other") {
            return Some("other".into());
        }
        (1u64..).map(|i| format!("other_{i}")).find(|v| !taken(v))
    }

    /// The raw field dpqr writes for code `code` of an attribute of this encoding, chosen so
    /// that [`Schema::encode`] reads it back as `code` (the inverse of the encoding on its
    /// codes; [`Schema::decode`] checks the code against the attribute's size):
    ///
    /// * [`Encoding::Codes`]: the code in decimal digits;
    /// * [`Encoding::Labels`]: label `code`;
    /// * [`Encoding::Bins`]: the lower edge of bin `code` (it is in the bin, whether the
    ///   bin is half-open or the closed last one), written in Rust's shortest round-trip
    ///   form with a decimal point or an exponent (`18.0`, `-2.5`, `1e300`): it parses back
    ///   to exactly the same number, and it is never a bare integer such as `18`;
    /// * the `missing` code: the empty field (a CSV writer quotes it, `""`, when it is a
    ///   record's only field, so that the line is not blank);
    /// * the `other` code: [`AttributeSchema::other_value`].
    ///
    /// `None` when `code` is neither a value of the schema nor its `missing` or `other` code
    /// (and never for [`Encoding::Codes`], which knows no size).
    fn value_of(&self, code: u32) -> Option<String> {
        let i = code as usize;
        let value = match &self.encoding {
            Encoding::Codes => return Some(code.to_string()),
            Encoding::Labels(labels) => labels.get(i).cloned(),
            Encoding::Bins(edges) => (i + 1 < edges.len()).then(|| format!("{:?}", edges[i])),
        };
        match value {
            Some(v) => Some(v),
            None if self.missing && Some(code) == self.declared() => Some(String::new()),
            None if Some(code) == self.other_code() => self.other_value(),
            None => None,
        }
    }

    /// The code of the raw field `value`, or why it is outside the schema.
    /// [`Encoding::Codes`] attributes are not encoded here (the loader reads their codes).
    fn encode(&self, value: &str) -> std::result::Result<u32, String> {
        let found = match &self.encoding {
            Encoding::Codes => return Err("internal: codes are not encoded".into()),
            Encoding::Labels(labels) => match self.lookup.get(value) {
                Some(&c) => Ok(c),
                None if is_blank(value) => Err(String::new()),
                None => Err(format!("it is not one of the {} labels", labels.len())),
            },
            Encoding::Bins(edges) => bin_of(edges, value),
        };
        match found {
            Ok(c) => Ok(c),
            Err(_) if is_blank(value) => self.empty_code().ok_or_else(|| {
                "the field is empty (the schema declares neither \"missing\": true, which \
                 gives empty cells their own code, nor an \"other\" bucket for this attribute)"
                    .to_string()
            }),
            Err(_) if self.other => self
                .other_code()
                .ok_or_else(|| "internal: no other code".to_string()),
            Err(why) => Err(format!(
                "{why} (the schema declares no \"other\" bucket for this attribute)"
            )),
        }
    }
}

/// Whether a raw field is an empty cell: empty, or whitespace only.
pub(crate) fn is_blank(value: &str) -> bool {
    value.trim().is_empty()
}

/// The bin of `value` among `edges`: half-open bins, the last one closed.
pub(crate) fn bin_of(edges: &[f64], value: &str) -> std::result::Result<u32, String> {
    let text = value.trim();
    if text.is_empty() {
        return Err("the field is empty".into());
    }
    let v: f64 = text
        .parse()
        .map_err(|_| "it is not a number (the attribute is binned)".to_string())?;
    if !v.is_finite() {
        return Err("it is not a finite number".into());
    }
    let (first, last) = (edges[0], edges[edges.len() - 1]);
    if v < first || v > last {
        return Err(format!(
            "it is outside the bins, which cover {first} to {last}"
        ));
    }
    // number of edges <= v, minus one; v == last falls in the last (closed) bin
    let k = edges.len() - 1;
    let i = edges
        .partition_point(|&e| e <= v)
        .saturating_sub(1)
        .min(k - 1);
    u32::try_from(i).map_err(|_| "too many bins".to_string())
}

/// A [`Domain`] with, per attribute, the encoding of its raw values (see the module docs
/// for the JSON format).
#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    domain: Domain,
    attributes: Vec<AttributeSchema>,
}

/// One attribute object of the JSON format.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AttrSpec {
    size: Option<u64>,
    labels: Option<Vec<String>>,
    bins: Option<Vec<f64>>,
    #[serde(default)]
    missing: bool,
    #[serde(default)]
    other: bool,
}

/// The readers of a domain file (`domain.rs`, module docs): a domain file is a schema whose
/// encodings are dropped, so they live here, beside the schema's.
impl Domain {
    /// Parses a domain file: a JSON object `{"attr": size, ...}`, whose entries may also be
    /// the labels or bins of a [`Schema`] (their encodings are dropped here; see
    /// [`Schema::from_json_str`]); `file` labels error messages.
    ///
    /// Syntax errors, a non-object document, or a size that is not a non-negative integer
    /// give [`QueryError::BadJson`]; a size of 0 or above `u32::MAX`, a duplicate key, an
    /// empty key or an empty object give [`QueryError::BadDomain`] (the reason names `file`).
    pub fn from_json_str(json: &str, file: &str) -> Result<Self> {
        Schema::from_json_str(json, file).map(Schema::into_domain)
    }

    /// Reads and parses a domain JSON file (see [`Domain::from_json_str`]).
    pub fn from_json_file(path: &Path) -> Result<Self> {
        Schema::from_json_file(path).map(Schema::into_domain)
    }
}

impl Schema {
    /// The schema of a plain domain: every attribute holds integer codes.
    pub fn codes(domain: Domain) -> Self {
        let attributes = (0..domain.len())
            .map(|_| AttributeSchema {
                encoding: Encoding::Codes,
                missing: false,
                other: false,
                lookup: HashMap::new(),
            })
            .collect();
        Schema { domain, attributes }
    }

    /// Parses a schema (or a plain domain file) from JSON; `file` labels error messages.
    ///
    /// Errors: [`QueryError::BadJson`] when the document is not an object of sizes and
    /// attribute objects (syntax, a size that is not a non-negative integer, an unknown
    /// key, a label that is not a string, an edge that is not a number);
    /// [`QueryError::BadDomain`] (the reason names `file` and the attribute) for a size of
    /// 0 or above `u32::MAX`, a duplicate or empty attribute name, no attributes, an
    /// attribute object with none or several of `size`/`labels`/`bins`, `other` or
    /// `missing` on a `size` attribute, empty or repeated labels, fewer than two edges, or edges that are
    /// not finite and strictly increasing.
    pub fn from_json_str(json: &str, file: &str) -> Result<Self> {
        let bad_json = |message: String| QueryError::BadJson {
            file: file.to_string(),
            message,
        };
        let bad = |name: &str, reason: String| QueryError::BadDomain {
            reason: format!("{file}: attribute '{name}': {reason}"),
        };
        let entries = parse_ordered_object(json).map_err(|e| bad_json(e.to_string()))?;
        let mut attrs = Vec::with_capacity(entries.len());
        let mut attributes = Vec::with_capacity(entries.len());
        for (name, value) in entries {
            let spec = match value {
                Value::Number(n) => match n.as_u64() {
                    Some(size) => AttrSpec {
                        size: Some(size),
                        labels: None,
                        bins: None,
                        missing: false,
                        other: false,
                    },
                    None => {
                        return Err(bad_json(format!(
                            "attribute '{name}': the size must be a non-negative integer, \
                             found {n}"
                        )));
                    }
                },
                Value::Object(_) => serde_json::from_value::<AttrSpec>(value)
                    .map_err(|e| bad_json(format!("attribute '{name}': {e}")))?,
                _ => {
                    return Err(bad_json(format!(
                        "attribute '{name}': expected a size or an object with \"size\", \
                         \"labels\" or \"bins\""
                    )));
                }
            };
            let (attribute, size) = match (spec.size, spec.labels, spec.bins) {
                (Some(size), None, None) => {
                    if spec.other {
                        return Err(bad(
                            &name,
                            "\"other\" needs \"labels\" or \"bins\" (integer codes have no \
                             values outside the domain to collect)"
                                .into(),
                        ));
                    }
                    if spec.missing {
                        return Err(bad(
                            &name,
                            "\"missing\" needs \"labels\" or \"bins\" (a column of integer \
                             codes has no empty cells: give the empty cells a code of their own \
                             in the data, or describe the column by labels)"
                                .into(),
                        ));
                    }
                    (Encoding::Codes, size)
                }
                (None, Some(labels), None) => {
                    check_labels(&labels).map_err(|r| bad(&name, r))?;
                    let n = labels.len() as u64;
                    (Encoding::Labels(labels), n)
                }
                (None, None, Some(edges)) => {
                    check_edges(&edges).map_err(|r| bad(&name, r))?;
                    let n = edges.len() as u64 - 1;
                    (Encoding::Bins(edges), n)
                }
                _ => {
                    return Err(bad(
                        &name,
                        "give exactly one of \"size\", \"labels\" or \"bins\"".into(),
                    ));
                }
            };
            let size = size + u64::from(spec.missing) + u64::from(spec.other);
            let size = u32::try_from(size)
                .map_err(|_| bad(&name, format!("size {size} > {}", u32::MAX)))?;
            let lookup = match &attribute {
                Encoding::Labels(l) => l
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (s.clone(), i as u32))
                    .collect(),
                _ => HashMap::new(),
            };
            attrs.push((name, size));
            attributes.push(AttributeSchema {
                encoding: attribute,
                missing: spec.missing,
                other: spec.other,
                lookup,
            });
        }
        let domain = Domain::new(attrs).map_err(|e| match e {
            QueryError::BadDomain { reason } => QueryError::BadDomain {
                reason: format!("{file}: {reason}"),
            },
            other => other,
        })?;
        Ok(Schema { domain, attributes })
    }

    /// Reads and parses a schema or domain JSON file (see [`Schema::from_json_str`]).
    pub fn from_json_file(path: &Path) -> Result<Self> {
        let text = std::fs::read(path).map_err(|source| QueryError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let file = path.display().to_string();
        let text = std::str::from_utf8(&text).map_err(|e| QueryError::BadJson {
            file: file.clone(),
            message: format!("not valid UTF-8 ({e})"),
        })?;
        Schema::from_json_str(text, &file)
    }

    /// The domain of the codes.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// The domain of the codes, by value.
    pub fn into_domain(self) -> Domain {
        self.domain
    }

    /// The encoding of attribute `i` (`None` if `i` is out of range).
    pub fn attribute(&self, i: usize) -> Option<&AttributeSchema> {
        self.attributes.get(i)
    }

    /// Whether every attribute holds integer codes (a plain domain file).
    pub fn is_codes_only(&self) -> bool {
        self.attributes
            .iter()
            .all(|a| a.encoding == Encoding::Codes)
    }

    /// The raw field that stands for code `code` of attribute `attribute` — the inverse
    /// of [`Schema::encode`] on the attribute's codes: `encode(a, decode(a, c)) == c` for
    /// every code `c` below the attribute's size. A label attribute gives its label, a bins
    /// attribute the lower edge of the bin (`18.0`: a decimal point or an exponent always,
    /// parsed back exactly), the `missing` code the empty field, the `other` code
    /// [`AttributeSchema::other_value`], and an
    /// attribute of integer codes the code in decimal digits. dpqr's synthetic files write
    /// this for every code except a bin's, whose value they draw uniformly within the bin
    /// (`dp_bench::io::synthetic::BinValues`, issue #26); the lower edge is the
    /// deterministic choice.
    ///
    /// `None` when `attribute` is out of range or `code` is not below its size.
    pub fn decode(&self, attribute: usize, code: u32) -> Option<String> {
        if code >= self.domain.sizes().get(attribute).copied()? {
            return None;
        }
        self.attributes.get(attribute)?.value_of(code)
    }

    /// The schema on the attributes `names`, in the order given (as [`Domain::project`]
    /// restricts the domain).
    ///
    /// Errors: [`QueryError::UnknownAttribute`] for a name not in the schema,
    /// [`QueryError::BadDomain`] for a repeated name or an empty list.
    pub fn select(&self, names: &[&str]) -> Result<Schema> {
        let idx = names
            .iter()
            .map(|n| self.domain.index_of(n))
            .collect::<Result<Vec<_>>>()?;
        Ok(Schema {
            domain: self.domain.project(&idx)?,
            attributes: idx.iter().map(|&i| self.attributes[i].clone()).collect(),
        })
    }

    /// The code of raw field `value` of attribute `i`: `Ok(None)` if the attribute holds
    /// integer codes (read by the loader), `Err(reason)` if the value is outside the schema
    /// and the attribute has no `other` bucket.
    pub fn encode(&self, i: usize, value: &str) -> std::result::Result<Option<u32>, String> {
        match self.attributes.get(i) {
            None => Err("internal: attribute out of range".into()),
            Some(a) if a.encoding == Encoding::Codes => Ok(None),
            Some(a) => a.encode(value).map(Some),
        }
    }
}

fn check_labels(labels: &[String]) -> std::result::Result<(), String> {
    if labels.is_empty() {
        return Err("\"labels\" is empty (give at least one label)".into());
    }
    let mut seen = std::collections::HashSet::with_capacity(labels.len());
    for l in labels {
        if l.is_empty() {
            return Err("a label is empty (give empty cells their own code with \
                        \"missing\": true instead)"
                .into());
        }
        if !seen.insert(l.as_str()) {
            return Err(format!("label '{l}' appears twice"));
        }
    }
    Ok(())
}

fn check_edges(edges: &[f64]) -> std::result::Result<(), String> {
    if edges.len() < 2 {
        return Err("\"bins\" needs at least two edges (k + 1 edges make k bins)".into());
    }
    if let Some(w) = edges.windows(2).find(|w| w[0] >= w[1]) {
        return Err(format!(
            "bin edges must be strictly increasing, but {} is followed by {}",
            w[0], w[1]
        ));
    }
    Ok(())
}

/// Parses a JSON object into its entries in document order, keeping duplicates (they are
/// refused later, with the attribute named).
fn parse_ordered_object(json: &str) -> serde_json::Result<Vec<(String, Value)>> {
    struct Ordered(Vec<(String, Value)>);
    impl<'de> Deserialize<'de> for Ordered {
        fn deserialize<D: serde::Deserializer<'de>>(
            deserializer: D,
        ) -> std::result::Result<Self, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Ordered;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a JSON object {\"attribute\": size or {\"labels\": …}, …}")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> std::result::Result<Ordered, A::Error> {
                    let mut entries = Vec::new();
                    while let Some(entry) = map.next_entry::<String, Value>()? {
                        entries.push(entry);
                    }
                    Ok(Ordered(entries))
                }
            }
            deserializer.deserialize_map(V)
        }
    }
    serde_json::from_str::<Ordered>(json).map(|o| o.0)
}

/// Settings of [`draft_schema`].
#[derive(Clone, Copy, Debug)]
pub struct DraftSettings {
    /// A column whose values are all numbers and take more than this many distinct values
    /// is binned; otherwise its distinct values become labels (the most frequent ones, at
    /// most this many, with an `other` bucket for the rest).
    pub max_labels: usize,
    /// Number of equal-width bins of a binned column.
    pub bins: usize,
    /// The byte between fields (`b','` by default; `dp_queries::io::ReadOptions` validates
    /// the delimiters dpqr accepts).
    pub delimiter: u8,
}

impl Default for DraftSettings {
    fn default() -> Self {
        DraftSettings {
            max_labels: 20,
            bins: 10,
            delimiter: b',',
        }
    }
}

/// **NON-PRIVATE.** Drafts a schema (JSON text) from a CSV with a header row by reading
/// the data itself.
///
/// The draft discloses the data it was made from (the labels that occur, the minimum and
/// maximum of numeric columns): it is a starting point for a person to review and coarsen
/// — drop or merge rare labels, round bin edges to public, data-independent values —
/// never a schema to release under as is. A column is binned when every non-empty field is
/// a finite number and it has more than `settings.max_labels` distinct values
/// (`settings.bins` equal-width bins from its minimum to its maximum); otherwise its
/// distinct values become labels (numbers in numeric order, other labels in text order),
/// at most `settings.max_labels` of the most frequent ones. An `other` bucket is added when
/// labels were dropped, and a `missing` code when the column has empty cells (empty or
/// whitespace-only fields). Fields are separated by `settings.delimiter`.
///
/// Errors: the CSV errors of the loader (empty file, no records, ragged rows, non-UTF-8
/// text) naming the file and line; [`QueryError::BadWorkload`] never.
pub fn draft_schema<Rd: Read>(reader: Rd, file: &str, settings: DraftSettings) -> Result<String> {
    let max_labels = settings.max_labels.max(1);
    let bins = settings.bins.max(1);
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(settings.delimiter)
        .from_reader(reader);
    let mut records = rdr.byte_records();
    let csv_err = |e: csv::Error| {
        let line = e.position().map_or(1, |p| p.line());
        match e.into_kind() {
            csv::ErrorKind::Io(source) => QueryError::Io {
                path: file.into(),
                source,
            },
            _ => QueryError::NonUtf8 {
                file: file.into(),
                line,
            },
        }
    };
    let header = match records.next() {
        None => return Err(QueryError::EmptyFile { file: file.into() }),
        Some(r) => r.map_err(csv_err)?,
    };
    let utf8 = |b: &[u8], line: u64| {
        std::str::from_utf8(b)
            .map(str::to_string)
            .map_err(|_| QueryError::NonUtf8 {
                file: file.into(),
                line,
            })
    };
    let mut names = Vec::with_capacity(header.len());
    for (i, f) in header.iter().enumerate() {
        let f = if i == 0 {
            f.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(f)
        } else {
            f
        };
        names.push(utf8(f, 1)?);
    }
    let mut counts: Vec<BTreeMap<String, u64>> = vec![BTreeMap::new(); names.len()];
    let mut rows = 0u64;
    for record in records {
        let record = record.map_err(csv_err)?;
        let line = record.position().map_or(0, |p| p.line());
        if record.len() == 1 && record.get(0).is_some_and(<[u8]>::is_empty) {
            continue; // a blank line
        }
        if record.len() != names.len() {
            return Err(QueryError::RaggedRow {
                file: file.into(),
                line,
                expected: names.len(),
                found: record.len(),
            });
        }
        for (j, f) in record.iter().enumerate() {
            *counts[j].entry(utf8(f, line)?).or_insert(0) += 1;
        }
        rows += 1;
    }
    if rows == 0 {
        return Err(QueryError::NoRecords { file: file.into() });
    }
    let mut out = String::from("{\n");
    for (j, (name, values)) in names.iter().zip(&counts).enumerate() {
        let has_empty = values.keys().any(|v| is_blank(v));
        let present: Vec<(&String, u64)> = values
            .iter()
            .filter(|(v, _)| !is_blank(v))
            .map(|(v, &c)| (v, c))
            .collect();
        let numbers: Option<Vec<f64>> = present
            .iter()
            .map(|(v, _)| v.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
            .collect();
        let edges = numbers
            .as_ref()
            .filter(|nums| nums.len() > max_labels)
            .and_then(|nums| draft_edges(nums, bins));
        let entry = match edges {
            Some(edges) => {
                let edges: Vec<String> = edges.into_iter().map(json_number).collect();
                format!(
                    "{{\"bins\": [{}]{}}}",
                    edges.join(", "),
                    if has_empty { ", \"missing\": true" } else { "" }
                )
            }
            None => {
                // the most frequent labels, then in numeric or text order
                let mut kept = present.clone();
                kept.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
                let dropped = kept.len() > max_labels;
                kept.truncate(max_labels);
                match numbers {
                    Some(_) => kept.sort_by(|a, b| {
                        let x: f64 = a.0.trim().parse().unwrap_or(0.0);
                        let y: f64 = b.0.trim().parse().unwrap_or(0.0);
                        x.total_cmp(&y)
                    }),
                    None => kept.sort_by(|a, b| a.0.cmp(b.0)),
                }
                let labels: Vec<String> = kept.iter().map(|(v, _)| json_string(v)).collect();
                if labels.is_empty() {
                    // only empty cells: the missing code needs one label beside it
                    "{\"labels\": [\"(none)\"], \"missing\": true}".to_string()
                } else {
                    format!(
                        "{{\"labels\": [{}]{}{}}}",
                        labels.join(", "),
                        if has_empty { ", \"missing\": true" } else { "" },
                        if dropped { ", \"other\": true" } else { "" }
                    )
                }
            }
        };
        let comma = if j + 1 < names.len() { "," } else { "" };
        let _ = writeln!(out, "  {}: {entry}{comma}", json_string(name));
    }
    out.push_str("}\n");
    Ok(out)
}

/// `bins` equal-width bin edges from the minimum to the maximum of `nums`, with repeated
/// edges (a range too narrow for the floating-point grid) dropped; `None` if fewer than two
/// distinct edges remain (then the column is drafted as labels).
fn draft_edges(nums: &[f64], bins: usize) -> Option<Vec<f64>> {
    let lo = nums.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = nums.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut edges: Vec<f64> = Vec::with_capacity(bins + 1);
    for i in 0..=bins {
        let t = i as f64 / bins as f64;
        // written as a weighted mean so that it cannot overflow for huge ranges
        let e = if i == bins {
            hi
        } else {
            (lo * (1.0 - t) + hi * t).clamp(lo, hi)
        };
        if e.is_finite() && edges.last().is_none_or(|&last| e > last) {
            edges.push(e);
        }
    }
    (edges.len() >= 2).then_some(edges)
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn json_number(x: f64) -> String {
    serde_json::to_string(&x).unwrap_or_else(|_| "0".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dataset;

    const SCHEMA: &str = r#"{
        "sex": {"labels": ["female", "male"]},
        "age": {"bins": [0, 18, 30, 65, 120]},
        "region": {"labels": ["north", "south"], "other": true},
        "flag": 2
    }"#;

    fn schema() -> Schema {
        Schema::from_json_str(SCHEMA, "s.json").unwrap()
    }

    fn load(csv: &str) -> Result<Dataset> {
        Dataset::from_csv_reader_with_schema(csv.as_bytes(), "raw.csv", &schema())
    }

    fn outside(csv: &str) -> (u64, String, String, String) {
        match load(csv) {
            Err(QueryError::OutsideSchema {
                file,
                line,
                column,
                value,
                reason,
            }) => {
                assert_eq!(file, "raw.csv");
                (line, column, value, reason)
            }
            other => panic!("{csv}: {other:?}"),
        }
    }

    #[test]
    fn sizes_come_from_labels_bins_and_other() {
        let s = schema();
        let d = s.domain();
        assert_eq!(
            d.names().collect::<Vec<_>>(),
            ["sex", "age", "region", "flag"]
        );
        assert_eq!(d.sizes(), &[2, 4, 3, 2]);
        assert!(!s.is_codes_only());
        assert!(s.attribute(2).unwrap().has_other());
        assert!(!s.attribute(0).unwrap().has_other());
        // the plain domain of the same file
        assert_eq!(&Domain::from_json_str(SCHEMA, "s.json").unwrap(), d);
        assert!(
            Schema::from_json_str(r#"{"a": 3, "b": {"size": 2}}"#, "p")
                .unwrap()
                .is_codes_only()
        );
    }

    #[test]
    fn labels_are_encoded_by_position_in_any_column_order() {
        let d =
            load("flag,region,age,sex\n1,south,40,male\n0,north,3,female\n0,\"north\",18,male\n")
                .unwrap();
        assert_eq!(d.n(), 3);
        assert_eq!(d.column(0), &[1, 0, 1]); // sex
        assert_eq!(d.column(2), &[1, 0, 0]); // region
        assert_eq!(d.column(3), &[1, 0, 0]); // flag, read as codes
    }

    #[test]
    fn bins_are_half_open_and_the_last_edge_is_in_the_last_bin() {
        let cases = [
            ("0", 0),
            ("17.999", 0),
            ("18", 1), // an inner edge starts the next bin
            ("29.5", 1),
            ("30", 2),
            ("64", 2),
            ("65", 3),
            ("120", 3), // the last edge is in the last bin (closed)
            (" 1.2e2 ", 3),
            ("-0", 0),
        ];
        for (value, code) in cases {
            let d = load(&format!("sex,age,region,flag\nmale,{value},north,0\n")).unwrap();
            assert_eq!(d.column(1), &[code], "{value}");
        }
        for value in ["120.0001", "-1", "-0.5", "1e300"] {
            let (line, column, v, reason) =
                outside(&format!("sex,age,region,flag\nmale,{value},north,0\n"));
            assert_eq!((line, column.as_str(), v.as_str()), (2, "age", value));
            assert!(
                reason.contains("outside the bins") && reason.contains("0 to 120"),
                "{reason}"
            );
        }
    }

    #[test]
    fn the_other_bucket_collects_values_outside_the_schema() {
        for value in ["east", "", "North", " north", "NaN"] {
            let d = load(&format!("sex,age,region,flag\nmale,5,{value},0\n")).unwrap();
            assert_eq!(d.column(2), &[2], "{value:?}");
        }
        let binned = r#"{"x": {"bins": [0, 1, 2], "other": true}}"#;
        let s = Schema::from_json_str(binned, "b.json").unwrap();
        assert_eq!(s.domain().sizes(), &[3]);
        let d = Dataset::from_csv_reader_with_schema(
            "x\n0.5\nNaN\n\n2\n-inf\n3\nabc\n1\n".as_bytes(),
            "f",
            &s,
        )
        .unwrap();
        assert_eq!(d.column(0), &[0, 2, 1, 2, 2, 2, 1]);
    }

    #[test]
    fn nan_and_empty_cells_without_other_name_the_line_and_column() {
        // line 4: a blank line still counts
        let (line, column, value, reason) =
            outside("sex,age,region,flag\nmale,5,north,0\n\nmale,NaN,north,0\n");
        assert_eq!((line, column.as_str(), value.as_str()), (4, "age", "NaN"));
        assert!(
            reason.contains("not a finite number") && reason.contains("\"other\""),
            "{reason}"
        );
        let (line, column, _, reason) = outside("sex,age,region,flag\nmale,,north,0\n");
        assert_eq!((line, column.as_str()), (2, "age"));
        assert!(reason.contains("empty"), "{reason}");
        let (line, column, _, reason) = outside("sex,age,region,flag\n,5,north,0\n");
        assert_eq!((line, column.as_str()), (2, "sex"));
        assert!(reason.contains("empty"), "{reason}");
        let (_, column, _, reason) = outside("sex,age,region,flag\nmale,old,north,0\n");
        assert_eq!(column, "age");
        assert!(reason.contains("not a number"), "{reason}");
        let (line, column, value, reason) =
            outside("sex,age,region,flag\nmale,5,north,0\nMale,5,north,0\n");
        assert_eq!((line, column.as_str(), value.as_str()), (3, "sex", "Male"));
        assert!(reason.contains("not one of the 2 labels"), "{reason}");
        // the message a user sees names all of it
        let msg = load("sex,age,region,flag\nmale,5,north,0\nMale,5,north,0\n")
            .unwrap_err()
            .to_string();
        assert!(
            msg.starts_with("raw.csv: line 3: column 'sex': 'Male' is outside the schema"),
            "{msg}"
        );
        // a codes attribute keeps the code errors of a plain domain file
        assert!(matches!(
            load("sex,age,region,flag\nmale,5,north,2\n"),
            Err(QueryError::OutOfDomain { line: 2, .. })
        ));
        assert!(matches!(
            load("sex,age,region,flag\nmale,5,north,yes\n"),
            Err(QueryError::NotInteger { line: 2, .. })
        ));
    }

    #[test]
    fn bad_schemas_are_refused_with_the_attribute_named() {
        for (json, want) in [
            (r#"{"a": {"labels": ["x"], "bins": [0, 1]}}"#, "exactly one"),
            (r#"{"a": {"other": true}}"#, "exactly one"),
            (r#"{"a": {"labels": []}}"#, "empty"),
            (r#"{"a": {"labels": ["x", ""]}}"#, "empty"),
            (r#"{"a": {"labels": ["x", "y", "x"]}}"#, "'x' appears twice"),
            (r#"{"a": {"bins": [1]}}"#, "two edges"),
            (r#"{"a": {"bins": [0, 2, 2]}}"#, "strictly increasing"),
            (r#"{"a": {"bins": [3, 1]}}"#, "strictly increasing"),
            (r#"{"a": {"size": 3, "other": true}}"#, "\"other\" needs"),
            (r#"{"a": {"size": 0}}"#, "size 0"),
            (r#"{"a": 2, "a": {"labels": ["x"]}}"#, "twice"),
        ] {
            match Schema::from_json_str(json, "f.json") {
                Err(QueryError::BadDomain { reason }) => {
                    assert!(reason.starts_with("f.json"), "{reason}");
                    assert!(reason.contains(want), "{json}: {reason}");
                }
                other => panic!("{json}: {other:?}"),
            }
        }
        for json in [
            r#"{"a": {"labels": [1, 2]}}"#,
            r#"{"a": {"bins": ["0", "1"]}}"#,
            r#"{"a": {"label": ["x"]}}"#,
            r#"{"a": {"labels": ["x"], "other": "yes"}}"#,
            r#"{"a": "x"}"#,
            r#"{"a": -2}"#,
        ] {
            match Schema::from_json_str(json, "f.json") {
                Err(QueryError::BadJson { file, message }) => {
                    assert_eq!(file, "f.json");
                    assert!(message.contains("'a'"), "{json}: {message}");
                }
                other => panic!("{json}: {other:?}"),
            }
        }
    }

    #[test]
    fn codes_are_described_as_labels_and_bins() {
        let s = schema();
        let sex = s.attribute(0).unwrap();
        assert_eq!(sex.describe_code(1), "male");
        let age = s.attribute(1).unwrap();
        assert_eq!(age.describe_code(0), "[0, 18)");
        assert_eq!(age.describe_code(3), "[65, 120]");
        assert_eq!(s.attribute(2).unwrap().describe_code(2), "other");
        assert_eq!(s.attribute(3).unwrap().describe_code(1), "1");
        assert_eq!(
            age.encoding(),
            &Encoding::Bins(vec![0.0, 18.0, 30.0, 65.0, 120.0])
        );
    }

    /// Every code of `s`, decoded to its raw field and encoded back, is itself — through
    /// [`Schema::encode`] and through the CSV loader reading the decoded fields as a file.
    fn assert_decode_inverts_encode(s: &Schema) {
        let d = s.domain();
        let mut csv = d.names().collect::<Vec<_>>().join(",");
        csv.push('\n');
        let widest = d.sizes().iter().copied().max().unwrap_or(0);
        let mut want: Vec<Vec<u32>> = vec![Vec::new(); d.len()];
        for row in 0..widest {
            let mut fields = Vec::with_capacity(d.len());
            for (a, &size) in d.sizes().iter().enumerate() {
                let code = row.min(size - 1);
                let field = s.decode(a, code).expect("a code below the size decodes");
                let back = s.encode(a, &field).expect("a decoded field encodes");
                assert_eq!(
                    back.unwrap_or(code),
                    code,
                    "attribute {a} code {code}: {field:?}"
                );
                if s.attribute(a).unwrap().encoding() != &Encoding::Codes {
                    assert!(back.is_some(), "{field:?}");
                }
                want[a].push(code);
                fields.push(csv_field(&field));
            }
            csv.push_str(&fields.join(","));
            csv.push('\n');
        }
        let loaded = Dataset::from_csv_reader_with_schema(csv.as_bytes(), "decoded.csv", s)
            .unwrap_or_else(|e| panic!("{e}\n{csv}"));
        for (a, codes) in want.iter().enumerate() {
            assert_eq!(loaded.column(a), codes.as_slice(), "{csv}");
        }
        // nothing decodes outside the domain
        for (a, &size) in d.sizes().iter().enumerate() {
            assert_eq!(s.decode(a, size), None);
            assert_eq!(s.decode(a, u32::MAX), None);
        }
        assert_eq!(s.decode(d.len(), 0), None);
    }

    /// `field` as one CSV field (quoted when it holds a comma or a quote, or is empty: a
    /// record of one empty field would otherwise be a blank line).
    fn csv_field(field: &str) -> String {
        if field.is_empty() || field.contains([',', '"']) {
            format!("\"{}\"", field.replace('"', "\"\""))
        } else {
            field.to_string()
        }
    }

    #[test]
    fn decode_inverts_encode_on_every_code() {
        assert_decode_inverts_encode(&schema());
        for json in [
            // labels that are digits, not in their codes' order, and labels called other
            r#"{"d": {"labels": ["2", "0", "1"]}, "e": {"labels": ["other", "x"], "other": true}}"#,
            r#"{"f": {"labels": ["other", "other_1", "a,b", "q\"uote", " pad "], "other": true}}"#,
            // negative, tiny, huge and inexact edges; the closed last bin; other
            r#"{"n": {"bins": [-1e308, -2.5, -0.0, 5e-324, 0.1, 0.30000000000000004, 1e300], "other": true}}"#,
            r#"{"m": {"bins": [-1.7976931348623157e308, 1.7976931348623157e308]}, "c": 5}"#,
            r#"{"i": {"bins": [0, 1, 2, 3]}, "j": {"bins": [100, 1e16, 1e17, 1.5e17]}}"#,
            // missing codes, alone and before other, on labels and bins; one column alone
            r#"{"k": {"labels": ["missing", "x"], "missing": true, "other": true}, "l": {"bins": [0, 1], "missing": true}}"#,
            r#"{"m": {"labels": ["a"], "missing": true}}"#,
        ] {
            let s = Schema::from_json_str(json, "s.json").unwrap_or_else(|e| panic!("{json}: {e}"));
            assert_decode_inverts_encode(&s);
        }
    }

    #[test]
    fn decoded_values_are_labels_edges_and_other() {
        let s = schema();
        assert_eq!(s.decode(0, 1).as_deref(), Some("male"));
        // the lower edge of each bin, never a bare integer; the closed last bin too
        let ages: Vec<String> = (0..4).filter_map(|c| s.decode(1, c)).collect();
        assert_eq!(ages, ["0.0", "18.0", "30.0", "65.0"]);
        assert_eq!(s.decode(2, 2).as_deref(), Some("other"));
        assert_eq!(s.decode(3, 1).as_deref(), Some("1"));
        let taken = Schema::from_json_str(
            r#"{"r": {"labels": ["other", "other_1", "b"], "other": true}}"#,
            "t.json",
        )
        .unwrap();
        assert_eq!(taken.decode(0, 3).as_deref(), Some("other_2"));
        assert_eq!(
            taken.attribute(0).unwrap().other_value().as_deref(),
            Some("other_2")
        );
        assert_eq!(s.attribute(0).unwrap().other_value(), None);
        let huge = Schema::from_json_str(r#"{"h": {"bins": [-1e300, 1e300]}}"#, "h.json").unwrap();
        assert_eq!(huge.decode(0, 0).as_deref(), Some("-1e300"));
    }

    #[test]
    fn a_schema_is_selected_by_attribute_names() {
        let s = schema();
        let t = s.select(&["region", "sex"]).unwrap();
        assert_eq!(t.domain().names().collect::<Vec<_>>(), ["region", "sex"]);
        assert_eq!(t.domain().sizes(), &[3, 2]);
        assert_eq!(t.decode(0, 2).as_deref(), Some("other"));
        assert_eq!(t.decode(1, 0).as_deref(), Some("female"));
        assert!(matches!(
            s.select(&["nope"]),
            Err(QueryError::UnknownAttribute { .. })
        ));
        assert!(matches!(
            s.select(&["sex", "sex"]),
            Err(QueryError::BadDomain { .. })
        ));
        assert!(matches!(s.select(&[]), Err(QueryError::BadDomain { .. })));
    }

    proptest::proptest! {
        /// Random strictly increasing finite edges (any magnitude, any sign): every bin's
        /// decoded value falls back into that bin.
        #[test]
        fn decoded_bins_encode_back(
            raw in proptest::collection::vec(proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO, 2..12),
            other in proptest::bool::ANY,
        ) {
            let mut edges = raw;
            edges.sort_by(f64::total_cmp);
            edges.dedup_by(|a, b| a == b);
            proptest::prop_assume!(edges.len() >= 2);
            let json = format!(
                "{{\"x\": {{\"bins\": {}, \"other\": {other}}}}}",
                serde_json::to_string(&edges).unwrap()
            );
            // (JSON parsing may merge two adjacent floats: then there is nothing to test)
            let parsed = Schema::from_json_str(&json, "p.json");
            proptest::prop_assume!(parsed.is_ok());
            let s = parsed.unwrap();
            for code in 0..s.domain().size(0) {
                let field = s.decode(0, code).unwrap();
                proptest::prop_assert_eq!(s.encode(0, &field), Ok(Some(code)), "{}", field);
            }
        }
    }

    const MISSING: &str = r#"{
        "city": {"labels": ["London", "Paris"], "missing": true, "other": true},
        "age": {"bins": [0, 50, 100], "missing": true},
        "kind": {"labels": ["missing", "a"], "missing": true}
    }"#;

    #[test]
    fn empty_cells_get_their_own_missing_code_before_other() {
        let s = Schema::from_json_str(MISSING, "m.json").unwrap();
        // declared values, then missing, then other
        assert_eq!(s.domain().sizes(), &[4, 3, 3]);
        let city = s.attribute(0).unwrap();
        assert!(city.has_missing() && city.has_other());
        assert_eq!((city.empty_code(), city.other_code()), (Some(2), Some(3)));
        let age = s.attribute(1).unwrap();
        assert_eq!((age.empty_code(), age.other_code()), (Some(2), None));
        let csv = "city,age,kind\nLondon,20,a\n,,\n  ,\t,missing\nRome,100,\n\"\",50,a\n";
        let d = Dataset::from_csv_reader_with_schema(csv.as_bytes(), "m.csv", &s).unwrap();
        assert_eq!(d.column(0), &[0, 2, 2, 3, 2]);
        assert_eq!(d.column(1), &[0, 2, 2, 1, 1]);
        // the label "missing" is a label, not an empty cell
        assert_eq!(d.column(2), &[1, 2, 0, 2, 1]);
        // names: the missing code is `missing`, or `missing_1` when that is a label
        assert_eq!(city.describe_code(2), "missing");
        assert_eq!(city.describe_code(3), "other");
        assert_eq!(age.describe_code(2), "missing");
        assert_eq!(s.attribute(2).unwrap().describe_code(2), "missing_1");
        assert_eq!(s.attribute(2).unwrap().describe_code(0), "missing");
        assert_eq!(
            s.attribute(2).unwrap().missing_name().as_deref(),
            Some("missing_1")
        );
        assert_eq!(city.missing_name().as_deref(), Some("missing"));
        assert_eq!(schema().attribute(2).unwrap().missing_name(), None);
        // written back as an empty field, read back as the missing code
        assert_eq!(s.decode(0, 2).as_deref(), Some(""));
        assert_eq!(s.decode(0, 3).as_deref(), Some("other"));
        assert_eq!(s.decode(1, 2).as_deref(), Some(""));
        assert_eq!(s.decode(1, 3), None);
        assert_eq!(s.encode(1, ""), Ok(Some(2)));
        // missing is no other bucket: a value outside the bins is still refused
        let e = Dataset::from_csv_reader_with_schema(
            "city,age,kind\nLondon,abc,a\n".as_bytes(),
            "m.csv",
            &s,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("line 2") && e.contains("'age'") && e.contains("not a number"),
            "{e}"
        );
    }

    #[test]
    fn empty_cells_without_missing_or_other_say_how_to_declare_them() {
        let s = Schema::from_json_str(r#"{"c": {"labels": ["x"]}, "b": {"bins": [0, 1]}}"#, "e")
            .unwrap();
        for csv in ["c,b\n,0\n", "c,b\n  ,0\n", "c,b\nx,\n"] {
            match Dataset::from_csv_reader_with_schema(csv.as_bytes(), "e.csv", &s) {
                Err(QueryError::OutsideSchema { line, reason, .. }) => {
                    assert_eq!(line, 2);
                    assert!(
                        reason.contains("empty") && reason.contains("\"missing\": true"),
                        "{reason}"
                    );
                }
                other => panic!("{csv:?}: {other:?}"),
            }
        }
        match Schema::from_json_str(r#"{"a": {"size": 3, "missing": true}}"#, "f.json") {
            Err(QueryError::BadDomain { reason }) => {
                assert!(reason.contains("\"missing\" needs"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        match Schema::from_json_str(r#"{"a": {"labels": ["x"], "missing": 1}}"#, "f.json") {
            Err(QueryError::BadJson { message, .. }) => assert!(message.contains("'a'")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn drafts_use_the_delimiter_and_give_empty_cells_a_missing_code() {
        let settings = DraftSettings {
            max_labels: 3,
            bins: 2,
            delimiter: b';',
        };
        let draft = draft_schema("a;b\nx;1,5\n;2\ny;\n".as_bytes(), "d.csv", settings).unwrap();
        let s = Schema::from_json_str(&draft, "draft").unwrap();
        assert_eq!(s.domain().names().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(
            s.attribute(0).unwrap().encoding(),
            &Encoding::Labels(vec!["x".into(), "y".into()])
        );
        assert!(s.attribute(0).unwrap().has_missing());
        assert!(!s.attribute(0).unwrap().has_other());
        // "1,5" is one field (not a number): labels, with a missing code
        assert_eq!(
            s.attribute(1).unwrap().encoding(),
            &Encoding::Labels(vec!["1,5".into(), "2".into()])
        );
        assert!(s.attribute(1).unwrap().has_missing());
    }

    #[test]
    fn drafts_load_back_and_use_labels_bins_and_other() {
        let mut csv = String::from("name,score,colour\n");
        for i in 0..30 {
            let colour = match i % 4 {
                0 => "red",
                1 => "blue",
                2 => "",
                _ => "green",
            };
            csv.push_str(&format!("p{},{},{colour}\n", i % 3, i * 2));
        }
        let settings = DraftSettings {
            max_labels: 5,
            bins: 4,
            ..DraftSettings::default()
        };
        let draft = draft_schema(csv.as_bytes(), "d.csv", settings).unwrap();
        let s = Schema::from_json_str(&draft, "draft").unwrap();
        assert_eq!(
            s.attribute(0).unwrap().encoding(),
            &Encoding::Labels(vec!["p0".into(), "p1".into(), "p2".into()])
        );
        assert_eq!(
            s.attribute(1).unwrap().encoding(),
            &Encoding::Bins(vec![0.0, 14.5, 29.0, 43.5, 58.0])
        );
        // empty fields give a missing code, not an other bucket
        assert!(s.attribute(2).unwrap().has_missing());
        assert!(!s.attribute(2).unwrap().has_other());
        assert_eq!(s.domain().sizes(), &[3, 4, 4]);
        // the data it was drafted from loads through it
        let d = Dataset::from_csv_reader_with_schema(csv.as_bytes(), "d.csv", &s).unwrap();
        assert_eq!(d.n(), 30);
        // too many labels: the most frequent ones and an other bucket
        let few = DraftSettings {
            max_labels: 2,
            bins: 4,
            ..DraftSettings::default()
        };
        let draft = draft_schema("c\nb\na\nb\nc\nb\nz\nz\n".as_bytes(), "d.csv", few).unwrap();
        let s = Schema::from_json_str(&draft, "draft").unwrap();
        assert_eq!(
            s.attribute(0).unwrap().encoding(),
            &Encoding::Labels(vec!["b".into(), "z".into()])
        );
        assert!(s.attribute(0).unwrap().has_other());
        // numbers too close to bin (one value written four ways): labels instead; a huge
        // range: finite, strictly increasing edges
        let draft = draft_schema("v\n1\n1.0\n01\n1.00\n".as_bytes(), "d.csv", few).unwrap();
        let s = Schema::from_json_str(&draft, "draft").unwrap();
        assert!(matches!(
            s.attribute(0).unwrap().encoding(),
            Encoding::Labels(_)
        ));
        let draft = draft_schema("v\n-1e308\n0\n1e308\n".as_bytes(), "d.csv", few).unwrap();
        let s = Schema::from_json_str(&draft, "draft").unwrap();
        assert_eq!(
            s.attribute(0).unwrap().encoding(),
            &Encoding::Bins(vec![-1e308, -5e307, 0.0, 5e307, 1e308])
        );
        // bad input is an error naming the file, never a panic
        assert!(matches!(
            draft_schema("".as_bytes(), "e.csv", few),
            Err(QueryError::EmptyFile { .. })
        ));
        assert!(matches!(
            draft_schema("a,b\n".as_bytes(), "e.csv", few),
            Err(QueryError::NoRecords { .. })
        ));
        assert!(matches!(
            draft_schema("a,b\n1,2\n3\n".as_bytes(), "e.csv", few),
            Err(QueryError::RaggedRow { line: 3, .. })
        ));
    }
}
