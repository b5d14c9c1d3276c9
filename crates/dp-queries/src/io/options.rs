//! How a data file is read beyond what its schema says: the CSV field delimiter and whether
//! columns the schema does not name are ignored ([`ReadOptions`]). Every reader takes them —
//! the CSV loaders, the streaming counter, the Parquet reader (extra columns only) and the
//! NON-PRIVATE data check — so one file is read the same way by every command.

use crate::error::{QueryError, Result};

/// The reading options of a data file (module docs). The default — comma-separated, every
/// column must be an attribute of the schema — is what the loaders always did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReadOptions {
    delimiter: u8,
    ignore_extra_columns: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            delimiter: b',',
            ignore_extra_columns: false,
        }
    }
}

impl ReadOptions {
    /// Options with the field delimiter `delimiter` and, with `ignore_extra_columns`, the
    /// columns that are not attributes of the schema skipped (their fields are not read,
    /// not even checked as UTF-8) instead of refused with [`QueryError::ExtraColumn`].
    ///
    /// Errors: [`QueryError::BadOption`] when `delimiter` is not one printable ASCII
    /// character or a tab, or is the quote `"` (which opens a quoted field).
    pub fn new(delimiter: char, ignore_extra_columns: bool) -> Result<Self> {
        let bad = |why: &str| QueryError::BadOption {
            option: "delimiter".into(),
            reason: format!("{delimiter:?} {why}"),
        };
        if !(delimiter == '\t' || delimiter.is_ascii_graphic() || delimiter == ' ') {
            return Err(bad(
                "is not one printable ASCII character or a tab (e.g. ',', ';', '|', '\\t')",
            ));
        }
        if delimiter == '"' {
            return Err(bad("opens a quoted field and cannot separate fields"));
        }
        Ok(ReadOptions {
            // an ASCII character: one byte
            delimiter: delimiter as u8,
            ignore_extra_columns,
        })
    }

    /// These options with extra columns ignored (`true`) or refused (`false`).
    pub fn ignoring_extra_columns(self, ignore: bool) -> Self {
        ReadOptions {
            ignore_extra_columns: ignore,
            ..self
        }
    }

    /// The byte between two fields of a line.
    pub fn delimiter(&self) -> u8 {
        self.delimiter
    }

    /// Whether columns the schema does not name are skipped.
    pub fn ignores_extra_columns(&self) -> bool {
        self.ignore_extra_columns
    }

    /// Whether these are the default options (comma, extra columns refused).
    pub fn is_default(&self) -> bool {
        *self == ReadOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiters_are_single_printable_ascii_characters_or_a_tab() {
        for (c, b) in [
            (',', b','),
            (';', b';'),
            ('\t', b'\t'),
            ('|', b'|'),
            (' ', b' '),
        ] {
            assert_eq!(ReadOptions::new(c, false).unwrap().delimiter(), b);
        }
        for c in ['"', '\n', '\r', 'é', '\u{0}', '→'] {
            match ReadOptions::new(c, true) {
                Err(QueryError::BadOption { option, reason }) => {
                    assert_eq!(option, "delimiter");
                    assert!(reason.starts_with(&format!("{c:?}")), "{reason}");
                }
                other => panic!("{c:?}: {other:?}"),
            }
        }
        assert!(ReadOptions::default().is_default());
        assert!(!ReadOptions::new(',', true).unwrap().is_default());
        assert!(ReadOptions::new(',', true).unwrap().ignores_extra_columns());
        let semi = ReadOptions::new(';', false)
            .unwrap()
            .ignoring_extra_columns(true);
        assert_eq!(semi, ReadOptions::new(';', true).unwrap());
    }

    /// The loaders and the streaming counter read a `;`-separated file with an extra
    /// column alike, and refuse the extra column without the option.
    #[test]
    fn every_csv_reader_takes_the_delimiter_and_ignores_extra_columns_when_told() {
        use crate::workload::MarginalWorkload;
        use crate::{Dataset, Schema, StreamSettings, count_csv_streaming};
        let schema = Schema::from_json_str(
            r#"{"city": {"labels": ["a;b", "c"], "missing": true}, "n": 3}"#,
            "s.json",
        )
        .unwrap();
        // the extra column's fields are not read: not even its non-UTF-8 byte
        let csv: &[u8] = b"name;city;n\nx,y;\"a;b\";2\n\"q\";c;0\n\xff;;1\n";
        let options = ReadOptions::new(';', true).unwrap();
        let d = Dataset::from_csv_reader_with_options(csv, "f.csv", &schema, &options).unwrap();
        assert_eq!(d.column(0), &[0, 1, 2]);
        assert_eq!(d.column(1), &[2, 0, 1]);
        let w = MarginalWorkload::all_kway(schema.domain(), 2).unwrap();
        let streamed = count_csv_streaming(
            csv,
            "f.csv",
            &schema,
            &options,
            &w,
            &StreamSettings::default(),
        )
        .unwrap();
        let exact: Vec<i64> = w
            .count_all(&d)
            .unwrap()
            .into_iter()
            .map(|c| c as i64)
            .collect();
        assert_eq!(streamed.counts, exact);
        assert_eq!(streamed.rows, 3);
        // without ignoring: the extra column is refused, by name, with the way out
        let strict = ReadOptions::new(';', false).unwrap();
        for e in [
            Dataset::from_csv_reader_with_options(csv, "f.csv", &schema, &strict).unwrap_err(),
            count_csv_streaming(
                csv,
                "f.csv",
                &schema,
                &strict,
                &w,
                &StreamSettings::default(),
            )
            .unwrap_err(),
        ] {
            assert!(
                matches!(&e, QueryError::ExtraColumn { column, .. } if column == "name"),
                "{e}"
            );
            assert!(e.to_string().contains("--ignore-extra-columns"), "{e}");
        }
        // with commas, the header is one column named "name;city;n"
        assert!(matches!(
            Dataset::from_csv_reader_with_options(
                csv,
                "f.csv",
                &schema,
                &ReadOptions::new(',', true).unwrap()
            ),
            Err(QueryError::MissingColumn { .. })
        ));
    }
}
