//! The idempotent producer against `kcli serve`, over the raw protocol: InitProducerId hands
//! out ids from blocks that survive restarts; a resent batch is answered with its original
//! offsets and not appended again; a sequence gap is OUT_OF_ORDER_SEQUENCE_NUMBER and an old
//! epoch INVALID_PRODUCER_EPOCH; a transactional id asked of a broker that is not its
//! coordinator is NOT_COORDINATOR, and transactional records without one are refused;
//! the state survives a clean restart and a kill -9 (a retry after either is still
//! deduplicated); librdkafka with `enable.idempotence=true` producing through a clean broker
//! restart loses and duplicates nothing; a dynamic `producer.id.expiration.ms` expires idle
//! producers, which may then start again at any sequence.

use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::init_producer_id_request::InitProducerIdRequest;
use kcli::protocol::messages::{RequestKind, ResponseKind};
use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use kcli::protocol::record::compression::CompressionType;

use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::producer::{DeliveryFuture, FutureProducer, FutureRecord, Producer};

use crate::serve_support::{
    KafkaConn, PRODUCE_VERSION, TestBroker, auto_create_topic, now_ms, produce_request,
    read_partition,
};

const OUT_OF_ORDER_SEQUENCE_NUMBER: i16 = 45;
const INVALID_PRODUCER_EPOCH: i16 = 47;
const TRANSACTIONAL_ID_AUTHORIZATION_FAILED: i16 = 53;
const INVALID_REQUEST: i16 = 42;
const NOT_COORDINATOR: i16 = 16;

/// InitProducerId at `version`: (error code, producer id, epoch).
fn init_producer_id(
    conn: &mut KafkaConn,
    version: i16,
    transactional_id: Option<&str>,
    producer_id: i64,
    producer_epoch: i16,
) -> (i16, i64, i16) {
    let request = RequestKind::InitProducerId(InitProducerIdRequest {
        transactional_id: transactional_id.map(StrBytes::from),
        transaction_timeout_ms: 60_000,
        producer_id,
        producer_epoch,
        ..Default::default()
    });
    let ResponseKind::InitProducerId(r) = conn.call(&request, version) else {
        unreachable!()
    };
    (r.error_code, r.producer_id, r.producer_epoch)
}

fn idem_batch(
    pid: i64,
    epoch: i16,
    base_seq: i32,
    values: &[&str],
    transactional: bool,
) -> Vec<u8> {
    idem_batch_at(pid, epoch, base_seq, values, transactional, now_ms())
}

/// An idempotent batch whose records are stamped `now`.
fn idem_batch_at(
    pid: i64,
    epoch: i16,
    base_seq: i32,
    values: &[&str],
    transactional: bool,
    now: i64,
) -> Vec<u8> {
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.producer_id = pid;
    b.producer_epoch = epoch;
    b.base_sequence = base_seq;
    b.is_transactional = transactional;
    b.records = values
        .iter()
        .map(|v| SimpleRecord::new(now, None, Some(v.as_bytes().to_vec())))
        .collect();
    b.build().unwrap()
}

/// (error code, base offset, log start offset, error message) of a one-partition Produce.
fn produce(conn: &mut KafkaConn, topic: &str, batch: Vec<u8>) -> (i16, i64, i64, Option<String>) {
    let response = conn.call(&produce_request(topic, 0, batch, -1), PRODUCE_VERSION);
    let ResponseKind::Produce(p) = response else {
        unreachable!()
    };
    let r = &p.responses[0].partition_responses[0];
    (
        r.error_code,
        r.base_offset,
        r.log_start_offset,
        r.error_message
            .as_ref()
            .map(|m| m.to_string_lossy().into_owned()),
    )
}

fn values(conn: &mut KafkaConn, topic: &str) -> Vec<String> {
    read_partition(conn, topic, 0)
        .into_iter()
        .map(|(_, v)| String::from_utf8(v).unwrap())
        .collect()
}

