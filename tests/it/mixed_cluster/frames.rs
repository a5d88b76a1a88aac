//! The inter-broker requests a Kafka 3.9.1 broker sends a kcli broker, captured live: the kcli
//! broker advertises a recording proxy in front of its listener, so Kafka's controller (its
//! UpdateMetadata, LeaderAndIsr, StopReplica) and Kafka's follower (its Fetch) reach it through
//! the proxy, which keeps the first frame of each API and version. Every run checks that kcli's
//! codec decodes each one and encodes it again byte for byte, and checks the fields a kcli broker
//! depends on (IBP 3.9's versions, the LeaderAndIsr `type` and `is_new`, every listener of the
//! live brokers, the follower's `ReplicaState` and topic ids). `KCLI_RECORD_FIXTURES=1` also
//! writes them to `tests/fixtures/frames/kafka-3.9.1-inter-broker/`, where the committed copies
//! are checked by `protocol_capture` on every run.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use kcli::protocol::messages::{RequestKind, decode_request, encode_request_frame};

use super::{create_topic, delete_topic, produce};
use crate::support::cluster::wait_until;
use crate::support::mixed_cluster::MixedCluster;

/// The first request frames (header and body, no size prefix; at most [`KEPT`]) of each
/// (api key, version).
type Captured = Arc<Mutex<BTreeMap<(i16, i16), Vec<Vec<u8>>>>>;

const KEPT: usize = 4;

/// A proxy on a free port forwarding every connection to 127.0.0.1:`target`, recording the
/// request frames that pass toward it; runs until the test process ends.
fn recording_proxy(target: u16, captured: Captured) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                continue;
            };
            let (client_r, server_w) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let captured = Arc::clone(&captured);
            std::thread::spawn(move || forward_requests(client_r, server_w, &captured));
            std::thread::spawn(move || forward_bytes(server, client));
        }
    });
    port
}

