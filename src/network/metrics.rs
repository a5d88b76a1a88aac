//! The network layer's MBeans as Kafka 3.9's `RequestChannel`, `SocketServer` and
//! `KafkaRequestHandlerPool` register them:
//!
//! - `kafka.network:type=RequestMetrics,name=<X>,request=<Name>` per request type: the
//!   histograms `RequestQueueTimeMs`, `LocalTimeMs`, `RemoteTimeMs`, `ResponseQueueTimeMs`,
//!   `ResponseSendTimeMs`, `TotalTimeMs`, `RequestBytes` (created at startup for every API a
//!   ZooKeeper-mode broker serves, `FetchConsumer`, `FetchFollower`, and
//!   `AddPartitionsToTxnVerification`), the meter `RequestsPerSec` with a `version` tag (one per
//!   version seen), and `ErrorsPerSec` with an `error` tag (one per error seen, `NONE`
//!   included, counted under the API's own name as Kafka counts them).
//! - `DeprecatedRequestsPerSec` with `version`, `clientSoftwareName` and
//!   `clientSoftwareVersion` tags, for the requests of a deprecated version (`deprecated`).
//! - `kafka.network:type=RequestChannel,name=RequestQueueSize` and `ResponseQueueSize`.
//! - `kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent`.
//! - `kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent`: the runtime
//!   workers' idle share (`processor_idle`: kcli has no processor threads).
//! - `kafka.server:type=socket-server-metrics,listener=<L>,networkProcessor=0`: the
//!   connection count and the creation and close totals and rates.
//! - `kafka.server:type=socket-server-metrics,clientSoftwareName=<N>,clientSoftwareVersion=<V>,
//!   listener=<L>,networkProcessor=0`: `connections`, the open connections by the client
//!   software their ApiVersions named (`unknown` before one).
//! - `kafka.network:type=Acceptor,name=AcceptorBlockedPercent,listener=<L>`: the time the
//!   listener's acceptor waited for a connection slot (`max.connections`), a meter of
//!   nanoseconds read as a fraction of the time, as Kafka's.
//!
//! Recording a request is relaxed atomic adds into a table made at startup (indexed by API key,
//! then by version or error code): no allocation, no lock. What only the handler knows (a
//! follower's fetch from a consumer's, the error codes of its response) it reports through the
//! [`RequestRecorder`] each [`Request`](super::Request) carries; the times the network layer
//! takes itself (see [`RequestTimes`]).

use std::sync::atomic::{AtomicI64, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::connection::QueuedRequest;
use crate::cluster::sync::lock;
use crate::metrics::{
    Histogram, MBeanName, Meter, MeterSnapshot, MetricSample, MetricsSource, Reading,
};
use crate::protocol::codec::Listener;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ApiKey;

pub(super) use request_times::{RequestTimes, api_of};

/// Error codes have meters from `UNKNOWN_SERVER_ERROR` (-1) up to this one.
const MAX_ERROR_CODE: i16 = 127;
/// A handler task's wait start while it handles a request.
const BUSY: u64 = u64::MAX;
/// Kafka's `metrics.sample.window.ms` default: a rate's sample is 30 seconds.
const SAMPLE_WINDOW: Duration = Duration::from_secs(30);

/// Which request type's metrics a request counts under, besides (or instead of) its API's name;
/// Kafka's `overrideMetricNames`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Kind {
    /// The API's own name only.
    Plain = 0,
    /// A consumer's Fetch: `FetchConsumer` and `Fetch`.
    FetchConsumer = 1,
    /// A follower's Fetch: `FetchFollower` and `Fetch`.
    FetchFollower = 2,
    /// An AddPartitionsToTxn that only verifies: `AddPartitionsToTxnVerification` only.
    Verification = 3,
}

impl Kind {
    fn from_u8(value: u8) -> Kind {
        match value {
            1 => Kind::FetchConsumer,
            2 => Kind::FetchFollower,
            3 => Kind::Verification,
            _ => Kind::Plain,
        }
    }
}

