//! Produce load for the cluster's fault and move tests: an idempotent acks=-1 librdkafka producer
//! with its default retries sends numbered records round-robin over a topic's partitions in a
//! thread ([`ProduceLoad`]) while the test kills, stops or moves brokers under it; afterwards
//! [`assert_every_acknowledged_record_consumed`] reads the topic back and checks each record the
//! producer saw acknowledged: at its offset (or anywhere, for one acknowledged without an offset),
//! and the log holding each record once, in the order it was sent (a record the consumer is
//! handed twice must read the same both times).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rdkafka::config::{ClientConfig, RDKafkaLogLevel};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::{ClientContext, Message, Offset, TopicPartitionList};

/// Per partition, (offset, sequence) of each acknowledged record.
pub type Acknowledged = BTreeMap<i32, Vec<(i64, u64)>>;

/// The offset librdkafka reports (`RD_KAFKA_OFFSET_INVALID`) for a record it acknowledged
/// implicitly: a request failed with its outcome unknown (a broker killed under it), and a later
/// request of the same producer succeeded at the next sequence, which a broker accepts only
/// when the earlier records are in its log (`rd_kafka_dr_implicit_ack`). Such a record must be
/// in the log, at an offset nobody was told.
const IMPLICITLY_ACKED: i64 = -1001;

/// The producer's delivery reports: what was acknowledged, and the records that failed for good;
/// and its idempotence events, which say why a log would hold a record twice.
#[derive(Default)]
struct Deliveries {
    acked: Mutex<Acknowledged>,
    /// When each partition's acknowledgements arrived, in order.
    ack_times: Mutex<BTreeMap<i32, Vec<Instant>>>,
    failed: Mutex<Vec<String>>,
    events: Mutex<Vec<String>>,
}

/// librdkafka's debug facilities that tell what the idempotent producer did: a produce error
/// and the action taken (`MSGSET`), sequence errors, drains, epoch bumps and producer id
/// changes. A bumped epoch renumbers the records still unacknowledged from sequence 0, and a
/// broker cannot recognise a renumbered retry of a record it already holds.
const IDEMPOTENCE_EVENTS: &[&str] = &[
    "MSGSET",
    "ERRSEQ",
    "DUPSEQ",
    "UNKPID",
    "ERRPID",
    "DRAIN",
    "NEWPID",
    "RESETSEQ",
    "IDEMPSTATE",
    "IMPLICITACK",
];

/// At most this many events are kept.
const MAX_EVENTS: usize = 2_000;

impl ClientContext for Deliveries {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        let event = IDEMPOTENCE_EVENTS.contains(&fac)
            // Every produce request's success is a MSGSET line too: only failures are kept.
            && !(fac == "MSGSET" && log_message.ends_with(" delivered"));
        // A dead broker's refused reconnects say nothing about the records.
        let warning = (level as i32) <= (RDKafkaLogLevel::Warning as i32)
            && !log_message.contains("Connection refused");
        if warning || event {
            let mut events = self.events.lock().unwrap();
            if events.len() < MAX_EVENTS {
                events.push(format!("{level:?} {fac}: {log_message}"));
            }
        }
    }
}

impl ProducerContext for Deliveries {
    type DeliveryOpaque = Box<u64>;

    fn delivery(&self, result: &DeliveryResult<'_>, sequence: Box<u64>) {
        match result {
            Ok(m) => {
                self.acked
                    .lock()
                    .unwrap()
                    .entry(m.partition())
                    .or_default()
                    .push((m.offset(), *sequence));
                self.ack_times
                    .lock()
                    .unwrap()
                    .entry(m.partition())
                    .or_default()
                    .push(Instant::now());
            }
            Err((e, _)) => self.failed.lock().unwrap().push(e.to_string()),
        }
    }
}

/// A producer sending in a thread until [`ProduceLoad::finish`]. Record `n` of a partition has
/// the payload `n`, so order and duplicates show in what is consumed.
pub struct ProduceLoad {
    producer: Arc<ThreadedProducer<Deliveries>>,
    stop: Arc<AtomicBool>,
    sender: Option<JoinHandle<u64>>,
}

