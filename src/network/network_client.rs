//! The outbound inter-broker client: Kafka's `NetworkClient` as its `InterBrokerSendThread`s and
//! the controller's `RequestSendThread` use it. One connection to one destination broker
//! (`host:port`); requests built with the generated codec at the version the caller chooses,
//! with the request header version that API and version take (v1, or v2 from the first flexible
//! version), this client's id and increasing correlation ids; each response read, its header
//! (v0, or v1 when flexible) matched to the request's correlation id and its body decoded.
//!
//! One request is in flight at a time and requests go out in the order of the calls (Kafka's
//! controller channel has one in flight per broker): the connection sits behind an async mutex.
//! A request that gets no response within the request timeout fails and the connection is
//! closed, as Kafka's client disconnects on a request timeout; so does any I/O error or a
//! response that does not match, and a call dropped before its response came (the caller
//! stopped waiting: the late response must not be read as the next request's). The next call
//! reconnects, first waiting out an exponential backoff (`reconnect.backoff.ms` doubling up to
//! `reconnect.backoff.max.ms`) after consecutive failures. Calls are not retried here: whether a request may be sent again is the caller's
//! decision (the controller's channel retries until the broker goes away).
//!
//! A client configured with an authenticator (`client_authenticator`: SASL toward a SASL
//! inter-broker listener) runs it on each new connection before the first request; a refusal
//! or a timeout fails the request as a failed connect does, with the same backoff.
//!
//! It knows nothing of the server or the controller; they reach it through their own traits.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::stream::ConnectionStream;
use super::tls::{TlsError, connect_tls};
use crate::protocol::codec::{self as c, Message as _};

use super::client_authenticator::{
    ClientAuthenticationError, ClientAuthenticationIo, ClientAuthenticatorHandle,
};
use crate::protocol::messages::{
    ApiKey, RequestHeader, RequestKind, ResponseHeader, ResponseKind, encode_request_frame,
};

mod streaming_fetch;

/// How a broker's outbound connections are secured: the inter-broker listener's TLS and SASL.
/// The default is plain TCP without authentication.
#[derive(Debug, Clone, Default)]
pub struct ClientSecurity {
    /// For an SSL or SASL_SSL inter-broker listener.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// For a SASL_PLAINTEXT or SASL_SSL inter-broker listener.
    pub authenticator: Option<ClientAuthenticatorHandle>,
}

/// How the client connects and waits.
#[derive(Debug, Clone)]
pub struct NetworkClientConfig {
    /// The `client_id` of every request header.
    pub client_id: String,
    /// How long a request may wait for its response (Kafka's `request.timeout.ms`; the
    /// controller's channel uses `controller.socket.timeout.ms`, 30000).
    pub request_timeout: Duration,
    /// How long a connection attempt may take (`socket.connection.setup.timeout.ms`).
    pub connect_timeout: Duration,
    /// The backoff after the first consecutive failure (`reconnect.backoff.ms`, 50)...
    pub reconnect_backoff: Duration,
    /// ...doubling per failure up to this (`reconnect.backoff.max.ms`, 1000).
    pub reconnect_backoff_max: Duration,
    /// The largest response accepted; a larger size prefix is a broken peer, not an allocation.
    pub max_response_bytes: usize,
    /// TLS for the connection (the inter-broker listener is SSL or SASL_SSL): the handshake
    /// runs at connect, within `connect_timeout`, the destination's host checked against its
    /// certificate. `None`: plain TCP.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// Authenticates every new connection (after TLS, if any) before its first request (SASL
    /// inter-broker listeners); `None` sends at once.
    pub authenticator: Option<ClientAuthenticatorHandle>,
}

impl Default for NetworkClientConfig {
    /// Kafka 3.9's client defaults.
    fn default() -> Self {
        NetworkClientConfig {
            client_id: String::new(),
            request_timeout: Duration::from_millis(30_000),
            connect_timeout: Duration::from_millis(10_000),
            reconnect_backoff: Duration::from_millis(50),
            reconnect_backoff_max: Duration::from_millis(1000),
            max_response_bytes: 100 * 1024 * 1024,
            tls: None,
            authenticator: None,
        }
    }
}

