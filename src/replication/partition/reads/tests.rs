//! The leader's side of truncation on fetch: the diverging-epoch check of a fetch with
//! `LastFetchedEpoch` (Kafka's `readRecords`), that a diverged follower's fetch is answered at
//! once without recording its fetch offset, and OffsetForLeaderEpoch's answers for followers.

use std::sync::Arc;

use crate::cluster::{LeaderAndIsr, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::replication::partition::{EpochEndOffset, Partition};
use crate::replication::replica_manager::{
    FetchParams, FetchPartitionInfo, FetchResult, ReplicaManager, TempReplicaManager, produce_one,
};
use crate::storage::log_config::LogConfig;
use crate::storage::log_reads::FetchIsolation;

struct Leader {
    _dir: tempfile::TempDir,
    rm: Arc<ReplicaManager>,
    partition: Arc<Partition>,
}

fn tp() -> TopicPartition {
    TopicPartition::new("t", 0)
}

/// Leads `t-0` (replicas 0 and 1, ISR only 0 so the high watermark follows the log end) with
/// epochs 1 (offsets 0..4) and 3 (4..7), one record a batch.
fn leader() -> Leader {
    let TempReplicaManager { dir, rm, .. } = TempReplicaManager::new(0, 1_700_000_000_000);
    let lead = |epoch: i32| {
        let state = LeaderAndIsr {
            leader_epoch: epoch,
            ..LeaderAndIsr::new(0, vec![0])
        };
        rm.become_leader_or_follower(&tp(), None, vec![0, 1], state, LogConfig::default())
            .unwrap()
    };
    let partition = lead(1);
    for i in 0..4 {
        produce(&rm, i);
    }
    lead(3);
    for i in 4..7 {
        produce(&rm, i);
    }
    Leader {
        _dir: dir,
        rm,
        partition,
    }
}

fn produce(rm: &ReplicaManager, seed: u8) {
    produce_one(rm, &tp(), seed);
}

/// A follower's read at `fetch_offset` claiming `last_fetched_epoch`: the diverging epoch, or
/// the error code.
fn check(
    p: &Partition,
    fetch_offset: i64,
    last_fetched_epoch: Option<i32>,
) -> Result<Option<EpochEndOffset>, ErrorCode> {
    p.read_records(
        fetch_offset,
        3,
        last_fetched_epoch,
        1 << 20,
        FetchIsolation::LogEnd,
        true,
        true,
    )
    .map(|read| {
        if read.diverging_epoch.is_some() {
            assert_eq!(
                read.records.size, 0,
                "a diverging answer carries no records"
            );
        }
        read.diverging_epoch
    })
    .map_err(|e| e.error_code())
}

fn diverging(leader_epoch: i32, end_offset: i64) -> Result<Option<EpochEndOffset>, ErrorCode> {
    Ok(Some(EpochEndOffset {
        leader_epoch,
        end_offset,
    }))
}

#[test]
fn a_fetch_whose_last_epoch_ends_at_or_past_its_offset_reads_on() {
    let l = leader();
    assert_eq!(check(&l.partition, 7, Some(3)), Ok(None), "caught up");
    assert_eq!(check(&l.partition, 5, Some(3)), Ok(None));
    assert_eq!(
        check(&l.partition, 4, Some(1)),
        Ok(None),
        "epoch 1 ends at 4"
    );
    assert_eq!(check(&l.partition, 2, Some(1)), Ok(None));
    assert_eq!(check(&l.partition, 6, None), Ok(None), "no epoch: no check");
    let read = l
        .partition
        .read_records(4, 3, Some(1), 1 << 20, FetchIsolation::LogEnd, true, true)
        .unwrap();
    assert!(read.records.size > 0, "the records of epoch 3 are read");
}

#[test]
fn a_fetch_past_the_end_of_its_last_epoch_or_of_an_epoch_the_leader_never_had_diverges() {
    let l = leader();
    // The follower has epoch 1 up to 6: the leader's epoch 1 ends at 4.
    assert_eq!(check(&l.partition, 6, Some(1)), diverging(1, 4));
    // Epoch 2 was never this leader's: its largest epoch below is 1, ending at 4 — even when
    // the fetch offset is not past it.
    assert_eq!(check(&l.partition, 6, Some(2)), diverging(1, 4));
    assert_eq!(check(&l.partition, 4, Some(2)), diverging(1, 4));
    // Below every epoch of the leader: the requested epoch, ending where the first one starts.
    assert_eq!(check(&l.partition, 0, Some(0)), Ok(None));
    assert_eq!(check(&l.partition, 2, Some(0)), diverging(0, 0));
}

#[test]
fn an_epoch_the_leader_cannot_place_or_an_offset_below_the_log_start_is_out_of_range() {
    let l = leader();
    assert_eq!(
        check(&l.partition, 7, Some(5)),
        Err(ErrorCode::OffsetOutOfRange),
        "an epoch newer than the leader's latest"
    );
    l.partition.delete_records_on_leader(2).unwrap();
    assert_eq!(
        check(&l.partition, 1, Some(1)),
        Err(ErrorCode::OffsetOutOfRange)
    );
    assert_eq!(check(&l.partition, 3, Some(1)), Ok(None));
}

fn follower_fetch(
    fetch_offset: i64,
    last_fetched_epoch: Option<i32>,
) -> (FetchParams, Vec<FetchPartitionInfo>) {
    let params = FetchParams {
        replica_id: 1,
        max_wait_ms: 30_000,
        min_bytes: 1,
        max_bytes: 1 << 20,
        isolation_level: 0,
        min_one_message: true,
        whole_batches: false,
        client_metadata: None,
    };
    let info = FetchPartitionInfo {
        topic_partition: tp(),
        fetch_offset,
        current_leader_epoch: 3,
        last_fetched_epoch,
        log_start_offset: -1,
        partition_max_bytes: 1 << 20,
    };
    (params, vec![info])
}

#[test]
fn a_diverged_followers_long_poll_answers_at_once_and_its_offset_is_not_recorded() {
    let l = leader();
    let (params, infos) = follower_fetch(6, Some(1));
    let FetchResult::Ready(reads) = l.rm.fetch_messages(params, infos) else {
        panic!("a diverging epoch answers at once, whatever max_wait_ms and min_bytes say");
    };
    assert_eq!(reads[0].error_code, ErrorCode::None);
    assert_eq!(
        reads[0].diverging_epoch,
        Some(EpochEndOffset {
            leader_epoch: 1,
            end_offset: 4
        })
    );
    assert!(reads[0].records.is_none());
    assert_eq!(reads[0].high_watermark, 7, "the offsets are still answered");
    assert_eq!(
        l.partition.follower_log_end_offset(1),
        None,
        "Kafka returns before updateFollowerFetchState"
    );
    // Once truncated to 4, the follower's fetch is recorded again.
    let (params, infos) = follower_fetch(4, Some(1));
    let FetchResult::Ready(reads) = l.rm.fetch_messages(params, infos) else {
        panic!("records are available");
    };
    assert_eq!(reads[0].diverging_epoch, None);
    assert!(reads[0].size() > 0);
    assert_eq!(l.partition.follower_log_end_offset(1), Some(4));
    // A broker that is not a replica is refused before anything is checked.
    let (params, infos) = follower_fetch(6, Some(1));
    let stranger = FetchParams {
        replica_id: 2,
        ..params
    };
    let FetchResult::Ready(reads) = l.rm.fetch_messages(stranger, infos) else {
        panic!("an error answers at once");
    };
    assert_eq!(reads[0].error_code, ErrorCode::NotLeaderOrFollower);
    assert_eq!(reads[0].diverging_epoch, None);
}

#[test]
fn a_consumer_may_send_its_last_fetched_epoch_too() {
    let l = leader();
    let (params, infos) = follower_fetch(6, Some(2));
    let consumer = FetchParams {
        replica_id: -1,
        ..params
    };
    let FetchResult::Ready(reads) = l.rm.fetch_messages(consumer, infos) else {
        panic!("a diverging epoch answers at once");
    };
    assert_eq!(
        reads[0].diverging_epoch,
        Some(EpochEndOffset {
            leader_epoch: 1,
            end_offset: 4
        })
    );
}

#[test]
fn offset_for_leader_epoch_answers_a_follower_to_the_log_end() {
    let TempReplicaManager { dir: _dir, rm, .. } = TempReplicaManager::new(0, 1);
    let lead = |epoch: i32| {
        let state = LeaderAndIsr {
            leader_epoch: epoch,
            // Follower 1 in the ISR has not fetched: the high watermark stays at 0.
            ..LeaderAndIsr::new(0, vec![0, 1])
        };
        rm.become_leader_or_follower(&tp(), None, vec![0, 1], state, LogConfig::default())
            .unwrap()
    };
    let partition = lead(1);
    produce(&rm, 0);
    produce(&rm, 1);
    lead(2);
    produce(&rm, 2);
    assert_eq!(partition.offsets().high_watermark, 0);
    // The latest epoch ends at the log end, above the high watermark (Kafka's `endOffsetFor`).
    assert_eq!(
        partition.last_offset_for_leader_epoch(2, 2).unwrap(),
        (2, 3)
    );
    assert_eq!(
        partition.last_offset_for_leader_epoch(-1, 1).unwrap(),
        (1, 2)
    );
    assert_eq!(
        partition.last_offset_for_leader_epoch(2, 0).unwrap(),
        (0, 0)
    );
    assert_eq!(
        partition.last_offset_for_leader_epoch(2, 7).unwrap(),
        (-1, -1),
        "newer than any epoch"
    );
    assert_eq!(
        partition
            .last_offset_for_leader_epoch(1, 1)
            .unwrap_err()
            .error_code(),
        ErrorCode::FencedLeaderEpoch
    );
}