/// What the handler reports of the request it answers, for the metrics the network layer
/// cannot take itself. One per connection, shared by its requests (a request is handled only
/// after the one before it returned from the handler, so what is reported during a `handle`
/// belongs to that request); cloning is a reference count.
#[derive(Debug, Clone, Default)]
pub struct RequestRecorder(Option<Arc<ConnectionRecorder>>);

#[derive(Debug)]
struct ConnectionRecorder {
    metrics: Arc<NetworkMetrics>,
    kind: AtomicU8,
    /// The connection's listener (its index) and the client software it counts under in
    /// `socket-server-metrics` `connections`: `unknown` until an ApiVersions names it.
    listener: usize,
    software: Mutex<ClientSoftware>,
}

/// A client's `client_software_name` and `client_software_version` (ApiVersions v3+).
type ClientSoftware = (Arc<str>, Arc<str>);

/// Kafka's `ClientInformation.UNKNOWN_NAME_OR_VERSION`.
const UNKNOWN_SOFTWARE: &str = "unknown";

impl Drop for ConnectionRecorder {
    fn drop(&mut self) {
        let software = lock(&self.software).clone();
        self.metrics
            .count_client_software(self.listener, &software, -1);
    }
}

impl RequestRecorder {
    /// The recorder of a connection of listener `listener` (its index), counted from now on
    /// as a connection of unknown client software.
    pub(super) fn new(metrics: Arc<NetworkMetrics>, listener: usize) -> Self {
        let software: ClientSoftware = (Arc::from(UNKNOWN_SOFTWARE), Arc::from(UNKNOWN_SOFTWARE));
        metrics.count_client_software(listener, &software, 1);
        RequestRecorder(Some(Arc::new(ConnectionRecorder {
            metrics,
            kind: AtomicU8::new(Kind::Plain as u8),
            listener,
            software: Mutex::new(software),
        })))
    }

    /// The client named its software in an ApiVersions (valid by Kafka's rules): the
    /// connection counts under it from now on, an empty name or version as `unknown` (Kafka's
    /// `registerClientInformation` of a `ClientInformation`).
    pub fn client_software(&self, name: &str, version: &str) {
        let Some(recorder) = &self.0 else {
            return;
        };
        let or_unknown = |s: &str| Arc::from(if s.is_empty() { UNKNOWN_SOFTWARE } else { s });
        let new: ClientSoftware = (or_unknown(name), or_unknown(version));
        let old = std::mem::replace(&mut *lock(&recorder.software), new.clone());
        recorder
            .metrics
            .count_client_software(recorder.listener, &old, -1);
        recorder
            .metrics
            .count_client_software(recorder.listener, &new, 1);
    }

    /// The client software the connection counts under now.
    fn software(&self) -> Option<ClientSoftware> {
        self.0
            .as_ref()
            .map(|recorder| lock(&recorder.software).clone())
    }

    /// The request being handled is a Fetch from a follower (`true`) or a consumer (`false`):
    /// it also counts under `FetchFollower` or `FetchConsumer`.
    pub fn fetch_from_follower(&self, follower: bool) {
        let kind = if follower {
            Kind::FetchFollower
        } else {
            Kind::FetchConsumer
        };
        self.set_kind(kind);
    }

    /// The request being handled is an AddPartitionsToTxn that only verifies: it counts under
    /// `AddPartitionsToTxnVerification` instead.
    pub fn verify_only(&self) {
        self.set_kind(Kind::Verification);
    }

    fn set_kind(&self, kind: Kind) {
        if let Some(recorder) = &self.0 {
            recorder.kind.store(kind as u8, Ordering::Relaxed);
        }
    }

    /// Takes what the handler set for the request just handled, ready for the next.
    pub(super) fn take_kind(&self) -> Kind {
        self.0.as_ref().map_or(Kind::Plain, |recorder| {
            Kind::from_u8(recorder.kind.swap(Kind::Plain as u8, Ordering::Relaxed))
        })
    }