/// Why a request got no response.
#[derive(Debug, thiserror::Error)]
pub enum NetworkClientError {
    #[error("TLS to {destination} failed: {source}")]
    Tls {
        destination: String,
        #[source]
        source: TlsError,
    },
    #[error("{api} v{version} is not a version Kafka 3.9 defines (to {destination})")]
    UnsupportedVersion {
        destination: String,
        api: &'static str,
        version: i16,
    },
    #[error("cannot connect to {destination}: {source}")]
    Connect {
        destination: String,
        source: std::io::Error,
    },
    #[error("cannot authenticate to {destination}: {source}")]
    Authentication {
        destination: String,
        source: ClientAuthenticationError,
    },
    #[error("no authentication from {destination} within {timeout_ms} ms")]
    AuthenticationTimeout {
        destination: String,
        timeout_ms: u64,
    },
    #[error("cannot connect to {destination} within {timeout_ms} ms")]
    ConnectTimeout {
        destination: String,
        timeout_ms: u64,
    },
    #[error("cannot encode {api} v{version} for {destination}: {source}")]
    Encode {
        destination: String,
        api: &'static str,
        version: i16,
        source: c::EncodeError,
    },
    #[error(
        "no response from {destination} to {api} v{version} (correlation id {correlation_id}) within {timeout_ms} ms"
    )]
    RequestTimeout {
        destination: String,
        api: &'static str,
        version: i16,
        correlation_id: i32,
        timeout_ms: u64,
    },
    #[error(
        "connection to {destination} lost during {api} v{version} (correlation id {correlation_id}): {source}"
    )]
    Disconnected {
        destination: String,
        api: &'static str,
        version: i16,
        correlation_id: i32,
        source: std::io::Error,
    },
    #[error("{destination} sent a {size}-byte response to {api}, over the {max}-byte limit")]
    ResponseTooLarge {
        destination: String,
        api: &'static str,
        size: i64,
        max: usize,
    },
    #[error("{destination} answered correlation id {received} to {api}, expected {expected}")]
    CorrelationMismatch {
        destination: String,
        api: &'static str,
        expected: i32,
        received: i32,
    },
    #[error("cannot decode {destination}'s {api} v{version} response: {source}")]
    Decode {
        destination: String,
        api: &'static str,
        version: i16,
        source: c::DecodeError,
    },
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[derive(Debug, Default)]
struct Link {
    stream: Option<ConnectionStream>,
    next_correlation_id: i32,
    /// Consecutive failures (connects and requests) since the last success.
    failures: u32,
    /// No connection attempt before this, after a failure.
    retry_at: Option<Instant>,
    /// Connections made so far.
    connects: u64,
    /// A request is written and its response not read yet. Still set when the next call
    /// starts, it means the call before was dropped mid-exchange (its caller stopped waiting):
    /// the response may still come and would be read as the next request's.
    in_flight: bool,
    /// Where responses are read: the allocation is taken back for the next response once the
    /// previous one's bytes (records a fetcher appended, say) are all dropped, and nothing is
    /// zeroed before the socket fills it.
    buffer: bytes::BytesMut,
    /// Where a streamed Fetch response's records wait (`streaming_fetch`); made on first use,
    /// dropped with the connection after a failure (they may hold a partial response).
    pipes: Option<super::fetch_response_reader::Pipes>,
}

/// A client of one destination broker.
#[derive(Debug)]
pub struct NetworkClient {
    destination: String,
    config: NetworkClientConfig,
    link: Mutex<Link>,
}

/// Why a connection could not be opened.
enum OpenError {
    Io(std::io::Error),
    Tls(TlsError),
}

/// What went wrong inside one exchange, before the destination and API are attached.
#[derive(Debug)]
pub(super) enum ExchangeError {
    Io(std::io::Error),
    TooLarge(i64),
    Mismatch(i32),
    Decode(c::DecodeError),
}

