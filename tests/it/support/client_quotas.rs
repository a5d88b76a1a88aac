//! Client quotas for the tests of real clients held to `producer_byte_rate` or
//! `consumer_byte_rate` (librdkafka in quota_enforcement.rs, Kafka's Java perf tools in
//! quota_java_clients.rs, a mixed cluster): [`set_client_quota`] sets one with Kafka 3.9.1's
//! `kafka-configs`; [`rates`] buckets what a client saw acknowledged or read into whole seconds,
//! [`assert_within_windowed_allowance`] checks it against what Kafka's windowed rate allows, and
//! [`assert_converged`] that it is held within 10% of the quota in every second after the first.

use std::time::{Duration, Instant};

use crate::users::kafka_configs;

/// Sets `key=value` for client id `client` with `kafka-configs --bootstrap-server
/// <bootstrap>`.
pub fn set_client_quota(bootstrap: &str, client: &str, key: &str, value: &str) {
    let (code, out, err) = kafka_configs(&[
        "--bootstrap-server",
        bootstrap,
        "--alter",
        "--entity-type",
        "clients",
        "--entity-name",
        client,
        "--add-config",
        &format!("{key}={value}"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

/// Kafka's default `quota.window.num`: the windows a first burst is spread over, beside the
/// current one.
pub const QUOTA_WINDOWS: f64 = 10.0;

/// Bytes per second in each whole second from `from` to `to` after `start`.
pub fn rates(events: &[(Instant, usize)], start: Instant, from: u64, to: u64) -> Vec<f64> {
    (from..to)
        .map(|s| {
            let (lo, hi) = (
                start + Duration::from_secs(s),
                start + Duration::from_secs(s + 1),
            );
            events
                .iter()
                .filter(|(t, _)| *t >= lo && *t < hi)
                .map(|(_, n)| *n as f64)
                .sum()
        })
        .collect()
}

/// What Kafka's windowed rate allows a client flat out from `start` for `run`, and what it
/// holds it to, with `quota` bytes per second: at every second `t`, no more than the quota over
/// `t` plus the ten windows a first burst is spread over, and one request besides (the one
/// whose throttle holds the rest back); and over the whole run at least half its quota
/// (throttled, not starved).
pub fn assert_within_windowed_allowance(
    events: &[(Instant, usize)],
    start: Instant,
    run: Duration,
    quota: f64,
) {
    // Every second the run reached into, the last one included.
    let seconds = run.as_secs() + 1;
    let per_second = rates(events, start, 0, seconds);
    let mut total = 0.0;
    for (second, bytes) in per_second.iter().enumerate() {
        total += bytes;
        let allowance = quota * (second as f64 + 1.0 + QUOTA_WINDOWS) + quota;
        assert!(
            total <= allowance,
            "{total:.0} bytes by second {second}, over the {allowance:.0} Kafka's quota allows \
             (each second: {per_second:?})"
        );
    }
    assert!(
        total >= quota * run.as_secs_f64() / 2.0,
        "only {total:.0} bytes in {run:?} (each second: {per_second:?})"
    );
}

/// Kafka's windowed rate holds a client to its quota only on average: it forgives a first burst
/// of ten windows and lets a window's worth through at once each time an old sample leaves the
/// window. kcli's throttle is a bucket of one window, so after the first two seconds (the
/// bucket and that second's quota) every second of `events` is within 10% of `quota`; `slice`
/// is the most one request or fetch adds at once. The last second is left out: the client stops
/// within it. Seconds count from the first byte (a consumer first joins its group).
pub fn assert_converged(
    events: &[(Instant, usize)],
    start: Instant,
    run: Duration,
    quota: f64,
    slice: f64,
) {
    let first = events.first().expect("nothing acknowledged or consumed").0;
    let seconds = run.saturating_sub(first - start).as_secs();
    assert!(
        seconds >= 10,
        "the first byte came only after {:?}",
        first - start
    );
    let per_second = rates(events, first, 0, seconds);
    assert!(
        per_second[0] + per_second[1] <= 3.0 * quota + slice,
        "the first burst was more than one window: {per_second:?}"
    );
    for (second, bytes) in per_second
        .iter()
        .enumerate()
        .take(per_second.len() - 1)
        .skip(2)
    {
        assert!(
            (bytes - quota).abs() <= quota / 10.0,
            "second {second}: {bytes:.0} bytes, not within 10% of {quota} (each second: \
             {per_second:?})"
        );
    }
}
