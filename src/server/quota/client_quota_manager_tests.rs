//! The client quota managers' tests: Kafka's precedence level by level, sharing, the token bucket's
//! throttle and its convergence second by second, the request quota's cap, and sensor expiry.

use super::*;

const W: QuotaWindow = QuotaWindow::DEFAULT;

fn named_user(u: &str) -> UserEntity {
    UserEntity::Named(u.to_owned())
}

fn named_client(c: &str) -> ClientIdEntity {
    ClientIdEntity::Named(c.to_owned())
}

/// The eight levels in Kafka's precedence order, most specific first, for user `alice` and
/// client id `c1`; each with a distinct quota.
fn levels() -> Vec<(KafkaQuotaEntity, f64)> {
    vec![
        (
            KafkaQuotaEntity::user_client(named_user("alice"), named_client("c1")),
            1.0,
        ),
        (
            KafkaQuotaEntity::user_client(named_user("alice"), ClientIdEntity::Default),
            2.0,
        ),
        (KafkaQuotaEntity::user(named_user("alice")), 3.0),
        (
            KafkaQuotaEntity::user_client(UserEntity::Default, named_client("c1")),
            4.0,
        ),
        (
            KafkaQuotaEntity::user_client(UserEntity::Default, ClientIdEntity::Default),
            5.0,
        ),
        (KafkaQuotaEntity::user(UserEntity::Default), 6.0),
        (KafkaQuotaEntity::client_id(named_client("c1")), 7.0),
        (KafkaQuotaEntity::client_id(ClientIdEntity::Default), 8.0),
    ]
}

#[test]
fn each_of_the_eight_levels_overrides_the_ones_below_it() {
    for top in 0..8 {
        let manager = ClientQuotaManager::new(QuotaType::Produce, W);
        for (entity, quota) in levels().into_iter().skip(top) {
            manager.update_quota(entity, Some(quota));
        }
        assert_eq!(
            manager.quota("alice", "c1"),
            Some(levels()[top].1),
            "levels {}..8 configured",
            top + 1
        );
    }
}

#[test]
fn each_level_alone_applies_to_whom_it_names() {
    for (level, (entity, quota)) in levels().into_iter().enumerate() {
        let manager = ClientQuotaManager::new(QuotaType::Fetch, W);
        manager.update_quota(entity, Some(quota));
        assert_eq!(
            manager.quota("alice", "c1"),
            Some(quota),
            "level {}",
            level + 1
        );
        // Levels naming alice or c1 do not reach bob with client c2.
        let reaches_others = matches!(level, 4 | 5 | 7);
        assert_eq!(
            manager.quota("bob", "c2").is_some(),
            reaches_others,
            "level {}",
            level + 1
        );
    }
}

#[test]
fn removing_a_quota_falls_back_to_the_next_level() {
    let manager = ClientQuotaManager::new(QuotaType::Produce, W);
    manager.update_quota(KafkaQuotaEntity::user(named_user("alice")), Some(100.0));
    manager.update_quota(
        KafkaQuotaEntity::client_id(ClientIdEntity::Default),
        Some(50.0),
    );
    assert_eq!(manager.quota("alice", "c1"), Some(100.0));
    manager.update_quota(KafkaQuotaEntity::user(named_user("alice")), None);
    assert_eq!(manager.quota("alice", "c1"), Some(50.0));
    assert!(
        manager.quotas_enabled(),
        "enabled until restart, as Kafka's"
    );
}

#[test]
fn user_names_are_matched_sanitized() {
    let manager = ClientQuotaManager::new(QuotaType::Produce, W);
    // `CN=a b` is stored in ZooKeeper as Kafka's sanitizer writes it.
    manager.update_quota(
        KafkaQuotaEntity::user(UserEntity::Named(sanitize("CN=a b"))),
        Some(10.0),
    );
    assert_eq!(manager.quota("CN=a b", "x"), Some(10.0));
}

#[test]
fn nothing_is_recorded_or_throttled_while_no_quota_is_configured() {
    let manager = ClientQuotaManager::new(QuotaType::Produce, W);
    assert!(!manager.quotas_enabled());
    assert_eq!(
        manager.maybe_record_and_get_throttle_time_ms("u", "c", 1e12, 0),
        0
    );
    assert!(manager.readings(0).is_empty());
    assert_eq!(manager.max_fetch_value("u", "c"), f64::MAX);
}

