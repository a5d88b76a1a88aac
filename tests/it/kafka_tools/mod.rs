//! Kafka 3.9.1's own command-line tools against `kcli serve`, with the same output as against
//! Kafka: kafka-topics, kafka-configs (topics and brokers), kafka-get-offsets,
//! kafka-delete-records, the console producer and consumer, kafka-consumer-groups, the perf
//! tools (golden transcripts recorded against Kafka 3.9.1 by tests/record-kafka-tools, see
//! support.rs), and kafka-dump-log on a live broker's log dir beside `kcli dump-segment`
//! (dump_log.rs). kafka-log-dirs is left to the DescribeLogDirs work.

mod dump_log;
mod groups;
pub mod support;
mod transactions;

use support::Session;

pub const TOPICS: &str = "org.apache.kafka.tools.TopicCommand";
pub const CONFIGS: &str = "kafka.admin.ConfigCommand";
pub const GET_OFFSETS: &str = "org.apache.kafka.tools.GetOffsetShell";
pub const DELETE_RECORDS: &str = "org.apache.kafka.tools.DeleteRecordsCommand";
pub const PRODUCER: &str = "kafka.tools.ConsoleProducer";
pub const CONSUMER: &str = "org.apache.kafka.tools.consumer.ConsoleConsumer";
pub const GROUPS: &str = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand";
pub const PRODUCER_PERF: &str = "org.apache.kafka.tools.ProducerPerformance";
pub const CONSUMER_PERF: &str = "org.apache.kafka.tools.ConsumerPerformance";

const BS: &str = "--bootstrap-server";
const B: &str = "{bootstrap}";

/// Keyed lines for the console producer (`parse.key`, the default tab separator): the keys
/// hash (murmur2, as Kafka's partitioner) to fixed partitions.
fn keyed_lines(n: usize) -> String {
    (0..n).map(|i| format!("key-{i}\tvalue-{i}\n")).collect()
}

