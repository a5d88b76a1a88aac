//! KIP-890 part 1 against `kcli serve`, over the raw protocol: a transactional producer's batch
//! to a partition it never added to its transaction is refused before anything is written
//! (TRANSACTION_ABORTABLE for Produce v11, INVALID_TXN_STATE with Kafka's message before), so
//! no hanging transaction pins the last stable offset; once the partition is added, the same
//! batch is appended, and the open transaction's next batches need no verification. Offsets
//! sent to a transaction without AddOffsetsToTxn are refused likewise. With
//! `transaction.partition.verification.enable` turned off dynamically, the unadded batch is
//! appended and opens exactly the hanging transaction verification prevents.

use std::time::Duration;

use bytes::Bytes;
use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::add_partitions_to_txn_request::{
    AddPartitionsToTxnRequest, AddPartitionsToTxnTopic,
};
use kcli::protocol::messages::end_txn_request::EndTxnRequest;
use kcli::protocol::messages::find_coordinator_request::FindCoordinatorRequest;
use kcli::protocol::messages::incremental_alter_configs_request as iac;
use kcli::protocol::messages::init_producer_id_request::InitProducerIdRequest;
use kcli::protocol::messages::list_offsets_request::{
    ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic,
};
use kcli::protocol::messages::produce_request::{
    PartitionProduceData, ProduceRequest, TopicProduceData,
};
use kcli::protocol::messages::txn_offset_commit_request::{
    TxnOffsetCommitRequest, TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use kcli::protocol::messages::{RequestKind, ResponseKind};
use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use kcli::protocol::record::compression::CompressionType;

use crate::serve_support::{KafkaConn, TestBroker, auto_create_topic, now_ms};
use crate::support::cluster::wait_until;

const TOPIC: &str = "verified";
const TXN_ID: &str = "verify-me";
const INVALID_TXN_STATE: i16 = 48;
const TRANSACTION_ABORTABLE: i16 = 120;
/// ListOffsets' LATEST under read_committed (isolation level 1) is the last stable offset.
const LATEST: i64 = -1;

/// Retries `call` while the coordinator is loading or busy (COORDINATOR_LOAD_IN_PROGRESS,
/// COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, CONCURRENT_TRANSACTIONS); its last answer.
pub(crate) fn settled<T>(what: &str, mut call: impl FnMut() -> (i16, T)) -> T {
    wait_until(what, Duration::from_secs(30), || {
        let (code, value) = call();
        match code {
            0 => Some(value),
            14 | 15 | 16 | 51 => None,
            other => panic!("{what}: error {other}"),
        }
    })
}

pub(crate) fn find_coordinator(conn: &mut KafkaConn, key: &str, key_type: i8) -> i16 {
    let request = RequestKind::FindCoordinator(FindCoordinatorRequest {
        key: StrBytes::from(key),
        key_type,
        ..Default::default()
    });
    let ResponseKind::FindCoordinator(r) = conn.call(&request, 3) else {
        unreachable!()
    };
    r.error_code
}

fn transactional_batch(pid: i64, epoch: i16, seq: i32, value: &str) -> Vec<u8> {
    transactional_batch_at(pid, epoch, seq, value, now_ms())
}

/// A transactional batch of one record stamped `timestamp`.
pub(crate) fn transactional_batch_at(
    pid: i64,
    epoch: i16,
    seq: i32,
    value: &str,
    timestamp: i64,
) -> Vec<u8> {
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.producer_id = pid;
    b.producer_epoch = epoch;
    b.base_sequence = seq;
    b.is_transactional = true;
    b.records = vec![SimpleRecord::new(
        timestamp,
        None,
        Some(value.as_bytes().to_vec()),
    )];
    b.build().unwrap()
}

/// A Produce of one batch under `transactional_id` at `version`: (error code, base offset,
/// message).
pub(crate) fn produce(
    conn: &mut KafkaConn,
    version: i16,
    transactional_id: &str,
    batch: Vec<u8>,
) -> (i16, i64, Option<String>) {
    produce_to(conn, version, TOPIC, transactional_id, batch)
}

/// [`produce`] to partition 0 of `topic`.
pub(crate) fn produce_to(
    conn: &mut KafkaConn,
    version: i16,
    topic: &str,
    transactional_id: &str,
    batch: Vec<u8>,
) -> (i16, i64, Option<String>) {
    let request = RequestKind::Produce(ProduceRequest {
        transactional_id: Some(StrBytes::from(transactional_id)),
        acks: -1,
        timeout_ms: 10_000,
        topic_data: vec![TopicProduceData {
            name: StrBytes::from(topic.to_string()),
            partition_data: vec![PartitionProduceData {
                index: 0,
                records: Some(Bytes::from(batch)),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::Produce(p) = conn.call(&request, version) else {
        unreachable!()
    };
    let r = &p.responses[0].partition_responses[0];
    (
        r.error_code,
        r.base_offset,
        r.error_message
            .as_ref()
            .map(|m| m.to_string_lossy().into_owned()),
    )
}

fn add_partition(conn: &mut KafkaConn, pid: i64, epoch: i16) -> i16 {
    let request = RequestKind::AddPartitionsToTxn(AddPartitionsToTxnRequest {
        v3_and_below_transactional_id: StrBytes::from(TXN_ID),
        v3_and_below_producer_id: pid,
        v3_and_below_producer_epoch: epoch,
        v3_and_below_topics: vec![AddPartitionsToTxnTopic {
            name: StrBytes::from(TOPIC),
            partitions: vec![0],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::AddPartitionsToTxn(r) = conn.call(&request, 3) else {
        unreachable!()
    };
    r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code
}

/// ListOffsets LATEST of the topic's partition 0 at `isolation_level`.
fn latest(conn: &mut KafkaConn, isolation_level: i8) -> i64 {
    let request = RequestKind::ListOffsets(ListOffsetsRequest {
        replica_id: -1,
        isolation_level,
        topics: vec![ListOffsetsTopic {
            name: StrBytes::from(TOPIC),
            partitions: vec![ListOffsetsPartition {
                partition_index: 0,
                current_leader_epoch: -1,
                timestamp: LATEST,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::ListOffsets(r) = conn.call(&request, 7) else {
        unreachable!()
    };
    let p = &r.topics[0].partitions[0];
    assert_eq!(p.error_code, 0);
    p.offset
}

/// (high watermark, last stable offset) of the topic's partition 0.
fn ends(conn: &mut KafkaConn) -> (i64, i64) {
    (latest(conn, 0), latest(conn, 1))
}

/// InitProducerId v4 for `transactional_id` (`None`: an idempotent producer), answered once:
/// (error code, producer id, epoch).
pub(crate) fn init_producer_id_answer(
    conn: &mut KafkaConn,
    transactional_id: Option<&str>,
) -> (i16, i64, i16) {
    let request = RequestKind::InitProducerId(InitProducerIdRequest {
        transactional_id: transactional_id.map(|id| StrBytes::from(id.to_string())),
        transaction_timeout_ms: 60_000,
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    });
    let ResponseKind::InitProducerId(r) = conn.call(&request, 4) else {
        unreachable!()
    };
    (r.error_code, r.producer_id, r.producer_epoch)
}

/// The producer id and epoch of `transactional_id`, once its coordinator answers.
pub(crate) fn init_producer_id(conn: &mut KafkaConn, transactional_id: &str) -> (i64, i16) {
    settled("InitProducerId", || {
        let (code, pid, epoch) = init_producer_id_answer(conn, Some(transactional_id));
        (code, (pid, epoch))
    })
}

fn set_verification(conn: &mut KafkaConn, enabled: bool) {
    let request = RequestKind::IncrementalAlterConfigs(iac::IncrementalAlterConfigsRequest {
        resources: vec![iac::AlterConfigsResource {
            resource_type: 4,
            resource_name: StrBytes::from("0"),
            configs: vec![iac::AlterableConfig {
                name: StrBytes::from("transaction.partition.verification.enable"),
                config_operation: 0,
                value: Some(StrBytes::from(enabled.to_string())),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::IncrementalAlterConfigs(r) = conn.call(&request, 1) else {
        unreachable!()
    };
    assert_eq!(r.responses[0].error_code, 0, "{r:?}");
}

#[test]
fn a_batch_to_a_partition_outside_the_transaction_is_refused_before_it_is_written() {
    let mut broker = TestBroker::start(&[
        ("transaction.state.log.num.partitions", "1"),
        ("offsets.topic.num.partitions", "1"),
    ]);
    let mut conn = KafkaConn::connect(broker.port());
    auto_create_topic(&mut conn, TOPIC);
    settled("the transaction coordinator", || {
        (find_coordinator(&mut conn, TXN_ID, 1), ())
    });
    let (pid, epoch) = init_producer_id(&mut conn, TXN_ID);

    // Never added: refused by the coordinator's answer, as each client version expects it.
    let (code, _, _) = produce(
        &mut conn,
        11,
        TXN_ID,
        transactional_batch(pid, epoch, 0, "x"),
    );
    assert_eq!(code, TRANSACTION_ABORTABLE);
    let (code, _, message) = produce(
        &mut conn,
        10,
        TXN_ID,
        transactional_batch(pid, epoch, 0, "x"),
    );
    assert_eq!(code, INVALID_TXN_STATE);
    assert_eq!(
        message.as_deref(),
        Some("Partition was not added to the transaction")
    );
    assert_eq!(ends(&mut conn), (0, 0), "nothing written, nothing pinned");

    // Added: the same batch is appended; the next one needs no question to the coordinator.
    assert_eq!(add_partition(&mut conn, pid, epoch), 0);
    assert_eq!(
        produce(
            &mut conn,
            11,
            TXN_ID,
            transactional_batch(pid, epoch, 0, "a")
        )
        .0,
        0
    );
    assert_eq!(
        produce(
            &mut conn,
            11,
            TXN_ID,
            transactional_batch(pid, epoch, 1, "b")
        ),
        (0, 1, None)
    );
    assert_eq!(
        ends(&mut conn),
        (2, 0),
        "the open transaction holds the LSO"
    );

    // Offsets sent to the transaction without AddOffsetsToTxn: the group's offsets partition
    // is not in it. Kafka 3.9 answers TxnOffsetCommit v4 with INVALID_TXN_STATE.
    settled("the group coordinator", || {
        (find_coordinator(&mut conn, "verify-group", 0), ())
    });
    let code = settled("TxnOffsetCommit", || {
        let request = RequestKind::TxnOffsetCommit(TxnOffsetCommitRequest {
            transactional_id: StrBytes::from(TXN_ID),
            group_id: StrBytes::from("verify-group"),
            producer_id: pid,
            producer_epoch: epoch,
            generation_id: -1,
            topics: vec![TxnOffsetCommitRequestTopic {
                name: StrBytes::from(TOPIC),
                partitions: vec![TxnOffsetCommitRequestPartition {
                    partition_index: 0,
                    committed_offset: 2,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        });
        let ResponseKind::TxnOffsetCommit(r) = conn.call(&request, 4) else {
            unreachable!()
        };
        let code = r.topics[0].partitions[0].error_code;
        // Retriable answers are retried; the verdict is returned.
        if matches!(code, 14 | 15 | 16 | 51) {
            (code, code)
        } else {
            (0, code)
        }
    });
    assert_eq!(code, INVALID_TXN_STATE);

    // Committed: the markers release the partition.
    settled("EndTxn", || {
        let request = RequestKind::EndTxn(EndTxnRequest {
            transactional_id: StrBytes::from(TXN_ID),
            producer_id: pid,
            producer_epoch: epoch,
            committed: true,
            ..Default::default()
        });
        let ResponseKind::EndTxn(r) = conn.call(&request, 3) else {
            unreachable!()
        };
        (r.error_code, ())
    });
    wait_until("the commit marker", Duration::from_secs(30), || {
        (ends(&mut conn) == (3, 3)).then_some(())
    });

    // Verification off: another producer's unadded batch is appended and opens a transaction
    // its coordinator knows nothing of, holding the last stable offset back.
    set_verification(&mut conn, false);
    let (other, other_epoch) = init_producer_id(&mut conn, "unverified");
    let (code, base, _) = produce(
        &mut conn,
        11,
        "unverified",
        transactional_batch(other, other_epoch, 0, "h"),
    );
    assert_eq!((code, base), (0, 3));
    assert_eq!(ends(&mut conn), (4, 3));
    broker.stop();
}
