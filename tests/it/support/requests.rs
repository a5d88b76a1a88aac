//! One request to a broker and its answer, over kcli's own `NetworkClient` (no client library
//! between the test and the wire): for tests of an API's answers and errors.

use std::time::Duration;

use kcli::network::{NetworkClient, NetworkClientConfig};
use kcli::protocol::messages::{RequestKind, ResponseKind};

/// Sends `request` at `version` to the broker on 127.0.0.1:`port` and returns its answer; a
/// failure to connect or answer within 10 s fails the test.
pub fn send_request(port: u16, request: &RequestKind, version: i16) -> ResponseKind {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let config = NetworkClientConfig {
            client_id: "kcli-test".into(),
            request_timeout: Duration::from_secs(10),
            ..NetworkClientConfig::default()
        };
        let client = NetworkClient::new(format!("127.0.0.1:{port}"), config);
        client.send(request, version).await.unwrap()
    })
}
