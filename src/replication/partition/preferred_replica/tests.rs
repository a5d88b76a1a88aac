//! The leader's choice of a preferred read replica (Kafka's `findPreferredReadReplica`): only
//! ISR followers that hold the fetch offset and have an endpoint; and the fetch answered with
//! it, no records and at once; and a follower's replica serving a consumer up to its high
//! watermark.

use std::collections::HashMap;
use std::sync::Arc;

use crate::cluster::{BrokerId, LeaderAndIsr, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::replication::partition::{FollowerRecords, Partition};
use crate::replication::replica_manager::{
    FetchParams, FetchPartitionInfo, FetchResult, ReplicaManager, TempReplicaManager, produce_one,
};
use crate::replication::replica_selector::{
    ClientMetadata, ReplicaEndpoint, ReplicaEndpoints, ReplicaSelector,
};
use crate::storage::log_config::LogConfig;
use crate::storage::log_reads::FetchIsolation;

/// Brokers 0, 1, 2 in racks a, b, c on listener PLAINTEXT; those in `gone` are not alive.
#[derive(Debug)]
struct Racks {
    gone: Vec<BrokerId>,
}

impl ReplicaEndpoints for Racks {
    fn replica_endpoint(&self, broker_id: BrokerId, listener: &str) -> Option<ReplicaEndpoint> {
        let racks: HashMap<BrokerId, &str> = [(0, "a"), (1, "b"), (2, "c")].into();
        if listener != "PLAINTEXT" || self.gone.contains(&broker_id) {
            return None;
        }
        racks.get(&broker_id).map(|r| ReplicaEndpoint {
            rack: Some((*r).to_string()),
        })
    }
}

fn tp() -> TopicPartition {
    TopicPartition::new("t", 0)
}

fn client(rack: &str) -> ClientMetadata {
    ClientMetadata {
        rack_id: rack.to_string(),
        listener_name: "PLAINTEXT".to_string(),
    }
}

fn produce(rm: &ReplicaManager, seed: u8) {
    produce_one(rm, &tp(), seed);
}

/// Broker 0 leads `t-0` (replicas 0, 1, 2; ISR 0 and 1) holding offsets 0..4; both
/// followers fetched at 4 (caught up), follower 2's log starting at 0 and follower 1's at
/// `log_start_1`.
fn leader(log_start_1: i64) -> (tempfile::TempDir, Arc<ReplicaManager>, Arc<Partition>) {
    let TempReplicaManager { dir, rm, .. } = TempReplicaManager::new(0, 1_700_000_000_000);
    let state = LeaderAndIsr {
        leader_epoch: 1,
        ..LeaderAndIsr::new(0, vec![0, 1])
    };
    let partition = rm
        .become_leader_or_follower(&tp(), None, vec![0, 1, 2], state, LogConfig::default())
        .unwrap();
    for i in 0..4 {
        produce(&rm, i);
    }
    partition
        .update_follower_fetch_state(1, 4, 4, log_start_1)
        .unwrap();
    partition.update_follower_fetch_state(2, 4, 4, 0).unwrap();
    (dir, rm, partition)
}

fn choose(p: &Partition, rack: &str, fetch_offset: i64, gone: Vec<BrokerId>) -> Option<BrokerId> {
    p.find_preferred_read_replica(
        ReplicaSelector::RackAware,
        &client(rack),
        &Racks { gone },
        fetch_offset,
        1_700_000_000_000,
    )
}

#[test]
fn only_isr_followers_holding_the_offset_with_an_endpoint_are_chosen() {
    let (_dir, _rm, p) = leader(0);
    assert_eq!(choose(&p, "b", 2, vec![]), Some(1));
    assert_eq!(choose(&p, "a", 2, vec![]), None, "the leader's rack");
    assert_eq!(choose(&p, "c", 2, vec![]), None, "2 is not in the ISR");
    assert_eq!(choose(&p, "", 2, vec![]), None, "no rack");
    assert_eq!(
        choose(&p, "b", 5, vec![]),
        None,
        "past the follower's log end"
    );
    assert_eq!(choose(&p, "b", 2, vec![1]), None, "1 is not alive");
    let (_dir, _rm, p) = leader(3);
    assert_eq!(
        choose(&p, "b", 2, vec![]),
        None,
        "below the follower's log start"
    );
    assert_eq!(choose(&p, "b", 3, vec![]), Some(1));
}

fn consumer_fetch(rack: &str, fetch_offset: i64) -> (FetchParams, Vec<FetchPartitionInfo>) {
    let params = FetchParams {
        replica_id: -1,
        max_wait_ms: 30_000,
        min_bytes: 1,
        max_bytes: 1 << 20,
        isolation_level: 0,
        min_one_message: true,
        whole_batches: false,
        client_metadata: Some(client(rack)),
    };
    let info = FetchPartitionInfo {
        topic_partition: tp(),
        fetch_offset,
        current_leader_epoch: 1,
        last_fetched_epoch: None,
        log_start_offset: -1,
        partition_max_bytes: 1 << 20,
    };
    (params, vec![info])
}

#[test]
fn the_leader_answers_a_preferred_read_replica_at_once_without_records() {
    let (_dir, rm, _p) = leader(0);
    rm.set_replica_selector(ReplicaSelector::RackAware, Arc::new(Racks { gone: vec![] }));
    // At the end of the log a long poll would wait; a preferred replica answers at once.
    let (params, infos) = consumer_fetch("b", 4);
    let FetchResult::Ready(reads) = rm.fetch_messages(params, infos) else {
        panic!("a preferred read replica answers at once");
    };
    assert_eq!(reads[0].error_code, ErrorCode::None);
    assert_eq!(reads[0].preferred_read_replica, Some(1));
    assert!(reads[0].records.is_none());
    assert_eq!(reads[0].high_watermark, 4);
    // The leader's rack reads here.
    let (params, infos) = consumer_fetch("a", 0);
    let FetchResult::Ready(reads) = rm.fetch_messages(params, infos) else {
        panic!("records are available");
    };
    assert_eq!(reads[0].preferred_read_replica, None);
    assert!(reads[0].size() > 0);
    // Without the selector (Kafka's default) everyone reads from the leader.
    rm.set_replica_selector(ReplicaSelector::Leader, Arc::new(Racks { gone: vec![] }));
    let (params, infos) = consumer_fetch("b", 0);
    let FetchResult::Ready(reads) = rm.fetch_messages(params, infos) else {
        panic!("records are available");
    };
    assert_eq!(reads[0].preferred_read_replica, None);
    assert!(reads[0].size() > 0);
}

#[test]
fn a_follower_serves_a_consumer_with_client_metadata_up_to_its_high_watermark() {
    let (_dir, rm, _p) = leader(0);
    // Broker 0 now follows broker 1: its high watermark is what the leader last said.
    let state = LeaderAndIsr {
        leader_epoch: 2,
        ..LeaderAndIsr::new(1, vec![0, 1])
    };
    let p = rm
        .become_leader_or_follower(&tp(), None, vec![0, 1, 2], state, LogConfig::default())
        .unwrap();
    // The leader's high watermark, as a fetch response brings it, lags the log end here.
    p.append_records_to_follower(FollowerRecords::Bytes(&[]), 2, 0, 1_700_000_000_000)
        .unwrap();
    let hw = p.offsets().high_watermark;
    assert_eq!(hw, 2);
    let read = |rack: Option<&str>, fetch_offset: i64| {
        let (mut params, mut infos) = consumer_fetch(rack.unwrap_or(""), fetch_offset);
        params.max_wait_ms = 0;
        infos[0].current_leader_epoch = 2;
        if rack.is_none() {
            params.client_metadata = None;
        }
        let FetchResult::Ready(reads) = rm.fetch_messages(params, infos) else {
            panic!("max_wait_ms 0 answers at once");
        };
        reads.into_iter().next().unwrap()
    };
    // Below v11 a consumer must fetch from the leader.
    assert_eq!(read(None, 0).error_code, ErrorCode::NotLeaderOrFollower);
    // With client metadata it reads here, up to the high watermark only.
    let below = read(Some("a"), 0);
    assert_eq!(below.error_code, ErrorCode::None);
    assert_eq!(below.high_watermark, hw);
    assert!(below.size() > 0);
    let above = read(Some("a"), 4);
    assert_eq!(above.error_code, ErrorCode::None);
    assert_eq!(
        above.size(),
        0,
        "between the high watermark and the log end"
    );
    assert_eq!(read(Some("a"), 5).error_code, ErrorCode::OffsetOutOfRange);
    // ListOffsets and OffsetForLeaderEpoch stay on the leader.
    assert_eq!(
        p.fetch_offset_for_timestamp(-1, Some(FetchIsolation::HighWatermark), 2)
            .unwrap_err()
            .error_code(),
        ErrorCode::NotLeaderOrFollower
    );
    assert_eq!(
        p.last_offset_for_leader_epoch(2, 1)
            .unwrap_err()
            .error_code(),
        ErrorCode::NotLeaderOrFollower
    );
}

#[test]
fn a_new_leaders_lagging_high_watermark_answers_a_clients_list_offsets_offset_not_available() {
    let (_dir, rm, p) = leader(0);
    let lead = |leader, epoch| {
        let state = LeaderAndIsr {
            leader_epoch: epoch,
            ..LeaderAndIsr::new(leader, vec![0, 1])
        };
        rm.become_leader_or_follower(&tp(), None, vec![0, 1, 2], state, LogConfig::default())
            .unwrap()
    };
    // A follower whose high watermark is 2 of its 4 records becomes leader again; follower 1
    // has not fetched from it, so the high watermark stays below the epoch's start (4).
    lead(1, 2);
    p.append_records_to_follower(FollowerRecords::Bytes(&[]), 2, 0, 1_700_000_000_000)
        .unwrap();
    lead(0, 3);
    assert_eq!(p.offsets().high_watermark, 2);
    let client = Some(FetchIsolation::HighWatermark);
    let code = |r: Result<_, crate::replication::PartitionError>| r.map_err(|e| e.error_code());
    assert_eq!(
        code(p.fetch_offset_for_timestamp(-1, client, 3)).map(|_| ()),
        Err(ErrorCode::OffsetNotAvailable)
    );
    // A replica's request sees the log end.
    let end = p.fetch_offset_for_timestamp(-1, None, 3).unwrap().unwrap();
    assert_eq!(end.offset, 4);
    // A search that finds a record below the high watermark is answered; one that does not is
    // not available yet.
    let found = p
        .fetch_offset_for_timestamp(1_700_000_000_000, client, 3)
        .unwrap()
        .unwrap();
    assert_eq!(found.offset, 0);
    assert_eq!(
        code(p.fetch_offset_for_timestamp(1_700_000_000_001, client, 3)).map(|_| ()),
        Err(ErrorCode::OffsetNotAvailable)
    );
    assert_eq!(
        code(p.fetch_offset_for_timestamp(-2, client, 3)).map(|t| t.map(|t| t.offset)),
        Ok(Some(0)),
        "the earliest offset is always answered"
    );
}
