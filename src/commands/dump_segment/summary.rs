//! `--summary`: one comfy-table per file instead of the dump: batches, records, bytes, offset
//! and timestamp ranges (timestamps also as UTC times), codecs used, compression ratio and invalid batches of a `.log`; entry
//! counts and ranges of the other kinds.

use std::collections::BTreeSet;

use comfy_table::Table;

use super::segment::BatchInfo;
use crate::cluster::utc::UtcDateTime;

/// What is accumulated over the batches of one `.log`.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct LogSummary {
    pub batches: u64,
    pub records: u64,
    /// Bytes of valid batches.
    pub bytes: u64,
    pub first_offset: Option<i64>,
    pub last_offset: Option<i64>,
    pub min_timestamp: Option<i64>,
    pub max_timestamp: Option<i64>,
    pub codecs: BTreeSet<&'static str>,
    /// Compressed bytes of compressed batches and what they decompress to.
    pub compressed_bytes: u64,
    pub uncompressed_bytes: u64,
    pub invalid_batches: u64,
    /// Bytes after the last valid batch.
    pub trailing_bytes: u64,
}

impl LogSummary {
    /// Adds one batch: `records` counted, `first_timestamp` the earliest it tells, and for a
    /// compressed batch `(compressed, decompressed)` sizes.
    pub(crate) fn add_batch(
        &mut self,
        b: &BatchInfo,
        records: u64,
        first_timestamp: i64,
        sizes: Option<(usize, usize)>,
    ) {
        self.batches += 1;
        self.records += records;
        self.bytes += b.size as u64;
        let first = if b.magic >= 2 {
            b.base_offset
        } else {
            b.last_offset
        };
        self.first_offset = Some(self.first_offset.map_or(first, |f| f.min(first)));
        self.last_offset = Some(
            self.last_offset
                .map_or(b.last_offset, |l| l.max(b.last_offset)),
        );
        for ts in [first_timestamp, b.max_timestamp] {
            if ts >= 0 {
                self.min_timestamp = Some(self.min_timestamp.map_or(ts, |m| m.min(ts)));
                self.max_timestamp = Some(self.max_timestamp.map_or(ts, |m| m.max(ts)));
            }
        }
        self.codecs.insert(b.compression.name());
        if let Some((c, u)) = sizes {
            self.compressed_bytes += c as u64;
            self.uncompressed_bytes += u as u64;
        }
        if !b.is_valid {
            self.invalid_batches += 1;
        }
    }

    /// The table, titled by the file.
    pub(crate) fn render(&self, file: &str) -> String {
        let range = |a: Option<i64>, b: Option<i64>| range_of(a, b, |t| t.to_string());
        let ratio = if self.compressed_bytes > 0 {
            format!(
                "{:.2}",
                self.uncompressed_bytes as f64 / self.compressed_bytes as f64
            )
        } else {
            "-".to_string()
        };
        let codecs = if self.codecs.is_empty() {
            "-".to_string()
        } else {
            self.codecs.iter().copied().collect::<Vec<_>>().join(", ")
        };
        let rows = [
            ("batches", self.batches.to_string()),
            ("records", self.records.to_string()),
            ("bytes", self.bytes.to_string()),
            ("offsets", range(self.first_offset, self.last_offset)),
            ("timestamps", range(self.min_timestamp, self.max_timestamp)),
            (
                "timestamps (UTC)",
                range_of(self.min_timestamp, self.max_timestamp, utc),
            ),
            ("codecs", codecs),
            ("compression ratio", ratio),
            ("invalid batches", self.invalid_batches.to_string()),
            ("invalid bytes at end", self.trailing_bytes.to_string()),
        ];
        table(file, &rows)
    }
}

/// `a .. b` with each end rendered by `show`, or `-` when the range is empty.
fn range_of(a: Option<i64>, b: Option<i64>, show: impl Fn(i64) -> String) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{} .. {}", show(a), show(b)),
        _ => "-".to_string(),
    }
}

/// A record timestamp (ms since the epoch) as a person reads it.
fn utc(ms: i64) -> String {
    UtcDateTime::from_unix_ms(ms).to_iso8601()
}

/// A two-column table titled `file`.
pub(crate) fn table(file: &str, rows: &[(&str, String)]) -> String {
    let mut t = Table::new();
    t.set_header(vec![file.to_string(), String::new()]);
    for (k, v) in rows {
        t.add_row(vec![k.to_string(), v.clone()]);
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::batch::TimestampType;
    use crate::protocol::record::compression::CompressionType;

    #[test]
    fn accumulates_ranges_codecs_and_ratio() {
        let mut s = LogSummary::default();
        let mut b = BatchInfo {
            position: 0,
            size: 100,
            magic: 2,
            base_offset: 0,
            last_offset: 4,
            count: Some(5),
            base_sequence: -1,
            last_sequence: -1,
            producer_id: -1,
            producer_epoch: -1,
            partition_leader_epoch: 0,
            is_transactional: false,
            is_control: false,
            delete_horizon_ms: None,
            timestamp_type: TimestampType::CreateTime,
            max_timestamp: 20,
            compression: CompressionType::Gzip,
            unknown_compression: None,
            crc: 0,
            is_valid: true,
        };
        s.add_batch(&b, 5, 10, Some((40, 120)));
        b.base_offset = 5;
        b.last_offset = 5;
        b.compression = CompressionType::None;
        b.is_valid = false;
        s.add_batch(&b, 1, 30, None);
        assert_eq!((s.batches, s.records, s.bytes), (2, 6, 200));
        assert_eq!((s.first_offset, s.last_offset), (Some(0), Some(5)));
        assert_eq!((s.min_timestamp, s.max_timestamp), (Some(10), Some(30)));
        assert_eq!(s.invalid_batches, 1);
        let table = s.render("0.log");
        assert!(table.contains("3.00"), "{table}");
        assert!(table.contains("gzip, none"), "{table}");
        assert!(table.contains("| 10 .. 30 "), "{table}");
        assert!(
            table.contains("1970-01-01T00:00:00.010Z .. 1970-01-01T00:00:00.030Z"),
            "{table}"
        );
    }
}