impl NetworkClient {
    /// A client of `destination` (`host:port`); it connects on the first request.
    pub fn new(destination: impl Into<String>, config: NetworkClientConfig) -> NetworkClient {
        NetworkClient {
            destination: destination.into(),
            config,
            link: Mutex::new(Link::default()),
        }
    }

    pub fn destination(&self) -> &str {
        &self.destination
    }

    /// How many connections were made so far (a reconnect counts).
    pub async fn connects(&self) -> u64 {
        self.link.lock().await.connects
    }

    /// Whether a connection is open now.
    pub async fn is_connected(&self) -> bool {
        self.link.lock().await.stream.is_some()
    }

    /// Closes the connection, if any; the next request reconnects.
    pub async fn disconnect(&self) {
        self.link.lock().await.stream = None;
    }

    fn backoff(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(16);
        self.config
            .reconnect_backoff
            .saturating_mul(1 << doublings)
            .min(self.config.reconnect_backoff_max)
    }

    fn failed(&self, link: &mut Link) {
        link.stream = None;
        link.pipes = None;
        link.failures = link.failures.saturating_add(1);
        link.retry_at = Some(Instant::now() + self.backoff(link.failures));
    }

    async fn connect(&self, link: &mut Link) -> Result<(), NetworkClientError> {
        if let Some(at) = link.retry_at {
            tokio::time::sleep_until(at).await;
        }
        let attempt = tokio::time::timeout(self.config.connect_timeout, self.open_stream()).await;
        let stream = match attempt {
            Ok(Ok(stream)) => stream,
            Ok(Err(OpenError::Tls(source))) => {
                self.failed(link);
                return Err(NetworkClientError::Tls {
                    destination: self.destination.clone(),
                    source,
                });
            }
            Ok(Err(OpenError::Io(source))) => {
                self.failed(link);
                return Err(NetworkClientError::Connect {
                    destination: self.destination.clone(),
                    source,
                });
            }
            Err(_) => {
                self.failed(link);
                return Err(NetworkClientError::ConnectTimeout {
                    destination: self.destination.clone(),
                    timeout_ms: millis(self.config.connect_timeout),
                });
            }
        };
        let mut stream = stream;
        if let Some(authenticator) = &self.config.authenticator {
            let Link {
                buffer,
                next_correlation_id,
                ..
            } = link;
            let mut io = ClientAuthenticationIo {
                stream: &mut stream,
                buffer,
                next_correlation_id,
                client_id: &self.config.client_id,
                max_response_bytes: self.config.max_response_bytes,
                destination: &self.destination,
            };
            let outcome = tokio::time::timeout(
                self.config.request_timeout,
                authenticator.0.authenticate(&mut io),
            )
            .await;
            let err = match outcome {
                Ok(Ok(())) => None,
                Ok(Err(source)) => Some(NetworkClientError::Authentication {
                    destination: self.destination.clone(),
                    source,
                }),
                Err(_) => Some(NetworkClientError::AuthenticationTimeout {
                    destination: self.destination.clone(),
                    timeout_ms: millis(self.config.request_timeout),
                }),
            };
            if let Some(err) = err {
                self.failed(link);
                return Err(err);
            }
        }
        link.stream = Some(stream);
        link.connects += 1;
        Ok(())
    }

    /// TCP, then TLS when configured (the layer a SASL exchange would follow).
    async fn open_stream(&self) -> Result<ConnectionStream, OpenError> {
        let tcp = TcpStream::connect(&self.destination)
            .await
            .map_err(OpenError::Io)?;
        // Requests are small and answered one at a time: Nagle would only add latency.
        let _ = tcp.set_nodelay(true);
        match &self.config.tls {
            None => Ok(ConnectionStream::Plain(tcp)),
            Some(tls) => connect_tls(tcp, tls, &self.destination)
                .await
                .map_err(OpenError::Tls),
        }
    }

