//! Kafka 3.9.1's Java clients under client quotas on `kcli serve`, driven by Kafka's own perf
//! tools: `ProducerPerformance` sending far more than its client id's `producer_byte_rate` of
//! 1 MiB/s (beside one without a quota, which is not throttled and keeps its speed), and
//! `ConsumerPerformance` reading far more than its `consumer_byte_rate`. Each ends
//! without an error, its client's throttle-time metric (`produce-throttle-time-max`,
//! `fetch-throttle-time-max`, printed with `--print-metrics`) shows the broker's
//! `throttle_time_ms`, and what it moved, at each report the tool printed, stays within what
//! Kafka's windowed rate allows (the librdkafka tests' bound, `support::client_quotas`).

use std::time::{Duration, Instant};

use crate::kafka_tools::support::java;
use crate::kafka_tools::{CONSUMER_PERF, PRODUCER_PERF};
use crate::serve_support::{TestBroker, run_within};
use crate::support::client_quotas::{assert_within_windowed_allowance, set_client_quota};
use crate::support::cluster::wait_until;

const QUOTA: f64 = 1_048_576.0;
const RECORD: usize = 10 * 1024;
/// 30 MiB: the first burst Kafka forgives (about 11 MiB) and some 20 s more at the quota.
const RECORDS: usize = 3_072;
/// Far longer than the runs take at the quota, far shorter than a hang.
const TOOL_LIMIT: Duration = Duration::from_secs(120);

/// Waits until the broker logged the quota config of `client` updated (its quota handler is
/// called right after).
fn wait_delivered(broker: &TestBroker, client: &str) {
    wait_until(
        &format!("the quota of {client} delivered"),
        Duration::from_secs(20),
        || {
            broker
                .stderr()
                .lines()
                .any(|l| {
                    l.contains("quota config updated")
                        && l.contains(&format!("entity=client-id={client} "))
                })
                .then_some(())
        },
    );
}

/// The value of the metric `group:name:{client-id=...}` in `--print-metrics` output.
fn metric(stdout: &str, group_and_name: &str) -> f64 {
    let prefix = format!("{group_and_name}:{{");
    stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .and_then(|l| l.rsplit(':').next())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {group_and_name} in:\n{stdout}"))
}

/// `ProducerPerformance`'s reports (`N records sent, R records/sec (...)`), the window ones
/// every 5 s and the total last, as the time since the tool's start when each ended and the
/// records acknowledged by then. A window lasted N / R seconds and the next began as it ended.
fn producer_reports(stdout: &str) -> Vec<(Duration, usize)> {
    let mut at = 0.0;
    let mut acked = 0;
    let mut out = Vec::new();
    for line in stdout.lines().filter(|l| l.contains(" records sent, ")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let count: usize = words[0].parse().unwrap();
        let rate: f64 = words[3].parse().unwrap();
        if line.contains("50th") {
            // The total, over the whole run.
            assert!(count >= acked, "{stdout}");
            out.push((Duration::from_secs_f64(count as f64 / rate), count));
        } else {
            at += count as f64 / rate;
            acked += count;
            out.push((Duration::from_secs_f64(at), acked));
        }
    }
    out
}

/// Turns reports of (time since start, records so far) into the byte events the allowance
/// takes: at each report, the records acknowledged since the one before.
fn as_events(reports: &[(Duration, usize)], start: Instant) -> Vec<(Instant, usize)> {
    let mut before = 0;
    reports
        .iter()
        .map(|(at, records)| {
            let event = (start + *at, (records - before) * RECORD);
            before = *records;
            event
        })
        .collect()
}

/// `ProducerPerformance` sending [`RECORDS`] records of [`RECORD`] bytes to `topic` as fast as
/// it can, as `client`, printing its metrics: (exit code, stdout, stderr).
fn producer_perf(broker: &TestBroker, topic: &str, client: &str) -> (i32, String, String) {
    let mut cmd = java(PRODUCER_PERF);
    cmd.args(["--topic", topic, "--num-records"])
        .arg(RECORDS.to_string())
        .args(["--record-size"])
        .arg(RECORD.to_string())
        .args(["--throughput", "-1", "--print-metrics", "--producer-props"])
        .arg(format!("bootstrap.servers={}", broker.bootstrap()))
        .arg(format!("client.id={client}"))
        .arg("acks=1");
    run_within(cmd, b"", TOOL_LIMIT)
}

