//! The SASL exchange before requests, over a real socket server with the broker's
//! `SaslAuthenticator` and PLAIN users: SaslHandshake v1 + SaslAuthenticate, the unframed tokens
//! after SaslHandshake v0, a wrong password (SASL_AUTHENTICATION_FAILED with Kafka's message,
//! then closed), an unsupported mechanism, and requests out of place (closed unanswered). After
//! authentication each request carries `User:<name>`.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use kcli::metrics::Reading;
use kcli::network::{
    EndPoint, ListenerAuthenticator, Request, RequestHandler, Response, SocketServer,
    SocketServerConfig,
};
use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::sasl_authenticate_request::SaslAuthenticateRequest;
use kcli::protocol::messages::sasl_handshake_request::SaslHandshakeRequest;
use kcli::protocol::messages::{ApiVersionsRequest, MetadataRequest, RequestKind, ResponseKind};
use kcli::security::sasl::CredentialProvider;
use kcli::security::scram_credential::{ScramCredential, ScramMechanism};
use kcli::server::sasl_authenticator::SaslAuthenticator;
use tokio_util::sync::CancellationToken;

use crate::serve_support::{KafkaConn, closed_within};

struct Users(BTreeMap<String, String>);

impl CredentialProvider for Users {
    fn plain_password(&self, user: &str) -> Option<String> {
        self.0.get(user).cloned()
    }

    fn scram_credential(&self, _: ScramMechanism, _: &str) -> Option<ScramCredential> {
        None
    }
}

/// Answers every request with the connection's principal, as a raw frame.
struct Principal;

impl RequestHandler for Principal {
    async fn handle(&self, request: Request) -> Response {
        let text = request.principal.to_string();
        let mut out = BytesMut::new();
        out.put_i32(text.len() as i32);
        out.put_slice(text.as_bytes());
        Response::bytes(out.freeze())
    }
}

async fn start() -> (SocketServer, u16) {
    let authenticator = SaslAuthenticator {
        enabled_mechanisms: vec!["PLAIN".into(), "SCRAM-SHA-512".into()],
        credentials: Arc::new(Users(
            [("alice".to_string(), "alice-secret".to_string())]
                .into_iter()
                .collect(),
        )),
        max_receive_size: 524_288,
        failed_authentication_delay: Duration::from_millis(10),
    };
    let config = SocketServerConfig {
        listeners: vec![
            EndPoint::new("SASL_PLAINTEXT", "127.0.0.1", 0)
                .with_authenticator(ListenerAuthenticator(Arc::new(authenticator))),
        ],
        ..SocketServerConfig::default()
    };
    let server = SocketServer::startup(config, Arc::new(Principal), CancellationToken::new())
        .await
        .unwrap();
    let port = server.bound_endpoints()[0].address.port();
    (server, port)
}

fn handshake(mechanism: &str) -> RequestKind {
    RequestKind::SaslHandshake(SaslHandshakeRequest {
        mechanism: StrBytes::from(mechanism.to_string()),
    })
}

fn authenticate(token: &[u8]) -> RequestKind {
    RequestKind::SaslAuthenticate(SaslAuthenticateRequest {
        auth_bytes: Bytes::copy_from_slice(token),
        ..SaslAuthenticateRequest::default()
    })
}

/// An ApiVersions naming the client's software (valid at v3+ only with both fields non-empty).
fn api_versions(name: &str, version: &str) -> RequestKind {
    RequestKind::ApiVersions(ApiVersionsRequest {
        client_software_name: StrBytes::from(name.to_string()),
        client_software_version: StrBytes::from(version.to_string()),
        ..ApiVersionsRequest::default()
    })
}

