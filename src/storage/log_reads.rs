//! What a read of a partition log asks for: how far a fetch may go ([`FetchIsolation`]) and
//! ListOffsets' special timestamps. The reads themselves are `UnifiedLog`'s
//! (`unified_log/reads.rs`).

/// ListOffsets' special timestamps (Kafka 3.9's `ListOffsetsRequest`).
pub const EARLIEST_TIMESTAMP: i64 = -2;
pub const LATEST_TIMESTAMP: i64 = -1;
pub const MAX_TIMESTAMP: i64 = -3;
pub const EARLIEST_LOCAL_TIMESTAMP: i64 = -4;
pub const LATEST_TIERED_TIMESTAMP: i64 = -5;

/// Up to which offset a read may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchIsolation {
    /// Followers read to the log end.
    LogEnd,
    /// Consumers read below the high watermark.
    HighWatermark,
    /// read_committed consumers read below the last stable offset.
    TxnCommitted,
}
