//! The IP connection-rate quota on `kcli serve`, set with Kafka 3.9.1's `kafka-configs
//! --entity-type ips --add-config connection_creation_rate=5`: a client opening connections from
//! 127.0.0.1 in a tight loop, each sending ApiVersions, gets an answer on about five a second;
//! the others are never answered and are closed within the throttle time (at most one quota
//! window), as Kafka's acceptor closes a throttled connection. The same through `<default>`,
//! and no limit once each is deleted. `max.connection.creation.rate=5` delays connections
//! instead: every one is answered, about five a second. The brokers run with
//! `quota.window.num=2`, so a rate is taken over one or two seconds instead of Kafka's default
//! eleven and the tests are short.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use kcli::protocol::messages::api_versions_request::ApiVersionsRequest;
use kcli::protocol::messages::{RequestHeader, RequestKind, encode_request_frame};

use crate::serve_support::TestBroker;
use crate::users::kafka_configs;

const RATE: f64 = 5.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Answered,
    Closed,
}

fn api_versions_frame() -> Vec<u8> {
    let header = RequestHeader {
        request_api_key: 18,
        request_api_version: 3,
        correlation_id: 1,
        client_id: Some("ip-rate".into()),
        ..RequestHeader::default()
    };
    encode_request_frame(
        &header,
        &RequestKind::ApiVersions(ApiVersionsRequest {
            client_software_name: "ip-rate".into(),
            client_software_version: "1".into(),
            ..Default::default()
        }),
    )
    .unwrap()
    .to_vec()
}

/// One new connection sending ApiVersions: answered, or closed unanswered. A connection neither
/// answered nor closed within 3 s fails the test (a throttle is at most one 1 s window).
fn attempt(port: u16, frame: &[u8]) -> Outcome {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(3)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    // A throttled connection is never read: the write lands in the socket's buffer, unless
    // the broker has closed it already.
    if let Err(e) = stream.write_all(frame) {
        assert!(
            matches!(
                e.kind(),
                std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
            ),
            "{e}"
        );
        return Outcome::Closed;
    }
    let mut size = [0u8; 4];
    match stream.read_exact(&mut size) {
        Ok(()) => Outcome::Answered,
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Outcome::Closed,
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Outcome::Closed,
        Err(e) => panic!("neither answered nor closed: {e}"),
    }
}

/// Attempts until one ends as `want`, within `limit`.
fn until(port: u16, frame: &[u8], want: Outcome, limit: Duration) {
    let deadline = Instant::now() + limit;
    while attempt(port, frame) != want {
        assert!(
            Instant::now() < deadline,
            "no connection {want:?} in {limit:?}"
        );
    }
}

/// Tight loops of a second until one has nothing closed and many answered, within 15 s.
fn until_unthrottled(port: u16, frame: &[u8]) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (answered, closed) = tight_loop(port, frame, Duration::from_secs(1));
        if closed == 0 && answered[0] > 20 {
            return;
        }
        assert!(Instant::now() < deadline, "still throttled: {answered:?}");
    }
}

/// Connections in a tight loop for `run`: those answered in each whole second, and how many
/// were closed unanswered.
fn tight_loop(port: u16, frame: &[u8], run: Duration) -> (Vec<u32>, u32) {
    let start = Instant::now();
    let mut answered = vec![0u32; usize::try_from(run.as_secs()).unwrap()];
    let mut closed = 0;
    while start.elapsed() < run {
        let outcome = attempt(port, frame);
        let second = usize::try_from(start.elapsed().as_secs()).unwrap();
        match outcome {
            Outcome::Answered if second < answered.len() => answered[second] += 1,
            Outcome::Answered => {}
            Outcome::Closed => closed += 1,
        }
    }
    (answered, closed)
}

/// About `RATE` a second: over the run, no more than the rate over the run and the two windows
/// the first ones may take at once, and no less than half the rate (throttled, not shut out).
fn assert_about_the_rate(answered: &[u32], closed: u32) {
    let total: u32 = answered.iter().sum();
    let seconds = answered.len() as f64;
    assert!(closed > 0, "nothing throttled: {answered:?}");
    assert!(
        f64::from(total) <= RATE * (seconds + 2.0),
        "{total} answered in {seconds} s at {RATE}/s: {answered:?}"
    );
    assert!(
        f64::from(total) >= RATE * seconds / 2.0,
        "only {total} answered in {seconds} s at {RATE}/s: {answered:?}"
    );
}

fn configs(broker: &TestBroker, entity: &[&str], change: &[&str]) {
    let bootstrap = broker.bootstrap();
    let mut args = vec![
        "--bootstrap-server",
        bootstrap.as_str(),
        "--alter",
        "--entity-type",
        "ips",
    ];
    args.extend_from_slice(entity);
    args.extend_from_slice(change);
    let (code, out, err) = kafka_configs(&args);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn connection_creation_rate_closes_connections_over_the_rate_of_an_ip_and_the_default() {
    let broker = TestBroker::start(&[("quota.window.num", "2")]);
    let port = broker.port();
    let frame = api_versions_frame();
    // No quota: every connection is answered.
    let (answered, closed) = tight_loop(port, &frame, Duration::from_secs(1));
    assert_eq!(closed, 0, "{answered:?}");
    assert!(answered[0] > 20, "{answered:?}");

    // The address's own rate, then `<default>` (every address without its own); each limits
    // until it is deleted.
    let localhost: &[&str] = &["--entity-name", "127.0.0.1"];
    let default: &[&str] = &["--entity-default"];
    for entity in [localhost, default] {
        configs(
            &broker,
            entity,
            &["--add-config", "connection_creation_rate=5"],
        );
        until(port, &frame, Outcome::Closed, Duration::from_secs(15));
        let (answered, closed) = tight_loop(port, &frame, Duration::from_secs(6));
        assert_about_the_rate(&answered, closed);
        configs(
            &broker,
            entity,
            &["--delete-config", "connection_creation_rate"],
        );
        until_unthrottled(port, &frame);
    }
}

#[test]
fn max_connection_creation_rate_delays_connections_to_the_rate() {
    let broker = TestBroker::start(&[
        ("quota.window.num", "2"),
        ("max.connection.creation.rate", "5"),
    ]);
    let frame = api_versions_frame();
    let (answered, closed) = tight_loop(broker.port(), &frame, Duration::from_secs(6));
    // Delayed, never refused.
    assert_eq!(closed, 0, "{answered:?}");
    let total: u32 = answered.iter().sum();
    assert!(
        f64::from(total) <= RATE * 8.0 && f64::from(total) >= RATE * 6.0 / 2.0,
        "{total} answered in 6 s at {RATE}/s: {answered:?}"
    );
}
