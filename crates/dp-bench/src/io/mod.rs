//! Files in and out: bundled datasets, the answers and synthetic-records CSV formats, atomic
//! writes and output checks, the on-disk budget ledger.

pub mod answers;
pub mod datasets;
pub mod ledger_file;
pub mod output;
pub mod synthetic;
