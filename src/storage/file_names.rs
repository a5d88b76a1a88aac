//! The names Kafka gives the files of a log dir, and their parsing.
//!
//! A segment with base offset 42 is `00000000000000000042.log` with `.index`, `.timeindex`,
//! `.txnindex` and a producer `.snapshot` beside it: the base offset zero-padded to 20 digits so
//! that names sort as offsets do. Files on their way out carry one more suffix: `.deleted`
//! (scheduled for asynchronous deletion), `.cleaned` and `.swap` (the log cleaner's protocol).

use std::path::{Path, PathBuf};

use crate::cluster::TopicPartition;

pub const LOG_FILE_SUFFIX: &str = ".log";
pub const INDEX_FILE_SUFFIX: &str = ".index";
pub const TIME_INDEX_FILE_SUFFIX: &str = ".timeindex";
pub const TXN_INDEX_FILE_SUFFIX: &str = ".txnindex";
pub const PRODUCER_SNAPSHOT_FILE_SUFFIX: &str = ".snapshot";
pub const DELETED_FILE_SUFFIX: &str = ".deleted";
pub const CLEANED_FILE_SUFFIX: &str = ".cleaned";
pub const SWAP_FILE_SUFFIX: &str = ".swap";

pub const LEADER_EPOCH_CHECKPOINT_FILE: &str = "leader-epoch-checkpoint";
pub const PARTITION_METADATA_FILE: &str = "partition.metadata";
pub const RECOVERY_POINT_CHECKPOINT_FILE: &str = "recovery-point-offset-checkpoint";
pub const LOG_START_OFFSET_CHECKPOINT_FILE: &str = "log-start-offset-checkpoint";
pub const REPLICATION_OFFSET_CHECKPOINT_FILE: &str = "replication-offset-checkpoint";
pub const CLEANER_OFFSET_CHECKPOINT_FILE: &str = "cleaner-offset-checkpoint";
pub const META_PROPERTIES_FILE: &str = "meta.properties";
pub const LOCK_FILE: &str = ".lock";
pub const CLEAN_SHUTDOWN_FILE: &str = ".kafka_cleanshutdown";

/// `offset` zero-padded to 20 digits, the stem of every segment file name.
pub fn filename_prefix_from_offset(offset: i64) -> String {
    format!("{offset:020}")
}

/// `<dir>/<20-digit offset><suffix>`.
pub fn segment_file(dir: &Path, offset: i64, suffix: &str) -> PathBuf {
    dir.join(format!("{}{suffix}", filename_prefix_from_offset(offset)))
}

pub fn log_file(dir: &Path, offset: i64) -> PathBuf {
    segment_file(dir, offset, LOG_FILE_SUFFIX)
}

pub fn offset_index_file(dir: &Path, offset: i64) -> PathBuf {
    segment_file(dir, offset, INDEX_FILE_SUFFIX)
}

pub fn time_index_file(dir: &Path, offset: i64) -> PathBuf {
    segment_file(dir, offset, TIME_INDEX_FILE_SUFFIX)
}

pub fn txn_index_file(dir: &Path, offset: i64) -> PathBuf {
    segment_file(dir, offset, TXN_INDEX_FILE_SUFFIX)
}

/// The base offset a segment file's name encodes: the digits before the first `.`, when they
/// are exactly 20 of them.
pub fn offset_from_file_name(name: &str) -> Option<i64> {
    let stem = name.split('.').next()?;
    if stem.len() != 20 || !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    stem.parse().ok()
}

/// The partition a directory named `<topic>-<partition>` holds. Topic names may contain `-`,
/// so the partition is what follows the last one. Directories of partitions being deleted
/// (`<topic>-<p>.<uuid>-delete`), moved (`-future`) or left stray (`-stray`) are not partitions.
pub fn parse_topic_partition_name(dir_name: &str) -> Option<TopicPartition> {
    let (topic, partition) = dir_name.rsplit_once('-')?;
    if topic.is_empty() || partition.is_empty() || !partition.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let partition: i32 = partition.parse().ok()?;
    Some(TopicPartition::new(topic, partition))
}

/// The suffix of a partition's future replica directory (Kafka's `UnifiedLog.FutureDirSuffix`).
pub const FUTURE_DIR_SUFFIX: &str = "-future";
/// The suffix of a partition directory being deleted (`UnifiedLog.DeleteDirSuffix`).
pub const DELETE_DIR_SUFFIX: &str = "-delete";

/// `<topic>-<partition>.<uuid><suffix>`, Kafka's `logDirNameWithSuffix`: a fresh random id, so
/// two moves or deletions of one partition never collide.
pub fn dir_name_with_suffix(tp: &TopicPartition, suffix: &str) -> String {
    format!("{tp}.{}{suffix}", uuid::Uuid::new_v4().simple())
}

/// The partition a future replica directory (`<topic>-<p>.<uuid>-future`) holds.
pub fn parse_future_dir_name(dir_name: &str) -> Option<TopicPartition> {
    let stem = dir_name.strip_suffix(FUTURE_DIR_SUFFIX)?;
    let (name, uuid) = stem.rsplit_once('.')?;
    if uuid.len() != 32 || !uuid.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    parse_topic_partition_name(name)
}

/// `path` with `suffix` appended to its file name (`x.log` → `x.log.deleted`).
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn future_dirs_name_their_partition_and_are_not_partitions() {
        let tp = TopicPartition::new("a-b", 3);
        let name = dir_name_with_suffix(&tp, FUTURE_DIR_SUFFIX);
        assert!(
            name.starts_with("a-b-3.") && name.ends_with("-future"),
            "{name}"
        );
        assert_eq!(parse_future_dir_name(&name), Some(tp));
        assert_eq!(parse_topic_partition_name(&name), None);
        assert_eq!(parse_future_dir_name("a-3.0123-future"), None);
        assert_eq!(
            parse_future_dir_name("a-3.0123456789abcdef0123456789abcdef-delete"),
            None
        );
    }

    #[test]
    fn segment_names_are_twenty_digit_offsets() {
        assert_eq!(
            log_file(Path::new("/d"), 42),
            PathBuf::from("/d/00000000000000000042.log")
        );
        assert_eq!(
            filename_prefix_from_offset(i64::MAX),
            "09223372036854775807"
        );
        assert_eq!(
            offset_from_file_name("00000000000000000042.timeindex"),
            Some(42)
        );
        assert_eq!(
            offset_from_file_name("00000000000000000042.log.deleted"),
            Some(42)
        );
        assert_eq!(offset_from_file_name("42.log"), None);
        assert_eq!(offset_from_file_name("leader-epoch-checkpoint"), None);
    }

    #[test]
    fn partition_dirs_split_at_the_last_dash() {
        assert_eq!(
            parse_topic_partition_name("my-topic-12"),
            Some(TopicPartition::new("my-topic", 12))
        );
        assert_eq!(parse_topic_partition_name("t-0.5a1e2b3c-delete"), None);
        assert_eq!(parse_topic_partition_name("t-0-future"), None);
        assert_eq!(parse_topic_partition_name("-3"), None);
        assert_eq!(parse_topic_partition_name("noparition"), None);
    }

    #[test]
    fn suffixes_append_to_the_whole_name() {
        assert_eq!(
            with_suffix(
                Path::new("/d/00000000000000000000.log"),
                DELETED_FILE_SUFFIX
            ),
            PathBuf::from("/d/00000000000000000000.log.deleted")
        );
    }
}
