//! Producer ids for InitProducerId (Kafka's `RPCProducerIdManager`, which ZooKeeper-mode brokers
//! use from IBP 3.0-IV0): the broker gets blocks of ids from the active controller with
//! AllocateProducerIds (its broker id and broker epoch) and hands them out one by one. The
//! controller claims each block in `/latest_producer_id_block` (`zk_producer_id_manager.rs`), so
//! ids are unique across brokers and restarts. A single-node broker takes the same path: it is
//! its own controller and is answered in process.
//!
//! As in Kafka, handing out an id never waits on the controller. When the id at 90% of the
//! current block is handed out, the next block is requested; when the current block is used up
//! and the next has not arrived, [`RpcProducerIdManager::generate_producer_id`] fails at once
//! with [`WaitingForBlock`], which InitProducerId answers as COORDINATOR_LOAD_IN_PROGRESS (what
//! Kafka 3.9 answers: retriable for every client, where REQUEST_TIMED_OUT is fatal for old ones),
//! and requests the block if no request is in flight.
//!
//! At most one request is in flight, and there is at most one next block. The request runs on a
//! tracked task that retries until the controller hands out a block or the broker stops: an
//! error code (NOT_CONTROLLER, STALE_BROKER_EPOCH, BROKER_ID_NOT_REGISTERED, ...) or an
//! unreachable controller waits out a backoff (50 ms, Kafka's `RETRY_BACKOFF_MS`, doubling up to
//! 1 s) and sends again, the channel looking the controller up afresh and the broker epoch read
//! afresh. A block is accepted only if it is well formed and lies wholly above the current block
//! (Kafka's `sanityCheckResponse`), so no id is handed out twice.
//!
//! Lock order: the state's std mutex is held only for the few field updates of one call, never
//! across an `.await`, and no other lock is taken under it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::BrokerId;
use crate::cluster::sync::lock;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::allocate_producer_ids_request::AllocateProducerIdsRequest;

use super::broker_epoch_manager::BrokerEpochManager;
use super::broker_to_controller_channel::BrokerToControllerChannel;

/// The first pause after a failed request (Kafka's `RPCProducerIdManager.RETRY_BACKOFF_MS`)...
const RETRY_BACKOFF_MIN: Duration = Duration::from_millis(50);
/// ...doubling per consecutive failure up to this.
const RETRY_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// No id can be handed out until the next block arrives from the controller (Kafka's
/// "Producer ID block is full. Waiting for next block"): COORDINATOR_LOAD_IN_PROGRESS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("producer id block is full; waiting for the next block from the controller")]
pub struct WaitingForBlock;

impl WaitingForBlock {
    pub fn error_code(self) -> ErrorCode {
        ErrorCode::CoordinatorLoadInProgress
    }
}

/// A block of ids, `first..first + size`, of which `next..` are still free (Kafka's
/// `ProducerIdsBlock`). Invariant: `first <= next <= first + size`, and `first + size` does not
/// overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IdsBlock {
    first: i64,
    size: i64,
    next: i64,
}

impl IdsBlock {
    /// The block before any arrived: nothing free, and any valid block lies above it.
    const EMPTY: IdsBlock = IdsBlock {
        first: -1,
        size: 0,
        next: -1,
    };

    /// One past the last id.
    fn end(&self) -> i64 {
        self.first + self.size
    }

    fn claim_next_id(&mut self) -> Option<i64> {
        (self.next < self.end()).then(|| {
            self.next += 1;
            self.next - 1
        })
    }

    /// The id whose hand-out asks for the next block (Kafka's `PID_PREFETCH_THRESHOLD`, 0.9).
    fn prefetch_target(&self) -> i64 {
        // `size` comes from an i32, so `size * 9` cannot overflow.
        self.first + self.size * 9 / 10
    }
}

#[derive(Debug)]
struct State {
    current: IdsBlock,
    next_block: Option<IdsBlock>,
    /// A request task is running; cleared when its block becomes current (so there is never a
    /// second next block) or when the manager stops.
    request_in_flight: bool,
}

struct Inner {
    broker_id: BrokerId,
    epochs: Arc<BrokerEpochManager>,
    channel: Arc<dyn BrokerToControllerChannel>,
    state: Mutex<State>,
    /// Counts the blocks received, so startup can wait for the first.
    received: watch::Sender<u64>,
    tasks: TaskTracker,
    stop: CancellationToken,
}

/// Hands out producer ids from blocks the controller allocates; see the module doc.
#[derive(Clone)]
pub struct RpcProducerIdManager {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RpcProducerIdManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RpcProducerIdManager")
            .field("broker_id", &self.inner.broker_id)
            .field("state", &*lock(&self.inner.state))
            .finish_non_exhaustive()
    }
}

