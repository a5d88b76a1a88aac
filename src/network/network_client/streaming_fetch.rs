//! [`NetworkClient::fetch_streaming`]: a replica fetcher's Fetch, its response handed to the
//! fetcher partition by partition as it is read, the records of a plain connection going from
//! the socket into the follower's log through a pipe (`fetch_response_reader`).
//!
//! The request is written and the response's size prefix awaited on the runtime (that is the
//! long poll); then the TCP stream leaves the runtime for a blocking thread, which reads the
//! rest in blocking mode and runs the handler, and comes back once the response is read. A call
//! dropped meanwhile leaves the connection with that thread, which closes it when done; the
//! next call connects again, as after any dropped call.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::{ExchangeError, Link, NetworkClient, NetworkClientError};
use crate::network::fetch_response_reader::{
    FIRST_STREAMED_VERSION, FetchResponseHandler, FetchResponseHead, Pipes, deliver_decoded,
    read_fetch_response,
};
use crate::network::stream::ConnectionStream;
use crate::protocol::messages::{ApiKey, RequestKind, ResponseKind};

/// Each pipe a streamed response's records wait in: Kafka's default `replica.fetch.max.bytes`
/// (and `/proc/sys/fs/pipe-max-size`'s default), with more pipes for pages that are not full.
const PIPE_BYTES: usize = 1 << 20;

/// The handler, returned with the response's top-level fields.
pub(super) type Handled = (FetchResponseHead, Box<dyn FetchResponseHandler>);

impl NetworkClient {
    /// Sends the Fetch `body` at `version` and hands each partition of the response to
    /// `handler`, on a blocking thread. On a plain connection at a flexible version (12+) the
    /// response is read as it arrives and the records wait in a pipe; otherwise (TLS, older
    /// versions) it is read and decoded whole and the records are in memory.
    pub async fn fetch_streaming(
        &self,
        body: &RequestKind,
        version: i16,
        handler: Box<dyn FetchResponseHandler>,
    ) -> Result<Handled, NetworkClientError> {
        let api = body.api_key();
        let mut link = self.link.lock().await;
        let (frame, correlation_id) = self.begin(&mut link, body, version).await?;
        let streamed = api == ApiKey::Fetch
            && version >= FIRST_STREAMED_VERSION
            && link.stream.as_ref().is_some_and(|s| !s.is_tls());
        link.in_flight = true;
        let result = if streamed {
            self.read_streamed(&mut link, &frame, version, correlation_id, handler)
                .await
        } else {
            self.read_whole(&mut link, &frame, api, version, correlation_id, handler)
                .await
        };
        self.settle(&mut link, result)
    }

    /// The response read whole and decoded, then handed over.
    async fn read_whole(
        &self,
        link: &mut Link,
        frame: &[u8],
        api: ApiKey,
        version: i16,
        correlation_id: i32,
        mut handler: Box<dyn FetchResponseHandler>,
    ) -> Result<Handled, NetworkClientError> {
        let response = match self
            .exchange_on(link, frame, api, version, correlation_id)
            .await?
        {
            ResponseKind::Fetch(response) => response,
            _ => {
                return Err(self.exchange_failed(
                    api,
                    version,
                    correlation_id,
                    ExchangeError::Io(std::io::Error::other("not a Fetch response")),
                ));
            }
        };
        tokio::task::spawn_blocking(move || {
            let head = deliver_decoded(response, &mut *handler);
            (head, handler)
        })
        .await
        .map_err(|join| self.handler_failed(api, version, correlation_id, join))
    }

    /// The response read as it arrives, on a blocking thread.
    async fn read_streamed(
        &self,
        link: &mut Link,
        frame: &[u8],
        version: i16,
        correlation_id: i32,
        mut handler: Box<dyn FetchResponseHandler>,
    ) -> Result<Handled, NetworkClientError> {
        let api = ApiKey::Fetch;
        let timeout = self.config.request_timeout;
        let deadline = Instant::now() + timeout;
        let Some(stream) = link.stream.as_mut() else {
            return Err(self.not_connected(api, version, correlation_id));
        };
        let size_prefix = tokio::time::timeout_at(deadline, async {
            stream.write_all(frame).await?;
            stream.flush().await?;
            stream.read_i32().await
        })
        .await;
        let size = match size_prefix {
            Ok(Ok(size)) => size,
            Ok(Err(err)) => {
                return Err(self.exchange_failed(
                    api,
                    version,
                    correlation_id,
                    ExchangeError::Io(err),
                ));
            }
            Err(_) => return Err(self.timed_out(api, version, correlation_id)),
        };
        let size = usize::try_from(size)
            .ok()
            .filter(|&n| n <= self.config.max_response_bytes)
            .ok_or_else(|| {
                self.exchange_failed(
                    api,
                    version,
                    correlation_id,
                    ExchangeError::TooLarge(i64::from(size)),
                )
            })?;
        let io_failed =
            |err| self.exchange_failed(api, version, correlation_id, ExchangeError::Io(err));
        let Some(ConnectionStream::Plain(tcp)) = link.stream.take() else {
            return Err(self.not_connected(api, version, correlation_id));
        };
        let socket = tcp.into_std().map_err(io_failed)?;
        socket.set_nonblocking(false).map_err(io_failed)?;
        let mut pipes = match link.pipes.take() {
            Some(pipes) => pipes,
            None => Pipes::new(PIPE_BYTES).map_err(io_failed)?,
        };
        let blocking_deadline = std::time::Instant::now() + deadline.duration_since(Instant::now());
        let read = tokio::task::spawn_blocking(move || {
            let read = read_fetch_response(
                &socket,
                &mut pipes,
                version,
                correlation_id,
                size,
                blocking_deadline,
                &mut *handler,
            );
            (socket, pipes, handler, read)
        })
        .await;
        let (socket, pipes, handler, read) =
            read.map_err(|join| self.handler_failed(api, version, correlation_id, join))?;
        let head = read.map_err(|err| self.exchange_failed(api, version, correlation_id, err))?;
        // Back on the runtime for the next request; a socket that cannot go back is closed
        // and the next call connects again.
        let restored = socket
            .set_nonblocking(true)
            .and_then(|()| socket.set_read_timeout(None))
            .and_then(|()| TcpStream::from_std(socket));
        if let Ok(tcp) = restored {
            link.stream = Some(ConnectionStream::Plain(tcp));
            link.pipes = Some(pipes);
        }
        Ok((head, handler))
    }

    fn handler_failed(
        &self,
        api: ApiKey,
        version: i16,
        correlation_id: i32,
        join: tokio::task::JoinError,
    ) -> NetworkClientError {
        NetworkClientError::Disconnected {
            destination: self.destination.clone(),
            api: api.info().name,
            version,
            correlation_id,
            source: std::io::Error::other(format!("the response's handler failed: {join}")),
        }
    }
}