    /// Counts `count` errors `code` (`0` is `NONE`) in a response of `api_key`, as Kafka counts
    /// a response's `errorCounts`. Any time, from any task.
    pub fn errors(&self, api_key: ApiKey, code: i16, count: u64) {
        if let Some(recorder) = &self.0 {
            recorder.metrics.mark_errors(api_key as i16, code, count);
        }
    }
}

/// One request type's metrics (Kafka's `RequestMetrics`).
#[derive(Debug)]
struct RequestMetrics {
    name: &'static str,
    /// `RequestsPerSec`, by version.
    requests: Box<[Meter]>,
    request_queue_time: Histogram,
    local_time: Histogram,
    remote_time: Histogram,
    response_queue_time: Histogram,
    response_send_time: Histogram,
    total_time: Histogram,
    request_bytes: Histogram,
}

impl RequestMetrics {
    fn new(name: &'static str, versions: usize) -> Self {
        RequestMetrics {
            name,
            requests: (0..versions).map(|_| Meter::new()).collect(),
            request_queue_time: Histogram::new(),
            local_time: Histogram::new(),
            remote_time: Histogram::new(),
            response_queue_time: Histogram::new(),
            response_send_time: Histogram::new(),
            total_time: Histogram::new(),
            request_bytes: Histogram::new(),
        }
    }

    fn histograms(&self) -> [(&'static str, &Histogram); 7] {
        [
            ("RequestQueueTimeMs", &self.request_queue_time),
            ("LocalTimeMs", &self.local_time),
            ("RemoteTimeMs", &self.remote_time),
            ("ResponseQueueTimeMs", &self.response_queue_time),
            ("ResponseSendTimeMs", &self.response_send_time),
            ("TotalTimeMs", &self.total_time),
            ("RequestBytes", &self.request_bytes),
        ]
    }

    fn record(&self, version: i16, t: &RequestTimes) {
        if let Some(meter) = usize::try_from(version)
            .ok()
            .and_then(|v| self.requests.get(v))
        {
            meter.mark(1);
        }
        // Kafka rounds each time to whole milliseconds.
        let ms = |from: Instant, to: Instant| {
            (to.saturating_duration_since(from).as_secs_f64() * 1000.0).round()
        };
        self.request_queue_time.update(ms(t.received, t.dequeued));
        self.local_time.update(ms(t.dequeued, t.local_done));
        self.remote_time.update(ms(t.local_done, t.response_done));
        self.response_queue_time
            .update(ms(t.response_done, t.send_start));
        self.response_send_time.update(ms(t.send_start, t.sent));
        self.total_time.update(ms(t.received, t.sent));
        self.request_bytes.update(t.request_bytes as f64);
    }

    fn tick(&self) {
        for meter in self.requests.iter().filter(|m| m.count() > 0) {
            meter.tick();
        }
        for (_, histogram) in self.histograms() {
            histogram.tick();
        }
    }

    fn collect(&self, out: &mut Vec<MetricSample>) {
        for (version, meter) in self.requests.iter().enumerate() {
            if meter.count() > 0 {
                let version = version.to_string();
                out.push(MetricSample {
                    mbean: request_mbean(
                        "RequestsPerSec",
                        &[("request", self.name), ("version", &version)],
                    ),
                    reading: Reading::Meter(meter.snapshot()),
                });
            }
        }
        for (name, histogram) in self.histograms() {
            out.push(MetricSample {
                mbean: request_mbean(name, &[("request", self.name)]),
                reading: Reading::Histogram(histogram.snapshot()),
            });
        }
    }
}

fn request_mbean(name: &'static str, tags: &[(&'static str, &str)]) -> MBeanName {
    MBeanName::yammer("kafka.network", "RequestMetrics", name, tags)
}

/// One listener's connections (its `socket-server-metrics` group).
#[derive(Debug)]
struct ListenerMetrics {
    name: String,
    created: AtomicU64,
    closed: AtomicU64,
    /// Nanoseconds the acceptor waited for a connection slot.
    acceptor_blocked: Meter,
    /// The counts at the start of the previous and of the current rate sample.
    samples: Mutex<[RateSample; 2]>,
}

