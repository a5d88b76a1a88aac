//! What both coordinators keep about the partitions of their internal topic, and how they read
//! one back: Kafka's `loadingPartitions`, `ownedPartitions` and `epochForPartitionId` (the group
//! coordinator's) and `loadingPartitions` and the coordinator epochs of `transactionMetadataCache`
//! (the transaction coordinator's), under one type, and the read of a partition from its log
//! start to its log end.
//!
//! A partition is loading, loaded, or not coordinated here (absent). Each load has an id, so
//! that a load overtaken by a resignation or a newer load installs nothing. Elections and
//! resignations carry the partition's leader epoch (the coordinator epoch); one older than the
//! newest seen changes nothing.

use std::collections::HashMap;

use crate::protocol::record::batch_iter::BatchIter;
use crate::protocol::record::control::{ControlRecord, read_control_record};
use crate::protocol::record::records::{batch_records, for_each_record};
use crate::replication::{FetchIsolation, Partition};

/// Whether a partition's state is in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoadState {
    Loading,
    Loaded,
}

/// One partition's load: its state and which load set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PartitionLoad {
    state: LoadState,
    /// 0: marked loading with no load running yet.
    load_id: u64,
}

/// Why an election starts no load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoLoad {
    /// Its epoch is older than the partition's newest.
    Stale,
    /// The partition is loaded already (an owned partition is not loaded twice).
    Loaded,
}

/// The partitions of one coordinator; see the module doc.
#[derive(Debug, Default)]
pub(crate) struct CoordinatorPartitions {
    /// Partitions loading or loaded here; absent: not coordinated here.
    loads: HashMap<i32, PartitionLoad>,
    /// The newest leader epoch an election or resignation of each partition carried.
    epochs: HashMap<i32, i32>,
    last_load_id: u64,
}

impl CoordinatorPartitions {
    pub(crate) fn state(&self, index: i32) -> Option<LoadState> {
        self.loads.get(&index).map(|l| l.state)
    }

    pub(crate) fn any_loading(&self) -> bool {
        self.loads.values().any(|l| l.state == LoadState::Loading)
    }

    /// Kafka's `maybeUpdateCoordinatorEpoch`: `epoch` becomes the partition's when newer; false
    /// when it is older than the partition's (a stale election or resignation). `None` always
    /// passes.
    fn maybe_update_coordinator_epoch(&mut self, index: i32, epoch: Option<i32>) -> bool {
        let Some(epoch) = epoch else { return true };
        let current = self.epochs.entry(index).or_insert(epoch);
        if epoch > *current {
            *current = epoch;
        }
        epoch == *current
    }

    /// An election at `epoch`: marks the partition loading, and the id of the load to run.
    pub(crate) fn begin_loading(&mut self, index: i32, epoch: Option<i32>) -> Result<u64, NoLoad> {
        if !self.maybe_update_coordinator_epoch(index, epoch) {
            return Err(NoLoad::Stale);
        }
        if self.state(index) == Some(LoadState::Loaded) {
            return Err(NoLoad::Loaded);
        }
        Ok(self.new_load(index))
    }

    /// A load of the partition whatever its state (a fresh load at no epoch): its id.
    pub(crate) fn new_load(&mut self, index: i32) -> u64 {
        self.last_load_id += 1;
        let id = self.last_load_id;
        self.loads.insert(
            index,
            PartitionLoad {
                state: LoadState::Loading,
                load_id: id,
            },
        );
        id
    }

    /// A resignation at `epoch`: the partition is no longer loading or loaded here; false (and
    /// nothing changes) when the epoch is stale.
    pub(crate) fn resign(&mut self, index: i32, epoch: Option<i32>) -> bool {
        if !self.maybe_update_coordinator_epoch(index, epoch) {
            return false;
        }
        self.loads.remove(&index);
        true
    }

    /// Forgets a partition this broker will not coordinate.
    pub(crate) fn forget(&mut self, index: i32) {
        self.loads.remove(&index);
    }

    /// Marks a partition loading with no load running yet.
    pub(crate) fn mark_loading(&mut self, index: i32) {
        self.loads.insert(
            index,
            PartitionLoad {
                state: LoadState::Loading,
                load_id: 0,
            },
        );
    }

    /// [`CoordinatorPartitions::mark_loading`] unless its state is known already.
    pub(crate) fn mark_loading_if_unknown(&mut self, index: i32) {
        if self.state(index).is_none() {
            self.mark_loading(index);
        }
    }

