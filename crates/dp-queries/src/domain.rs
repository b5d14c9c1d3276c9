//! Data domains: an ordered list of named categorical attributes with their sizes.
//!
//! The universe `X` of the papers (e.g. seed 003 §2, seed 004 §2) is the product
//! `X = [s_0] × … × [s_{d-1}]` of the attribute domains `[s] = {0, …, s-1}`.
//! The on-disk format is the private-pgm `NAME-domain.json` one: a single flat JSON object
//! `{"attr": size, ...}` (an entry may instead give category labels or numeric bins, see
//! [`crate::schema`]). Key order is kept (it is the attribute order of the domain), and
//! duplicate keys are an error (a plain JSON map would silently keep the last one). The
//! readers of that file, [`Domain::from_json_str`] and [`Domain::from_json_file`], are in
//! `schema.rs`: a domain file is a schema whose encodings are dropped.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{QueryError, Result};

/// An ordered list of named attributes, attribute `i` taking values (codes) in `0..size(i)`.
///
/// Invariants (checked by [`Domain::new`] and by deserialization): at least one attribute,
/// names non-empty and distinct, every size `>= 1`.
/// Serializes as the flat JSON object `{"attr": size, ...}` in attribute order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain {
    names: Vec<String>,
    sizes: Vec<u32>,
}

impl Domain {
    /// Builds a domain from `(name, size)` pairs in attribute order.
    ///
    /// Errors with [`QueryError::BadDomain`] if there are no attributes, a name is empty,
    /// a name repeats, or a size is zero.
    pub fn new(attrs: Vec<(String, u32)>) -> Result<Self> {
        if attrs.is_empty() {
            return Err(QueryError::BadDomain {
                reason: "a domain needs at least one attribute".into(),
            });
        }
        let mut names = Vec::with_capacity(attrs.len());
        let mut sizes = Vec::with_capacity(attrs.len());
        let mut seen = std::collections::HashSet::with_capacity(attrs.len());
        for (i, (name, size)) in attrs.into_iter().enumerate() {
            if name.is_empty() {
                return Err(QueryError::BadDomain {
                    reason: format!("attribute #{i} has an empty name"),
                });
            }
            if size == 0 {
                return Err(QueryError::BadDomain {
                    reason: format!("attribute '{name}' has size 0 (sizes must be >= 1)"),
                });
            }
            if !seen.insert(name.clone()) {
                return Err(QueryError::BadDomain {
                    reason: format!("attribute '{name}' is declared twice"),
                });
            }
            names.push(name);
            sizes.push(size);
        }
        Ok(Domain { names, sizes })
    }

    /// Number of attributes `d`.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Always `false`: a domain has at least one attribute.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Name of attribute `i` (the empty string if `i >= len()`).
    pub fn name(&self, i: usize) -> &str {
        self.names.get(i).map_or("", String::as_str)
    }

    /// Size of attribute `i` (0 if `i >= len()`).
    pub fn size(&self, i: usize) -> u32 {
        self.sizes.get(i).copied().unwrap_or(0)
    }

    /// Attribute names in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// Attribute sizes in order.
    pub fn sizes(&self) -> &[u32] {
        &self.sizes
    }

    /// Index of the attribute called `name`, or [`QueryError::UnknownAttribute`].
    pub fn index_of(&self, name: &str) -> Result<usize> {
        self.names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| QueryError::UnknownAttribute {
                name: name.to_string(),
            })
    }

    /// `|X| = Π size(i)`, or `None` if it overflows `u128`.
    pub fn universe_size(&self) -> Option<u128> {
        self.sizes
            .iter()
            .try_fold(1u128, |acc, &s| acc.checked_mul(u128::from(s)))
    }

    /// `log10 |X| = Σ log10 size(i)` (finite even when `|X|` overflows).
    pub fn log10_universe_size(&self) -> f64 {
        self.sizes.iter().map(|&s| f64::from(s).log10()).sum()
    }

    /// The sub-domain on the attributes `attrs`, in the order given.
    ///
    /// Errors on an index out of range ([`QueryError::AttributeOutOfRange`]), a repeated
    /// index or an empty list ([`QueryError::BadDomain`]).
    pub fn project(&self, attrs: &[usize]) -> Result<Domain> {
        let mut out = Vec::with_capacity(attrs.len());
        for &a in attrs {
            if a >= self.len() {
                return Err(QueryError::AttributeOutOfRange {
                    index: a,
                    len: self.len(),
                });
            }
            out.push((self.names[a].clone(), self.sizes[a]));
        }
        Domain::new(out)
    }
}