/// kafka-topics, kafka-configs on topics and brokers, kafka-get-offsets and
/// kafka-delete-records, each with its errors.
#[test]
fn golden_topics_configs_offsets() {
    let mut s = Session::start("topics_configs_offsets");
    let t = |s: &mut Session, title: &str, args: &[&str]| {
        let mut all = vec![BS, B];
        all.extend_from_slice(args);
        s.tool(title, TOPICS, &all, "")
    };
    let out = t(
        &mut s,
        "create",
        &[
            "--create",
            "--topic",
            "t1",
            "--partitions",
            "3",
            "--replication-factor",
            "1",
        ],
    );
    assert_eq!(out.stdout, "Created topic t1.\n", "{out:?}");
    t(
        &mut s,
        "create with configs",
        &[
            "--create",
            "--topic",
            "t2",
            "--partitions",
            "1",
            "--config",
            "cleanup.policy=compact",
            "--config",
            "segment.bytes=1048576",
        ],
    );
    let out = t(&mut s, "create existing", &["--create", "--topic", "t1"]);
    assert_ne!(out.code, 0, "{out:?}");
    t(
        &mut s,
        "create existing, if not exists",
        &["--create", "--if-not-exists", "--topic", "t1"],
    );
    t(
        &mut s,
        "create, replication factor above the brokers",
        &["--create", "--topic", "t3", "--replication-factor", "3"],
    );
    t(
        &mut s,
        "create, bad config",
        &["--create", "--topic", "t3", "--config", "retention.ms=soon"],
    );
    t(
        &mut s,
        "create, replica assignment",
        &["--create", "--topic", "t4", "--replica-assignment", "0,0:0"],
    );
    t(
        &mut s,
        "create, valid replica assignment",
        &["--create", "--topic", "t5", "--replica-assignment", "0,0"],
    );
    t(&mut s, "list", &["--list"]);
    t(&mut s, "describe all", &["--describe"]);
    t(&mut s, "describe t2", &["--describe", "--topic", "t2"]);
    t(
        &mut s,
        "alter partitions",
        &["--alter", "--topic", "t1", "--partitions", "4"],
    );
    t(
        &mut s,
        "alter partitions, fewer",
        &["--alter", "--topic", "t1", "--partitions", "2"],
    );
    t(
        &mut s,
        "alter partitions with an assignment",
        &[
            "--alter",
            "--topic",
            "t5",
            "--partitions",
            "3",
            "--replica-assignment",
            "0,0,0",
        ],
    );
    t(
        &mut s,
        "alter partitions, assignment to an unknown broker",
        &[
            "--alter",
            "--topic",
            "t5",
            "--partitions",
            "4",
            "--replica-assignment",
            "0,0,0,7",
        ],
    );
    t(&mut s, "describe t1", &["--describe", "--topic", "t1"]);
    t(
        &mut s,
        "describe under-replicated and unavailable",
        &["--describe", "--under-replicated-partitions"],
    );
    t(
        &mut s,
        "describe unavailable",
        &["--describe", "--unavailable-partitions"],
    );
    t(
        &mut s,
        "describe at min isr",
        &["--describe", "--at-min-isr-partitions"],
    );
    t(
        &mut s,
        "describe topics with overrides",
        &["--describe", "--topics-with-overrides"],
    );
    t(
        &mut s,
        "describe unknown",
        &["--describe", "--topic", "nope"],
    );

    let c = |s: &mut Session, title: &str, args: &[&str]| {
        let mut all = vec![BS, B];
        all.extend_from_slice(args);
        s.tool(title, CONFIGS, &all, "")
    };
    let topic = ["--entity-type", "topics", "--entity-name", "t1"];
    let with = |extra: &[&'static str]| [&topic[..], extra].concat();
    c(&mut s, "configs: describe t1", &with(&["--describe"]));
    c(
        &mut s,
        "configs: alter t1",
        &with(&[
            "--alter",
            "--add-config",
            "retention.ms=86400000,max.message.bytes=2000000",
        ]),
    );
    c(
        &mut s,
        "configs: describe t1 altered",
        &with(&["--describe"]),
    );
    c(
        &mut s,
        "configs: describe t1, all",
        &with(&["--describe", "--all"]),
    );
    c(
        &mut s,
        "configs: delete a t1 config",
        &with(&["--alter", "--delete-config", "retention.ms"]),
    );
    c(&mut s, "configs: describe t1 after", &with(&["--describe"]));
    c(
        &mut s,
        "configs: alter t1, a list value",
        &with(&["--alter", "--add-config", "cleanup.policy=[compact,delete]"]),
    );
    c(
        &mut s,
        "configs: describe t1, a list value",
        &with(&["--describe"]),
    );
    c(
        &mut s,
        "configs: alter t1, delete an absent config",
        &with(&["--alter", "--delete-config", "segment.ms"]),
    );
    c(
        &mut s,
        "configs: describe an unknown topic",
        &[
            "--entity-type",
            "topics",
            "--entity-name",
            "nope",
            "--describe",
        ],
    );
    c(
        &mut s,
        "configs: alter t1, unknown config",
        &with(&["--alter", "--add-config", "no.such.config=1"]),
    );
    c(
        &mut s,
        "configs: alter t1, bad value",
        &with(&["--alter", "--add-config", "retention.ms=soon"]),
    );
    c(
        &mut s,
        "configs: describe every topic",
        &["--entity-type", "topics", "--describe"],
    );
    let broker = ["--entity-type", "brokers", "--entity-name", "0"];
    let default = ["--entity-type", "brokers", "--entity-default"];
    c(
        &mut s,
        "configs: describe broker 0",
        &[&broker[..], &["--describe"]].concat(),
    );
    c(
        &mut s,
        "configs: alter the broker default",
        &[
            &default[..],
            &["--alter", "--add-config", "log.retention.ms=604800000"],
        ]
        .concat(),
    );
    c(
        &mut s,
        "configs: describe the broker default",
        &[&default[..], &["--describe"]].concat(),
    );
    c(
        &mut s,
        "configs: alter broker 0",
        &[
            &broker[..],
            &["--alter", "--add-config", "log.retention.bytes=1073741824"],
        ]
        .concat(),
    );
    c(
        &mut s,
        "configs: alter broker 0, a static config",
        &[&broker[..], &["--alter", "--add-config", "log.dirs=/tmp/x"]].concat(),
    );
    c(
        &mut s,
        "configs: describe broker 0 altered",
        &[&broker[..], &["--describe"]].concat(),
    );
    c(
        &mut s,
        "configs: describe t1 after broker changes",
        &with(&["--describe", "--all"]),
    );
    c(
        &mut s,
        "configs: delete the broker configs",
        &[
            &broker[..],
            &["--alter", "--delete-config", "log.retention.bytes"],
        ]
        .concat(),
    );
    c(
        &mut s,
        "configs: delete the broker default",
        &[
            &default[..],
            &["--alter", "--delete-config", "log.retention.ms"],
        ]
        .concat(),
    );
    c(
        &mut s,
        "configs: describe the broker default after",
        &[&default[..], &["--describe"]].concat(),
    );
    c(
        &mut s,
        "configs: alter broker 0, an unknown config",
        &[
            &broker[..],
            &["--alter", "--add-config", "no.such.config=1"],
        ]
        .concat(),
    );
    c(
        &mut s,
        "configs: describe broker 0 with an unknown config",
        &[&broker[..], &["--describe"]].concat(),
    );

    // Keyed records, so the partitions they land on are Kafka's.
    let out = s.tool(
        "console producer, keyed",
        PRODUCER,
        &[BS, B, "--topic", "t1", "--property", "parse.key=true"],
        &keyed_lines(40),
    );
    assert_eq!(out.code, 0, "{out:?}");
    let o = |s: &mut Session, title: &str, args: &[&str]| {
        let mut all = vec![BS, B];
        all.extend_from_slice(args);
        s.tool(title, GET_OFFSETS, &all, "")
    };
    let out = o(&mut s, "get offsets: latest", &["--topic", "t1"]);
    let total: i64 = out
        .stdout
        .lines()
        .map(|l| l.rsplit(':').next().unwrap().parse::<i64>().unwrap())
        .sum();
    assert_eq!(total, 40, "{out:?}");
    o(
        &mut s,
        "get offsets: earliest",
        &["--topic", "t1", "--time", "-2"],
    );
    o(
        &mut s,
        "get offsets: partitions",
        &["--topic", "t1", "--partitions", "0,2"],
    );
    o(
        &mut s,
        "get offsets: topic-partitions",
        &["--topic-partitions", "t.*:1-3"],
    );
    o(&mut s, "get offsets: every topic", &[]);
    o(
        &mut s,
        "get offsets: every topic, internal excluded",
        &["--exclude-internal-topics"],
    );
    o(&mut s, "get offsets: unknown topic", &["--topic", "nope"]);
    o(
        &mut s,
        "get offsets: by timestamp, before every record",
        &["--topic", "t1", "--time", "0"],
    );
    o(
        &mut s,
        "get offsets: by timestamp, after every record",
        &["--topic", "t1", "--time", "4102444800000"],
    );

    let json = s.scratch().join("delete.json");
    std::fs::write(
        &json,
        r#"{"version":1,"partitions":[{"topic":"t1","partition":0,"offset":2},{"topic":"t1","partition":1,"offset":-1}]}"#,
    )
    .unwrap();
    let beyond = s.scratch().join("beyond.json");
    std::fs::write(
        &beyond,
        r#"{"version":1,"partitions":[{"topic":"t1","partition":2,"offset":1000}]}"#,
    )
    .unwrap();
    let out = s.tool(
        "delete records",
        DELETE_RECORDS,
        &[BS, B, "--offset-json-file", "{scratch}/delete.json"],
        "",
    );
    assert!(out.stdout.contains("low_watermark: 2"), "{out:?}");
    s.tool(
        "delete records above the high watermark",
        DELETE_RECORDS,
        &[BS, B, "--offset-json-file", "{scratch}/beyond.json"],
        "",
    );
    o(
        &mut s,
        "get offsets: earliest after deletion",
        &["--topic", "t1", "--time", "-2"],
    );

    t(&mut s, "delete", &["--delete", "--topic", "t2"]);
    t(&mut s, "delete unknown", &["--delete", "--topic", "nope"]);
    t(&mut s, "list after delete", &["--list"]);
    s.finish();
}

/// Kafka's producer perf tool with a transactional id: transactions of 100 ms, each committed;
/// then `kafka-configs` describes a client id's quotas (none: nothing printed).
#[test]
fn transactional_perf_runs_and_client_quotas_describe() {
    let mut broker = crate::serve_support::TestBroker::start(support::BROKER);
    let run = |class: &str, args: &[&str]| {
        let mut cmd = support::java(class);
        cmd.args(args.iter().map(|a| a.replace(B, &broker.bootstrap())));
        crate::serve_support::run_within(cmd, b"", std::time::Duration::from_secs(120))
    };
    let (code, out, err) = run(
        PRODUCER_PERF,
        &[
            "--topic",
            "tx",
            "--num-records",
            "1000",
            "--record-size",
            "10",
            "--throughput",
            "-1",
            "--transactional-id",
            "tx1",
            "--transaction-duration-ms",
            "100",
            "--producer-props",
            "bootstrap.servers={bootstrap}",
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.starts_with("1000 records sent")),
        "{out}"
    );
    // Every transaction ended with a COMMIT marker, the last one after the last record.
    let batches = crate::serve_support::batch_headers(&broker.data_dir().join("tx-0"));
    assert!(batches.iter().any(|h| h.is_control()), "{batches:?}");
    assert!(
        batches.last().is_some_and(|h| h.is_control()),
        "{batches:?}"
    );
    let (code, out, err) = run(
        CONFIGS,
        &[
            BS,
            B,
            "--describe",
            "--entity-type",
            "clients",
            "--entity-name",
            "c1",
        ],
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    broker.stop();
}