    /// Whether load `load_id` is still the partition's: nothing overtook it.
    pub(crate) fn is_current(&self, index: i32, load_id: u64) -> bool {
        self.loads.get(&index).copied()
            == Some(PartitionLoad {
                state: LoadState::Loading,
                load_id,
            })
    }

    /// Load `load_id` installed what it read.
    pub(crate) fn finish(&mut self, index: i32, load_id: u64) {
        self.loads.insert(
            index,
            PartitionLoad {
                state: LoadState::Loaded,
                load_id,
            },
        );
    }
}

/// One thing a load reads from an internal topic's partition, in log order.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LoadedRecord<'a> {
    /// A record of a data batch: its key and value (`None` for null), and its batch's producer
    /// id, whether the batch is transactional, and its base offset.
    Data {
        key: Option<&'a [u8]>,
        value: Option<&'a [u8]>,
        producer_id: i64,
        transactional: bool,
        batch_offset: i64,
    },
    /// A transaction marker: the producer's open transaction is committed or aborted.
    Marker { producer_id: i64, commit: bool },
}

/// Reads `partition` from its log start to its log end, `buffer_size` bytes at a time, handing
/// each record of its data batches and each transaction marker to `apply`, in order (other
/// control batches are skipped). Blocking (file reads). The first error, the log's or
/// `apply`'s, stops the read.
///
/// To the log end, as Kafka's loads read: a new leader's high watermark may lag the old
/// leader's, and what the old leader acknowledged may lie above it; the followers will take
/// this log as it is.
pub(crate) fn read_partition(
    partition: &Partition,
    buffer_size: usize,
    mut apply: impl FnMut(LoadedRecord<'_>) -> Result<(), String>,
) -> Result<(), String> {
    let mut offset = partition.offsets().log_start_offset;
    loop {
        if offset >= partition.offsets().log_end_offset {
            return Ok(());
        }
        let read = partition
            .read_records(
                offset,
                -1,
                None,
                buffer_size,
                FetchIsolation::LogEnd,
                true,
                true,
            )
            .map_err(|e| e.to_string())?;
        let bytes = read.records.read_to_vec().map_err(|e| e.to_string())?;
        if bytes.is_empty() {
            return Ok(());
        }
        let before = offset;
        for batch in BatchIter::new(&bytes) {
            let batch = batch.map_err(|e| e.to_string())?;
            let Some(header) = batch.header() else { break };
            offset = header.next_offset();
            if header.is_control() {
                if let ControlRecord::EndTxn(marker) =
                    read_control_record(batch.bytes, &header).map_err(|e| e.to_string())?
                {
                    apply(LoadedRecord::Marker {
                        producer_id: header.producer_id,
                        commit: marker.is_commit(),
                    })?;
                }
                continue;
            }
            let body = batch_records(batch.bytes, &header, 256 << 20).map_err(|e| e.to_string())?;
            let mut failure = None;
            for_each_record(&body, header.records_count, |_, r| {
                let record = LoadedRecord::Data {
                    key: r.key,
                    value: r.value,
                    producer_id: header.producer_id,
                    transactional: header.is_transactional(),
                    batch_offset: header.base_offset,
                };
                if failure.is_none()
                    && let Err(e) = apply(record)
                {
                    failure = Some(e);
                }
            })
            .map_err(|e| e.to_string())?;
            if let Some(e) = failure {
                return Err(e);
            }
        }
        if offset <= before {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_follow_elections_and_resignations_by_epoch() {
        let mut p = CoordinatorPartitions::default();
        let first = p.begin_loading(3, Some(5)).unwrap();
        assert_eq!(p.state(3), Some(LoadState::Loading));
        assert!(p.any_loading());
        // A resignation of an older epoch is stale; one of the same epoch unloads.
        assert!(!p.resign(3, Some(4)));
        assert!(p.is_current(3, first));
        assert!(p.resign(3, Some(5)));
        assert!(!p.is_current(3, first), "the load was overtaken");
        assert_eq!(p.state(3), None);
        // A newer election loads again; the older one is refused.
        assert_eq!(p.begin_loading(3, Some(4)), Err(NoLoad::Stale));
        let second = p.begin_loading(3, Some(6)).unwrap();
        assert_ne!(first, second);
        p.finish(3, second);
        assert_eq!(p.state(3), Some(LoadState::Loaded));
        assert_eq!(p.begin_loading(3, Some(6)), Err(NoLoad::Loaded));
        assert!(!p.any_loading());
        // No epoch always passes.
        assert!(p.resign(3, None));
        p.mark_loading_if_unknown(3);
        assert_eq!(p.state(3), Some(LoadState::Loading));
        p.forget(3);
        assert_eq!(p.state(3), None);
    }
}