impl RpcProducerIdManager {
    /// A manager with no block yet. Its request task is tracked by `tasks` and ends on `stop`.
    pub fn new(
        broker_id: BrokerId,
        epochs: Arc<BrokerEpochManager>,
        channel: Arc<dyn BrokerToControllerChannel>,
        tasks: TaskTracker,
        stop: CancellationToken,
    ) -> Self {
        RpcProducerIdManager {
            inner: Arc::new(Inner {
                broker_id,
                epochs,
                channel,
                state: Mutex::new(State {
                    current: IdsBlock::EMPTY,
                    next_block: None,
                    request_in_flight: false,
                }),
                received: watch::Sender::new(0),
                tasks,
                stop,
            }),
        }
    }

    /// Requests the first block and waits up to `timeout` for it, so the first producers need
    /// no retry; `false` when it did not arrive in time (InitProducerId answers
    /// COORDINATOR_LOAD_IN_PROGRESS until it does).
    pub async fn startup(&self, timeout: Duration) -> bool {
        let mut received = self.inner.received.subscribe();
        {
            let mut state = lock(&self.inner.state);
            maybe_request_next_block(&self.inner, &mut state);
        }
        let arrived = tokio::time::timeout(timeout, received.wait_for(|n| *n > 0)).await;
        matches!(arrived, Ok(Ok(_)))
    }

    /// The next free producer id (Kafka's `generateProducerId`), or [`WaitingForBlock`].
    pub fn generate_producer_id(&self) -> Result<i64, WaitingForBlock> {
        let mut state = lock(&self.inner.state);
        loop {
            if let Some(id) = state.current.claim_next_id() {
                if id == state.current.prefetch_target() {
                    maybe_request_next_block(&self.inner, &mut state);
                }
                return Ok(id);
            }
            match state.next_block.take() {
                // Never empty (see `accept_block`), so the next turn claims from it.
                Some(block) => {
                    state.current = block;
                    state.request_in_flight = false;
                }
                None => {
                    maybe_request_next_block(&self.inner, &mut state);
                    return Err(WaitingForBlock);
                }
            }
        }
    }
}

/// Starts a request task unless one is running or a next block is waiting.
fn maybe_request_next_block(inner: &Arc<Inner>, state: &mut State) {
    if state.next_block.is_some() || state.request_in_flight || inner.stop.is_cancelled() {
        return;
    }
    state.request_in_flight = true;
    inner.tasks.spawn(request_next_block(Arc::clone(inner)));
}

/// Asks the controller until a block is accepted or the manager stops.
async fn request_next_block(inner: Arc<Inner>) {
    let mut backoff = RETRY_BACKOFF_MIN;
    loop {
        let request = AllocateProducerIdsRequest {
            broker_id: inner.broker_id,
            broker_epoch: inner.epochs.broker_epoch(),
            ..AllocateProducerIdsRequest::default()
        };
        tracing::debug!(
            broker_id = inner.broker_id,
            "requesting the next producer id block"
        );
        let sent = tokio::select! {
            _ = inner.stop.cancelled() => break,
            sent = inner.channel.allocate_producer_ids(request) => sent,
        };
        match sent {
            Ok(response) if response.error_code == ErrorCode::None.code() => {
                if accept_block(&inner, response.producer_id_start, response.producer_id_len) {
                    return;
                }
            }
            Ok(response) => tracing::warn!(
                broker_id = inner.broker_id,
                code = response.error_code,
                "the controller refused a producer id block; asking again"
            ),
            Err(err) => tracing::warn!(
                broker_id = inner.broker_id,
                %err,
                "cannot reach the controller for a producer id block; asking again"
            ),
        }
        tokio::select! {
            _ = inner.stop.cancelled() => break,
            () = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(RETRY_BACKOFF_MAX);
    }
    lock(&inner.state).request_in_flight = false;
}

/// Kafka's `sanityCheckResponse`: the block becomes the next one when it is non-empty, does not
/// overflow and lies wholly above the current block.
fn accept_block(inner: &Inner, start: i64, len: i32) -> bool {
    let size = i64::from(len);
    let mut state = lock(&inner.state);
    let current = state.current;
    let valid = start >= 0 && size > 0 && start <= i64::MAX - size;
    if !valid || start < current.end() {
        tracing::error!(
            broker_id = inner.broker_id,
            start,
            len,
            current_first = current.first,
            current_end = current.end(),
            "the controller's producer id block is invalid or overlaps the current one"
        );
        return false;
    }
    state.next_block = Some(IdsBlock {
        first: start,
        size,
        next: start,
    });
    drop(state);
    inner.received.send_modify(|n| *n += 1);
    tracing::info!(
        broker_id = inner.broker_id,
        start,
        len,
        "got the next producer id block from the controller"
    );
    true
}

#[cfg(test)]
#[path = "rpc_producer_id_manager_tests.rs"]
mod tests;

impl crate::coordinator::transaction::ProducerIdGenerator for RpcProducerIdManager {
    fn generate_producer_id(&self) -> Result<i64, ErrorCode> {
        RpcProducerIdManager::generate_producer_id(self).map_err(WaitingForBlock::error_code)
    }
}
