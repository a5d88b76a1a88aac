//! Fetch sessions (KIP-227) across kinds: a kcli follower of a Kafka leader and a Kafka
//! follower of a kcli leader each fetch in one session with the other. Each leader's
//! FetchSessionCache holds one session of the partitions it leads (only the other broker's
//! fetcher fetches from it: no consumer runs), its follower fetches shrink to the incremental
//! size (the median of the leader's `RequestBytes` for FetchFollower), and the replicas end
//! batch for batch identical.

use super::*;
use crate::support::exposition::scrape;

const PARTITIONS: i32 = 40;
const SESSIONS: &str = "kafka_server_fetchsessioncache_numincrementalfetchsessions";
const CACHED: &str = "kafka_server_fetchsessioncache_numincrementalfetchpartitionscached";
const REQUEST_BYTES: &str = "kafka_network_requestmetrics_requestbytes";

/// Broker `id`'s (sessions, partitions cached, median FetchFollower request bytes), once its
/// metrics show all three.
fn session_figures(cluster: &MixedCluster, id: i32) -> Option<(f64, f64, f64)> {
    let m = scrape(cluster.metrics_port(id))?;
    let median = [("quantile", "0.50"), ("request", "FetchFollower")];
    Some((
        m.value(SESSIONS, &[])?,
        m.value(CACHED, &[])?,
        m.value(REQUEST_BYTES, &median)?,
    ))
}

#[test]
fn followers_of_either_kind_fetch_incrementally_from_leaders_of_the_other() {
    let cluster = MixedCluster::start_with_metrics(&[1], &[2], &[]);
    let kafka_led: Vec<&[i32]> = vec![&[1, 2]; PARTITIONS as usize];
    let kcli_led: Vec<&[i32]> = vec![&[2, 1]; PARTITIONS as usize];
    create_topic(&cluster, "led-by-kafka", &kafka_led, &[]);
    create_topic(&cluster, "led-by-kcli", &kcli_led, &[]);
    produce(&cluster, "led-by-kafka", PARTITIONS, 400);
    produce(&cluster, "led-by-kcli", PARTITIONS, 400);
    // A full fetch of 40 partitions is over 1 KB (v17: 16-byte topic id, then about 33 bytes
    // a partition); an incremental one naming nothing is under 100.
    for (leader, kind) in [(1, "Kafka"), (2, "kcli")] {
        let figures = wait_until(
            &format!("{kind} leader {leader}: one incremental follower session"),
            Duration::from_secs(60),
            || {
                session_figures(&cluster, leader).filter(|&(sessions, cached, median)| {
                    sessions == 1.0 && cached == f64::from(PARTITIONS) && median < 400.0
                })
            },
        );
        eprintln!(
            "{kind} leader {leader}: (sessions, cached, median FetchFollower bytes) {figures:?}"
        );
    }
    for p in 0..PARTITIONS {
        assert_identical_replicas(&cluster, "led-by-kafka", p, &[1, 2]);
        assert_identical_replicas(&cluster, "led-by-kcli", p, &[2, 1]);
    }
}
