//! Kafka Streams 3.9.1 with `processing.guarantee=exactly_once_v2` on three brokers
//! (tests/clients/java/StreamsEosCheck.java): two instances, separate JVMs, count the records of
//! each key of an input topic in a persistent store and write each record's sequence number and
//! count to an output topic, while an idempotent producer feeds the input at a steady pace. Mid
//! stream one instance is killed -9 holding an open transaction with records in the output, and
//! restarted (its transactional id fences the dead one's); then the transaction coordinator of
//! the other instance is killed -9 for good. At the end read_committed reads every input record's
//! output exactly once, in order, with the count restored exactly once too (count = sequence),
//! and read_uncommitted reads more: the dead instance's aborted records. The same body runs on
//! kcli's brokers ([`kcli`]) and on Kafka 3.9.1's ([`kafka`]).

use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ::kcli::protocol::codec::StrBytes;
use ::kcli::protocol::messages::{RequestKind, ResponseKind};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::{ClientContext, Offset, TopicPartitionList};

use super::create_topic;
use super::transactions::coordinator_of;
use crate::serve_clients::drivers::{
    compile_java_driver, java_command, run_driver, spawn_java_driver,
};
use crate::serve_support::KafkaConn;
use crate::support::cluster::{TestCluster, metadata_at, signal, wait_until};

const APP: &str = "kcli-streams-eos";
const INPUT: &str = "streams-input";
const OUTPUT: &str = "streams-output";
const PARTITIONS: i32 = 4;
const KEYS: usize = 10;
/// Records of each key: the input holds `1..=PER_KEY` for each, in order.
const PER_KEY: usize = 2_000;
const RECORDS: i64 = (KEYS * PER_KEY) as i64;
/// How long the producer takes to send the input: the kills fall inside it.
const INPUT_SPAN: Duration = Duration::from_secs(30);
/// How long each step of the schedule may take.
const LIMIT: Duration = Duration::from_secs(60);

/// Three kcli brokers or three Kafka brokers with these settings.
type Start = fn(&[(&str, &str)]) -> TestCluster;

macro_rules! cases {
    ($kind:ident, $start:expr) => {
        mod $kind {
            #[test]
            fn streams_exactly_once_v2_through_an_instance_and_a_coordinator_killed() {
                super::exactly_once_through_kills($start);
            }
        }
    };
}

cases!(kcli, super::kcli_brokers);
cases!(kafka, super::kafka_brokers);

fn kcli_brokers(settings: &[(&str, &str)]) -> TestCluster {
    TestCluster::start(3, settings)
}

fn kafka_brokers(settings: &[(&str, &str)]) -> TestCluster {
    TestCluster::start_kafka(3, settings)
}

/// One instance of the application, a JVM of its own, with its state dir, temp files and log in
/// `dir`; killed -9 when dropped.
struct Instance {
    classpath: String,
    bootstrap: String,
    dir: PathBuf,
    child: Child,
    /// The length of its log when it was last started.
    started_at: usize,
}

impl Instance {
    fn start(classpath: &str, bootstrap: &str, dir: PathBuf) -> Instance {
        std::fs::create_dir_all(&dir).unwrap();
        let child = Instance::spawn(classpath, bootstrap, &dir);
        Instance {
            classpath: classpath.to_string(),
            bootstrap: bootstrap.to_string(),
            dir,
            child,
            started_at: 0,
        }
    }

    fn spawn(classpath: &str, bootstrap: &str, dir: &Path) -> Child {
        let state = dir.join("state");
        spawn_java_driver(
            classpath,
            "StreamsEosCheck",
            &[
                "run",
                bootstrap,
                APP,
                INPUT,
                OUTPUT,
                state.to_str().unwrap(),
            ],
            dir,
        )
    }

    /// Starts the instance again on the same state dir, so with the same process id and
    /// transactional id.
    fn restart(&mut self) {
        self.started_at = self.log_text().len();
        self.child = Instance::spawn(&self.classpath, &self.bootstrap, &self.dir);
    }

    /// Whether it has been RUNNING since it was last started (it has tasks and processes).
    fn running(&self) -> bool {
        self.log_text()
            .get(self.started_at..)
            .is_some_and(|since| since.contains("-> RUNNING"))
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(self.dir.join("java.log")).unwrap_or_default()
    }

    fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Its thread's transactional id under exactly_once_v2, `APP-<process id>-1`, the process
    /// id read from the file Streams keeps it in (written when the instance starts).
    fn transactional_id(&self) -> String {
        let file = self
            .dir
            .join("state")
            .join(APP)
            .join("kafka-streams-process-metadata");
        let process = wait_until("the instance's process id", Duration::from_secs(30), || {
            let text = std::fs::read_to_string(&file).ok()?;
            let json: serde_json::Value = serde_json::from_str(&text).ok()?;
            json["processId"].as_str().map(str::to_string)
        });
        format!("{APP}-{process}-1")
    }