impl ProduceLoad {
    /// Starts sending to `partitions` partitions of `topic`, about 2,500 records/s.
    pub fn start(bootstrap: &str, topic: &str, partitions: i32) -> ProduceLoad {
        let producer: ThreadedProducer<Deliveries> = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("linger.ms", "5")
            .set("message.timeout.ms", "180000")
            .set("debug", "eos,msg")
            // Otherwise the client's log level follows the `log` crate's, and drops debug lines.
            .set_log_level(RDKafkaLogLevel::Debug)
            .create_with_context(Deliveries::default())
            .unwrap();
        let producer = Arc::new(producer);
        let stop = Arc::new(AtomicBool::new(false));
        let sender = {
            let (producer, stop) = (Arc::clone(&producer), Arc::clone(&stop));
            let topic = topic.to_string();
            std::thread::spawn(move || {
                let mut next = vec![0u64; usize::try_from(partitions).unwrap()];
                let mut sent = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    let p = i32::try_from(sent % u64::try_from(partitions).unwrap()).unwrap();
                    let sequence = next[usize::try_from(p).unwrap()];
                    let payload = sequence.to_string();
                    let record: BaseRecord<(), String, Box<u64>> =
                        BaseRecord::with_opaque_to(&topic, Box::new(sequence))
                            .partition(p)
                            .payload(&payload);
                    match producer.send(record) {
                        Ok(()) => {
                            next[usize::try_from(p).unwrap()] += 1;
                            sent += 1;
                        }
                        // The local queue is full: let deliveries drain.
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                    if sent.is_multiple_of(50) {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                sent
            })
        };
        ProduceLoad {
            producer,
            stop,
            sender: Some(sender),
        }
    }

    /// How many records have been acknowledged so far.
    pub fn acked_count(&self) -> usize {
        self.producer
            .context()
            .acked
            .lock()
            .unwrap()
            .values()
            .map(Vec::len)
            .sum()
    }

    /// The longest time between `from` and `to` that some partition went without an
    /// acknowledgement: what a client saw of a fault. The records keep coming at a steady rate,
    /// so a gap is the partition refusing or holding them.
    pub fn longest_ack_gap(&self, from: Instant, to: Instant) -> Duration {
        let times = self.producer.context().ack_times.lock().unwrap();
        times
            .values()
            .map(|acks| {
                let inside = acks.iter().copied().filter(|t| *t > from && *t < to);
                let mut last = from;
                let mut longest = Duration::ZERO;
                for t in inside.chain(std::iter::once(to)) {
                    longest = longest.max(t - last);
                    last = t;
                }
                longest
            })
            .max()
            .unwrap_or(to - from)
    }

    /// Waits (up to `limit`) until `n` more records than now are acknowledged.
    pub fn wait_for_more_acks(&self, n: usize, limit: Duration) {
        let before = self.acked_count();
        crate::support::cluster::wait_until("more records acknowledged", limit, || {
            (self.acked_count() >= before + n).then_some(())
        });
    }

    /// Stops sending, waits for every record sent to be answered, and asserts that none failed
    /// and every one was acknowledged; `logs` explains a failure. Returns what was acknowledged.
    /// The producer's idempotence events go to stderr, which the test harness shows if the test
    /// fails later (a record held twice, say).
    pub fn finish(mut self, logs: impl Fn() -> String) -> Acknowledged {
        self.stop.store(true, Ordering::SeqCst);
        let sent = self.sender.take().unwrap().join().unwrap();
        self.producer.flush(Duration::from_secs(180)).unwrap();
        let deliveries = self.producer.context();
        let events = deliveries.events.lock().unwrap();
        eprintln!(
            "the producer's errors and idempotence events ({}):\n{}",
            events.len(),
            events.join("\n")
        );
        drop(events);
        let failed = deliveries.failed.lock().unwrap().clone();
        assert!(
            failed.is_empty(),
            "deliveries failed: {failed:?}\n{}",
            logs()
        );
        let acked = deliveries.acked.lock().unwrap().clone();
        assert_eq!(acked.values().map(Vec::len).sum::<usize>() as u64, sent);
        acked
    }
}

impl Drop for ProduceLoad {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Every acknowledged record is in `topic`, at the offset it was acknowledged with, and the log
/// holds each record once, in the order it was sent.
pub fn assert_every_acknowledged_record_consumed(
    bootstrap: &str,
    topic: &str,
    acked: &Acknowledged,
    logs: impl Fn() -> String,
) {
    let ends: BTreeMap<i32, i64> = acked
        .iter()
        .map(|(p, records)| (*p, records.iter().map(|(o, _)| o + 1).max().unwrap_or(0)))
        .collect();
    let consumed = consume(bootstrap, topic, &ends);
    for (p, records) in acked {
        // The log as the consumer read it, offset by offset. A consumer may be handed records
        // again (librdkafka rewinds after a fetch error or a leader-epoch validation), so a
        // record read twice must read the same both times; what must hold is the log's own
        // order: each sequence once, in the order sent.
        let mut at: BTreeMap<i64, u64> = BTreeMap::new();
        let mut reread = 0usize;
        for (offset, sequence) in &consumed[p] {
            match at.insert(*offset, *sequence) {
                Some(before) if before != *sequence => panic!(
                    "partition {p}: offset {offset} read as sequence {before}, then {sequence}\n{}",
                    logs()
                ),
                Some(_) => reread += 1,
                None => {}
            }
        }
        if reread > 0 {
            eprintln!("partition {p}: {reread} records handed to the consumer twice");
        }
        let log: Vec<(i64, u64)> = at.iter().map(|(o, s)| (*o, *s)).collect();
        if let Some(w) = log.windows(2).find(|w| w[0].1 >= w[1].1) {
            panic!(
                "partition {p}: the log is out of order or holds a record twice: sequence {} \
                 at offset {} then {} at offset {}\n{}",
                w[0].1,
                w[0].0,
                w[1].1,
                w[1].0,
                logs()
            );
        }
        let sequences: BTreeSet<u64> = at.values().copied().collect();
        for (offset, sequence) in records {
            if *offset == IMPLICITLY_ACKED {
                // Acknowledged without an offset: in the log somewhere (the order check above
                // puts it among its neighbours).
                assert!(
                    sequences.contains(sequence),
                    "partition {p}: record {sequence}, acknowledged implicitly, lost\n{}",
                    logs()
                );
                continue;
            }
            assert_eq!(
                at.get(offset),
                Some(sequence),
                "partition {p}: acknowledged record {sequence} at offset {offset} lost\n{}",
                logs()
            );
        }
    }
}

/// Every record of each partition in `ends`, as (offset, sequence), read from the start to its
/// end offset (120 s at most).
fn consume(bootstrap: &str, topic: &str, ends: &BTreeMap<i32, i64>) -> Acknowledged {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "kcli-produce-load-unused")
        .set("enable.auto.commit", "false")
        .set("fetch.wait.max.ms", "100")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    for p in ends.keys() {
        tpl.add_partition_offset(topic, *p, Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&tpl).unwrap();
    let mut seen = Acknowledged::new();
    let done = |seen: &Acknowledged| {
        ends.iter().all(|(p, end)| {
            seen.get(p)
                .and_then(|v| v.last())
                .map_or(*end == 0, |(o, _)| o + 1 >= *end)
        })
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done(&seen) && Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
            let sequence: u64 = std::str::from_utf8(m.payload().unwrap())
                .unwrap()
                .parse()
                .unwrap();
            seen.entry(m.partition())
                .or_default()
                .push((m.offset(), sequence));
        }
    }
    assert!(done(&seen), "not every record consumed within 120 s");
    seen
}