#[test]
fn a_client_may_take_one_window_of_its_quota_at_once_and_then_waits_for_each_byte() {
    let manager = ClientQuotaManager::new(QuotaType::Produce, W);
    manager.update_quota(
        KafkaQuotaEntity::client_id(named_client("p")),
        Some(1_000.0),
    );
    // The bucket holds one window (1 s) of the quota: 1,000 bytes at once are not throttled.
    assert_eq!(
        manager.maybe_record_and_get_throttle_time_ms("u", "p", 1_000.0, 0),
        0
    );
    // 500 more at once are a debt the quota repays in half a second.
    assert_eq!(
        manager.maybe_record_and_get_throttle_time_ms("u", "p", 500.0, 0),
        500
    );
    // The rate reported is still Kafka's: 1,500 over the 10 s minimum window.
    let readings = manager.readings(0);
    assert_eq!(readings.len(), 1);
    assert_eq!(readings[0].tags.client_id, "p");
    assert_eq!(readings[0].rate, 150.0);
    // Back after the throttle, 250 bytes are a debt of 250: a quarter second.
    assert_eq!(
        manager.maybe_record_and_get_throttle_time_ms("u", "p", 250.0, 500),
        250
    );
}

#[test]
fn a_request_much_larger_than_the_quota_is_repaid_in_full() {
    let manager = ClientQuotaManager::new(QuotaType::Produce, W);
    manager.update_quota(
        KafkaQuotaEntity::client_id(named_client("p")),
        Some(1_000.0),
    );
    // 100,000 bytes at 1,000/s: the window's 1,000 free, 99 s to repay the rest (Kafka's
    // formula: 90 s, after which its window has forgotten the request).
    assert_eq!(
        manager.maybe_record_and_get_throttle_time_ms("u", "p", 100_000.0, 0),
        99_000
    );
}

#[test]
fn the_request_quotas_debt_is_bounded_by_what_kafkas_window_remembers() {
    let manager = ClientQuotaManager::new(QuotaType::Request, W);
    manager.update_quota(KafkaQuotaEntity::client_id(named_client("r")), Some(1.0));
    // A request of 1,000 percent-seconds owes at most eleven windows of the quota: after
    // eleven throttles of one window (the cap) it is repaid.
    let mut now = 0;
    let mut throttles = 0;
    let mut throttle = manager.maybe_record_and_get_throttle_time_ms("u", "r", 1_000.0, now);
    while throttle > 0 {
        throttles += 1;
        assert_eq!(throttle, 1_000);
        now += i64::from(throttle);
        throttle = manager.maybe_record_and_get_throttle_time_ms("u", "r", 0.0, now);
    }
    assert_eq!(throttles, 11);
}

/// A client that waits out each throttle it is given and sends `request` bytes each time: the
/// bytes it sends in each second of `seconds`.
fn per_second_flat_out(quota: f64, request: f64, seconds: i64) -> Vec<f64> {
    let manager = ClientQuotaManager::new(QuotaType::Produce, W);
    manager.update_quota(KafkaQuotaEntity::client_id(named_client("p")), Some(quota));
    let mut per_second = vec![0.0; seconds as usize];
    let mut now = 0;
    while now < seconds * 1_000 {
        per_second[(now / 1_000) as usize] += request;
        let throttle = manager.maybe_record_and_get_throttle_time_ms("u", "p", request, now);
        // One millisecond for the round trip.
        now += i64::from(throttle) + 1;
    }
    per_second
}

#[test]
fn a_client_flat_out_gets_its_quota_second_by_second_after_the_first() {
    let per_second = per_second_flat_out(100_000.0, 4_000.0, 60);
    // The first second: the bucket's window and that second's quota.
    assert!(per_second[0] <= 2.0 * 100_000.0 + 4_000.0, "{per_second:?}");
    for (second, bytes) in per_second.iter().enumerate().skip(1) {
        assert!(
            (bytes - 100_000.0).abs() <= 10_000.0,
            "second {second}: {bytes} ({per_second:?})"
        );
    }
}

#[test]
fn a_client_with_requests_larger_than_its_window_still_gets_its_quota_over_time() {
    let per_second = per_second_flat_out(100_000.0, 640_000.0, 120);
    let rate = per_second.iter().sum::<f64>() / 120.0;
    assert!(
        (rate - 100_000.0).abs() / 100_000.0 < 0.10,
        "{rate} bytes/s ({per_second:?})"
    );
}

