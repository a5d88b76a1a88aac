//! The network layer: Kafka's `SocketServer` and `RequestChannel`. It accepts connections, reads
//! size-prefixed request frames, queues them for a bounded pool of handler tasks and writes the
//! responses back, buffers with `writev` and file ranges with `sendfile(2)`.
//!
//! It knows nothing of Kafka's APIs: a [`RequestHandler`] (the server layer's `KafkaApis`) turns
//! each [`Request`] frame into a [`Response`]. It uses only `protocol` and `cluster`, never
//! `storage` or `server`.
//!
//! - `socket_server`: listeners, acceptors, the request queue and handler tasks, shutdown.
//! - [`authenticator`]: the seam where a listener authenticates a connection (SASL) before its
//!   first request reaches the handler.
//! - `connection`: one task per connection; framing; one request in processing at a time.
//! - `channel_throttle`: a connection's mute deadline, set by a handler that throttles its
//!   client for a quota (Kafka's channel muting, KIP-219).
//! - `connection_quotas`: `max.connections`, `max.connections.per.ip`, the IP connection-rate
//!   quotas (`connection_creation_rate`, pushed in by the server through
//!   [`IpConnectionRateQuotas`]), and the request memory of `queued.max.request.bytes`.
//! - `memory_pool`: Kafka's `MemoryPool`, the bytes a frame takes before its body is read.
//! - `metrics`: the request, request channel, handler pool and connection metrics, and the
//!   [`RequestRecorder`] a handler reports what only it knows through.
//! - `stream`: the byte stream under a connection, plain TCP or TLS.
//! - `tls`: TLS handshakes (rustls) on listeners and at connect; the SSL principal seam.
//! - `transmit`: writing a response's parts (`sendfile(2)` on plain TCP, staged copies on TLS).
//! - `request`: the types passed between this layer and the handler.
//! - `network_client`: the outbound side, a client of one other broker (Kafka's
//!   `NetworkClient` under the controller's channel and the replica fetchers); its
//!   `streaming_fetch` hands a follower's Fetch response over partition by partition.
//! - `fetch_response_reader`: a Fetch response read off the socket as it arrives, each
//!   partition's records spliced into a pipe for the follower to splice into its log.
//! - `client_authenticator`: the seam where that client authenticates a new connection
//!   (SASL toward a SASL inter-broker listener) before its first request.

pub mod authenticator;
pub(crate) mod channel_throttle;
pub(crate) mod client_authenticator;
mod connection;
pub(crate) mod connection_quotas;
pub(crate) mod fetch_response_reader;
pub(crate) mod memory_pool;
pub(crate) mod metrics;
pub(crate) mod network_client;
pub(crate) mod request;
pub(crate) mod socket_server;
pub(crate) mod stream;
pub(crate) mod tls;
mod transmit;

pub use authenticator::{
    AuthenticationError, AuthenticationIo, Authenticator, ListenerAuthenticator,
};
pub use channel_throttle::{ChannelThrottle, NetworkTimeCallback};
pub use client_authenticator::{
    ClientAuthenticationError, ClientAuthenticationIo, ClientAuthenticator,
    ClientAuthenticatorHandle,
};
pub use connection::FrameError;
pub use connection_quotas::{ConnectionLimits, IpConnectionRateQuotas};
pub use metrics::RequestRecorder;
pub use network_client::{ClientSecurity, NetworkClient, NetworkClientConfig, NetworkClientError};
pub use request::{
    ConnectionId, DeferredResponse, FileRange, MAX_PIPELINED_RESPONSES, Request, RequestHandler,
    Response, ResponsePart,
};
pub use socket_server::{BoundEndPoint, EndPoint, NetworkError, SocketServer, SocketServerConfig};
pub use stream::ConnectionStream;
pub use tls::{ListenerTls, SslPrincipalBuilder, TlsError};