/// Copies size-prefixed frames from `from` to `to`, keeping the first of each API and version.
fn forward_requests(mut from: TcpStream, mut to: TcpStream, captured: &Captured) {
    loop {
        let mut size = [0u8; 4];
        if from.read_exact(&mut size).is_err() {
            break;
        }
        let Ok(len) = usize::try_from(i32::from_be_bytes(size)) else {
            break;
        };
        let mut frame = vec![0u8; len];
        if from.read_exact(&mut frame).is_err() {
            break;
        }
        if frame.len() >= 4 {
            let key = i16::from_be_bytes([frame[0], frame[1]]);
            let version = i16::from_be_bytes([frame[2], frame[3]]);
            let mut captured = captured.lock().unwrap();
            let kept = captured.entry((key, version)).or_default();
            if kept.len() < KEPT {
                kept.push(frame.clone());
            }
        }
        if to.write_all(&size).is_err() || to.write_all(&frame).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

fn forward_bytes(mut from: TcpStream, mut to: TcpStream) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = to.shutdown(Shutdown::Write);
}

/// The captured frames of `key` at `version`, decoded; fails unless kcli's encoding of each
/// gives the same bytes.
fn round_trip(captured: &Captured, key: i16, version: i16) -> Vec<RequestKind> {
    let frames = captured
        .lock()
        .unwrap()
        .get(&(key, version))
        .cloned()
        .unwrap_or_else(|| panic!("no request of API {key} v{version} captured"));
    frames
        .into_iter()
        .map(|frame| {
            let (header, body) = decode_request(Bytes::from(frame.clone()))
                .unwrap_or_else(|e| panic!("API {key} v{version}: {e}"));
            let again = encode_request_frame(&header, &body).unwrap();
            assert_eq!(&again[4..], &frame[..], "API {key} v{version} re-encoded");
            body
        })
        .collect()
}

const LEADER_AND_ISR: i16 = 4;
const STOP_REPLICA: i16 = 5;
const UPDATE_METADATA: i16 = 6;
const FETCH: i16 = 1;

#[test]
fn kafkas_inter_broker_requests_to_kcli_decode_and_re_encode_byte_for_byte() {
    let mut cluster = MixedCluster::start(&[1], &[], &[]);
    let captured: Captured = Arc::default();
    let proxy = recording_proxy(cluster.port_of(2), Arc::clone(&captured));
    let advertised = format!("PLAINTEXT://127.0.0.1:{proxy}");
    cluster.start_kcli_with(2, &[("advertised.listeners", &advertised)]);
    cluster.wait_all_listed();

    // Kafka leads partition 0 and follows kcli on partition 1, so its fetcher goes through the
    // proxy too.
    create_topic(&cluster, "captured", &[&[1, 2], &[2, 1]], &[]);
    produce(&cluster, "captured", 2, 2);
    delete_topic(&cluster, "captured", 2);
    wait_until(
        "UpdateMetadata, LeaderAndIsr, StopReplica and Fetch captured",
        Duration::from_secs(60),
        || {
            let c = captured.lock().unwrap();
            [
                (UPDATE_METADATA, 8),
                (LEADER_AND_ISR, 7),
                (STOP_REPLICA, 4),
                (FETCH, 17),
            ]
            .iter()
            .all(|k| c.contains_key(k))
            .then_some(())
        },
    );

    let updates: Vec<_> = round_trip(&captured, UPDATE_METADATA, 8)
        .into_iter()
        .filter_map(|r| match r {
            RequestKind::UpdateMetadata(um) => Some(um),
            _ => None,
        })
        .collect();
    assert!(updates.iter().all(|um| um.controller_id == 1));
    assert!(
        updates
            .iter()
            .any(|um| um.live_brokers.iter().any(|b| b.id == 2
                && b.endpoints
                    .iter()
                    .any(|e| e.port == i32::from(proxy)
                        && e.listener.to_string_lossy() == "PLAINTEXT"))),
        "broker 2's advertised listener among the live brokers: {updates:?}"
    );

    let leader_and_isrs: Vec<_> = round_trip(&captured, LEADER_AND_ISR, 7)
        .into_iter()
        .filter_map(|r| match r {
            RequestKind::LeaderAndIsr(lai) => Some(lai),
            _ => None,
        })
        .collect();
    for lai in &leader_and_isrs {
        assert_eq!(
            (lai.controller_id, lai.is_k_raft_controller, lai.r#type),
            (1, false, 0)
        );
        assert!(
            lai.topic_states.iter().all(|t| !t.topic_id.is_nil()),
            "{lai:?}"
        );
    }
    assert!(
        leader_and_isrs
            .iter()
            .flat_map(|lai| &lai.topic_states)
            .flat_map(|t| &t.partition_states)
            .any(|s| s.is_new && s.isr.len() == 2),
        "a new partition's state: {leader_and_isrs:?}"
    );

    let stops: Vec<_> = round_trip(&captured, STOP_REPLICA, 4)
        .into_iter()
        .filter_map(|r| match r {
            RequestKind::StopReplica(stop) => Some(stop),
            _ => None,
        })
        .collect();
    assert!(
        stops
            .iter()
            .flat_map(|s| &s.topic_states)
            .flat_map(|t| &t.partition_states)
            .any(|p| p.delete_partition && p.leader_epoch == -2),
        "a deletion (leader epoch -2): {stops:?}"
    );

    let fetches: Vec<_> = round_trip(&captured, FETCH, 17)
        .into_iter()
        .filter_map(|r| match r {
            RequestKind::Fetch(fetch) => Some(fetch),
            _ => None,
        })
        .collect();
    // Kafka's follower names itself in ReplicaState.
    let follower = fetches
        .iter()
        .find(|f| f.replica_state.replica_id == 1)
        .unwrap_or_else(|| panic!("no fetch from Kafka's follower: {fetches:?}"));
    assert_eq!(
        follower.replica_id, -1,
        "the v0-14 field stays at its default"
    );
    assert!(
        follower.topics.iter().all(|t| !t.topic_id.is_nil()),
        "{follower:?}"
    );

    if std::env::var_os("KCLI_RECORD_FIXTURES").is_some() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/frames/kafka-3.9.1-inter-broker");
        std::fs::create_dir_all(&dir).unwrap();
        let names = [
            (UPDATE_METADATA, 8, "UpdateMetadata"),
            (LEADER_AND_ISR, 7, "LeaderAndIsr"),
            (STOP_REPLICA, 4, "StopReplica"),
            (FETCH, 17, "Fetch"),
        ];
        let c = captured.lock().unwrap();
        let mut n = 0;
        for (key, version, name) in names {
            for frame in &c[&(key, version)] {
                std::fs::write(dir.join(format!("{n:02}-{name}-v{version}.bin")), frame).unwrap();
                n += 1;
            }
        }
    }
}
