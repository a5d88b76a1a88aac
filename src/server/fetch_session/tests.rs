//! Unit tests of the fetch contexts: sessions created by full fetches, incremental fetches that
//! answer only news, forgotten partitions, and the session errors.

use std::sync::Arc;

use super::*;
use crate::server::fetch_session_cache::FetchSessionCache;

/// A partition of topic `topic` (by name) fetched at `offset`.
pub(crate) fn partition(topic: &str, partition: i32, offset: i64) -> FetchPartition {
    FetchPartition {
        topic: Some(topic.to_string()),
        topic_id: Uuid::nil(),
        partition,
        fetch_offset: offset,
        log_start_offset: -1,
        max_bytes: 1 << 20,
        current_leader_epoch: -1,
        last_fetched_epoch: -1,
    }
}

fn quiet(hw: i64) -> PartitionNews {
    PartitionNews {
        records_size: 0,
        high_watermark: hw,
        log_start_offset: 0,
        error_code: 0,
        diverging_epoch: false,
        preferred_read_replica: false,
    }
}

fn manager() -> FetchManager {
    FetchManager::new(Arc::new(FetchSessionCache::with_shards(1, 10, 120_000)))
}

/// A full fetch of `n` partitions of `t` and its committed response: the session id.
fn full(m: &FetchManager, n: i32) -> i32 {
    let data: Vec<_> = (0..n).map(|p| partition("t", p, 0)).collect();
    let mut ctx = m.new_context(12, 0, 0, false, data, &[], 0);
    let parts = ctx.partitions(|_| None);
    let news = vec![quiet(0); parts.len()];
    let g = ctx.generate(&m.cache, 0, &parts, &news, true);
    assert_eq!(g.error_code, ErrorCode::None);
    assert_eq!(g.respond, vec![true; parts.len()]);
    assert_ne!(g.session_id, 0);
    g.session_id
}

#[test]
fn next_epoch_wraps_and_stays_final() {
    assert_eq!(next_epoch(0), 1);
    assert_eq!(next_epoch(7), 8);
    assert_eq!(next_epoch(i32::MAX), 1);
    assert_eq!(next_epoch(-1), -1);
}

#[test]
fn incremental_fetches_read_the_session_and_answer_only_news() {
    let m = manager();
    let id = full(&m, 3);
    assert_eq!(m.cache.num_sessions(), 1);
    assert_eq!(m.cache.num_partitions_cached(), 3);

    // Epoch 1 names nothing: all three are read, only partition 1 (a new HW) is answered.
    let mut ctx = m.new_context(12, id, 1, false, Vec::new(), &[], 1);
    let parts = ctx.partitions(|_| None);
    assert_eq!(parts.len(), 3);
    let mut news = vec![quiet(0); 3];
    news[1].high_watermark = 5;
    let dry = ctx.generate(&m.cache, 1, &parts, &news, false);
    let g = ctx.generate(&m.cache, 1, &parts, &news, true);
    assert_eq!(dry, g, "the dry run answers as the committed one");
    assert_eq!(g.session_id, id);
    assert_eq!(g.respond, vec![false, true, false]);

    // Epoch 2: partition 1's HW was remembered; partition 0 returns records and moves last.
    let mut ctx = m.new_context(12, id, 2, false, vec![partition("t", 0, 0)], &[], 2);
    let parts = ctx.partitions(|_| None);
    let mut news = vec![quiet(0), quiet(5), quiet(0)];
    news[0].records_size = 100;
    let g = ctx.generate(&m.cache, 2, &parts, &news, true);
    assert_eq!(g.respond, vec![true, false, false]);

    let mut ctx = m.new_context(12, id, 3, false, Vec::new(), &[], 3);
    let order: Vec<i32> = ctx
        .partitions(|_| None)
        .iter()
        .map(|p| p.partition)
        .collect();
    assert_eq!(order, vec![1, 2, 0]);
}

#[test]
fn an_error_is_answered_and_clears_the_high_watermark() {
    let m = manager();
    let id = full(&m, 1);
    let mut ctx = m.new_context(12, id, 1, false, Vec::new(), &[], 1);
    let parts = ctx.partitions(|_| None);
    let mut news = vec![quiet(0)];
    news[0].error_code = ErrorCode::NotLeaderOrFollower.code();
    assert_eq!(
        ctx.generate(&m.cache, 1, &parts, &news, true).respond,
        vec![true]
    );
    // The HW was forgotten, so the same figures are news again.
    let ctx = m.new_context(12, id, 2, false, Vec::new(), &[], 2);
    assert_eq!(
        ctx.generate(&m.cache, 2, &parts, &[quiet(0)], true).respond,
        vec![true]
    );
}