#[test]
fn serve_idempotence_dedup_sequence_and_epoch_errors() {
    let broker = TestBroker::start(&[]);
    let mut conn = KafkaConn::connect(broker.port());
    auto_create_topic(&mut conn, "idem");
    let (err, pid, epoch) = init_producer_id(&mut conn, 4, None, -1, -1);
    assert_eq!((err, epoch), (0, 0));
    assert!(pid >= 0);
    let (err, other, _) = init_producer_id(&mut conn, 0, None, -1, -1);
    assert_eq!(err, 0);
    assert_ne!(other, pid, "every call gets a new id");

    let first = idem_batch(pid, 0, 0, &["a", "b"], false);
    assert_eq!(produce(&mut conn, "idem", first.clone()).0, 0);
    let (err, base, ..) = produce(&mut conn, "idem", idem_batch(pid, 0, 2, &["c"], false));
    assert_eq!((err, base), (0, 2));
    // The resent first batch: its original offsets, nothing appended.
    let (err, base, ..) = produce(&mut conn, "idem", first);
    assert_eq!((err, base), (0, 0));
    // A gap.
    let (err, base, log_start, message) =
        produce(&mut conn, "idem", idem_batch(pid, 0, 5, &["x"], false));
    assert_eq!(err, OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert_eq!((base, log_start, message), (-1, 0, None));
    // A new epoch at 0 fences the old one.
    assert_eq!(
        produce(&mut conn, "idem", idem_batch(pid, 1, 0, &["d"], false)).0,
        0
    );
    let (err, ..) = produce(&mut conn, "idem", idem_batch(pid, 0, 3, &["y"], false));
    assert_eq!(err, INVALID_PRODUCER_EPOCH);
    assert_eq!(values(&mut conn, "idem"), vec!["a", "b", "c", "d"]);

    // KIP-360 (v3+): id and epoch given → a fresh id for a non-transactional producer;
    // only one of them → INVALID_REQUEST.
    let (err, bumped, epoch) = init_producer_id(&mut conn, 3, None, pid, 1);
    assert_eq!((err, epoch), (0, 0));
    assert!(bumped != pid && bumped != other);
    assert_eq!(
        init_producer_id(&mut conn, 3, None, pid, -1),
        (INVALID_REQUEST, -1, -1)
    );
    // A transactional id goes to its coordinator: this broker leads no `__transaction_state`
    // partition yet (clients find their coordinator first), so it is not the id's.
    assert_eq!(
        init_producer_id(&mut conn, 4, Some("txn-1"), -1, -1),
        (NOT_COORDINATOR, -1, -1)
    );
    assert_eq!(
        init_producer_id(&mut conn, 1, Some(""), -1, -1),
        (INVALID_REQUEST, -1, -1)
    );
    // Transactional records without a transactional id: the request is refused, as Kafka's
    // `hasTransactionalRecords` check does, and nothing is written.
    let (err, ..) = produce(&mut conn, "idem", idem_batch(other, 0, 0, &["t"], true));
    assert_eq!(err, TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    assert_eq!(values(&mut conn, "idem").len(), 4);
}

#[test]
fn serve_idempotence_state_and_ids_survive_clean_restart_and_kill9() {
    let mut broker = TestBroker::start(&[]);
    let mut conn = KafkaConn::connect(broker.port());
    auto_create_topic(&mut conn, "idem-restart");
    let (_, pid, _) = init_producer_id(&mut conn, 4, None, -1, -1);
    let first = idem_batch(pid, 0, 0, &["a", "b", "c"], false);
    assert_eq!(produce(&mut conn, "idem-restart", first.clone()).1, 0);
    drop(conn);

    // Clean restart: the snapshot written at shutdown keeps the producer.
    broker.stop();
    broker.restart();
    let mut conn = KafkaConn::connect(broker.port());
    let (err, base, ..) = produce(&mut conn, "idem-restart", first.clone());
    assert_eq!((err, base), (0, 0), "retry after a clean restart");
    let second = idem_batch(pid, 0, 3, &["d"], false);
    assert_eq!(produce(&mut conn, "idem-restart", second.clone()).1, 3);
    assert_eq!(
        produce(
            &mut conn,
            "idem-restart",
            idem_batch(pid, 0, 9, &["z"], false)
        )
        .0,
        OUT_OF_ORDER_SEQUENCE_NUMBER
    );
    // Producer ids come from a new block after a restart: never reused.
    let (_, after_restart, _) = init_producer_id(&mut conn, 4, None, -1, -1);
    assert!(after_restart >= pid + 1000, "{after_restart} vs {pid}");
    drop(conn);

    // kill -9: the state is rebuilt from the snapshot and the log's batch headers.
    broker.kill9();
    broker.restart();
    let mut conn = KafkaConn::connect(broker.port());
    let (err, base, ..) = produce(&mut conn, "idem-restart", second);
    assert_eq!((err, base), (0, 3), "retry after kill -9");
    assert_eq!(
        produce(
            &mut conn,
            "idem-restart",
            idem_batch(pid, 0, 4, &["e"], false)
        )
        .1,
        4
    );
    assert_eq!(
        values(&mut conn, "idem-restart"),
        vec!["a", "b", "c", "d", "e"]
    );
    let (_, after_kill, _) = init_producer_id(&mut conn, 4, None, -1, -1);
    assert!(
        after_kill >= after_restart + 1000,
        "{after_kill} vs {after_restart}"
    );
}

#[test]
fn serve_idempotence_librdkafka_through_a_clean_restart() {
    let mut broker = TestBroker::start(&[]);
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .set("batch.num.messages", "20")
        .set("message.timeout.ms", "60000")
        .set("retry.backoff.ms", "50")
        .set("reconnect.backoff.max.ms", "500")
        .create()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let send = |from: usize, to: usize| -> Vec<DeliveryFuture> {
        (from..to)
            .map(|i| {
                let value = format!("m{i:04}");
                producer
                    .send_result(
                        FutureRecord::<[u8], [u8]>::to("rk-idem")
                            .partition(0)
                            .payload(value.as_bytes()),
                    )
                    .map_err(|(e, _)| e)
                    .unwrap()
            })
            .collect()
    };
    let wait = |futures: Vec<DeliveryFuture>| -> Vec<i64> {
        rt.block_on(async {
            let mut offsets = Vec::new();
            for f in futures {
                let delivery = tokio::time::timeout(Duration::from_secs(90), f)
                    .await
                    .expect("no delivery report within 90 s")
                    .expect("delivery future dropped");
                let (partition, offset) = delivery
                    .map(|d| (d.partition, d.offset))
                    .unwrap_or_else(|(e, _)| panic!("delivery failed: {e}"));
                assert_eq!(partition, 0);
                offsets.push(offset);
            }
            offsets
        })
    };
    let first = wait(send(0, 100));
    assert_eq!(first, (0..100).collect::<Vec<i64>>());
    // Messages in flight while the broker stops cleanly and starts again.
    let pending = send(100, 300);
    std::thread::sleep(Duration::from_millis(20));
    broker.stop();
    let more = send(300, 400);
    broker.restart();
    let mut offsets = wait(pending);
    offsets.extend(wait(more));
    producer.flush(Duration::from_secs(30)).unwrap();
    // Every message acknowledged at its own offset, in order.
    assert_eq!(offsets, (100..400).collect::<Vec<i64>>());
    let mut conn = KafkaConn::connect(broker.port());
    let got = values(&mut conn, "rk-idem");
    let want: Vec<String> = (0..400).map(|i| format!("m{i:04}")).collect();
    assert_eq!(got, want, "nothing lost, nothing duplicated");
    // The batches on disk are librdkafka's idempotent ones: one producer id, sequences that
    // follow on from 0 across the restart.
    let mut next_seq = 0;
    for h in crate::serve_support::batch_headers(&broker.data_dir().join("rk-idem-0")) {
        assert!(h.producer_id >= 0, "{h:?}");
        assert_eq!(h.base_sequence, next_seq, "{h:?}");
        next_seq = h.last_sequence() + 1;
    }
    assert_eq!(next_seq, 400);
}

#[test]
fn serve_idempotence_dynamic_expiration_forgets_idle_producers() {
    use kcli::protocol::messages::incremental_alter_configs_request as iac;
    let broker = TestBroker::start(&[("producer.id.expiration.check.interval.ms", "100")]);
    let mut conn = KafkaConn::connect(broker.port());
    auto_create_topic(&mut conn, "idem-expire");
    let (_, pid, _) = init_producer_id(&mut conn, 4, None, -1, -1);
    // The producer's batch is stamped a minute ago.
    let old = now_ms() - 60_000;
    let batch = idem_batch_at(pid, 0, 0, &["a"], false, old);
    assert_eq!(produce(&mut conn, "idem-expire", batch).0, 0);
    let gap = || idem_batch_at(pid, 0, 7, &["b"], false, now_ms());
    assert_eq!(
        produce(&mut conn, "idem-expire", gap()).0,
        OUT_OF_ORDER_SEQUENCE_NUMBER
    );
    // producer.id.expiration.ms is dynamic: 30 s makes the minute-old producer expired.
    let body = RequestKind::IncrementalAlterConfigs(iac::IncrementalAlterConfigsRequest {
        resources: vec![iac::AlterConfigsResource {
            resource_type: 4, // BROKER
            resource_name: StrBytes::from("0"),
            configs: vec![iac::AlterableConfig {
                name: StrBytes::from("producer.id.expiration.ms"),
                config_operation: 0, // SET
                value: Some(StrBytes::from("30000")),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::IncrementalAlterConfigs(r) = conn.call(&body, 1) else {
        unreachable!()
    };
    assert_eq!(r.responses[0].error_code, 0, "{r:?}");
    // The partition no longer knows the producer: any sequence is accepted (KIP-360).
    let start = std::time::Instant::now();
    loop {
        let (err, base, ..) = produce(&mut conn, "idem-expire", gap());
        if err == 0 {
            assert_eq!(base, 1);
            break;
        }
        assert_eq!(err, OUT_OF_ORDER_SEQUENCE_NUMBER);
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "producer not expired 10 s after the change"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(values(&mut conn, "idem-expire"), vec!["a", "b"]);
}

/// AllocateProducerIds, the controller's side (a single node is its own controller): a block
/// of 1000 after the one the broker took at startup for a registered broker at its epoch
/// (the czxid of its registration, which the broker logs), and Kafka's refusals otherwise.
/// The broker's own ids never fall in a block handed out this way.
#[test]
fn serve_allocate_producer_ids_hands_out_blocks_to_registered_brokers() {
    use kcli::protocol::messages::allocate_producer_ids_request::AllocateProducerIdsRequest;
    let broker = TestBroker::start(&[]);
    let stderr = broker.stderr();
    let epoch: i64 = stderr
        .split("broker_epoch=")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no broker_epoch in the log:\n{stderr}"));
    let mut conn = KafkaConn::connect(broker.port());
    let mut allocate = |broker_id: i32, broker_epoch: i64| {
        let request = RequestKind::AllocateProducerIds(AllocateProducerIdsRequest {
            broker_id,
            broker_epoch,
            ..Default::default()
        });
        let ResponseKind::AllocateProducerIds(r) = conn.call(&request, 0) else {
            unreachable!()
        };
        (r.error_code, r.producer_id_start, r.producer_id_len)
    };
    // The broker itself took 0..=999 at startup.
    assert_eq!(allocate(0, epoch), (0, 1000, 1000));
    assert_eq!(allocate(0, epoch), (0, 2000, 1000));
    const STALE_BROKER_EPOCH: i16 = 77;
    const BROKER_ID_NOT_REGISTERED: i16 = 102;
    assert_eq!(allocate(0, epoch + 1).0, STALE_BROKER_EPOCH);
    assert_eq!(allocate(7, epoch).0, BROKER_ID_NOT_REGISTERED);
    let mut conn = KafkaConn::connect(broker.port());
    let (code, pid, _) = init_producer_id(&mut conn, 4, None, -1, -1);
    assert_eq!(code, 0);
    assert!(
        (0..1000).contains(&pid),
        "{pid} is outside the broker's own block"
    );
}
