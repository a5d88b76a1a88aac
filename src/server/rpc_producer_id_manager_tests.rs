//! Tests of the RPC producer-id manager against a fake controller: the prefetch at 90%, retries
//! after NOT_CONTROLLER and unreachable controllers, COORDINATOR_LOAD_IN_PROGRESS while no block
//! is there, and ids unique across two brokers' managers sharing one controller.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::protocol::messages::allocate_producer_ids_response::AllocateProducerIdsResponse;
use crate::server::broker_to_controller_channel::{BrokerToControllerError, ControllerFuture};

use super::*;

/// What the fake answers a request with, before it falls back to handing out blocks.
enum Scripted {
    Code(ErrorCode),
    Unreachable,
    Block { start: i64, len: i32 },
}

/// A controller handing out consecutive blocks of `len` ids, after a scripted prefix; it
/// records the epochs it was sent. `hold` makes it answer nothing until released.
#[derive(Debug)]
struct FakeController {
    len: i32,
    inner: Mutex<FakeState>,
    requests: AtomicUsize,
    hold: tokio::sync::Semaphore,
}

#[derive(Debug, Default)]
struct FakeState {
    next_start: i64,
    script: VecDeque<ScriptedAnswer>,
    epochs: Vec<i64>,
}

#[derive(Debug)]
struct ScriptedAnswer(Result<(i16, i64, i32), ()>);