#[test]
fn the_java_producer_over_its_byte_rate_is_throttled_without_errors_and_others_are_not() {
    let broker = TestBroker::start(&[]);
    set_client_quota(
        &broker.bootstrap(),
        "java-throttled",
        "producer_byte_rate",
        "1048576",
    );
    wait_delivered(&broker, "java-throttled");
    // The throttled producer and, beside it, one without a quota.
    let ((code, out, err), (free_code, free_out, free_err)) = std::thread::scope(|s| {
        let throttled = s.spawn(|| producer_perf(&broker, "quota-java", "java-throttled"));
        let free = s.spawn(|| producer_perf(&broker, "quota-java-free", "java-free"));
        (throttled.join().unwrap(), free.join().unwrap())
    });
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        !err.contains("Exception") && !out.contains("Exception"),
        "the producer got errors:\n{err}"
    );
    assert_eq!(free_code, 0, "{free_out}\n{free_err}");
    assert!(
        !free_err.contains("Exception"),
        "the free producer got errors:\n{free_err}"
    );
    assert_eq!(
        metric(&free_out, "producer-metrics:produce-throttle-time-max"),
        0.0,
        "the producer without a quota was throttled"
    );
    let free_rate = producer_reports(&free_out)
        .last()
        .map(|(run, records)| (records * RECORD) as f64 / run.as_secs_f64())
        .expect("no total from the free producer");
    eprintln!("ProducerPerformance without a quota: {free_rate:.0} B/s");
    assert!(
        free_rate > 3.0 * QUOTA,
        "the producer without a quota got only {free_rate:.0} B/s"
    );
    let throttle_max = metric(&out, "producer-metrics:produce-throttle-time-max");
    let throttle_avg = metric(&out, "producer-metrics:produce-throttle-time-avg");
    assert!(
        throttle_max > 0.0 && throttle_avg > 0.0,
        "the Java producer saw no throttle_time_ms (max {throttle_max}, avg {throttle_avg})"
    );
    let reports = producer_reports(&out);
    let (run, total) = *reports.last().expect("no reports");
    assert_eq!(total, RECORDS, "{out}");
    assert!(reports.len() >= 3, "too few reports to judge: {out}");
    eprintln!("ProducerPerformance at 1 MiB/s: {reports:?}");
    let start = Instant::now();
    assert_within_windowed_allowance(&as_events(&reports, start), start, run, QUOTA);
}

/// Milliseconds since midnight of a `HH:mm:ss:SSS` time.
fn ms_of_day(time: &str) -> i64 {
    let parts: Vec<i64> = time.split(':').map(|p| p.parse().unwrap()).collect();
    ((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1000 + parts[3]
}

/// `ConsumerPerformance --show-detailed-stats --date-format HH:mm:ss:SSS`'s progress lines
/// (`time, thread, MB so far, MB/s over the interval, records so far, ...`), each printed as a
/// record arrives once a reporting interval has passed: the time since the tool began to
/// consume and the records read by then. It began one interval before the first line: that
/// interval's megabytes over its rate.
fn consumer_reports(stdout: &str) -> Vec<(Duration, usize)> {
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .map(|l| l.split(", ").collect::<Vec<_>>())
        .filter(|cols| cols.len() >= 6 && cols[0].matches(':').count() == 3)
        .collect();
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    let first_mb: f64 = first[2].parse().unwrap();
    let first_rate: f64 = first[3].parse().unwrap();
    let began = ms_of_day(first[0]) as f64 - first_mb / first_rate * 1000.0;
    rows.iter()
        .map(|cols| {
            // A run that passes midnight goes on counting from the day before's.
            let mut at = ms_of_day(cols[0]) as f64 - began;
            if at < -1000.0 {
                at += 86_400_000.0;
            }
            (
                Duration::from_secs_f64(at.max(0.0) / 1000.0),
                cols[4].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_java_consumer_over_its_byte_rate_is_throttled_without_errors() {
    use rdkafka::ClientConfig;
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let broker = TestBroker::start(&[]);
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("acks", "1")
        .set("linger.ms", "5")
        .create()
        .unwrap();
    let payload = vec![b'c'; RECORD];
    for _ in 0..RECORDS {
        while producer
            .send(BaseRecord::<(), _>::to("quota-java-c").payload(&payload))
            .is_err()
        {
            producer.poll(Duration::from_millis(5));
        }
    }
    producer.flush(Duration::from_secs(60)).unwrap();
    set_client_quota(
        &broker.bootstrap(),
        "java-slow-reader",
        "consumer_byte_rate",
        "1048576",
    );
    wait_delivered(&broker, "java-slow-reader");
    let config = broker.scratch().join("consumer.properties");
    std::fs::write(&config, "client.id=java-slow-reader\n").unwrap();
    let mut cmd = java(CONSUMER_PERF);
    cmd.env("TZ", "UTC")
        .args(["--bootstrap-server", &broker.bootstrap()])
        .args(["--topic", "quota-java-c", "--messages"])
        .arg(RECORDS.to_string())
        .args(["--timeout", "60000", "--show-detailed-stats"])
        .args([
            "--reporting-interval",
            "1000",
            "--date-format",
            "HH:mm:ss:SSS",
        ])
        .args(["--print-metrics", "--consumer.config"])
        .arg(&config);
    let (code, out, err) = run_within(cmd, b"", TOOL_LIMIT);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        !err.contains("Exception") && !out.contains("Exception"),
        "the consumer got errors:\n{err}"
    );
    let throttle_max = metric(
        &out,
        "consumer-fetch-manager-metrics:fetch-throttle-time-max",
    );
    assert!(
        throttle_max > 0.0,
        "the Java consumer saw no throttle_time_ms"
    );
    let consumed = metric(
        &out,
        "consumer-fetch-manager-metrics:records-consumed-total",
    );
    assert!(consumed >= RECORDS as f64, "{consumed} records read: {out}");
    // The last progress line is the last checkpoint: none is printed at the end.
    let reports = consumer_reports(&out);
    eprintln!("ConsumerPerformance at 1 MiB/s: {reports:?}");
    let (run, _) = *reports.last().expect("no progress lines");
    assert!(reports.len() >= 3, "too few reports to judge: {out}");
    let start = Instant::now();
    assert_within_windowed_allowance(&as_events(&reports, start), start, run, QUOTA);
}
