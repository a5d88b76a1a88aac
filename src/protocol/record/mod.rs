//! Record batches as Kafka writes them on the wire and on disk.
//!
//! - `big_endian`: the one reader of big-endian fields at byte positions, checked.
//! - [`batch`]: the magic-2 `RecordBatch` 61-byte header, its CRC-32C, in-place patches.
//! - [`records`]: walking the records of a batch in place (zigzag varints, keys, values, headers).
//! - `record_stream`: walking the records of a compressed batch as it inflates, through a small
//!   window, skipping keys, values and headers (validation of batches that may be bombs).
//! - [`compression`]: none, gzip, snappy (raw and xerial framing), lz4 (frame), zstd; capped
//!   decompression.
//! - [`control`]: the record of a control batch: a transaction marker's outcome and
//!   coordinator epoch.
//! - `legacy`: magic 0/1 message sets (CRC-32), including compressed wrappers.
//! - [`batch_iter`]: shallow iteration over a buffer of batches of any magic, reporting where valid
//!   data ends.
//! - [`builder`]: building batches and message sets (tests, down-conversion).
//! - `convert`: up-conversion of magic 0/1 message sets to a magic-2 batch (Produce v0-2).
//! - [`down_convert`]: magic-2 batches down to magic 0/1 for Fetch v0-3, record by record.
//! - `rebuild`: re-encoding a produced batch with fresh offsets and a target codec and level
//!   (broker-side recompression).

pub mod batch;
pub mod batch_iter;
pub(crate) mod big_endian;
pub mod builder;
pub mod compression;
pub mod control;
pub(crate) mod convert;
pub mod down_convert;
pub(crate) mod error;
pub(crate) mod legacy;
mod lz4_frame;
pub(crate) mod rebuild;
pub(crate) mod record_stream;
pub mod records;
pub(crate) mod varint;

pub use error::RecordError;
