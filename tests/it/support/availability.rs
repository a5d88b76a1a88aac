//! The availability half of the fault checker: how long after a fault (or its healing) acks=all
//! writes succeed again on every partition of a probe topic (the produce load's longest gap
//! between acknowledgements, `ProduceLoad::longest_ack_gap`, is the client's view beside it). Each partition is written, one
//! record with acks=-1 and a 1 s timeout, to the leader its state znode names, until every one
//! has succeeded once; the probe topic is kept apart from the produce load's, whose records the
//! loss check reads back.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kcli::protocol::messages::RequestKind;

use super::cluster::{TestCluster, wait_until};
use crate::serve_support::{KafkaConn, batch_of, produce_request, produce_result};

/// Whether one acks=-1 record to `topic`-`partition` on broker `leader` is acknowledged.
fn acks_all_write(cluster: &TestCluster, leader: i32, topic: &str, partition: i32) -> bool {
    let mut request = produce_request(topic, partition, batch_of(&[b"probe".to_vec()]), -1);
    if let RequestKind::Produce(p) = &mut request {
        p.timeout_ms = 1_000;
    }
    let Ok(stream) =
        std::net::TcpStream::connect_timeout(&cluster.addr(leader), Duration::from_secs(1))
    else {
        return false;
    };
    let mut conn = KafkaConn::from_stream(stream, 1);
    let _ = conn.stream.set_read_timeout(Some(Duration::from_secs(3)));
    if conn.send(&request, 9).is_err() {
        return false;
    }
    match conn.recv(kcli::protocol::messages::ApiKey::Produce, 9) {
        Ok((_, response)) => produce_result(&response).0 == 0,
        Err(_) => false,
    }
}

/// The time from `since` (the fault, or its healing) until an acks=all write has succeeded on
/// every partition of `topic` (`partitions` of them) since now; fails the test after `limit`.
pub fn time_until_writable(
    cluster: &TestCluster,
    topic: &str,
    partitions: i32,
    since: Instant,
    limit: Duration,
) -> Duration {
    let all: Vec<i32> = (0..partitions).collect();
    time_until_writable_on(cluster, topic, &all, since, limit)
}

/// [`time_until_writable`] on some partitions of `topic` only (those a fault leaves writable).
pub fn time_until_writable_on(
    cluster: &TestCluster,
    topic: &str,
    partitions: &[i32],
    since: Instant,
    limit: Duration,
) -> Duration {
    let mut written = BTreeSet::new();
    wait_until(
        &format!("acks=all writes on partitions {partitions:?} of {topic}"),
        limit,
        || {
            for &p in partitions {
                if !written.contains(&p)
                    && cluster.leader(topic, p).is_some_and(|leader| {
                        leader >= 0 && acks_all_write(cluster, leader, topic, p)
                    })
                {
                    written.insert(p);
                }
            }
            (written.len() == partitions.len()).then_some(())
        },
    );
    since.elapsed()
}