    fn log(&self) -> String {
        let log = self.log_text();
        let lines: Vec<&str> = log.lines().collect();
        let tail = &lines[lines.len().saturating_sub(60)..];
        format!(
            "--- {} (last 60 lines) ---\n{}\n",
            self.dir.display(),
            tail.join("\n")
        )
    }

    /// Fails the test if the instance has exited: nothing here should end one.
    fn assert_running(&mut self) {
        if let Some(status) = self.child.try_wait().unwrap() {
            panic!("a Streams instance exited with {status}\n{}", self.log());
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// The input producer's delivery reports.
#[derive(Default)]
struct Deliveries {
    acked: Mutex<usize>,
    failed: Mutex<Vec<String>>,
}

impl ClientContext for Deliveries {}

impl ProducerContext for Deliveries {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        match result {
            Ok(_) => *self.acked.lock().unwrap() += 1,
            Err((e, _)) => self.failed.lock().unwrap().push(e.to_string()),
        }
    }
}

/// The input, sent in a thread over [`INPUT_SPAN`] by an idempotent acks=all producer: record
/// `seq` of key `kNN` has the value `seq`, on partition `NN % PARTITIONS`.
struct Input {
    stop: Arc<AtomicBool>,
    sender: Option<std::thread::JoinHandle<Vec<String>>>,
}

impl Input {
    fn start(bootstrap: &str) -> Input {
        let producer: ThreadedProducer<Deliveries> = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("linger.ms", "5")
            .set("message.timeout.ms", "120000")
            .create_with_context(Deliveries::default())
            .unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let sender = std::thread::spawn(move || {
            let start = Instant::now();
            for seq in 1..=PER_KEY {
                for key in 0..KEYS {
                    let (k, v) = (format!("k{key:02}"), seq.to_string());
                    let partition = i32::try_from(key).unwrap() % PARTITIONS;
                    let mut record = BaseRecord::to(INPUT)
                        .key(&k)
                        .payload(&v)
                        .partition(partition);
                    // A full local queue (a dead leader's partitions waiting): let it drain.
                    while let Err((_, back)) = producer.send(record) {
                        record = back;
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
                if stopped.load(Ordering::SeqCst) {
                    return vec!["stopped".to_string()];
                }
                let due = INPUT_SPAN.mul_f64(seq as f64 / PER_KEY as f64);
                if let Some(ahead) = due.checked_sub(start.elapsed()) {
                    std::thread::sleep(ahead);
                }
            }
            producer.flush(Duration::from_secs(120)).unwrap();
            let context = producer.context();
            let mut failed = context.failed.lock().unwrap().clone();
            let acked = *context.acked.lock().unwrap();
            if acked != KEYS * PER_KEY {
                failed.push(format!("{acked} of {} acknowledged", KEYS * PER_KEY));
            }
            failed
        });
        Input {
            stop,
            sender: Some(sender),
        }
    }

    /// Waits until every record is sent and answered; the errors of those that failed.
    fn finish(mut self) -> Vec<String> {
        self.sender.take().unwrap().join().unwrap()
    }
}

impl Drop for Input {
    /// A failed test stops the producer rather than leave it sending for minutes.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// How many input records the application has committed: the sum of its group's committed
/// offsets (the input holds no transactions, so offsets count records). `None` while the
/// group's coordinator does not answer.
fn committed_input(consumer: &BaseConsumer) -> Option<i64> {
    let mut tpl = TopicPartitionList::new();
    for p in 0..PARTITIONS {
        tpl.add_partition(INPUT, p);
    }
    let committed = consumer
        .committed_offsets(tpl, Duration::from_secs(5))
        .ok()?;
    Some(
        committed
            .elements()
            .iter()
            .map(|e| match e.offset() {
                Offset::Offset(o) => o,
                _ => 0,
            })
            .sum(),
    )
}

/// Polls `f` every 100 ms until it gives `Some`, the instances running all along; fails the test
/// after `limit` with `what` and everyone's logs.
fn poll_while_running<T>(
    what: &str,
    limit: Duration,
    instances: &mut [&mut Instance],
    cluster: &TestCluster,
    mut f: impl FnMut(&[&mut Instance]) -> Option<T>,
) -> T {
    let start = Instant::now();
    loop {
        for instance in instances.iter_mut() {
            instance.assert_running();
        }
        if let Some(v) = f(instances) {
            return v;
        }
        if start.elapsed() > limit {
            let logs: String = instances.iter().map(|i| i.log()).collect();
            panic!("not within {limit:?}: {what}\n{logs}{}", cluster.logs());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits (`limit`) until the application has committed `records` input records, the instances
/// running all along; returns how many it has.
fn wait_for_committed(
    offsets: &BaseConsumer,
    records: i64,
    limit: Duration,
    instances: &mut [&mut Instance],
    cluster: &TestCluster,
) -> i64 {
    poll_while_running(
        &format!("{records} input records committed"),
        limit,
        instances,
        cluster,
        |_| committed_input(offsets).filter(|n| *n >= records),
    )
}

/// A request to the broker at `addr` and its answer.
fn ask(addr: std::net::SocketAddr, body: RequestKind, version: i16) -> ResponseKind {
    KafkaConn::connect_to(addr).call(&body, version)
}

/// Whether the transaction of `id` is open with records in [`OUTPUT`]'s logs: its coordinator
/// has it Ongoing, and some partition's leader has an open transaction of its producer.
fn open_with_output_records(cluster: &TestCluster, id: &str) -> bool {
    use ::kcli::protocol::messages::describe_producers_request::{
        DescribeProducersRequest, TopicRequest,
    };
    use ::kcli::protocol::messages::describe_transactions_request::DescribeTransactionsRequest;
    let Some(coordinator) = coordinator_of(cluster.addr(1), id) else {
        return false;
    };
    let ResponseKind::DescribeTransactions(d) = ask(
        cluster.addr(coordinator),
        RequestKind::DescribeTransactions(DescribeTransactionsRequest {
            transactional_ids: vec![StrBytes::from(id.to_string())],
            ..Default::default()
        }),
        0,
    ) else {
        return false;
    };
    let Some(state) = d.transaction_states.first() else {
        return false;
    };
    if state.error_code != 0 || state.transaction_state != "Ongoing" {
        return false;
    }
    let Some(metadata) = metadata_at(cluster.addr(1)) else {
        return false;
    };
    let Some((_, partitions)) = metadata.topics.get(OUTPUT) else {
        return false;
    };
    partitions.iter().any(|(p, view)| {
        let ResponseKind::DescribeProducers(r) = ask(
            cluster.addr(view.leader),
            RequestKind::DescribeProducers(DescribeProducersRequest {
                topics: vec![TopicRequest {
                    name: StrBytes::from(OUTPUT),
                    partition_indexes: vec![*p],
                    ..Default::default()
                }],
                ..Default::default()
            }),
            0,
        ) else {
            return false;
        };
        r.topics.iter().flat_map(|t| &t.partitions).any(|part| {
            part.active_producers.iter().any(|producer| {
                producer.producer_id == state.producer_id && producer.current_txn_start_offset >= 0
            })
        })
    })
}

/// Kills `instance` -9 at a moment its transaction is open with records in the output: stopped
/// (SIGSTOP), so it sends nothing more, and seen so twice, 300 ms apart, so that no EndTxn it
/// sent before it stopped is still on its way; else resumed and tried again a little later.
fn kill_with_an_open_transaction(instance: &mut Instance, cluster: &TestCluster) {
    let id = instance.transactional_id();
    let pid = instance.child.id();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        signal(pid, "STOP");
        let open = (0..2).all(|_| {
            std::thread::sleep(Duration::from_millis(300));
            open_with_output_records(cluster, &id)
        });
        if open {
            instance.kill9();
            return;
        }
        signal(pid, "CONT");
        assert!(
            Instant::now() < deadline,
            "{id} never seen with an open transaction writing to {OUTPUT}\n{}",
            instance.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Asserts that `got`, the values read_committed read for `key` of `topic`, are `want`: on a
/// difference, says where it starts and how many values are missing or doubled.
fn assert_values(topic: &str, key: &str, got: &[String], want: &[String]) {
    if got == want {
        return;
    }
    let first = got.iter().zip(want).position(|(g, w)| g != w);
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    for v in got {
        *seen.entry(v).or_default() += 1;
    }
    let doubled: Vec<_> = seen
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(v, _)| v)
        .collect();
    let missing = want
        .iter()
        .filter(|v| !seen.contains_key(v.as_str()))
        .count();
    panic!(
        "{topic} {key}: {} values, {} expected; first difference at index {first:?} \
         ({:?} for {:?}); {missing} missing; {} doubled, the first {:?}",
        got.len(),
        want.len(),
        first.map(|i| &got[i]),
        first.map(|i| &want[i]),
        doubled.len(),
        &doubled[..doubled.len().min(10)],
    );
}

fn exactly_once_through_kills(start: Start) {
    let mut cluster = start(&[
        ("transaction.state.log.num.partitions", "5"),
        ("offsets.topic.num.partitions", "5"),
        // The group's offsets outlive a broker (Kafka's test brokers default to 1 replica).
        ("offsets.topic.replication.factor", "3"),
        // The instances' group forms at once rather than after 3 s.
        ("group.initial.rebalance.delay.ms", "0"),
        ("replica.lag.time.max.ms", "3000"),
    ]);
    create_topic(&cluster, INPUT, PARTITIONS, 3);
    create_topic(&cluster, OUTPUT, PARTITIONS, 3);
    let scratch = tempfile::tempdir().unwrap();
    let classpath = compile_java_driver("StreamsEosCheck", scratch.path());
    let bootstrap = cluster.bootstrap();
    let mut a = Instance::start(&classpath, &bootstrap, scratch.path().join("a"));
    let mut b = Instance::start(&classpath, &bootstrap, scratch.path().join("b"));
    let offsets: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", APP)
        // Committed offsets as they stand, rather than UNSTABLE_OFFSET_COMMIT while the
        // application's transactions are open.
        .set("isolation.level", "read_uncommitted")
        .create()
        .unwrap();
    let input = Input::start(&bootstrap);

    // An instance dies with a transaction open, and comes back with the same transactional id.
    let began = Instant::now();
    wait_for_committed(
        &offsets,
        RECORDS * 3 / 20,
        LIMIT,
        &mut [&mut a, &mut b],
        &cluster,
    );
    kill_with_an_open_transaction(&mut a, &cluster);
    let at = wait_for_committed(&offsets, 0, LIMIT, &mut [&mut b], &cluster);
    eprintln!(
        "{}: an instance killed at {at} input records committed, {:.1} s in",
        cluster.kind(),
        began.elapsed().as_secs_f64()
    );
    a.restart();

    // Once the restarted instance runs and more is committed, the other's transaction
    // coordinator dies for good, before the application is done.
    let instances = &mut [&mut a, &mut b];
    poll_while_running(
        "the restarted instance RUNNING",
        LIMIT,
        instances,
        &cluster,
        |i| i[0].running().then_some(()),
    );
    let at = wait_for_committed(&offsets, at + RECORDS / 10, LIMIT, instances, &cluster);
    assert!(
        at < RECORDS,
        "the application was done before the broker's kill"
    );
    let coordinator = coordinator_of(cluster.addr(1), &b.transactional_id()).unwrap();
    cluster.kill9(coordinator);
    eprintln!(
        "{}: broker {coordinator} killed at {at} input records committed, {:.1} s in",
        cluster.kind(),
        began.elapsed().as_secs_f64()
    );
    let alive: Vec<i32> = cluster
        .ids()
        .into_iter()
        .filter(|id| *id != coordinator)
        .collect();

    let failed = input.finish();
    assert!(
        failed.is_empty(),
        "input not delivered: {failed:?}\n{}",
        cluster.logs()
    );
    wait_for_committed(&offsets, RECORDS, LIMIT, &mut [&mut a, &mut b], &cluster);
    eprintln!(
        "{}: every input record committed {:.1} s in",
        cluster.kind(),
        began.elapsed().as_secs_f64()
    );
    a.kill9();
    b.kill9();

    let alive_bootstrap = alive
        .iter()
        .map(|id| cluster.addr(*id).to_string())
        .collect::<Vec<_>>()
        .join(",");
    let s = run_driver(
        java_command(
            &classpath,
            "StreamsEosCheck",
            &["read", &alive_bootstrap, INPUT, OUTPUT],
        ),
        "StreamsEosCheck read",
    );
    let values = |topic: &str, key: &str| -> Vec<String> {
        s["topics"][topic]["values"][key]
            .as_array()
            .map(|v| v.iter().map(|x| x.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    for key in (0..KEYS).map(|k| format!("k{k:02}")) {
        let input: Vec<String> = (1..=PER_KEY).map(|seq| seq.to_string()).collect();
        assert_values(INPUT, &key, &values(INPUT, &key), &input);
        let output: Vec<String> = (1..=PER_KEY).map(|seq| format!("{seq}:{seq}")).collect();
        assert_values(OUTPUT, &key, &values(OUTPUT, &key), &output);
    }
    assert_eq!(s["topics"][OUTPUT]["read_committed"], RECORDS);
    // The records of the transaction open when the instance died were aborted.
    let uncommitted = s["topics"][OUTPUT]["read_uncommitted"].as_i64().unwrap();
    assert!(uncommitted > RECORDS, "read_uncommitted read {uncommitted}");
    eprintln!(
        "{}: {} aborted output records",
        cluster.kind(),
        uncommitted - RECORDS
    );
}