    /// Sends `body` at `version` and waits for its response.
    pub async fn send(
        &self,
        body: &RequestKind,
        version: i16,
    ) -> Result<ResponseKind, NetworkClientError> {
        let api = body.api_key();
        let mut link = self.link.lock().await;
        let (frame, correlation_id) = self.begin(&mut link, body, version).await?;
        link.in_flight = true;
        let exchanged = self
            .exchange_on(&mut link, &frame, api, version, correlation_id)
            .await;
        self.settle(&mut link, exchanged)
    }

    /// Ends a call: the link's failures reset on success; on failure the connection is dropped
    /// (its state is unknown: a late response would be read as the next request's).
    fn settle<T>(
        &self,
        link: &mut Link,
        result: Result<T, NetworkClientError>,
    ) -> Result<T, NetworkClientError> {
        link.in_flight = false;
        match result {
            Ok(value) => {
                self.succeeded(link);
                Ok(value)
            }
            Err(err) => {
                self.failed(link);
                Err(err)
            }
        }
    }

    /// Writes `frame` on the link's connection and reads its response, within the request
    /// timeout.
    async fn exchange_on(
        &self,
        link: &mut Link,
        frame: &[u8],
        api: ApiKey,
        version: i16,
        correlation_id: i32,
    ) -> Result<ResponseKind, NetworkClientError> {
        let Link { stream, buffer, .. } = link;
        let Some(stream) = stream.as_mut() else {
            return Err(self.not_connected(api, version, correlation_id));
        };
        let exchanged = tokio::time::timeout(
            self.config.request_timeout,
            exchange(
                stream,
                buffer,
                frame,
                api,
                version,
                correlation_id,
                self.config.max_response_bytes,
            ),
        )
        .await;
        match exchanged {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(err)) => Err(self.exchange_failed(api, version, correlation_id, err)),
            Err(_) => Err(self.timed_out(api, version, correlation_id)),
        }
    }

    /// What every request does before it is written: the version checked, a connection made
    /// (after a dropped call, a new one), the next correlation id taken and the frame encoded.
    async fn begin(
        &self,
        link: &mut Link,
        body: &RequestKind,
        version: i16,
    ) -> Result<(bytes::BytesMut, i32), NetworkClientError> {
        let info = body.api_key().info();
        if !info.valid.contains(version) {
            return Err(NetworkClientError::UnsupportedVersion {
                destination: self.destination.clone(),
                api: info.name,
                version,
            });
        }
        if link.in_flight {
            // The stream's state is unknown after a dropped call: start over on a new one.
            link.in_flight = false;
            link.stream = None;
        }
        if link.stream.is_none() {
            self.connect(link).await?;
        }
        let correlation_id = link.next_correlation_id;
        // Kafka's client wraps its correlation ids back to 0.
        link.next_correlation_id = correlation_id.checked_add(1).unwrap_or(0);
        let header = RequestHeader {
            request_api_key: info.key,
            request_api_version: version,
            correlation_id,
            client_id: Some(c::StrBytes::from(self.config.client_id.as_str())),
            unknown_tagged_fields: Vec::new(),
        };
        let frame =
            encode_request_frame(&header, body).map_err(|source| NetworkClientError::Encode {
                destination: self.destination.clone(),
                api: info.name,
                version,
                source,
            })?;
        Ok((frame, correlation_id))
    }

    fn succeeded(&self, link: &mut Link) {
        link.failures = 0;
        link.retry_at = None;
    }

    fn not_connected(&self, api: ApiKey, version: i16, correlation_id: i32) -> NetworkClientError {
        NetworkClientError::Disconnected {
            destination: self.destination.clone(),
            api: api.info().name,
            version,
            correlation_id,
            source: std::io::ErrorKind::NotConnected.into(),
        }
    }

    fn timed_out(&self, api: ApiKey, version: i16, correlation_id: i32) -> NetworkClientError {
        NetworkClientError::RequestTimeout {
            destination: self.destination.clone(),
            api: api.info().name,
            version,
            correlation_id,
            timeout_ms: millis(self.config.request_timeout),
        }
    }

    fn exchange_failed(
        &self,
        api: ApiKey,
        version: i16,
        correlation_id: i32,
        err: ExchangeError,
    ) -> NetworkClientError {
        let destination = self.destination.clone();
        let api = api.info().name;
        match err {
            ExchangeError::Io(source) if source.kind() == std::io::ErrorKind::TimedOut => {
                NetworkClientError::RequestTimeout {
                    destination,
                    api,
                    version,
                    correlation_id,
                    timeout_ms: millis(self.config.request_timeout),
                }
            }
            ExchangeError::Io(source) => NetworkClientError::Disconnected {
                destination,
                api,
                version,
                correlation_id,
                source,
            },
            ExchangeError::TooLarge(size) => NetworkClientError::ResponseTooLarge {
                destination,
                api,
                size,
                max: self.config.max_response_bytes,
            },
            ExchangeError::Mismatch(received) => NetworkClientError::CorrelationMismatch {
                destination,
                api,
                expected: correlation_id,
                received,
            },
            ExchangeError::Decode(source) => NetworkClientError::Decode {
                destination,
                api,
                version,
                source,
            },
        }
    }
}

