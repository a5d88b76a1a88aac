//! Kafka's wire formats, sans-io: bytes in, bytes out; no tokio, no file system.
//!
//! - [`record`]: record batches (magic 2) and legacy message sets (magic 0/1): header parsing, CRC
//!   checks, walking records in place, compression codecs.

pub mod codec;
pub mod record;
#[rustfmt::skip]
pub mod messages;
