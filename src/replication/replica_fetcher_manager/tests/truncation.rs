//! Truncation between two in-process brokers: a follower whose log diverged from its leader's
//! truncates on the leader's diverging answers (KIP-279's loop included) and ends up with the
//! leader's bytes; becoming follower truncates only a log without epochs (to its high
//! watermark); a follower's leader-epoch checkpoint and producer state come from the batches
//! it replicates, so as the next leader it answers a producer's retry as a duplicate.

use super::*;
use crate::replication::partition::FollowerRecords;
use crate::storage::leader_epoch_cache::{EpochEntry, LeaderEpochFileCache};

fn epochs(p: &Partition) -> Vec<(i32, i64)> {
    lock(p.log())
        .leader_epoch_cache()
        .entries()
        .iter()
        .map(|e| (e.epoch, e.start_offset))
        .collect()
}

/// The entries of the partition's `leader-epoch-checkpoint` file.
fn checkpoint(p: &Partition) -> Vec<EpochEntry> {
    let path = lock(p.log()).dir().join("leader-epoch-checkpoint");
    LeaderEpochFileCache::read_entries(&path).unwrap()
}

fn entries(list: &[(i32, i64)]) -> Vec<EpochEntry> {
    list.iter()
        .map(|&(epoch, start_offset)| EpochEntry {
            epoch,
            start_offset,
        })
        .collect()
}