#[derive(Debug, Clone, Copy)]
struct RateSample {
    start: Instant,
    created: u64,
    closed: u64,
}

impl ListenerMetrics {
    fn new(name: String, now: Instant) -> Self {
        let sample = RateSample {
            start: now,
            created: 0,
            closed: 0,
        };
        ListenerMetrics {
            name,
            created: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            acceptor_blocked: Meter::new(),
            samples: Mutex::new([sample; 2]),
        }
    }

    /// Starts a new sample once the current one is `SAMPLE_WINDOW` old.
    fn tick(&self, now: Instant) {
        let mut samples = lock(&self.samples);
        if now.saturating_duration_since(samples[1].start) >= SAMPLE_WINDOW {
            samples[0] = samples[1];
            samples[1] = RateSample {
                start: now,
                created: self.created.load(Ordering::Relaxed),
                closed: self.closed.load(Ordering::Relaxed),
            };
        }
    }

    /// The group's attributes. A rate is Kafka's over two 30-second samples: the events since
    /// the start of the previous sample over the time since then, at least 30 seconds.
    fn attributes(&self, now: Instant) -> Vec<(&'static str, f64)> {
        let created = self.created.load(Ordering::Relaxed);
        let closed = self.closed.load(Ordering::Relaxed);
        let oldest = lock(&self.samples)[0];
        let elapsed = now
            .saturating_duration_since(oldest.start)
            .max(SAMPLE_WINDOW)
            .as_secs_f64();
        let rate = |now: u64, then: u64| now.saturating_sub(then) as f64 / elapsed;
        vec![
            ("connection-close-rate", rate(closed, oldest.closed)),
            ("connection-close-total", closed as f64),
            ("connection-count", created.saturating_sub(closed) as f64),
            ("connection-creation-rate", rate(created, oldest.created)),
            ("connection-creation-total", created as f64),
        ]
    }
}

/// The socket server's metrics; see the module doc. Made by
/// [`SocketServer::startup`](super::SocketServer::startup) and registered by the server.
#[derive(Debug)]
pub(crate) struct NetworkMetrics {
    /// By API key; `None` for a key a ZooKeeper-mode broker does not serve.
    requests: Box<[Option<RequestMetrics>]>,
    fetch_consumer: RequestMetrics,
    fetch_follower: RequestMetrics,
    verification: RequestMetrics,
    deprecated: deprecated::DeprecatedRequests,
    /// `ErrorsPerSec` by API key, then by error code + 1.
    errors: Box<[Box<[Meter]>]>,
    request_queue: mpsc::WeakSender<QueuedRequest>,
    response_queue: AtomicI64,
    /// Nanoseconds the handler tasks waited for a request, each divided by their number.
    handler_idle: Meter,
    /// When each handler task began waiting, in nanoseconds since `created`; `BUSY` while it
    /// handles a request. The ticker counts a long wait so far and moves it on.
    handler_idle_since: Box<[AtomicU64]>,
    processor_idle: processor_idle::RuntimeIdle,
    /// Open connections by listener and client software (`connections`); an entry goes when
    /// its count does.
    client_software: Mutex<std::collections::BTreeMap<(usize, ClientSoftware), u64>>,
    created: Instant,
    listeners: Box<[ListenerMetrics]>,
}

