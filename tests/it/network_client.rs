//! The outbound inter-broker client against `kcli serve` as a separate process: ApiVersions and
//! Metadata at flexible and non-flexible versions (so both request header v1/v2 and response
//! header v0/v1 are exercised, and correlation ids advance), a request timeout against a socket
//! that accepts and never answers, and a reconnect after the broker restarts.

use std::time::{Duration, Instant};

use kcli::network::{NetworkClient, NetworkClientConfig, NetworkClientError};
use kcli::protocol::messages::{ApiVersionsRequest, MetadataRequest, RequestKind, ResponseKind};

use crate::serve_support::TestBroker;

const LIMIT: Duration = Duration::from_secs(20);

fn config() -> NetworkClientConfig {
    NetworkClientConfig {
        client_id: "kcli-controller".into(),
        request_timeout: Duration::from_secs(5),
        ..NetworkClientConfig::default()
    }
}

fn api_versions() -> RequestKind {
    RequestKind::ApiVersions(ApiVersionsRequest {
        client_software_name: "kcli".into(),
        client_software_version: "0.1.0".into(),
        ..ApiVersionsRequest::default()
    })
}

fn metadata() -> RequestKind {
    RequestKind::Metadata(MetadataRequest {
        topics: Some(Vec::new()),
        ..MetadataRequest::default()
    })
}

/// The broker's own entry in a Metadata response: (node id, port).
fn brokers(response: ResponseKind) -> Vec<(i32, i32)> {
    match response {
        ResponseKind::Metadata(m) => m.brokers.iter().map(|b| (b.node_id, b.port)).collect(),
        other => panic!("not a Metadata response: {other:?}"),
    }
}

fn api_keys(response: ResponseKind) -> (i16, usize) {
    match response {
        ResponseKind::ApiVersions(v) => (v.error_code, v.api_keys.len()),
        other => panic!("not an ApiVersions response: {other:?}"),
    }
}

#[tokio::test]
async fn requests_reach_a_broker_and_reconnect_after_it_restarts() {
    let mut broker = TestBroker::start(&[("broker.id", "3")]);
    let port = i32::from(broker.port());
    let client = NetworkClient::new(format!("127.0.0.1:{}", broker.port()), config());
    tokio::time::timeout(LIMIT, async {
        // Flexible (header v2, ApiVersions' response header always v0) and not.
        let (error, keys) = api_keys(client.send(&api_versions(), 3).await.unwrap());
        assert_eq!(error, 0);
        assert!(keys > 20, "{keys} APIs");
        assert_eq!(
            api_keys(client.send(&api_versions(), 0).await.unwrap()).0,
            0
        );
        // Metadata v12 (request header v2, response header v1) and v1 (v1 and v0).
        assert_eq!(
            brokers(client.send(&metadata(), 12).await.unwrap()),
            [(3, port)]
        );
        assert_eq!(
            brokers(client.send(&metadata(), 1).await.unwrap()),
            [(3, port)]
        );
        assert_eq!(
            client.connects().await,
            1,
            "one connection for every request"
        );
    })
    .await
    .unwrap();

    // The peer restarts: the old connection is dead; a later request reconnects, after the
    // backoff, and succeeds.
    broker.stop();
    broker.restart();
    tokio::time::timeout(LIMIT, async {
        let start = Instant::now();
        loop {
            match client.send(&metadata(), 12).await {
                Ok(response) => {
                    assert_eq!(brokers(response), [(3, port)]);
                    break;
                }
                Err(
                    NetworkClientError::Disconnected { .. } | NetworkClientError::Connect { .. },
                ) => assert!(start.elapsed() < LIMIT),
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(client.connects().await, 2);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_peer_that_never_answers_times_out_and_is_disconnected() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    let client = NetworkClient::new(
        addr.clone(),
        NetworkClientConfig {
            request_timeout: Duration::from_millis(300),
            ..config()
        },
    );
    let start = Instant::now();
    let err = client.send(&api_versions(), 3).await.unwrap_err();
    let took = start.elapsed();
    assert!(
        matches!(&err, NetworkClientError::RequestTimeout { destination, api: "ApiVersions",
            version: 3, correlation_id: 0, timeout_ms: 300 } if destination == &addr),
        "{err}"
    );
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert!(!client.is_connected().await);
    // The next request goes out on a new connection, with the next correlation id.
    let err = client.send(&api_versions(), 3).await.unwrap_err();
    assert!(
        matches!(
            err,
            NetworkClientError::RequestTimeout {
                correlation_id: 1,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(client.connects().await, 2);
    silent.abort();
}
