//! Kafka's `SocketServer`: binds the listeners, runs an acceptor task per listener and a task per
//! connection, and feeds a bounded request queue (`queued.max.requests`) to `num.io.threads`
//! handler tasks (Kafka's `KafkaRequestHandlerPool`). Every task is tracked, so
//! [`SocketServer::shutdown`] returns only when all of them have finished.
//!
//! `num.network.threads` has no counterpart: connection tasks run on the tokio runtime's workers.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{Instrument, debug, error, info, warn};

use super::authenticator::ListenerAuthenticator;
use super::connection::{ConnectionContext, Handled, QueuedRequest, run_connection};
use super::connection_quotas::{ConnectionLimits, ConnectionQuotas, IpConnectionRateQuotas};
use super::metrics::NetworkMetrics;
use super::request::{ConnectionId, RequestHandler};
use super::tls::ListenerTls;
use crate::metrics::MetricsSource;

/// A listener to bind: Kafka's `EndPoint` of `listeners` (`NAME://host:port`).
///
/// An empty `host` binds every IPv4 interface (Kafka's `PLAINTEXT://:9092`); port 0 takes a free
/// port, reported by [`SocketServer::bound_endpoints`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndPoint {
    pub listener_name: String,
    pub host: String,
    pub port: u16,
    /// Authenticates each connection before its first request (SASL listeners); `None` serves
    /// connections at once as `User:ANONYMOUS`.
    pub authenticator: Option<ListenerAuthenticator>,
    /// Runs a TLS handshake first on each connection (SSL and SASL_SSL listeners); its
    /// principal is the connection's unless an authenticator follows.
    pub tls: Option<ListenerTls>,
}

impl EndPoint {
    pub fn new(listener_name: impl Into<String>, host: impl Into<String>, port: u16) -> Self {
        Self {
            listener_name: listener_name.into(),
            host: host.into(),
            port,
            authenticator: None,
            tls: None,
        }
    }

    /// The same listener, with a TLS handshake on each connection before anything else.
    pub fn with_tls(mut self, tls: ListenerTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// The same listener, authenticating its connections with `authenticator`.
    pub fn with_authenticator(mut self, authenticator: ListenerAuthenticator) -> Self {
        self.authenticator = Some(authenticator);
        self
    }
}

/// A listener after binding, with the address it actually got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundEndPoint {
    pub listener_name: String,
    pub address: SocketAddr,
}

/// The socket server's settings, under Kafka's key names in snake_case, with Kafka's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketServerConfig {
    /// `listeners`; default `PLAINTEXT://127.0.0.1:9092`.
    pub listeners: Vec<EndPoint>,
    /// `num.io.threads`: requests handled at once, over all connections; default 8, at least 1.
    pub num_io_threads: usize,
    /// `queued.max.requests`: requests waiting for a handler before connections stop reading;
    /// default 500, at least 1.
    pub queued_max_requests: usize,
    /// `socket.request.max.bytes`: the largest frame body accepted; a larger one closes its
    /// connection. Default 104857600 (100 MiB), at least 1.
    pub socket_request_max_bytes: i32,
    /// `connections.max.idle.ms`: a connection with no request for this long is closed.
    /// Default 600000 (10 minutes), at least 1.
    pub connections_max_idle_ms: u64,
    /// `max.connections`, `max.connections.per.ip` (and overrides), `queued.max.request.bytes`.
    pub limits: ConnectionLimits,
}