impl FakeController {
    fn new(len: i32, script: Vec<Scripted>) -> Arc<Self> {
        let script = script
            .into_iter()
            .map(|s| {
                ScriptedAnswer(match s {
                    Scripted::Code(code) => Ok((code.code(), 0, 0)),
                    Scripted::Unreachable => Err(()),
                    Scripted::Block { start, len } => Ok((0, start, len)),
                })
            })
            .collect();
        Arc::new(FakeController {
            len,
            inner: Mutex::new(FakeState {
                script,
                ..FakeState::default()
            }),
            requests: AtomicUsize::new(0),
            hold: tokio::sync::Semaphore::new(HOLD as usize),
        })
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

impl BrokerToControllerChannel for FakeController {
    fn allocate_producer_ids(&self, request: AllocateProducerIdsRequest) -> ControllerFuture<'_> {
        Box::pin(async move {
            self.requests.fetch_add(1, Ordering::SeqCst);
            let _permit = self.hold.acquire().await;
            let mut s = lock(&self.inner);
            s.epochs.push(request.broker_epoch);
            let (error_code, producer_id_start, producer_id_len) = match s.script.pop_front() {
                Some(ScriptedAnswer(Ok(answer))) => answer,
                Some(ScriptedAnswer(Err(()))) => {
                    return Err(BrokerToControllerError::NoController);
                }
                None => {
                    let start = s.next_start;
                    s.next_start += i64::from(self.len);
                    (0, start, self.len)
                }
            };
            Ok(AllocateProducerIdsResponse {
                error_code,
                producer_id_start,
                producer_id_len,
                ..AllocateProducerIdsResponse::default()
            })
        })
    }
}

fn manager(
    broker_id: BrokerId,
    controller: &Arc<FakeController>,
    tasks: &TaskTracker,
    stop: &CancellationToken,
) -> RpcProducerIdManager {
    let epochs = Arc::new(BrokerEpochManager::default());
    epochs.set_broker_epoch(100 + i64::from(broker_id));
    RpcProducerIdManager::new(
        broker_id,
        epochs,
        Arc::clone(controller) as Arc<dyn BrokerToControllerChannel>,
        tasks.clone(),
        stop.clone(),
    )
}

/// Lets the request task run (the tests' runtime is single-threaded with a paused clock).
async fn settle() {
    tokio::time::sleep(Duration::from_millis(1)).await;
}

/// The fake's permits: all of them taken, it answers nothing.
const HOLD: u32 = 1 << 20;

const WAIT: Duration = Duration::from_secs(5);

#[tokio::test(start_paused = true)]
async fn the_next_block_is_fetched_at_ninety_percent_so_ids_run_on_without_a_wait() {
    let controller = FakeController::new(1000, Vec::new());
    let (tasks, stop) = (TaskTracker::new(), CancellationToken::new());
    let m = manager(1, &controller, &tasks, &stop);
    assert!(m.startup(WAIT).await);
    assert_eq!(controller.requests(), 1);
    for expected in 0..900 {
        assert_eq!(m.generate_producer_id(), Ok(expected));
    }
    settle().await;
    assert_eq!(controller.requests(), 1, "no request before the 90% mark");
    // Id 900 is the 90% mark of 0..1000: it asks for the next block.
    assert_eq!(m.generate_producer_id(), Ok(900));
    settle().await;
    assert_eq!(controller.requests(), 2);
    for expected in 901..1900 {
        assert_eq!(m.generate_producer_id(), Ok(expected));
    }
    // Only one next block at a time: 1900 (90% of the second block) asks for the third.
    settle().await;
    assert_eq!(controller.requests(), 2);
    assert_eq!(m.generate_producer_id(), Ok(1900));
    settle().await;
    assert_eq!(controller.requests(), 3);
    assert_eq!(lock(&controller.inner).epochs, vec![101, 101, 101]);
    stop.cancel();
}

#[tokio::test(start_paused = true)]
async fn not_controller_and_an_unreachable_controller_are_retried_with_backoff() {
    let controller = FakeController::new(
        10,
        vec![
            Scripted::Code(ErrorCode::NotController),
            Scripted::Unreachable,
            Scripted::Code(ErrorCode::StaleBrokerEpoch),
        ],
    );
    let (tasks, stop) = (TaskTracker::new(), CancellationToken::new());
    let m = manager(2, &controller, &tasks, &stop);
    assert_eq!(m.generate_producer_id(), Err(WaitingForBlock));
    assert_eq!(
        WaitingForBlock.error_code(),
        ErrorCode::CoordinatorLoadInProgress
    );
    let started = tokio::time::Instant::now();
    assert!(m.startup(WAIT).await);
    // Three failures: 50 + 100 + 200 ms of backoff before the fourth request.
    assert_eq!(controller.requests(), 4);
    assert!(started.elapsed() >= Duration::from_millis(350));
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(m.generate_producer_id(), Ok(0));
    stop.cancel();
}

#[tokio::test(start_paused = true)]
async fn a_used_up_block_answers_load_in_progress_with_one_request_in_flight() {
    let controller = FakeController::new(10, Vec::new());
    let (tasks, stop) = (TaskTracker::new(), CancellationToken::new());
    let m = manager(1, &controller, &tasks, &stop);
    assert!(m.startup(WAIT).await);
    // The controller stops answering; the prefetch at id 9 stays in flight.
    let held = controller.hold.acquire_many(HOLD).await.unwrap();
    for expected in 0..10 {
        assert_eq!(m.generate_producer_id(), Ok(expected));
    }
    for _ in 0..5 {
        assert_eq!(m.generate_producer_id(), Err(WaitingForBlock));
        settle().await;
    }
    assert_eq!(
        controller.requests(),
        2,
        "one request in flight, not one per call"
    );
    drop(held);
    settle().await;
    assert_eq!(m.generate_producer_id(), Ok(10));
    stop.cancel();
    tasks.close();
    tokio::time::timeout(WAIT, tasks.wait()).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn an_overlapping_or_empty_block_is_refused_and_asked_for_again() {
    let controller = FakeController::new(
        10,
        vec![
            Scripted::Block { start: 0, len: 10 },
            // Overlaps the current block; then empty; then negative.
            Scripted::Block { start: 5, len: 10 },
            Scripted::Block { start: 10, len: 0 },
            Scripted::Block {
                start: -20,
                len: 10,
            },
            Scripted::Block { start: 10, len: 10 },
        ],
    );
    let (tasks, stop) = (TaskTracker::new(), CancellationToken::new());
    let m = manager(1, &controller, &tasks, &stop);
    assert!(m.startup(WAIT).await);
    let mut ids = Vec::new();
    while ids.len() < 20 {
        match m.generate_producer_id() {
            Ok(id) => ids.push(id),
            Err(WaitingForBlock) => settle().await,
        }
    }
    assert_eq!(ids, (0..20).collect::<Vec<_>>());
    assert_eq!(controller.requests(), 5);
    stop.cancel();
}

#[tokio::test(start_paused = true)]
async fn two_brokers_sharing_a_controller_never_get_the_same_id() {
    let controller = FakeController::new(100, Vec::new());
    let (tasks, stop) = (TaskTracker::new(), CancellationToken::new());
    let a = manager(1, &controller, &tasks, &stop);
    let b = manager(2, &controller, &tasks, &stop);
    let mut seen = HashSet::new();
    let mut waits = 0;
    for turn in 0..5000 {
        let m = if turn % 3 == 0 { &a } else { &b };
        match m.generate_producer_id() {
            Ok(id) => assert!(seen.insert(id), "{id} handed out twice"),
            Err(WaitingForBlock) => waits += 1,
        }
        if turn % 7 == 0 {
            settle().await;
        }
    }
    assert!(seen.len() > 4000, "{} ids, {waits} waits", seen.len());
    stop.cancel();
    tasks.close();
    tokio::time::timeout(WAIT, tasks.wait()).await.unwrap();
}
