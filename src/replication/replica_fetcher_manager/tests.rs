//! Replication between two in-process brokers: a follower's replica manager fetches through a
//! fake `LeaderEndPoint` that reads from the leader's replica manager as a follower's Fetch
//! would (its `fetch_messages`, replica id = the follower). Covered: byte-identical batches, the
//! follower's high watermark, the leader's high watermark over the ISR and the acks=all wait,
//! an out-of-range follower, removing a partition, shutdown, and partitions spread over
//! `num.replica.fetchers` fetchers by Kafka's `getFetcherId`, resized at runtime; truncation
//! (on fetch, and to the high watermark for a log without epochs) and the follower's epochs and
//! producer state in [`truncation`].

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Instant;

use crate::cluster::sync::lock;
use crate::cluster::{BrokerId, LeaderAndIsr, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use crate::protocol::record::compression::CompressionType;
use crate::replication::AppendParams;
use crate::replication::replica_manager::TempReplicaManager;
use crate::storage::log_config::LogConfig;
use crate::storage::log_reads::{EARLIEST_TIMESTAMP, FetchIsolation, LATEST_TIMESTAMP};

use super::super::leader_end_point::{
    FetchFuture, FetchPartition, FetchPartitionResult, LeaderEndPoint, LeaderEndPointError,
    LeaderEndPointFactory, OffsetFuture,
};
use super::super::partition::Partition;
use super::super::replica_fetcher_manager::{BrokerIdAndFetcherId, fetcher_id};
use super::super::replica_manager::{
    AppendEntry, FetchParams, FetchPartitionInfo, FetchResult, ProduceResult, ReplicaManager,
};

mod truncation;

const BOUND: Duration = Duration::from_secs(10);

struct Broker {
    _dir: tempfile::TempDir,
    rm: Arc<ReplicaManager>,
}

fn broker(id: BrokerId) -> Broker {
    let TempReplicaManager { dir, rm, .. } = TempReplicaManager::new(id, 1_700_000_000_000);
    Broker { _dir: dir, rm }
}

fn tp() -> TopicPartition {
    TopicPartition::new("t", 0)
}

fn leadership(leader: i32, leader_epoch: i32, isr: Vec<i32>) -> LeaderAndIsr {
    LeaderAndIsr {
        leader_epoch,
        ..LeaderAndIsr::new(leader, isr)
    }
}

fn host(b: &Broker, replicas: Vec<i32>, state: LeaderAndIsr) -> Arc<Partition> {
    b.rm.become_leader_or_follower(&tp(), None, replicas, state, LogConfig::default())
        .unwrap()
}

/// A batch of `n` records with distinct keys and values.
fn batch(n: usize, seed: u8) -> Bytes {
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    for i in 0..n {
        b.records.push(SimpleRecord::new(
            1_700_000_000_000 + i as i64,
            Some(vec![b'k', seed, i as u8]),
            Some(vec![seed; 10 + i]),
        ));
    }
    Bytes::from(b.build().unwrap())
}

fn produce(b: &Broker, acks: i16, records: Bytes) -> ProduceResult {
    b.rm.append_records(
        AppendParams::client(30_000, acks),
        vec![AppendEntry {
            topic_partition: tp(),
            records,
            verification_guard: None,
        }],
    )
}

fn produce_now(b: &Broker, records: Bytes) {
    let ProduceResult::Ready(answers) = produce(b, 1, records) else {
        panic!("acks=1 answers at once");
    };
    assert_eq!(answers[0].error_code, ErrorCode::None);
}

/// Every byte of the partition's log, from its start to its end.
fn log_bytes(p: &Partition) -> Vec<u8> {
    let log = lock(p.log());
    let read = log
        .read(
            log.log_start_offset(),
            usize::MAX >> 1,
            FetchIsolation::LogEnd,
            true,
        )
        .unwrap();
    read.records.read_to_vec().unwrap()
}

/// Polls `check` until it holds or the bound passes.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + BOUND;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A leader served from another in-process replica manager, as its Fetch handler would.
#[derive(Debug)]
struct FakeLeader {
    leader: Arc<ReplicaManager>,
    follower: BrokerId,
    fetches: Arc<AtomicUsize>,
}

impl FakeLeader {
    async fn serve(
        &self,
        partitions: &[FetchPartition],
    ) -> Result<Vec<(TopicPartition, FetchPartitionResult)>, LeaderEndPointError> {
        self.fetches.fetch_add(1, Ordering::SeqCst);
        let params = FetchParams {
            replica_id: self.follower,
            max_wait_ms: 50,
            min_bytes: 1,
            max_bytes: 10 << 20,
            isolation_level: 0,
            min_one_message: true,
            whole_batches: false,
            client_metadata: None,
        };
        let infos = partitions
            .iter()
            .map(|p| FetchPartitionInfo {
                topic_partition: p.topic_partition.clone(),
                fetch_offset: p.fetch_offset,
                current_leader_epoch: p.current_leader_epoch,
                last_fetched_epoch: p.last_fetched_epoch,
                log_start_offset: -1,
                partition_max_bytes: 1 << 20,
            })
            .collect();
        let reads = match self.leader.fetch_messages(params, infos) {
            FetchResult::Ready(reads) => reads,
            FetchResult::Delayed(wait) => wait.complete().await,
        };
        Ok(partitions
            .iter()
            .zip(reads)
            .map(|(p, read)| {
                let records = read
                    .records
                    .as_ref()
                    .map_or_else(Bytes::new, |r| Bytes::from(r.read_to_vec().unwrap()));
                (
                    p.topic_partition.clone(),
                    FetchPartitionResult {
                        error_code: read.error_code.code(),
                        high_watermark: read.high_watermark,
                        log_start_offset: read.log_start_offset,
                        records,
                        diverging_epoch: read.diverging_epoch,
                    },
                )
            })
            .collect())
    }

    fn offset(
        &self,
        tp: &TopicPartition,
        epoch: i32,
        timestamp: i64,
    ) -> Result<i64, LeaderEndPointError> {
        let partition = self
            .leader
            .get_partition(tp)
            .ok_or(LeaderEndPointError::Partition {
                broker: self.leader.local_broker_id(),
                topic_partition: tp.clone(),
                error_code: ErrorCode::UnknownTopicOrPartition.code(),
            })?;
        let found = partition
            .fetch_offset_for_timestamp(timestamp, None, epoch)
            .map_err(|e| LeaderEndPointError::Partition {
                broker: self.leader.local_broker_id(),
                topic_partition: tp.clone(),
                error_code: e.code(),
            })?;
        Ok(found.map_or(-1, |t| t.offset))
    }
}

impl LeaderEndPoint for FakeLeader {
    fn broker_id(&self) -> BrokerId {
        self.leader.local_broker_id()
    }

    fn address(&self) -> String {
        format!("in-process:{}", self.leader.local_broker_id())
    }

    fn fetch<'a>(&'a self, partitions: &'a [FetchPartition]) -> FetchFuture<'a> {
        Box::pin(self.serve(partitions))
    }

    fn fetch_earliest_offset<'a>(&'a self, tp: &'a TopicPartition, epoch: i32) -> OffsetFuture<'a> {
        Box::pin(std::future::ready(self.offset(
            tp,
            epoch,
            EARLIEST_TIMESTAMP,
        )))
    }

    fn fetch_latest_offset<'a>(&'a self, tp: &'a TopicPartition, epoch: i32) -> OffsetFuture<'a> {
        Box::pin(std::future::ready(self.offset(tp, epoch, LATEST_TIMESTAMP)))
    }
}

/// The brokers a follower can reach.
#[derive(Debug)]
struct FakeCluster {
    follower: BrokerId,
    leaders: HashMap<BrokerId, Arc<ReplicaManager>>,
    fetches: Arc<AtomicUsize>,
}

impl LeaderEndPointFactory for FakeCluster {
    fn end_point(&self, broker: BrokerId, _fetcher_id: i32) -> Option<Arc<dyn LeaderEndPoint>> {
        let leader = self.leaders.get(&broker)?;
        Some(Arc::new(FakeLeader {
            leader: Arc::clone(leader),
            follower: self.follower,
            fetches: Arc::clone(&self.fetches),
        }))
    }
}

/// Lets `follower` reach `leaders`; returns the count of fetches served.
fn connect(follower: &Broker, leaders: &[&Broker]) -> Arc<AtomicUsize> {
    let fetches = Arc::new(AtomicUsize::new(0));
    follower.rm.set_leader_end_points(Arc::new(FakeCluster {
        follower: follower.rm.local_broker_id(),
        leaders: leaders
            .iter()
            .map(|b| (b.rm.local_broker_id(), Arc::clone(&b.rm)))
            .collect(),
        fetches: Arc::clone(&fetches),
    }));
    fetches
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leaders_batches_arrive_byte_identical_and_the_high_watermarks_follow() {
    let (b0, b1) = (broker(0), broker(1));
    let leader = host(&b0, vec![0, 1], leadership(0, 1, vec![0, 1]));
    connect(&b1, &[&b0]);
    let follower = host(&b1, vec![0, 1], leadership(0, 1, vec![0, 1]));
    assert_eq!(
        b1.rm.replica_fetcher_manager().partitions_fetched_from(0),
        vec![tp()]
    );
    for seed in 0..3 {
        produce_now(&b0, batch(3, seed));
    }
    assert_eq!(leader.offsets().log_end_offset, 9);
    eventually("the follower's high watermark reaches the log end", || {
        follower.offsets().high_watermark == 9
    })
    .await;
    assert_eq!(
        leader.offsets().high_watermark,
        9,
        "the leader's moved first"
    );
    assert_eq!(follower.offsets().log_end_offset, 9);
    assert_eq!(
        log_bytes(&follower),
        log_bytes(&leader),
        "batches copied unchanged"
    );
    assert_eq!(leader.follower_log_end_offset(1), Some(9));
    let fetchers = b1.rm.replica_fetcher_manager();
    eventually("the follower's lag reads 0 once caught up", || {
        fetchers.max_lag() == 0
    })
    .await;
    fetchers.tick_fetch_rates();
    assert!(
        fetchers.min_fetch_rate() > 0.0,
        "the rounds so far count at the first tick"
    );
    b1.rm.begin_shutdown();
    b1.rm.replica_fetcher_manager().shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acks_all_produce_completes_only_after_the_follower_fetched_past_it() {
    let (b0, b1) = (broker(0), broker(1));
    let leader = host(&b0, vec![0, 1], leadership(0, 1, vec![0, 1]));
    let ProduceResult::Delayed(wait) = produce(&b0, -1, batch(2, 7)) else {
        panic!("the follower in the ISR has not fetched: acks=-1 waits");
    };
    let waiting = tokio::spawn(wait.complete());
    tokio::task::yield_now().await;
    assert!(!waiting.is_finished());
    assert_eq!(leader.offsets().high_watermark, 0);
    connect(&b1, &[&b0]);
    let follower = host(&b1, vec![0, 1], leadership(0, 1, vec![0, 1]));
    let answers = tokio::time::timeout(BOUND, waiting).await.unwrap().unwrap();
    assert_eq!(answers[0].error_code, ErrorCode::None);
    // The leader saw the follower fetch from past the batch before it acknowledged.
    assert!(leader.follower_log_end_offset(1).unwrap() >= 2);
    assert!(follower.offsets().log_end_offset >= 2);
    assert_eq!(leader.offsets().high_watermark, 2);
    b1.rm.begin_shutdown();
    b1.rm.replica_fetcher_manager().shutdown().await;
}

#[test]
fn the_leaders_high_watermark_is_the_smallest_log_end_of_the_isr() {
    let b0 = broker(0);
    let leader = host(&b0, vec![0, 1, 2], leadership(0, 1, vec![0, 1]));
    produce_now(&b0, batch(4, 1));
    assert_eq!(
        leader.offsets().high_watermark,
        0,
        "follower 1 has not fetched"
    );
    // Follower 2 is outside the ISR: it does not hold the high watermark back, nor move it.
    leader.update_follower_fetch_state(2, 0, 4, 0).unwrap();
    assert_eq!(leader.offsets().high_watermark, 0);
    leader.update_follower_fetch_state(1, 3, 4, 0).unwrap();
    assert_eq!(leader.offsets().high_watermark, 3);
    leader.update_follower_fetch_state(1, 4, 4, 0).unwrap();
    assert_eq!(leader.offsets().high_watermark, 4);
    // A replica not assigned is refused.
    let refused = leader.update_follower_fetch_state(5, 4, 4, 0).unwrap_err();
    assert_eq!(refused.error_code(), ErrorCode::NotLeaderOrFollower);
    // Re-elected at a new epoch: the followers' positions are kept.
    leader.update_leader_and_isr(vec![0, 1, 2], leadership(0, 2, vec![0, 1]));
    assert_eq!(leader.follower_log_end_offset(1), Some(4));
    // A broker newly leader knows nothing of its followers until they fetch.
    leader.update_leader_and_isr(vec![0, 1, 2], leadership(1, 3, vec![0, 1]));
    leader.update_leader_and_isr(vec![0, 1, 2], leadership(0, 4, vec![0, 1]));
    assert_eq!(leader.follower_log_end_offset(1), None);
}

#[tokio::test]
async fn a_follower_of_an_unreachable_leader_is_left_alone() {
    let b0 = broker(0);
    connect(&b0, &[]);
    let partition = host(&b0, vec![0, 1], leadership(0, 1, vec![0]));
    produce_now(&b0, batch(3, 3));
    host(&b0, vec![0, 1], leadership(1, 2, vec![1]));
    assert_eq!(partition.offsets().log_end_offset, 3, "not truncated");
    assert!(b0.rm.replica_fetcher_manager().leaders().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_ahead_of_its_leader_truncates_to_the_leaders_log_end() {
    let (b0, b1) = (broker(0), broker(1));
    // Broker 1 leads with 2 records; broker 0 has 4 of its own below its high watermark (an
    // unclean election).
    host(&b1, vec![0, 1], leadership(1, 3, vec![1]));
    produce_now(&b1, batch(2, 4));
    let partition = host(&b0, vec![0, 1], leadership(0, 1, vec![0]));
    produce_now(&b0, batch(4, 5));
    assert_eq!(partition.offsets().high_watermark, 4);
    connect(&b0, &[&b1]);
    host(&b0, vec![0, 1], leadership(1, 3, vec![1]));
    eventually("the follower is truncated to the leader's log end", || {
        partition.offsets().log_end_offset == 2
    })
    .await;
    b0.rm.begin_shutdown();
    b0.rm.replica_fetcher_manager().shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn becoming_leader_or_stopping_the_replica_ends_its_fetching() {
    let (b0, b1) = (broker(0), broker(1));
    let leader = host(&b0, vec![0, 1], leadership(0, 1, vec![0, 1]));
    let fetches = connect(&b1, &[&b0]);
    let follower = host(&b1, vec![0, 1], leadership(0, 1, vec![0, 1]));
    produce_now(&b0, batch(1, 6));
    eventually("the follower has the record", || {
        follower.offsets().log_end_offset == 1
    })
    .await;
    // Leading at a newer epoch: the partition leaves the fetcher, whose task ends.
    host(&b1, vec![0, 1], leadership(1, 2, vec![0, 1]));
    let manager = b1.rm.replica_fetcher_manager();
    assert!(manager.leaders().is_empty());
    eventually("the idle fetcher's task ends", || {
        manager.running_tasks() == 0
    })
    .await;
    let served = fetches.load(Ordering::SeqCst);
    produce_now(&b0, batch(1, 7));
    assert_eq!(leader.offsets().log_end_offset, 2);
    assert_eq!(follower.offsets().log_end_offset, 1, "not fetched any more");
    assert_eq!(fetches.load(Ordering::SeqCst), served);

    // Following again, then StopReplica: fetching ends as well. Broker 0 leads again at epoch
    // 3; broker 1 still claims its epoch 2 (no records in it), which broker 0 never had: the
    // diverging answer makes it drop that epoch, and it fetches on.
    host(&b0, vec![0, 1], leadership(0, 3, vec![0, 1]));
    host(&b1, vec![0, 1], leadership(0, 3, vec![0, 1]));
    eventually("the follower caught up", || {
        follower.offsets().log_end_offset == 2
    })
    .await;
    b1.rm.stop_replica(&tp(), false).unwrap();
    assert!(manager.leaders().is_empty());
    eventually("the fetcher's task ends", || manager.running_tasks() == 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_the_fetcher_tasks() {
    let (b0, b1) = (broker(0), broker(1));
    host(&b0, vec![0, 1], leadership(0, 1, vec![0, 1]));
    let fetches = connect(&b1, &[&b0]);
    host(&b1, vec![0, 1], leadership(0, 1, vec![0, 1]));
    eventually("the fetcher is fetching", || {
        fetches.load(Ordering::SeqCst) > 0
    })
    .await;
    let manager = b1.rm.replica_fetcher_manager();
    assert_eq!(manager.running_tasks(), 1);
    b1.rm.begin_shutdown();
    tokio::time::timeout(BOUND, manager.shutdown())
        .await
        .unwrap();
    assert_eq!(manager.running_tasks(), 0);
    assert!(manager.leaders().is_empty());
}

#[test]
fn fetcher_ids_are_kafkas_get_fetcher_id() {
    let id = |topic: &str, partition, n| fetcher_id(&TopicPartition::new(topic, partition), n);
    // "t".hashCode = 116; 31 * 116 + p = 3596 + p.
    assert_eq!(id("t", 0, 3), 2, "3596 % 3");
    assert_eq!(id("t", 1, 3), 0, "3597 % 3");
    assert_eq!(id("t", 5, 4), 1, "3601 % 4");
    // "topic".hashCode = ((((116*31+111)*31+112)*31+105)*31+99) = 110546223; 31 times that
    // is 3426932913, which wraps to -868034383 as an int; abs + p then % n.
    assert_eq!(id("topic", 0, 4), 3, "868034383 % 4");
    assert_eq!(id("topic", 0, 3), 1, "868034383 % 3");
    assert_eq!(id("topic", 1, 4), 2, "|-868034382| % 4");
    // "polygenelubricants".hashCode is Integer.MIN_VALUE; 31 * MIN_VALUE wraps to MIN_VALUE,
    // which Utils.abs maps to 0 (Math.abs would leave it negative).
    assert_eq!(id("polygenelubricants", 0, 3), 0);
    assert_eq!(
        id("polygenelubricants", 1, 3),
        1,
        "|MIN + 1| = 2147483647, % 3"
    );
    // One fetcher: always 0.
    for p in 0..10 {
        assert_eq!(id("topic", p, 1), 0);
    }
}

fn host_partition(b: &Broker, tp: &TopicPartition, state: LeaderAndIsr) -> Arc<Partition> {
    b.rm.become_leader_or_follower(tp, None, vec![0, 1], state, LogConfig::default())
        .unwrap()
}

fn produce_to(b: &Broker, tp: &TopicPartition, records: Bytes) {
    let ProduceResult::Ready(answers) = b.rm.append_records(
        AppendParams::client(30_000, 1),
        vec![AppendEntry {
            topic_partition: tp.clone(),
            records,
            verification_guard: None,
        }],
    ) else {
        panic!("acks=1 answers at once");
    };
    assert_eq!(answers[0].error_code, ErrorCode::None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitions_of_one_leader_spread_over_the_fetchers_and_follow_a_resize() {
    let (b0, b1) = (broker(0), broker(1));
    let tps: Vec<TopicPartition> = (0..6).map(|p| TopicPartition::new("t", p)).collect();
    let leaders: Vec<_> = tps
        .iter()
        .map(|tp| host_partition(&b0, tp, leadership(0, 1, vec![0, 1])))
        .collect();
    connect(&b1, &[&b0]);
    let manager = b1.rm.replica_fetcher_manager();
    manager.resize_thread_pool(3);
    assert_eq!(manager.num_fetchers_per_broker(), 3);
    let followers: Vec<_> = tps
        .iter()
        .map(|tp| host_partition(&b1, tp, leadership(0, 1, vec![0, 1])))
        .collect();
    let fetcher = |id| BrokerIdAndFetcherId {
        broker_id: 0,
        fetcher_id: id,
    };
    // t-0..t-5 hash to 2, 0, 1, 2, 0, 1 with three fetchers.
    for (tp, want) in tps.iter().zip([2, 0, 1, 2, 0, 1]) {
        assert_eq!(manager.fetcher_of(tp), Some(fetcher(want)), "{tp}");
    }
    assert_eq!(manager.fetchers(), vec![fetcher(0), fetcher(1), fetcher(2)]);
    assert_eq!(manager.running_tasks(), 3);
    assert_eq!(manager.partitions_fetched_from(0), tps);
    let caught_up = |want: i64| followers.iter().all(|f| f.offsets().high_watermark == want);
    for (i, tp) in tps.iter().enumerate() {
        produce_to(&b0, tp, batch(2, u8::try_from(i).unwrap()));
    }
    eventually("every partition replicated by its fetcher", || caught_up(2)).await;

    // Down to two: every partition re-hashed (t-p: 3596 + p is even for even p), the third
    // fetcher stops, replication goes on.
    manager.resize_thread_pool(2);
    for (tp, want) in tps.iter().zip([0, 1, 0, 1, 0, 1]) {
        assert_eq!(manager.fetcher_of(tp), Some(fetcher(want)), "{tp}");
    }
    assert_eq!(manager.fetchers(), vec![fetcher(0), fetcher(1)]);
    eventually("the third fetcher's task ends", || {
        manager.running_tasks() == 2
    })
    .await;
    for (i, tp) in tps.iter().enumerate() {
        produce_to(&b0, tp, batch(1, u8::try_from(10 + i).unwrap()));
    }
    eventually("replicated after the resize", || caught_up(3)).await;
    for (leader, follower) in leaders.iter().zip(&followers) {
        assert_eq!(log_bytes(follower), log_bytes(leader));
    }

    // Up to four from one: one fetcher, then t-p on (3596 + p) % 4.
    manager.resize_thread_pool(1);
    assert_eq!(manager.fetchers(), vec![fetcher(0)]);
    manager.resize_thread_pool(4);
    for (tp, want) in tps.iter().zip([0, 1, 2, 3, 0, 1]) {
        assert_eq!(manager.fetcher_of(tp), Some(fetcher(want)), "{tp}");
    }
    produce_to(&b0, &tps[3], batch(1, 30));
    eventually("fetcher 3 replicates t-3", || {
        followers[3].offsets().high_watermark == 4
    })
    .await;
    b1.rm.begin_shutdown();
    manager.shutdown().await;
    assert_eq!(manager.running_tasks(), 0);
}