impl NetworkMetrics {
    pub(super) fn new(
        listeners: &[String],
        request_queue: mpsc::WeakSender<QueuedRequest>,
        num_io_threads: usize,
    ) -> Self {
        let max_key = ApiKey::ALL.iter().map(|k| *k as i16).max().unwrap_or(0);
        let served = |key: i16| {
            ApiKey::from_i16(key)
                .map(ApiKey::info)
                .filter(|info| info.listeners.contains(&Listener::ZkBroker))
        };
        let versions = |key: ApiKey| usize::try_from(key.info().valid.max).unwrap_or(0) + 1;
        let fetch_versions = versions(ApiKey::Fetch);
        let now = Instant::now();
        NetworkMetrics {
            requests: (0..=max_key)
                .map(|key| {
                    served(key).map(|info| {
                        RequestMetrics::new(
                            info.name,
                            usize::try_from(info.valid.max).unwrap_or(0) + 1,
                        )
                    })
                })
                .collect(),
            fetch_consumer: RequestMetrics::new("FetchConsumer", fetch_versions),
            fetch_follower: RequestMetrics::new("FetchFollower", fetch_versions),
            verification: RequestMetrics::new(
                "AddPartitionsToTxnVerification",
                versions(ApiKey::AddPartitionsToTxn),
            ),
            deprecated: deprecated::DeprecatedRequests::default(),
            errors: (0..=max_key)
                .map(|key| {
                    let codes = if served(key).is_some() {
                        usize::try_from(MAX_ERROR_CODE + 2).unwrap_or(0)
                    } else {
                        0
                    };
                    (0..codes).map(|_| Meter::new()).collect()
                })
                .collect(),
            request_queue,
            response_queue: AtomicI64::new(0),
            handler_idle: Meter::new(),
            handler_idle_since: (0..num_io_threads.max(1))
                .map(|_| AtomicU64::new(BUSY))
                .collect(),
            processor_idle: processor_idle::RuntimeIdle::new(),
            client_software: Mutex::default(),
            created: now,
            listeners: listeners
                .iter()
                .map(|name| ListenerMetrics::new(name.clone(), now))
                .collect(),
        }
    }

    fn by_key(&self, api_key: i16) -> Option<&RequestMetrics> {
        usize::try_from(api_key)
            .ok()
            .and_then(|k| self.requests.get(k))
            .and_then(Option::as_ref)
    }

    /// Records a request answered (or closed on) at `times.sent`.
    pub(super) fn record_request(
        &self,
        api_key: i16,
        version: i16,
        kind: Kind,
        times: &RequestTimes,
    ) {
        match kind {
            Kind::Plain => {}
            Kind::FetchConsumer => self.fetch_consumer.record(version, times),
            Kind::FetchFollower => self.fetch_follower.record(version, times),
            Kind::Verification => return self.verification.record(version, times),
        }
        if let Some(metrics) = self.by_key(api_key) {
            metrics.record(version, times);
        }
    }

    /// Counts a request of a version Kafka 3.9 deprecates under `DeprecatedRequestsPerSec`,
    /// with the client software `recorder`'s connection named, under each name the request
    /// counts under (Kafka's `overrideMetricNames`); nothing for another version.
    pub(super) fn record_deprecated(
        &self,
        api_key: i16,
        version: i16,
        kind: Kind,
        recorder: &RequestRecorder,
    ) {
        let deprecated = ApiKey::from_i16(api_key)
            .and_then(|key| key.info().deprecated)
            .is_some_and(|range| range.contains(version));
        let (Some(metrics), true) = (self.by_key(api_key), deprecated) else {
            return;
        };
        let Some(software) = recorder.software() else {
            return;
        };
        let also = match kind {
            Kind::Plain => None,
            Kind::FetchConsumer => Some(&self.fetch_consumer),
            Kind::FetchFollower => Some(&self.fetch_follower),
            Kind::Verification => {
                let name = self.verification.name;
                return self.deprecated.mark(name, version, software);
            }
        };
        if let Some(also) = also {
            self.deprecated.mark(also.name, version, software.clone());
        }
        self.deprecated.mark(metrics.name, version, software);
    }

    fn mark_errors(&self, api_key: i16, code: i16, count: u64) {
        let meter = usize::try_from(api_key)
            .ok()
            .and_then(|k| self.errors.get(k))
            .zip(usize::try_from(i32::from(code) + 1).ok())
            .and_then(|(codes, index)| codes.get(index));
        if let Some(meter) = meter {
            meter.mark(count);
        }
    }

