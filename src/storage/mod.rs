//! The partition log, byte-compatible with Kafka 3.9's on-disk format.
//!
//! A partition is a directory `<topic>-<partition>` of segments; each segment is a `.log` of
//! record batches with a sparse `.index` (offset → file position) and a `.timeindex` (timestamp →
//! offset). See docs/storage-format.md for the formats and docs/architecture.md for the
//! invariants.
//!
//! - [`file_names`]: segment and checkpoint file names and suffixes.
//! - [`log_config`], `log_config_values`: per-topic log settings with Kafka's names, defaults
//!   and validators.
//! - `index_file`, [`offset_index`], [`time_index`]: the memory-mapped sparse indexes.
//! - [`transaction_index`]: a segment's aborted transactions (`.txnindex`).
//! - `file_records`: a `.log` file: append, slices, batch search.
//! - `log_file_cache`: the open descriptors of `.log` files, at most a capacity set from the
//!   open-file limit; a closed one reopens on use.
//! - [`log_segment`]: one segment: records plus indexes; append, read, recover, roll checks.
//! - `log_segments`: a log's segments in base-offset order and their lookups (Kafka's
//!   `LogSegments`).
//! - `segment_scan`: one validating pass over a `.log` computing its index entries.
//! - [`log_validator`]: validation of produced batches, as Kafka's `LogValidator`.
//! - `local_log`: a partition's local files (Kafka's `LocalLog`): the dir, the segments, the
//!   roll, the recovery point and flushes, the log end, truncation of the files, `.deleted`
//!   files.
//! - [`unified_log`]: a partition's log over its `LocalLog` (Kafka's `UnifiedLog`): the high
//!   watermark, the log start offset, the leader-epoch cache, the producer state; appends,
//!   reads, truncation, retention (deletion of old segments by time, size and log start
//!   offset), the swap of cleaned segments; every `impl UnifiedLog` is under `unified_log/`.
//! - [`log_reads`]: what a read asks for: `FetchIsolation`, ListOffsets' special timestamps.
//! - `log_loader`: opening a partition directory, recovery after an unclean shutdown.
//! - [`records_source`]: records that reach a log from outside memory (a follower's spliced
//!   fetch response), written in place.
//! - [`producer_state`]: the idempotent producer's per-partition state and its `.snapshot`
//!   files.
//! - [`leader_epoch_cache`]: the leader-epoch cache and its `leader-epoch-checkpoint` file.
//! - `checkpoint_file`, `offset_checkpoint`, [`partition_metadata`], `meta_properties`,
//!   `clean_shutdown`, [`log_dir_lock`]: the small files of a log dir.
//! - [`log_cleaner`]: compaction of `cleanup.policy=compact` logs (Kafka's `LogCleaner`).
//! - `replace_segments`: the cleaner's frozen views of a log, and the crash-safe protocol of
//!   swapping cleaned segments into it.
//! - [`log_manager`]: every partition of every `log.dirs` entry; placement, checkpoints, the
//!   retention schedule; moves between log dirs (future logs) and failed dirs.
//! - `log_dir_failure_channel`: where I/O errors take a log dir offline.
//! - `descriptors`: the open-file limit; EMFILE told apart from a failed disk; whether new
//!   logs fit.

pub(crate) mod checkpoint_file;
pub(crate) mod clean_shutdown;
pub(crate) mod descriptors;
pub(crate) mod error;
pub mod file_names;
pub(crate) mod file_records;
pub(crate) mod index_file;
pub mod leader_epoch_cache;
pub(crate) mod local_log;
pub mod log_cleaner;
pub mod log_config;
pub(crate) mod log_config_values;
pub(crate) mod log_dir_failure_channel;
pub mod log_dir_lock;
pub(crate) mod log_file_cache;
pub(crate) mod log_loader;
pub mod log_manager;
pub mod log_reads;
pub mod log_segment;
pub(crate) mod log_segments;
pub mod log_validator;
pub(crate) mod meta_properties;
pub(crate) mod offset_checkpoint;
pub mod offset_index;
pub mod partition_metadata;
pub mod producer_state;
pub mod records_source;
pub(crate) mod replace_segments;
pub(crate) mod segment_scan;
pub mod time_index;
pub mod transaction_index;
pub mod unified_log;

pub use error::StorageError;