impl Serialize for Domain {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (n, s) in self.names.iter().zip(&self.sizes) {
            map.serialize_entry(n, s)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Domain {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let FlatObject(entries) = FlatObject::deserialize(deserializer)?;
        let mut attrs = Vec::with_capacity(entries.len());
        for (name, size) in entries {
            let size = u32::try_from(size).map_err(|_| {
                serde::de::Error::custom(format!("attribute '{name}': size {size} too large"))
            })?;
            attrs.push((name, size));
        }
        Domain::new(attrs).map_err(serde::de::Error::custom)
    }
}

/// A JSON object read as an ordered list of entries (keeps key order and duplicates).
struct FlatObject(Vec<(String, u64)>);

impl<'de> Deserialize<'de> for FlatObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct FlatVisitor;
        impl<'de> Visitor<'de> for FlatVisitor {
            type Value = FlatObject;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a flat JSON object {\"attribute\": size, ...}")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<FlatObject, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, u64>()? {
                    entries.push(entry);
                }
                Ok(FlatObject(entries))
            }
        }
        deserializer.deserialize_map(FlatVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d3() -> Domain {
        Domain::from_json_str(r#"{"b": 3, "a": 2, "c": 5}"#, "t.json").unwrap()
    }

    #[test]
    fn json_keeps_key_order() {
        let d = d3();
        assert_eq!(d.names().collect::<Vec<_>>(), vec!["b", "a", "c"]);
        assert_eq!(d.sizes(), &[3, 2, 5]);
        assert_eq!(d.index_of("c").unwrap(), 2);
        assert_eq!(d.universe_size(), Some(30));
        assert!((d.log10_universe_size() - 30f64.log10()).abs() < 1e-12);
    }

    #[test]
    fn serde_round_trip_is_flat_object() {
        let d = d3();
        let s = serde_json::to_string(&d).unwrap();
        assert_eq!(s, r#"{"b":3,"a":2,"c":5}"#);
        let back: Domain = serde_json::from_str(&s).unwrap();
        assert_eq!(back, d);
        assert!(serde_json::from_str::<Domain>(r#"{"a":0}"#).is_err());
    }

    #[test]
    fn rejects_bad_domains() {
        for (json, dup) in [
            (r#"{"a": 2, "a": 3}"#, true),
            (r#"{"a": 0}"#, false),
            (r#"{"": 2}"#, false),
            ("{}", false),
            (r#"{"a": 4294967296}"#, false),
        ] {
            match Domain::from_json_str(json, "f.json") {
                Err(QueryError::BadDomain { reason }) => {
                    assert!(reason.starts_with("f.json"), "{reason}");
                    if dup {
                        assert!(reason.contains("twice"), "{reason}");
                    }
                }
                other => panic!("{json}: {other:?}"),
            }
        }
        for json in [
            r#"{"a": -1}"#,
            r#"{"a": 2.5}"#,
            "[1,2]",
            "{",
            r#"{"a": {"b": 1}}"#,
        ] {
            assert!(
                matches!(Domain::from_json_str(json, "f.json"), Err(QueryError::BadJson { ref file, .. }) if file == "f.json"),
                "{json}"
            );
        }
    }

    #[test]
    fn project_and_lookup_errors() {
        let d = d3();
        let p = d.project(&[2, 0]).unwrap();
        assert_eq!(p.names().collect::<Vec<_>>(), vec!["c", "b"]);
        assert_eq!(p.sizes(), &[5, 3]);
        assert!(matches!(
            d.project(&[3]),
            Err(QueryError::AttributeOutOfRange { index: 3, len: 3 })
        ));
        assert!(matches!(
            d.project(&[1, 1]),
            Err(QueryError::BadDomain { .. })
        ));
        assert!(matches!(d.project(&[]), Err(QueryError::BadDomain { .. })));
        assert!(
            matches!(d.index_of("zz"), Err(QueryError::UnknownAttribute { name }) if name == "zz")
        );
        assert_eq!(d.name(7), "");
        assert_eq!(d.size(7), 0);
    }

    #[test]
    fn universe_size_overflow_is_none() {
        let d = Domain::new((0..5).map(|i| (format!("a{i}"), u32::MAX)).collect()).unwrap();
        assert_eq!(d.universe_size(), None);
        assert!((d.log10_universe_size() - 5.0 * f64::from(u32::MAX).log10()).abs() < 1e-9);
    }
}