/// Writes one request frame and reads its response: the size prefix checked against
/// `max_response_bytes`, the header's correlation id against the request's, the body decoded.
pub(super) async fn exchange(
    stream: &mut ConnectionStream,
    buffer: &mut bytes::BytesMut,
    frame: &[u8],
    api: ApiKey,
    version: i16,
    correlation_id: i32,
    max_response_bytes: usize,
) -> Result<ResponseKind, ExchangeError> {
    stream.write_all(frame).await.map_err(ExchangeError::Io)?;
    stream.flush().await.map_err(ExchangeError::Io)?;
    let size = stream.read_i32().await.map_err(ExchangeError::Io)?;
    let len = usize::try_from(size)
        .ok()
        .filter(|&n| n <= max_response_bytes)
        .ok_or(ExchangeError::TooLarge(i64::from(size)))?;
    buffer.clear();
    buffer.reserve(len);
    while buffer.len() < len {
        let missing = len - buffer.len();
        let read = stream
            .read_buf(&mut bytes::BufMut::limit(&mut *buffer, missing))
            .await
            .map_err(ExchangeError::Io)?;
        if read == 0 {
            return Err(ExchangeError::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
    }
    let mut r = c::Reader::new(buffer.split_to(len).freeze());
    let header_version = api.info().response_header_version(version);
    let header = ResponseHeader::decode(&mut r, header_version).map_err(ExchangeError::Decode)?;
    if header.correlation_id != correlation_id {
        return Err(ExchangeError::Mismatch(header.correlation_id));
    }
    ResponseKind::decode(api, &mut r, version).map_err(ExchangeError::Decode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::ApiVersionsRequest;

    fn config() -> NetworkClientConfig {
        NetworkClientConfig {
            client_id: "test".into(),
            request_timeout: Duration::from_millis(300),
            connect_timeout: Duration::from_secs(2),
            reconnect_backoff: Duration::from_millis(100),
            reconnect_backoff_max: Duration::from_millis(250),
            max_response_bytes: 1024,
            tls: None,
            authenticator: None,
        }
    }

    fn api_versions() -> RequestKind {
        RequestKind::ApiVersions(ApiVersionsRequest::default())
    }

    #[test]
    fn backoff_doubles_to_its_cap() {
        let client = NetworkClient::new("127.0.0.1:1", config());
        let ms: Vec<u128> = (1..=4).map(|f| client.backoff(f).as_millis()).collect();
        assert_eq!(ms, [100, 200, 250, 250]);
    }

    #[tokio::test]
    async fn a_refused_connect_backs_off_before_the_next_attempt() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let client = NetworkClient::new(format!("127.0.0.1:{port}"), config());
        let err = client.send(&api_versions(), 3).await.unwrap_err();
        assert!(
            matches!(&err, NetworkClientError::Connect { destination, .. }
            if destination == &format!("127.0.0.1:{port}")),
            "{err}"
        );
        let start = std::time::Instant::now();
        assert!(client.send(&api_versions(), 3).await.is_err());
        assert!(
            start.elapsed() >= Duration::from_millis(100),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(client.connects().await, 0);
    }

    #[tokio::test]
    async fn versions_outside_the_spec_are_refused_before_connecting() {
        let client = NetworkClient::new("127.0.0.1:1", config());
        let err = client.send(&api_versions(), 9).await.unwrap_err();
        assert!(
            matches!(
                err,
                NetworkClientError::UnsupportedVersion {
                    api: "ApiVersions",
                    version: 9,
                    ..
                }
            ),
            "{err}"
        );
    }

    /// A peer that reads one request and answers with `answer(correlation_id)`.
    async fn peer(answer: fn(i32) -> Vec<u8>) -> (String, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let task = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let size = s.read_i32().await.unwrap();
            let mut req = vec![0u8; usize::try_from(size).unwrap()];
            s.read_exact(&mut req).await.unwrap();
            let correlation_id = i32::from_be_bytes([req[4], req[5], req[6], req[7]]);
            s.write_all(&answer(correlation_id)).await.unwrap();
            // Hold the connection until the client drops it.
            let mut rest = Vec::new();
            let _ = s.read_to_end(&mut rest).await;
        });
        (addr, task)
    }

    #[tokio::test]
    async fn a_response_for_another_request_closes_the_connection() {
        let (addr, task) = peer(|id| {
            let mut f = 4i32.to_be_bytes().to_vec();
            f.extend_from_slice(&(id + 7).to_be_bytes());
            f
        })
        .await;
        let client = NetworkClient::new(addr, config());
        let err = client.send(&api_versions(), 0).await.unwrap_err();
        assert!(
            matches!(
                err,
                NetworkClientError::CorrelationMismatch {
                    expected: 0,
                    received: 7,
                    ..
                }
            ),
            "{err}"
        );
        assert!(!client.is_connected().await);
        task.await.unwrap();
    }

    #[tokio::test]
    async fn a_call_dropped_while_waiting_leaves_its_late_response_unread() {
        // Every connection answers ApiVersions v0 (no keys) to each request; the first request
        // (correlation id 0) only after 300 ms.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let server = tokio::spawn(async move {
            loop {
                let (mut s, _) = listener.accept().await.unwrap();
                tokio::spawn(async move {
                    while let Ok(size) = s.read_i32().await {
                        let mut req = vec![0u8; usize::try_from(size).unwrap()];
                        s.read_exact(&mut req).await.unwrap();
                        let id = i32::from_be_bytes([req[4], req[5], req[6], req[7]]);
                        if id == 0 {
                            tokio::time::sleep(Duration::from_millis(300)).await;
                        }
                        let mut f = 10i32.to_be_bytes().to_vec();
                        f.extend_from_slice(&id.to_be_bytes());
                        f.extend_from_slice(&0i16.to_be_bytes());
                        f.extend_from_slice(&0i32.to_be_bytes());
                        if s.write_all(&f).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        let client = NetworkClient::new(addr, config());
        let gave_up =
            tokio::time::timeout(Duration::from_millis(50), client.send(&api_versions(), 0)).await;
        assert!(gave_up.is_err(), "the first call was dropped while waiting");
        tokio::time::sleep(Duration::from_millis(400)).await;
        let answer = client.send(&api_versions(), 0).await.unwrap();
        assert!(matches!(answer, ResponseKind::ApiVersions(_)), "{answer:?}");
        assert_eq!(
            client.connects().await,
            2,
            "a new connection for the next call"
        );
        server.abort();
    }

    #[tokio::test]
    async fn an_oversized_response_is_refused_without_allocating_it() {
        let (addr, task) = peer(|_| i32::MAX.to_be_bytes().to_vec()).await;
        let client = NetworkClient::new(addr, config());
        let err = client.send(&api_versions(), 0).await.unwrap_err();
        assert!(
            matches!(
                err,
                NetworkClientError::ResponseTooLarge {
                    size: 2_147_483_647,
                    max: 1024,
                    ..
                }
            ),
            "{err}"
        );
        task.await.unwrap();
    }
}