/// The principal the handler reports for a Metadata request on `conn`.
fn principal_of(conn: &mut KafkaConn) -> String {
    conn.send(&RequestKind::Metadata(MetadataRequest::default()), 12)
        .unwrap();
    String::from_utf8(conn.recv_frame().unwrap().to_vec()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_plain_framed_and_unframed_and_the_refusals() {
    let (server, port) = start().await;
    tokio::task::spawn_blocking(move || {
        // ApiVersions, SaslHandshake v1, SaslAuthenticate v2: authenticated as alice.
        let mut c = KafkaConn::connect(port);
        let ResponseKind::ApiVersions(versions) = c.call(&api_versions("kcli-it", "1.0"), 3) else {
            panic!()
        };
        assert!(versions.api_keys.iter().any(|k| k.api_key == 36));
        let ResponseKind::SaslHandshake(h) = c.call(&handshake("PLAIN"), 1) else {
            panic!()
        };
        assert_eq!(h.error_code, 0);
        let mechanisms: Vec<String> = h.mechanisms.iter().map(ToString::to_string).collect();
        assert_eq!(mechanisms, ["PLAIN", "SCRAM-SHA-512"]);
        let ResponseKind::SaslAuthenticate(a) = c.call(&authenticate(b"\0alice\0alice-secret"), 2)
        else {
            panic!()
        };
        assert_eq!((a.error_code, a.session_lifetime_ms), (0, 0));
        assert_eq!(principal_of(&mut c), "User:alice");

        // SaslHandshake v0, then the PLAIN token as a raw frame, answered by an empty one.
        let mut c = KafkaConn::connect(port);
        let ResponseKind::SaslHandshake(h) = c.call(&handshake("PLAIN"), 0) else {
            panic!()
        };
        assert_eq!(h.error_code, 0);
        let token = b"\0alice\0alice-secret";
        c.stream
            .write_all(&(token.len() as i32).to_be_bytes())
            .unwrap();
        c.stream.write_all(token).unwrap();
        let mut size = [0u8; 4];
        c.stream.read_exact(&mut size).unwrap();
        assert_eq!(i32::from_be_bytes(size), 0);
        assert_eq!(principal_of(&mut c), "User:alice");

        // A wrong password: Kafka's error and message, then closed.
        let mut c = KafkaConn::connect(port);
        c.call(&handshake("PLAIN"), 1);
        let ResponseKind::SaslAuthenticate(a) = c.call(&authenticate(b"\0alice\0guess"), 2) else {
            panic!()
        };
        assert_eq!(a.error_code, 58);
        assert_eq!(
            a.error_message.as_ref().map(ToString::to_string).as_deref(),
            Some("Authentication failed: Invalid username or password")
        );
        assert!(closed_within(&mut c.stream, Duration::from_secs(5)));

        // A mechanism not enabled: UNSUPPORTED_SASL_MECHANISM with the enabled ones, closed.
        let mut c = KafkaConn::connect(port);
        let ResponseKind::SaslHandshake(h) = c.call(&handshake("GSSAPI"), 1) else {
            panic!()
        };
        assert_eq!(h.error_code, 33);
        assert!(closed_within(&mut c.stream, Duration::from_secs(5)));

        // A request before authentication, or a second ApiVersions: closed, unanswered.
        let mut c = KafkaConn::connect(port);
        c.send(&RequestKind::Metadata(MetadataRequest::default()), 12)
            .unwrap();
        assert!(closed_within(&mut c.stream, Duration::from_secs(5)));
        let mut c = KafkaConn::connect(port);
        c.call(&api_versions("kcli-it", "1.0"), 3);
        c.send(&api_versions("kcli-it", "1.0"), 3).unwrap();
        assert!(closed_within(&mut c.stream, Duration::from_secs(5)));
        // A frame over sasl.server.max.receive.size before authentication: closed.
        let mut c = KafkaConn::connect(port);
        c.stream.write_all(&(600_000i32).to_be_bytes()).unwrap();
        assert!(closed_within(&mut c.stream, Duration::from_secs(5)));
    })
    .await
    .unwrap();
    server.shutdown().await;
}

/// The open connections of `listener` that count under the client software `name` `version`
/// in `socket-server-metrics` `connections`.
fn connections(server: &SocketServer, name: &str, version: &str) -> f64 {
    let mbean = format!(
        "kafka.server:type=socket-server-metrics,clientSoftwareName={name},\
         clientSoftwareVersion={version},listener=SASL_PLAINTEXT,networkProcessor=0"
    );
    let mut samples = Vec::new();
    server.metrics().collect(&mut samples);
    samples
        .iter()
        .find(|s| s.mbean.to_string() == mbean)
        .map_or(0.0, |s| match &s.reading {
            Reading::KafkaMetrics(attributes) => attributes[0].1,
            other => panic!("{other:?}"),
        })
}

/// The ApiVersions a client sends before authenticating names its software, as Kafka's
/// SaslServerAuthenticator registers it: the connection counts under it from then on. One
/// that is not valid (v3 with an empty name) is answered INVALID_REQUEST and may be followed
/// by a valid one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_api_versions_before_authentication_names_the_client_software() {
    let (server, port) = start().await;
    let server = Arc::new(server);
    let seen = Arc::clone(&server);
    tokio::task::spawn_blocking(move || {
        let until = |name: &str, version: &str, count: f64| {
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while connections(&seen, name, version) != count {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{name} {version}: not {count}"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        let mut c = KafkaConn::connect(port);
        until("unknown", "unknown", 1.0);
        let ResponseKind::ApiVersions(invalid) = c.call(&api_versions("", "1.0"), 3) else {
            panic!()
        };
        assert_eq!((invalid.error_code, invalid.api_keys.len()), (42, 0));
        let ResponseKind::ApiVersions(versions) = c.call(&api_versions("kcli-it", "2.1"), 3) else {
            panic!()
        };
        assert_eq!(versions.error_code, 0);
        assert_eq!(connections(&seen, "kcli-it", "2.1"), 1.0);
        assert_eq!(connections(&seen, "unknown", "unknown"), 0.0);
        c.call(&handshake("PLAIN"), 1);
        c.call(&authenticate(b"\0alice\0alice-secret"), 2);
        assert_eq!(principal_of(&mut c), "User:alice");
        assert_eq!(connections(&seen, "kcli-it", "2.1"), 1.0);
        drop(c);
        until("kcli-it", "2.1", 0.0);
    })
    .await
    .unwrap();
    server.shutdown().await;
}