#[test]
fn session_errors_as_kafka_answers_them() {
    let m = manager();
    let id = full(&m, 2);
    let unknown = if id == 1 { 2 } else { 1 };
    assert!(matches!(
        m.new_context(12, unknown, 1, false, Vec::new(), &[], 1),
        FetchContext::SessionError(ErrorCode::FetchSessionIdNotFound)
    ));
    assert!(matches!(
        m.new_context(12, id, 5, false, Vec::new(), &[], 1),
        FetchContext::SessionError(ErrorCode::InvalidFetchSessionEpoch)
    ));
    assert!(matches!(
        m.new_context(13, id, 1, false, Vec::new(), &[], 1),
        FetchContext::SessionError(ErrorCode::FetchSessionTopicIdError)
    ));
    // A duplicate of epoch 1 arriving after it finds the session at epoch 2.
    let first = m.new_context(12, id, 1, false, Vec::new(), &[], 1);
    assert!(matches!(first, FetchContext::Incremental { .. }));
    assert!(matches!(
        m.new_context(12, id, 1, false, Vec::new(), &[], 1),
        FetchContext::SessionError(ErrorCode::InvalidFetchSessionEpoch)
    ));
}

#[test]
fn forgetting_every_partition_closes_the_session() {
    let m = manager();
    let id = full(&m, 2);
    let forget = [
        PartitionKey::Name("t".into(), 0),
        PartitionKey::Name("t".into(), 1),
    ];
    let mut ctx = m.new_context(
        12,
        id,
        1,
        false,
        vec![partition("t", 2, 0)],
        &forget[..1],
        1,
    );
    let parts = ctx.partitions(|_| None);
    let names: Vec<i32> = parts.iter().map(|p| p.partition).collect();
    assert_eq!(names, vec![1, 2], "0 forgotten, 2 added at the end");
    ctx.generate(&m.cache, 1, &parts, &[quiet(0), quiet(0)], true);
    let forget = [forget[1].clone(), PartitionKey::Name("t".into(), 2)];
    let ctx = m.new_context(12, id, 2, false, Vec::new(), &forget, 2);
    assert!(matches!(ctx, FetchContext::Sessionless(_)));
    assert_eq!(m.cache.num_sessions(), 0);
}

#[test]
fn a_final_epoch_closes_the_session_without_a_new_one() {
    let m = manager();
    let id = full(&m, 1);
    let mut ctx = m.new_context(12, id, -1, false, vec![partition("t", 0, 0)], &[], 1);
    assert!(matches!(ctx, FetchContext::Sessionless(_)));
    assert_eq!(m.cache.num_sessions(), 0);
    let parts = ctx.partitions(|_| None);
    let g = ctx.generate(&m.cache, 1, &parts, &[quiet(0)], true);
    assert_eq!((g.session_id, g.respond), (0, vec![true]));
}

#[test]
fn topic_id_sessions_resolve_names_on_every_fetch() {
    let m = manager();
    let id = Uuid::from_u128(7);
    let mut p = partition("t", 0, 0);
    p.topic = None;
    p.topic_id = id;
    let mut ctx = m.new_context(13, 0, 0, true, vec![p], &[], 0);
    let parts = ctx.partitions(|_| None);
    let g = ctx.generate(&m.cache, 0, &parts, &[quiet(0)], true);
    let mut ctx = m.new_context(13, g.session_id, 1, true, Vec::new(), &[], 1);
    let parts = ctx.partitions(|u| (u == id).then(|| "t".to_string()));
    assert_eq!(parts[0].topic.as_deref(), Some("t"));
    // Deleted (and perhaps created again under another id): unknown again.
    ctx.generate(&m.cache, 1, &parts, &[quiet(0)], true);
    let mut ctx = m.new_context(13, g.session_id, 2, true, Vec::new(), &[], 2);
    assert_eq!(ctx.partitions(|_| None)[0].topic, None);
}
