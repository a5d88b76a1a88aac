//! Offset checkpoint files of a log dir: `recovery-point-offset-checkpoint`,
//! `replication-offset-checkpoint` (high watermarks), `log-start-offset-checkpoint` and
//! `cleaner-offset-checkpoint`, as Kafka 3.9's `OffsetCheckpointFile`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::cluster::TopicPartition;
use crate::storage::StorageError;
use crate::storage::checkpoint_file::{CheckpointFile, EntryFormatter, java_split_whitespace};

/// The format version Kafka 3.9 writes and accepts.
pub(crate) const OFFSET_CHECKPOINT_VERSION: i32 = 0;

/// One `topic partition offset` line.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OffsetCheckpointFormatter;

impl EntryFormatter for OffsetCheckpointFormatter {
    type Entry = (TopicPartition, i64);

    fn to_line(&self, (tp, offset): &(TopicPartition, i64)) -> String {
        format!("{} {} {offset}", tp.topic, tp.partition)
    }

    fn parse_line(&self, line: &str) -> Option<(TopicPartition, i64)> {
        match java_split_whitespace(line)[..] {
            [topic, partition, offset] => Some((
                TopicPartition::new(topic, partition.parse().ok()?),
                offset.parse().ok()?,
            )),
            _ => None,
        }
    }
}

/// A map of partition → offset kept in a log dir:
///
/// ```text
/// 0                 <- version
/// 2                 <- number of entries
/// orders 0 1234     <- topic, partition, offset; single spaces
/// orders 1 99
/// ```
///
/// Written atomically (temp file, fsync, rename, directory fsync). A missing file reads as an
/// empty map; a partition listed twice keeps its last offset, as Kafka's map does.
#[derive(Debug, Clone)]
pub(crate) struct OffsetCheckpointFile {
    file: CheckpointFile<OffsetCheckpointFormatter>,
}

impl OffsetCheckpointFile {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self {
            file: CheckpointFile::new(path, OFFSET_CHECKPOINT_VERSION, OffsetCheckpointFormatter),
        }
    }

    #[cfg(test)]
    fn path(&self) -> &std::path::Path {
        self.file.path()
    }

    /// Replaces the file with `offsets` (in partition order).
    pub(crate) fn write(
        &self,
        offsets: &BTreeMap<TopicPartition, i64>,
    ) -> Result<(), StorageError> {
        let entries: Vec<(TopicPartition, i64)> =
            offsets.iter().map(|(tp, o)| (tp.clone(), *o)).collect();
        self.file.write(entries.iter())
    }

    pub(crate) fn read(&self) -> Result<BTreeMap<TopicPartition, i64>, StorageError> {
        Ok(self.file.read()?.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn writes_kafkas_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let file = OffsetCheckpointFile::new(dir.path().join("recovery-point-offset-checkpoint"));
        let offsets = BTreeMap::from([
            (TopicPartition::new("orders", 1), 99),
            (TopicPartition::new("orders", 0), 1234),
        ]);
        file.write(&offsets).unwrap();
        assert_eq!(
            std::fs::read_to_string(file.path()).unwrap(),
            "0\n2\norders 0 1234\norders 1 99\n"
        );
        assert_eq!(file.read().unwrap(), offsets);
    }

    #[test]
    fn missing_file_is_empty_and_bad_lines_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = OffsetCheckpointFile::new(dir.path().join("cp"));
        assert!(file.read().unwrap().is_empty());
        std::fs::write(file.path(), "0\n1\norders zero 5\n").unwrap();
        let err = file.read().unwrap_err().to_string();
        assert!(err.contains("malformed line: orders zero 5"), "{err}");
        std::fs::write(file.path(), "0\n2\nt 0 5\nt 0 7\n").unwrap();
        assert_eq!(
            file.read().unwrap(),
            BTreeMap::from([(TopicPartition::new("t", 0), 7)])
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

        #[test]
        fn write_read_round_trip(
            entries in proptest::collection::btree_map(
                ("[a-zA-Z0-9._-]{1,20}", 0i32..1000),
                any::<i64>(),
                0..50,
            )
        ) {
            let dir = tempfile::tempdir().unwrap();
            let file = OffsetCheckpointFile::new(dir.path().join("cp"));
            let offsets: BTreeMap<TopicPartition, i64> = entries
                .into_iter()
                .map(|((t, p), o)| (TopicPartition::new(t, p), o))
                .collect();
            file.write(&offsets).unwrap();
            prop_assert_eq!(file.read().unwrap(), offsets);
        }
    }
}