impl Default for SocketServerConfig {
    fn default() -> Self {
        Self {
            listeners: vec![EndPoint::new("PLAINTEXT", "127.0.0.1", 9092)],
            num_io_threads: 8,
            queued_max_requests: 500,
            socket_request_max_bytes: 100 * 1024 * 1024,
            connections_max_idle_ms: 600_000,
            limits: ConnectionLimits::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    #[error("cannot bind listener {listener_name} to {address}: {source}")]
    Bind {
        listener_name: String,
        address: String,
        #[source]
        source: io::Error,
    },
    #[error("invalid value {value} for {key}: must be at least 1")]
    InvalidConfig { key: &'static str, value: i64 },
}

/// A running socket server. Dropping it does not stop it; call [`SocketServer::shutdown`] (or
/// cancel the token given to [`SocketServer::startup`] and then call it to wait).
#[derive(Debug)]
pub struct SocketServer {
    bound: Vec<BoundEndPoint>,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    active_connections: Arc<AtomicUsize>,
    /// Weak, so that the I/O tasks see the queue close once every acceptor and connection is gone.
    queue: mpsc::WeakSender<QueuedRequest>,
    metrics: Arc<NetworkMetrics>,
    quotas: Arc<ConnectionQuotas>,
}

/// Pause after a failed accept (out of file descriptors, say), doubled up to the maximum while
/// accepts keep failing, so a broken listener does not spin.
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(10);
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

impl SocketServer {
    /// Binds every listener, then starts the acceptors and the I/O handler tasks. Cancelling
    /// `shutdown` starts a graceful shutdown (see [`SocketServer::shutdown`]). Nothing is
    /// started when a listener fails to bind.
    pub async fn startup<H: RequestHandler>(
        config: SocketServerConfig,
        handler: Arc<H>,
        shutdown: CancellationToken,
    ) -> Result<SocketServer, NetworkError> {
        for (key, value) in [
            ("num.io.threads", config.num_io_threads as i64),
            ("queued.max.requests", config.queued_max_requests as i64),
            (
                "socket.request.max.bytes",
                i64::from(config.socket_request_max_bytes),
            ),
            (
                "connections.max.idle.ms",
                i64::try_from(config.connections_max_idle_ms).unwrap_or(i64::MAX),
            ),
        ] {
            if value < 1 {
                return Err(NetworkError::InvalidConfig { key, value });
            }
        }
        let mut listeners = Vec::with_capacity(config.listeners.len());
        for endpoint in &config.listeners {
            let host = if endpoint.host.is_empty() {
                "0.0.0.0"
            } else {
                endpoint.host.as_str()
            };
            let bind_error = |source| NetworkError::Bind {
                listener_name: endpoint.listener_name.clone(),
                address: format!("{host}:{}", endpoint.port),
                source,
            };
            let listener = TcpListener::bind((host, endpoint.port))
                .await
                .map_err(bind_error)?;
            let address = listener.local_addr().map_err(bind_error)?;
            info!(listener = %endpoint.listener_name, %address, "listening");
            listeners.push((endpoint.clone(), address, listener));
        }

        let tracker = TaskTracker::new();
        let (queue_tx, queue_rx) = mpsc::channel(config.queued_max_requests);
        let names: Vec<String> = listeners
            .iter()
            .map(|(endpoint, _, _)| endpoint.listener_name.clone())
            .collect();
        let metrics = Arc::new(NetworkMetrics::new(
            &names,
            queue_tx.downgrade(),
            config.num_io_threads,
        ));
        let queue_rx = Arc::new(Mutex::new(queue_rx));
        for index in 0..config.num_io_threads {
            tracker.spawn(io_handler(
                index,
                Arc::clone(&queue_rx),
                Arc::clone(&handler),
                Arc::clone(&metrics),
                tracker.clone(),
            ));
        }
        let active_connections = Arc::new(AtomicUsize::new(0));
        let quotas = ConnectionQuotas::new(config.limits.clone());
        let next_id = Arc::new(AtomicU64::new(0));
        let mut bound = Vec::with_capacity(listeners.len());
        for (listener_index, (endpoint, address, listener)) in listeners.into_iter().enumerate() {
            bound.push(BoundEndPoint {
                listener_name: endpoint.listener_name.clone(),
                address,
            });
            let acceptor = Acceptor {
                listener_name: Arc::from(endpoint.listener_name.as_str()),
                authenticator: endpoint.authenticator,
                tls: endpoint.tls,
                socket_request_max_bytes: config.socket_request_max_bytes,
                connections_max_idle: Duration::from_millis(config.connections_max_idle_ms),
                queue: queue_tx.clone(),
                shutdown: shutdown.clone(),
                tracker: tracker.clone(),
                active_connections: Arc::clone(&active_connections),
                next_id: Arc::clone(&next_id),
                quotas: Arc::clone(&quotas),
                metrics: Arc::clone(&metrics),
                listener_index,
            };
            tracker.spawn(acceptor.run(listener));
        }
        let queue = queue_tx.downgrade();
        Ok(SocketServer {
            bound,
            shutdown,
            tracker,
            active_connections,
            queue,
            metrics,
            quotas,
        })
    }

    /// The network layer's metrics, for the server to register.
    pub fn metrics(&self) -> Arc<dyn MetricsSource> {
        Arc::clone(&self.metrics) as Arc<dyn MetricsSource>
    }

    /// The IP connection-rate quotas' metrics, for the server to register.
    pub fn connection_quota_metrics(&self) -> Arc<dyn MetricsSource> {
        Arc::clone(&self.quotas) as Arc<dyn MetricsSource>
    }

    /// Where the server pushes the IP connection-rate quotas (`connection_creation_rate`).
    pub fn ip_connection_rate_quotas(&self) -> IpConnectionRateQuotas {
        self.quotas.ip_connection_rate_quotas()
    }

    /// The listeners with the addresses they were bound to, in configuration order.
    pub fn bound_endpoints(&self) -> &[BoundEndPoint] {
        &self.bound
    }

    /// The port a listener was bound to (Kafka's `boundPort`).
    pub fn bound_port(&self, listener_name: &str) -> Option<u16> {
        self.bound
            .iter()
            .find(|b| b.listener_name == listener_name)
            .map(|b| b.address.port())
    }

    /// Connections accepted and not yet closed.
    pub fn active_connections(&self) -> usize {
        self.active_connections.load(Ordering::Relaxed)
    }

    /// Requests waiting on the queue for a handler (Kafka's `RequestQueueSize` metric).
    pub fn request_queue_size(&self) -> usize {
        self.queue
            .upgrade()
            .map_or(0, |q| q.max_capacity() - q.capacity())
    }

    /// Graceful shutdown: stops accepting, closes idle connections, lets every request already
    /// read be handled and its response written, then closes those connections too. Returns when
    /// every task of the server has finished. Safe to call more than once.
    ///
    /// It waits as long as the handler takes (a deferred long poll included); a caller that must
    /// stop in bounded time wraps it in `tokio::time::timeout`.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        self.tracker.close();
        self.tracker.wait().await;
        debug!("socket server stopped");
    }
}

/// Accepts connections on one listener and spawns their tasks.
struct Acceptor {
    listener_name: Arc<str>,
    authenticator: Option<ListenerAuthenticator>,
    tls: Option<ListenerTls>,
    socket_request_max_bytes: i32,
    connections_max_idle: Duration,
    queue: mpsc::Sender<QueuedRequest>,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    active_connections: Arc<AtomicUsize>,
    next_id: Arc<AtomicU64>,
    quotas: Arc<ConnectionQuotas>,
    metrics: Arc<NetworkMetrics>,
    /// This listener's place in `listeners`, which indexes its metrics.
    listener_index: usize,
}

impl Acceptor {
    async fn run(self, listener: TcpListener) {
        let mut backoff = ACCEPT_BACKOFF_MIN;
        loop {
            // With max.connections taken, accept nothing until a connection closes.
            let waiting = Instant::now();
            let slot = tokio::select! {
                biased;
                () = self.shutdown.cancelled() => break,
                slot = self.quotas.wait_for_slot() => slot,
            };
            self.metrics
                .acceptor_blocked(self.listener_index, waiting.elapsed());
            let accepted = tokio::select! {
                biased;
                () = self.shutdown.cancelled() => break,
                accepted = listener.accept() => accepted,
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => {
                    backoff = ACCEPT_BACKOFF_MIN;
                    accepted
                }
                Err(error) => {
                    warn!(listener = %self.listener_name, %error, "accept failed");
                    tokio::select! {
                        () = self.shutdown.cancelled() => break,
                        () = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
                    continue;
                }
            };
            // Kafka's `waitForConnectionSlot`: over `max.connection.creation.rate`, the acceptor
            // waits the throttle time before it serves this connection or accepts another.
            if let Some(wait) = self
                .quotas
                .record_connection_and_get_throttle_time(&self.listener_name)
            {
                let waiting = Instant::now();
                tokio::select! {
                    biased;
                    () = self.shutdown.cancelled() => break,
                    () = tokio::time::sleep(wait) => {}
                }
                self.metrics
                    .acceptor_blocked(self.listener_index, waiting.elapsed());
            }
            // Kafka's `ConnectionThrottledException`: a connection over its address's rate is
            // not served, and closed once the throttle time has passed; its slot goes back now.
            if let Some(throttle) = self
                .quotas
                .record_ip_connection_maybe_throttle(&self.listener_name, peer.ip())
            {
                drop(slot);
                debug!(listener = %self.listener_name, %peer, ?throttle, "delaying the closing of a connection over its address's connection_creation_rate");
                let shutdown = self.shutdown.clone();
                self.tracker.spawn(async move {
                    tokio::select! {
                        () = shutdown.cancelled() => {}
                        () = tokio::time::sleep(throttle) => {}
                    }
                    drop(stream);
                });
                continue;
            }
            let slot = match self.quotas.admit(peer.ip(), slot) {
                Ok(slot) => slot,
                Err(limit) => {
                    info!(listener = %self.listener_name, "Rejected connection from {}, address already has the configured maximum of {limit} connections.", peer.ip());
                    continue;
                }
            };
            // Kafka sets TCP_NODELAY: responses are written whole, so Nagle only adds latency.
            if let Err(error) = stream.set_nodelay(true) {
                debug!(%peer, %error, "cannot set TCP_NODELAY");
            }
            let local = match stream.local_addr() {
                Ok(local) => local,
                Err(error) => {
                    debug!(%peer, %error, "connection gone before it was served");
                    continue;
                }
            };
            let id = ConnectionId(self.next_id.fetch_add(1, Ordering::Relaxed));
            let span =
                tracing::debug_span!("connection", %id, %peer, listener = %self.listener_name);
            let context = ConnectionContext {
                id,
                peer,
                local,
                listener_name: Arc::clone(&self.listener_name),
                authenticator: self.authenticator.clone(),
                tls: self.tls.clone(),
                socket_request_max_bytes: self.socket_request_max_bytes,
                connections_max_idle: self.connections_max_idle,
                queue: self.queue.clone(),
                shutdown: self.shutdown.clone(),
                active_connections: Arc::clone(&self.active_connections),
                quotas: Arc::clone(&self.quotas),
                metrics: Arc::clone(&self.metrics),
                listener_index: self.listener_index,
            };
            self.tracker
                .spawn(run_connection(stream, context, slot).instrument(span));
        }
        debug!(listener = %self.listener_name, "acceptor stopped");
    }
}

/// One of the `num.io.threads` handler tasks: takes requests off the queue and answers them. It
/// ends when the queue is closed and drained, which happens once every acceptor and connection
/// task has ended, so requests already queued at shutdown are still answered.
async fn io_handler<H: RequestHandler>(
    index: usize,
    queue: Arc<Mutex<mpsc::Receiver<QueuedRequest>>>,
    handler: Arc<H>,
    metrics: Arc<NetworkMetrics>,
    tracker: TaskTracker,
) {
    loop {
        // The wait counts as this task's idle time (RequestHandlerAvgIdlePercent).
        metrics.handler_waiting(index, Instant::now());
        // The lock is held only while waiting for the next request, never while handling it.
        let next = queue.lock().await.recv().await;
        let dequeued = Instant::now();
        metrics.handler_woke(index, dequeued);
        let Some(QueuedRequest { request, reply }) = next else {
            break;
        };
        let connection_id = request.connection_id;
        let handler = Arc::clone(&handler);
        // Its own task, so a panicking handler costs the request's connection (its reply is
        // dropped, which closes it) and not this handler task.
        let handled = tracker.spawn(async move { handler.handle(request).await });
        match handled.await {
            // The connection may be gone already; then there is no one to answer.
            Ok(response) => {
                let handled = Handled {
                    response,
                    dequeued,
                    local_done: Instant::now(),
                };
                metrics.response_queued(1);
                if reply.send(handled).is_err() {
                    metrics.response_queued(-1);
                }
            }
            Err(join_error) => {
                error!(%connection_id, error = %join_error, "request handler failed; closing the connection");
            }
        }
    }
    debug!(index, "request handler task stopped");
}