    /// A connection of listener `listener` (its index in the configured listeners) opened.
    pub(super) fn connection_created(&self, listener: usize) {
        if let Some(l) = self.listeners.get(listener) {
            l.created.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Listener `listener`'s acceptor waited `blocked` for a connection slot before accepting
    /// (Kafka's `blockedPercentMeter`).
    pub(super) fn acceptor_blocked(&self, listener: usize, blocked: Duration) {
        if let Some(l) = self.listeners.get(listener) {
            l.acceptor_blocked
                .mark(u64::try_from(blocked.as_nanos()).unwrap_or(u64::MAX));
        }
    }

    /// A connection of `listener` counts (`+1`) or no longer counts (`-1`) under `software`.
    fn count_client_software(&self, listener: usize, software: &ClientSoftware, delta: i64) {
        let mut counts = lock(&self.client_software);
        let key = (listener, software.clone());
        let count = counts.entry(key.clone()).or_default();
        *count = count.saturating_add_signed(delta);
        if *count == 0 {
            counts.remove(&key);
        }
    }

    /// A connection of listener `listener` closed.
    pub(super) fn connection_closed(&self, listener: usize) {
        if let Some(l) = self.listeners.get(listener) {
            l.closed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A handler task handed a response to its connection (`+1`), or the connection took it up
    /// (`-1`).
    pub(super) fn response_queued(&self, delta: i64) {
        self.response_queue.fetch_add(delta, Ordering::Relaxed);
    }

    fn nanos_since_created(&self, now: Instant) -> u64 {
        u64::try_from(now.saturating_duration_since(self.created).as_nanos()).unwrap_or(BUSY - 1)
    }

    /// Handler task `index` begins waiting for a request.
    pub(super) fn handler_waiting(&self, index: usize, now: Instant) {
        if let Some(since) = self.handler_idle_since.get(index) {
            since.store(self.nanos_since_created(now), Ordering::Relaxed);
        }
    }

    /// Handler task `index` has a request (or the queue closed): its wait is idle time.
    pub(super) fn handler_woke(&self, index: usize, now: Instant) {
        if let Some(since) = self.handler_idle_since.get(index) {
            let since = since.swap(BUSY, Ordering::Relaxed);
            self.mark_idle(since, self.nanos_since_created(now));
        }
    }

    fn mark_idle(&self, since: u64, now: u64) {
        if since != BUSY {
            let threads = self.handler_idle_since.len() as u64;
            self.handler_idle.mark(now.saturating_sub(since) / threads);
        }
    }

    /// Counts the waits still going on so far, so a quiet pool reads as idle.
    fn flush_idle(&self, now: Instant) {
        let now = self.nanos_since_created(now);
        for since in self.handler_idle_since.iter() {
            let start = since.load(Ordering::Relaxed);
            if start != BUSY
                && since
                    .compare_exchange(start, now, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                self.mark_idle(start, now);
            }
        }
    }
}

/// A meter of nanoseconds read as Yammer reads one whose rate unit is nanoseconds: its rates
/// are fractions of the time.
fn per_nanosecond(snapshot: MeterSnapshot) -> MeterSnapshot {
    const NANOS: f64 = 1e9;
    MeterSnapshot {
        count: snapshot.count,
        mean_rate: snapshot.mean_rate / NANOS,
        one_minute_rate: snapshot.one_minute_rate / NANOS,
        five_minute_rate: snapshot.five_minute_rate / NANOS,
        fifteen_minute_rate: snapshot.fifteen_minute_rate / NANOS,
    }
}

/// Kafka's name of an error code (`NONE`, `NOT_LEADER_OR_FOLLOWER`): the code's variant name
/// in upper snake case.
fn error_name(code: ErrorCode) -> String {
    let camel = format!("{code:?}");
    let mut out = String::with_capacity(camel.len() + 8);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

impl MetricsSource for NetworkMetrics {
    fn collect(&self, out: &mut Vec<MetricSample>) {
        let request_queue = self
            .request_queue
            .upgrade()
            .map_or(0, |q| q.max_capacity() - q.capacity());
        out.push(MetricSample {
            mbean: MBeanName::yammer("kafka.network", "RequestChannel", "RequestQueueSize", &[]),
            reading: Reading::Gauge(request_queue as f64),
        });
        out.push(MetricSample {
            mbean: MBeanName::yammer("kafka.network", "RequestChannel", "ResponseQueueSize", &[]),
            reading: Reading::Gauge(self.response_queue.load(Ordering::Relaxed).max(0) as f64),
        });
        out.push(MetricSample {
            mbean: MBeanName::yammer(
                "kafka.server",
                "KafkaRequestHandlerPool",
                "RequestHandlerAvgIdlePercent",
                &[],
            ),
            reading: Reading::Meter(per_nanosecond(self.handler_idle.snapshot())),
        });
        if let Some(idle) = self.processor_idle.value() {
            out.push(MetricSample {
                mbean: MBeanName::yammer(
                    "kafka.network",
                    "SocketServer",
                    "NetworkProcessorAvgIdlePercent",
                    &[],
                ),
                reading: Reading::Gauge(idle),
            });
        }
        for metrics in self.requests.iter().flatten().chain([
            &self.fetch_consumer,
            &self.fetch_follower,
            &self.verification,
        ]) {
            metrics.collect(out);
        }
        self.deprecated.collect(out);
        for (key, codes) in self.errors.iter().enumerate() {
            let Some(name) = i16::try_from(key).ok().and_then(served_name) else {
                continue;
            };
            for (index, meter) in codes.iter().enumerate() {
                let code = i16::try_from(index)
                    .ok()
                    .and_then(|i| ErrorCode::from_code(i - 1));
                if let (Some(code), true) = (code, meter.count() > 0) {
                    out.push(MetricSample {
                        mbean: request_mbean(
                            "ErrorsPerSec",
                            &[("request", name), ("error", &error_name(code))],
                        ),
                        reading: Reading::Meter(meter.snapshot()),
                    });
                }
            }
        }
        for ((listener, (name, version)), count) in lock(&self.client_software).iter() {
            let Some(listener) = self.listeners.get(*listener) else {
                continue;
            };
            out.push(MetricSample {
                mbean: MBeanName::kafka_group(
                    "kafka.server",
                    "socket-server-metrics",
                    &[
                        ("clientSoftwareName", name),
                        ("clientSoftwareVersion", version),
                        ("listener", &listener.name),
                        ("networkProcessor", "0"),
                    ],
                ),
                reading: Reading::KafkaMetrics(vec![("connections", *count as f64)]),
            });
        }
        let now = Instant::now();
        for listener in self.listeners.iter() {
            out.push(MetricSample {
                mbean: MBeanName::yammer(
                    "kafka.network",
                    "Acceptor",
                    "AcceptorBlockedPercent",
                    &[("listener", &listener.name)],
                ),
                reading: Reading::Meter(per_nanosecond(listener.acceptor_blocked.snapshot())),
            });
            out.push(MetricSample {
                mbean: MBeanName::kafka_group(
                    "kafka.server",
                    "socket-server-metrics",
                    &[("listener", &listener.name), ("networkProcessor", "0")],
                ),
                reading: Reading::KafkaMetrics(listener.attributes(now)),
            });
        }
    }

    fn tick(&self) {
        for metrics in self.requests.iter().flatten().chain([
            &self.fetch_consumer,
            &self.fetch_follower,
            &self.verification,
        ]) {
            metrics.tick();
        }
        for meter in self.errors.iter().flatten().filter(|m| m.count() > 0) {
            meter.tick();
        }
        self.deprecated.tick();
        let now = Instant::now();
        self.flush_idle(now);
        self.handler_idle.tick();
        self.processor_idle.tick();
        for listener in self.listeners.iter() {
            listener.acceptor_blocked.tick();
            listener.tick(now);
        }
    }
}

/// The name of API `key` when a ZooKeeper-mode broker serves it.
fn served_name(key: i16) -> Option<&'static str> {
    ApiKey::from_i16(key)
        .map(ApiKey::info)
        .filter(|info| info.listeners.contains(&Listener::ZkBroker))
        .map(|info| info.name)
}

mod deprecated;
mod processor_idle;
mod request_times;
#[cfg(test)]
mod tests;
