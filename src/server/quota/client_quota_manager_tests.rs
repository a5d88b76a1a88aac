//! The client quota managers' tests: Kafka's precedence level by level, sharing, the throttle-time
//! formula and its convergence, the request quota's cap, and sensor expiry.

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
    assert_eq!(manager.max_value_in_quota_window("u", "c"), f64::MAX);
}

#[test]
fn throttle_time_is_kafkas_formula_over_the_rate_window() {
    let manager = ClientQuotaManager::new(QuotaType::Produce, W);
    manager.update_quota(
        KafkaQuotaEntity::client_id(named_client("p")),
        Some(1_000.0),
    );
    // 10,000 bytes in the first ten seconds is exactly the quota: no throttle.
    assert_eq!(
        manager.maybe_record_and_get_throttle_time_ms("u", "p", 10_000.0, 0),
        0
    );
    // 5,000 more at once: 15,000 over the 10 s minimum window is 1,500/s, so
    // (1,500 - 1,000) / 1,000 * 10,000 ms = 5,000 ms.
    assert_eq!(
        manager.maybe_record_and_get_throttle_time_ms("u", "p", 5_000.0, 0),
        5_000
    );
    let readings = manager.readings(0);
    assert_eq!(readings.len(), 1);
    assert_eq!(readings[0].tags.client_id, "p");
    assert_eq!(readings[0].rate, 1_500.0);
}

#[test]
fn a_client_at_its_quota_is_not_throttled_and_one_above_converges_to_it() {
    // A client that waits out each throttle it is given gets its quota over time.
    let manager = ClientQuotaManager::new(QuotaType::Produce, W);
    manager.update_quota(
        KafkaQuotaEntity::client_id(named_client("p")),
        Some(100_000.0),
    );
    let mut now = 0;
    let mut sent = 0.0;
    while now < 120_000 {
        let throttle = manager.maybe_record_and_get_throttle_time_ms("u", "p", 64_000.0, now);
        sent += 64_000.0;
        now += i64::from(throttle) + 10;
    }
    let rate = sent / (now as f64 / 1000.0);
    assert!(
        (rate - 100_000.0).abs() / 100_000.0 < 0.10,
        "{rate} bytes/s over {now} ms"
    );
}

#[test]
fn a_user_quota_is_shared_by_the_users_client_ids() {
    let manager = ClientQuotaManager::new(QuotaType::Produce, W);
    manager.update_quota(KafkaQuotaEntity::user(named_user("alice")), Some(1_000.0));
    assert_eq!(
        manager.maybe_record_and_get_throttle_time_ms("alice", "a", 6_000.0, 0),
        0
    );
    // The second client id shares alice's sensor: 12,000 over 10 s exceeds 1,000/s.
    assert!(manager.maybe_record_and_get_throttle_time_ms("alice", "b", 6_000.0, 0) > 0);
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
fn max_value_in_quota_window_is_the_quota_over_all_windows_but_the_current() {
    let manager = ClientQuotaManager::new(QuotaType::Fetch, W);
    manager.update_quota(
        KafkaQuotaEntity::client_id(ClientIdEntity::Default),
        Some(1_048_576.0),
    );
    assert_eq!(
        manager.max_value_in_quota_window("u", "any"),
        1_048_576.0 * 10.0
    );
}

#[test]
fn an_unrecorded_value_no_longer_counts() {
    let manager = ClientQuotaManager::new(QuotaType::Fetch, W);
    manager.update_quota(KafkaQuotaEntity::client_id(named_client("c")), Some(100.0));
    assert!(manager.maybe_record_and_get_throttle_time_ms("u", "c", 5_000.0, 0) > 0);
    manager.unrecord("u", "c", 5_000.0, 0);
    assert_eq!(manager.readings(0)[0].rate, 0.0);
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
