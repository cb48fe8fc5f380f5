//! `[limits]`: caps on what one input file may cost (gzip bombs, endless
//! lines). The numbers are settings; the readers that hold files to them
//! are `ingest::limits`.

use serde::{Deserialize, Serialize};

/// Default cap on the decompressed size of one file: 4 GiB.
const DEFAULT_MAX_DECOMPRESSED_BYTES: u64 = 4 << 30;
/// Default cap on the decompression ratio: 64× the compressed size.
/// Real load-test output compresses 10–30×; 64× leaves room without
/// letting a bomb through.
const DEFAULT_MAX_DECOMPRESSION_RATIO: u64 = 64;
/// The ratio cap never pushes the limit below this, so that tiny files
/// that compress very well (a few repeated lines) still open.
const MIN_DECOMPRESSED_CAP: u64 = 1 << 20;
/// Default cap on one line of a line-oriented file (NDJSON, CSV, folded
/// stacks): 16 MiB. Real lines are well under 64 KiB.
const DEFAULT_MAX_LINE_BYTES: usize = 16 << 20;
/// Default cap on a file that is read whole (a k6 summary is a few KiB):
/// 256 MiB.
const DEFAULT_MAX_DOCUMENT_BYTES: u64 = 256 << 20;
/// Default cap on the endpoints one run-level file may split into: a few
/// hundred real endpoints, never a page per URL (k6 names each request by
/// its full URL unless the script names it).
const DEFAULT_MAX_ENDPOINTS_PER_RUN: usize = 500;
/// Default memory budget for whole files held while they are read, over
/// all reading threads together.
const DEFAULT_MEMORY_BUDGET_BYTES: u64 = 512 << 20;

/// `[limits]` in perfdash.toml.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// A compressed file may not inflate to more than this many bytes.
    pub max_decompressed_bytes: u64,
    /// …nor to more than this many times its compressed size
    /// (but never less than 1 MiB).
    pub max_decompression_ratio: u64,
    /// A line longer than this is skipped with a warning.
    pub max_line_bytes: usize,
    /// A file read whole (k6 summary, HTML profile) larger than this,
    /// after decompression, is skipped with a warning.
    pub max_document_bytes: u64,
    /// A run-level file whose split tag gives more endpoints than this is
    /// refused with advice.
    pub max_endpoints_per_run: usize,
    /// Bytes of whole files (summaries, profiles) that may be held at once
    /// while they are read, by all threads together: reading waits for
    /// room rather than holding one file per thread. It changes no result,
    /// so it is no part of cache keys.
    #[serde(skip_serializing)]
    pub memory_budget_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_decompressed_bytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
            max_decompression_ratio: DEFAULT_MAX_DECOMPRESSION_RATIO,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            max_endpoints_per_run: DEFAULT_MAX_ENDPOINTS_PER_RUN,
            memory_budget_bytes: DEFAULT_MEMORY_BUDGET_BYTES,
        }
    }
}

impl Limits {
    /// The decompressed-size cap for a compressed file of `compressed_len` bytes.
    pub fn decompressed_cap(&self, compressed_len: u64) -> u64 {
        compressed_len
            .saturating_mul(self.max_decompression_ratio)
            .max(MIN_DECOMPRESSED_CAP)
            .min(self.max_decompressed_bytes)
    }

    pub(super) fn validate(&self) -> Result<(), String> {
        if self.max_decompressed_bytes == 0
            || self.max_decompression_ratio == 0
            || self.max_line_bytes == 0
            || self.max_document_bytes == 0
            || self.max_endpoints_per_run == 0
            || self.memory_budget_bytes == 0
        {
            return Err("limits.* must all be at least 1".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_follows_ratio_with_floor_and_ceiling() {
        let l = Limits::default();
        assert_eq!(l.decompressed_cap(10), MIN_DECOMPRESSED_CAP);
        assert_eq!(l.decompressed_cap(1 << 20), 64 << 20);
        assert_eq!(l.decompressed_cap(1 << 40), DEFAULT_MAX_DECOMPRESSED_BYTES);
        assert_eq!(l.decompressed_cap(u64::MAX), DEFAULT_MAX_DECOMPRESSED_BYTES);
    }
}
