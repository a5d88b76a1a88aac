//! Kafka's `ControllerChannelManager`: one queue and one sender task per live broker, so the
//! requests to a broker leave in the order the controller made them, one in flight at a time,
//! and a slow or dead broker holds up only its own queue.
//!
//! The transport is the [`BrokerChannel`] trait: `server` implements it over the outbound
//! inter-broker client in `network`; tests implement it with a recording fake. A request that
//! fails to send is retried (Kafka's `RequestSendThread` backs off 100 ms and retries) until it
//! succeeds or the broker is removed, which is when the controller learns it died.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::BrokerId;
use crate::protocol::messages::leader_and_isr_response::LeaderAndIsrResponse;
use crate::protocol::messages::stop_replica_response::StopReplicaResponse;
use crate::protocol::messages::update_metadata_response::UpdateMetadataResponse;

use super::controller_request_batch::ControllerRequest;

/// How long a failed send waits before it is retried.
const RETRY_BACKOFF: Duration = Duration::from_millis(100);

/// Where the controller reaches a broker: its inter-broker listener's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerNode {
    pub id: BrokerId,
    pub host: String,
    pub port: i32,
}

/// A broker's answer to a controller request.
#[derive(Debug, Clone, PartialEq)]
pub enum ControllerResponse {
    LeaderAndIsr(LeaderAndIsrResponse),
    UpdateMetadata(UpdateMetadataResponse),
    StopReplica(StopReplicaResponse),
}

/// Why a send did not get an answer.
#[derive(Debug, thiserror::Error)]
#[error("request to broker {broker} failed: {reason}")]
pub struct ChannelError {
    pub broker: BrokerId,
    pub reason: String,
}

pub type ChannelFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ControllerResponse, ChannelError>> + Send + 'a>>;

/// The transport to brokers.
pub trait BrokerChannel: Send + Sync + fmt::Debug {
    /// Sends `request` to `node` and waits for the response.
    fn send<'a>(
        &'a self,
        node: &'a BrokerNode,
        request: &'a ControllerRequest,
    ) -> ChannelFuture<'a>;
}

/// Called with each response, from the broker's sender task (the controller turns the ones it
/// cares about into events on its queue).
pub type ResponseHandler =
    Arc<dyn Fn(BrokerId, &ControllerRequest, ControllerResponse) + Send + Sync>;

struct BrokerQueue {
    node: BrokerNode,
    queue: UnboundedSender<ControllerRequest>,
    stop: CancellationToken,
}

/// The per-broker queues.
pub struct ControllerChannelManager {
    channel: Arc<dyn BrokerChannel>,
    on_response: ResponseHandler,
    brokers: BTreeMap<BrokerId, BrokerQueue>,
    tasks: TaskTracker,
}

impl fmt::Debug for ControllerChannelManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ControllerChannelManager")
            .field("brokers", &self.brokers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ControllerChannelManager {
    pub fn new(channel: Arc<dyn BrokerChannel>, on_response: ResponseHandler) -> Self {
        ControllerChannelManager {
            channel,
            on_response,
            brokers: BTreeMap::new(),
            tasks: TaskTracker::new(),
        }
    }

    /// Starts the queue of a broker (a no-op if it has one at the same address).
    pub fn add_broker(&mut self, node: BrokerNode) {
        if self.brokers.get(&node.id).is_some_and(|q| q.node == node) {
            return;
        }
        self.remove_broker(node.id);
        let (queue, mut requests) = unbounded_channel::<ControllerRequest>();
        let stop = CancellationToken::new();
        let channel = Arc::clone(&self.channel);
        let on_response = Arc::clone(&self.on_response);
        let task_node = node.clone();
        let task_stop = stop.clone();
        self.tasks.spawn(async move {
            loop {
                let request = tokio::select! {
                    _ = task_stop.cancelled() => return,
                    next = requests.recv() => match next {
                        Some(request) => request,
                        None => return,
                    },
                };
                loop {
                    let sent = tokio::select! {
                        _ = task_stop.cancelled() => return,
                        sent = channel.send(&task_node, &request) => sent,
                    };
                    match sent {
                        Ok(response) => {
                            on_response(task_node.id, &request, response);
                            break;
                        }
                        Err(err) => {
                            tracing::warn!(broker = task_node.id, api = request.api_name(),
                                %err, "controller request failed; retrying");
                            tokio::select! {
                                _ = task_stop.cancelled() => return,
                                _ = tokio::time::sleep(RETRY_BACKOFF) => {}
                            }
                        }
                    }
                }
            }
        });
        self.brokers
            .insert(node.id, BrokerQueue { node, queue, stop });
    }

    /// Stops a broker's queue; what it still held is dropped (the broker is gone).
    pub fn remove_broker(&mut self, id: BrokerId) {
        if let Some(q) = self.brokers.remove(&id) {
            q.stop.cancel();
        }
    }

    /// Queues `request` for `broker`; `false` when the broker has no queue.
    pub fn send(&self, broker: BrokerId, request: ControllerRequest) -> bool {
        match self.brokers.get(&broker) {
            Some(q) => q.queue.send(request).is_ok(),
            None => false,
        }
    }

    /// Stops every queue and waits for the sender tasks to end.
    pub async fn shutdown(&mut self) {
        for (_, q) in std::mem::take(&mut self.brokers) {
            q.stop.cancel();
        }
        self.tasks.close();
        self.tasks.wait().await;
        self.tasks = TaskTracker::new();
    }
}