/// Makes `b` the leader at `epoch` and appends `count` one-record batches (seeds from `seed`).
fn lead_and_produce(b: &Broker, replicas: Vec<i32>, epoch: i32, seed: u8, count: u8) {
    let id = b.rm.local_broker_id();
    host(b, replicas, leadership(id, epoch, vec![id]));
    for i in 0..count {
        produce_now(b, batch(1, seed + i));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_diverged_follower_truncates_where_the_leader_says_and_takes_its_batches() {
    let (b0, b1) = (broker(0), broker(1));
    // Leader 0: epoch 0 over 0..8, epoch 1 over 8..12, epoch 3 over 12..15.
    lead_and_produce(&b0, vec![0, 1], 0, 0, 8);
    lead_and_produce(&b0, vec![0, 1], 1, 100, 4);
    lead_and_produce(&b0, vec![0, 1], 3, 150, 3);
    let leader = b0.rm.get_partition(&tp()).unwrap();
    assert_eq!(epochs(&leader), vec![(0, 0), (1, 8), (3, 12)]);
    // Broker 1 shares the first 8 records, then wrote epoch 0 up to 10 and epoch 2 over 10..15
    // on its own (an unclean history): it never had the leader's epoch 1.
    lead_and_produce(&b1, vec![0, 1], 0, 0, 10);
    lead_and_produce(&b1, vec![0, 1], 2, 200, 5);
    let follower = b1.rm.get_partition(&tp()).unwrap();
    assert_eq!(epochs(&follower), vec![(0, 0), (2, 10)]);
    assert_eq!(follower.offsets().log_end_offset, 15);

    connect(&b1, &[&b0]);
    host(&b1, vec![0, 1], leadership(0, 3, vec![0, 1]));
    // Its fetch at 15 with epoch 2: the leader's largest epoch <= 2 is 1, ending at 12; broker 1
    // has no epoch 1, so it goes back to the end of its epoch 0 (10) and asks again with epoch
    // 0, which ends at 8 on the leader: truncated to 8, it fetches the leader's batches.
    eventually("the follower has the leader's log", || {
        follower.offsets().log_end_offset == 15 && log_bytes(&follower) == log_bytes(&leader)
    })
    .await;
    assert_eq!(epochs(&follower), vec![(0, 0), (1, 8), (3, 12)]);
    assert_eq!(
        checkpoint(&follower),
        entries(&[(0, 0), (1, 8), (3, 12)]),
        "the checkpoint file follows"
    );
    // Its next fetch, from 15, is the first the leader records since the truncation.
    eventually("the leader records the follower's log end", || {
        leader.follower_log_end_offset(1) == Some(15)
    })
    .await;
    b1.rm.begin_shutdown();
    b1.rm.replica_fetcher_manager().shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn becoming_follower_leaves_a_log_with_epochs_to_the_fetch() {
    let (b0, b1) = (broker(0), broker(1));
    // Broker 1 does not host the partition: its answers are errors, so nothing is fetched.
    connect(&b0, &[&b1]);
    let partition = host(&b0, vec![0, 1], leadership(0, 1, vec![0, 1]));
    for seed in 0..5 {
        produce_now(&b0, batch(1, seed));
    }
    partition.update_follower_fetch_state(1, 2, 5, 0).unwrap();
    assert_eq!(partition.offsets().high_watermark, 2);
    host(&b0, vec![0, 1], leadership(1, 2, vec![0, 1]));
    assert_eq!(
        partition.offsets().log_end_offset,
        5,
        "not truncated to the high watermark: the leader's diverging answer decides"
    );
    assert_eq!(
        b0.rm.replica_fetcher_manager().partitions_fetched_from(1),
        vec![tp()]
    );
    b0.rm.begin_shutdown();
    b0.rm.replica_fetcher_manager().shutdown().await;
}

/// `n` one-record batches from `base` on, without a leader epoch (-1), as a log of the old
/// message format holds them.
fn batches_without_epoch(base: i64, n: i64) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let mut b = RecordBatchBuilder::new(CompressionType::None);
        b.base_offset = base + i;
        b.records
            .push(SimpleRecord::new(1_700_000_000_000, None, Some(vec![7; 4])));
        out.extend_from_slice(&b.build().unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_without_epochs_truncates_to_its_high_watermark_on_a_new_leader_epoch() {
    let (b0, b1) = (broker(0), broker(1));
    connect(&b0, &[&b1]);
    let partition = host(&b0, vec![0, 1], leadership(1, 1, vec![0, 1]));
    let appended = partition
        .append_records_to_follower(
            FollowerRecords::Bytes(&batches_without_epoch(0, 5)),
            2,
            0,
            1_700_000_000_000,
        )
        .unwrap();
    assert_eq!((appended.log_end_offset, appended.high_watermark), (5, 2));
    assert_eq!(partition.latest_epoch(), None);
    // The same epoch again is no new leader epoch: nothing happens.
    host(&b0, vec![0, 1], leadership(1, 1, vec![0, 1]));
    assert_eq!(partition.offsets().log_end_offset, 5);
    // A new epoch: Kafka's Truncating state without epochs truncates to the high watermark.
    host(&b0, vec![0, 1], leadership(1, 2, vec![0, 1]));
    assert_eq!(partition.offsets().log_end_offset, 2);
    b0.rm.begin_shutdown();
    b0.rm.replica_fetcher_manager().shutdown().await;
}

/// An idempotent producer's batch: producer 4000, epoch 0, sequences from `base_sequence`.
fn idempotent_batch(base_sequence: i32, values: &[&[u8]]) -> Bytes {
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.producer_id = 4000;
    b.producer_epoch = 0;
    b.base_sequence = base_sequence;
    b.records = values
        .iter()
        .map(|v| SimpleRecord::new(1_700_000_000_000, None, Some(v.to_vec())))
        .collect();
    Bytes::from(b.build().unwrap())
}

fn produced_base_offset(b: &Broker, records: Bytes) -> i64 {
    let ProduceResult::Ready(answers) = produce(b, 1, records) else {
        panic!("acks=1 answers at once");
    };
    assert_eq!(answers[0].error_code, ErrorCode::None, "{answers:?}");
    answers[0].base_offset
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_made_leader_answers_a_retry_of_a_replicated_batch_as_a_duplicate() {
    let (b0, b1) = (broker(0), broker(1));
    host(&b0, vec![0, 1], leadership(0, 1, vec![0, 1]));
    connect(&b1, &[&b0]);
    let follower = host(&b1, vec![0, 1], leadership(0, 1, vec![0, 1]));
    assert_eq!(produced_base_offset(&b0, batch(2, 1)), 0);
    assert_eq!(
        produced_base_offset(&b0, idempotent_batch(0, &[b"a", b"b"])),
        2
    );
    let last = idempotent_batch(2, &[b"c"]);
    assert_eq!(produced_base_offset(&b0, last.clone()), 4);
    eventually("the follower has every batch", || {
        follower.offsets().log_end_offset == 5
    })
    .await;
    // Broker 0 is gone; broker 1 leads at epoch 2.
    host(&b1, vec![0, 1], leadership(1, 2, vec![1]));
    assert_eq!(
        produced_base_offset(&b1, last),
        4,
        "the retry gets the original offset"
    );
    assert_eq!(follower.offsets().log_end_offset, 5, "nothing appended");
    // The producer's next sequence is accepted after it.
    assert_eq!(produced_base_offset(&b1, idempotent_batch(3, &[b"d"])), 5);
    let ProduceResult::Ready(answers) = produce(&b1, 1, idempotent_batch(5, &[b"f"])) else {
        panic!("acks=1 answers at once");
    };
    assert_eq!(
        answers[0].error_code,
        ErrorCode::OutOfOrderSequenceNumber,
        "the follower's state knew the producer's sequence"
    );
    b1.rm.begin_shutdown();
    b1.rm.replica_fetcher_manager().shutdown().await;
}