#[test]
fn a_user_quota_is_shared_by_the_users_client_ids() {
    let manager = ClientQuotaManager::new(QuotaType::Produce, W);
    manager.update_quota(KafkaQuotaEntity::user(named_user("alice")), Some(1_000.0));
    assert_eq!(
        manager.maybe_record_and_get_throttle_time_ms("alice", "a", 1_000.0, 0),
        0
    );
    // The second client id shares alice's bucket, which 6,000 emptied.
    assert!(manager.maybe_record_and_get_throttle_time_ms("alice", "b", 1_000.0, 0) > 0);
    let readings = manager.readings(0);
    assert_eq!(readings.len(), 1);
    assert_eq!(
        readings[0].tags,
        QuotaMetricTags {
            user: "alice".into(),
            client_id: String::new()
        }
    );
}

#[test]
fn with_several_levels_configured_each_client_is_measured_by_the_level_that_matched() {
    let manager = ClientQuotaManager::new(QuotaType::Fetch, W);
    manager.update_quota(KafkaQuotaEntity::user(named_user("alice")), Some(1_000.0));
    manager.update_quota(
        KafkaQuotaEntity::client_id(named_client("c")),
        Some(2_000.0),
    );
    manager.maybe_record_and_get_throttle_time_ms("alice", "c", 1.0, 0);
    manager.maybe_record_and_get_throttle_time_ms("bob", "c", 1.0, 0);
    manager.maybe_record_and_get_throttle_time_ms("carol", "d", 1.0, 0);
    let tags: Vec<(String, String)> = manager
        .readings(0)
        .into_iter()
        .map(|r| (r.tags.user, r.tags.client_id))
        .collect();
    assert_eq!(
        tags,
        vec![
            (String::new(), "c".to_owned()),
            (String::new(), "d".to_owned()),
            ("alice".to_owned(), String::new()),
        ]
    );
    assert_eq!(manager.quota("carol", "d"), None);
}

#[test]
fn the_request_quota_caps_a_throttle_at_one_window() {
    let manager = ClientQuotaManager::new(QuotaType::Request, W);
    manager.update_quota(KafkaQuotaEntity::client_id(named_client("r")), Some(1.0));
    let throttle = manager.maybe_record_and_get_throttle_time_ms("u", "r", 10_000.0, 0);
    assert_eq!(throttle, 1_000);
}

#[test]
fn a_fetch_takes_a_twentieth_of_a_windows_quota() {
    let manager = ClientQuotaManager::new(QuotaType::Fetch, W);
    manager.update_quota(
        KafkaQuotaEntity::client_id(ClientIdEntity::Default),
        Some(1_048_576.0),
    );
    assert_eq!(manager.max_fetch_value("u", "any"), 1_048_576.0 / 20.0);
}

#[test]
fn an_unrecorded_value_no_longer_counts() {
    let manager = ClientQuotaManager::new(QuotaType::Fetch, W);
    manager.update_quota(KafkaQuotaEntity::client_id(named_client("c")), Some(100.0));
    assert!(manager.maybe_record_and_get_throttle_time_ms("u", "c", 5_000.0, 0) > 0);
    manager.unrecord("u", "c", 5_000.0, 0);
    assert_eq!(manager.readings(0)[0].rate, 0.0);
    // The bucket has it back too: a full window's 100 is taken without a throttle.
    assert_eq!(
        manager.maybe_record_and_get_throttle_time_ms("u", "c", 100.0, 0),
        0
    );
}

#[test]
fn throttle_times_are_averaged_for_the_metrics() {
    let manager = ClientQuotaManager::new(QuotaType::Produce, W);
    manager.update_quota(KafkaQuotaEntity::client_id(named_client("c")), Some(100.0));
    manager.record_throttle_time("u", "c", 100, 0);
    manager.record_throttle_time("u", "c", 300, 10);
    assert_eq!(manager.readings(20)[0].throttle_time_avg_ms, 200.0);
}

#[test]
fn sensors_unused_for_an_hour_are_dropped() {
    let manager = ClientQuotaManager::new(QuotaType::Produce, W);
    manager.update_quota(KafkaQuotaEntity::client_id(named_client("old")), Some(1.0));
    manager.maybe_record_and_get_throttle_time_ms("u", "old", 0.0, 0);
    manager.maybe_record_and_get_throttle_time_ms("u", "new", 0.0, 3_599_000);
    assert_eq!(manager.readings(3_599_000).len(), 2);
    manager.maybe_record_and_get_throttle_time_ms("u", "new", 0.0, 3_650_000);
    let left: Vec<String> = manager
        .readings(3_650_000)
        .into_iter()
        .map(|r| r.tags.client_id)
        .collect();
    assert_eq!(left, vec!["new".to_owned()]);
}
