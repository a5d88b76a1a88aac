//! The metrics endpoint: `GET /metrics` over HTTP/1.1 on `kcli.metrics.listener`, answering the
//! Prometheus text format (0.0.4) that a render function makes at each scrape. Off unless the
//! key is set. Other paths are 404 and other methods 405.
//!
//! Rendering reads every registered source, so it runs on a blocking thread, never on the
//! runtime's workers that serve Kafka's requests.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The content type of the Prometheus text format, as the JMX exporter sends it.
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Makes the body of one scrape.
pub(crate) type Render = Arc<dyn Fn() -> String + Send + Sync>;

/// Why the endpoint could not start.
#[derive(Debug, thiserror::Error)]
pub enum MetricsEndpointError {
    #[error("kcli.metrics.jmx.exporter.config {path}: cannot read it: {source}")]
    ReadRules {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("kcli.metrics.jmx.exporter.config {path}: {source}")]
    Rules {
        path: String,
        #[source]
        source: super::jmx_exporter::JmxRulesError,
    },
    #[error("kcli.metrics.listener {address}: cannot listen: {source}")]
    Bind {
        address: String,
        #[source]
        source: std::io::Error,
    },
}

/// Binds `address` (`HOST:PORT`) and serves scrapes until `shutdown`, every task on `tasks`.
/// Returns the bound address (the port chosen when it was 0).
pub(crate) async fn start(
    address: &str,
    render: Render,
    shutdown: CancellationToken,
    tasks: &TaskTracker,
) -> Result<SocketAddr, MetricsEndpointError> {
    let bind_error = |source| MetricsEndpointError::Bind {
        address: address.to_string(),
        source,
    };
    let listener = TcpListener::bind(address).await.map_err(bind_error)?;
    let local = listener.local_addr().map_err(bind_error)?;
    let connections = tasks.clone();
    tasks.spawn(async move {
        loop {
            let accepted = tokio::select! {
                () = shutdown.cancelled() => break,
                accepted = listener.accept() => accepted,
            };
            let stream = match accepted {
                Ok((stream, _peer)) => stream,
                Err(error) => {
                    // A transient accept failure (descriptors running out) must not end the
                    // endpoint; the next accept tries again.
                    tracing::warn!(%error, "metrics endpoint: accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            };
            let render = Arc::clone(&render);
            let shutdown = shutdown.clone();
            connections.spawn(async move {
                let service = service_fn(move |request| answer(request, Arc::clone(&render)));
                let connection =
                    http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                tokio::pin!(connection);
                tokio::select! {
                    result = connection.as_mut() => {
                        if let Err(error) = result {
                            tracing::debug!(%error, "metrics endpoint: connection ended");
                        }
                    }
                    () = shutdown.cancelled() => connection.as_mut().graceful_shutdown(),
                }
            });
        }
    });
    tracing::info!(%local, "metrics endpoint listening");
    Ok(local)
}

async fn answer(
    request: Request<Incoming>,
    render: Render,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let reply = |status: StatusCode, content_type: &str, body: Bytes| {
        let mut response = Response::new(Full::new(body));
        *response.status_mut() = status;
        if let Ok(value) = header::HeaderValue::from_str(content_type) {
            response.headers_mut().insert(header::CONTENT_TYPE, value);
        }
        response
    };
    if request.uri().path() != "/metrics" {
        return Ok(reply(
            StatusCode::NOT_FOUND,
            "text/plain",
            Bytes::from_static(b"not found: the metrics are at /metrics\n"),
        ));
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return Ok(reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            Bytes::from_static(b"only GET\n"),
        ));
    }
    match tokio::task::spawn_blocking(move || render()).await {
        Ok(text) => Ok(reply(StatusCode::OK, TEXT_FORMAT, Bytes::from(text))),
        Err(error) => {
            tracing::error!(%error, "metrics endpoint: rendering failed");
            Ok(reply(
                StatusCode::INTERNAL_SERVER_ERROR,
                "text/plain",
                Bytes::from_static(b"rendering the metrics failed\n"),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get(address: SocketAddr, request: &str) -> String {
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn serves_the_rendered_text_at_metrics_and_nothing_elsewhere() {
        let shutdown = CancellationToken::new();
        let tasks = TaskTracker::new();
        let scrapes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&scrapes);
        let render: Render = Arc::new(move || {
            let n = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            format!("# TYPE scrapes gauge\nscrapes {n}\n")
        });
        let address = start("127.0.0.1:0", render, shutdown.clone(), &tasks)
            .await
            .unwrap();
        let ok = get(
            address,
            "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(
            ok.contains("content-type: text/plain; version=0.0.4; charset=utf-8"),
            "{ok}"
        );
        assert!(
            ok.ends_with("\r\n\r\n# TYPE scrapes gauge\nscrapes 1\n"),
            "{ok}"
        );
        let missing = get(
            address,
            "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");
        let post = get(
            address,
            "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert!(post.starts_with("HTTP/1.1 405"), "{post}");
        assert_eq!(scrapes.load(std::sync::atomic::Ordering::SeqCst), 1);
        shutdown.cancel();
        tasks.close();
        tokio::time::timeout(std::time::Duration::from_secs(5), tasks.wait())
            .await
            .expect("the endpoint stops on shutdown");
        let taken = start(
            "127.0.0.1:0",
            Arc::new(String::new),
            CancellationToken::new(),
            &TaskTracker::new(),
        )
        .await
        .unwrap();
        let busy = start(
            &taken.to_string(),
            Arc::new(String::new),
            CancellationToken::new(),
            &TaskTracker::new(),
        )
        .await;
        assert!(
            matches!(busy, Err(MetricsEndpointError::Bind { .. })),
            "{busy:?}"
        );
    }
}
