//! Unit tests of the remote leader end point: where leaders resolve, and the fetches it
//! builds, full and then incremental in a session.

use super::*;
use crate::protocol::messages::{ApiKey, RequestHeader, encode_request_frame};
use crate::server::metadata_cache::{BrokerEndPoint, BrokerMetadata, TopicMetadata};

fn factory() -> (RemoteLeaderEndPoints, Uuid) {
    let cache = Arc::new(MetadataCache::new("cluster".into()));
    cache.set_brokers(vec![BrokerMetadata {
        id: 1,
        rack: None,
        endpoints: vec![BrokerEndPoint {
            listener_name: "PLAINTEXT".into(),
            host: "h1".into(),
            port: 9093,
        }],
    }]);
    let topic_id = Uuid::new_v4();
    cache.update_topic(TopicMetadata {
        name: "t".into(),
        topic_id,
        is_internal: false,
        partitions: Default::default(),
    });
    let epochs = Arc::new(BrokerEpochManager::default());
    epochs.set_broker_epoch(77);
    let endpoints = RemoteLeaderEndPoints::new(
        0,
        "PLAINTEXT",
        InterBrokerProtocolVersion::LATEST,
        ReplicaFetchSettings::default(),
        epochs,
        cache,
    );
    (endpoints, topic_id)
}

fn partition(topic: &str, index: i32, offset: i64) -> FetchPartition {
    FetchPartition {
        topic_partition: TopicPartition::new(topic, index),
        topic_id: None,
        fetch_offset: offset,
        log_start_offset: 0,
        current_leader_epoch: 4,
        last_fetched_epoch: (index == 0).then_some(3),
    }
}

#[test]
fn leaders_resolve_to_their_inter_broker_listener_and_only_live_others() {
    let (endpoints, _) = factory();
    let leader = endpoints.end_point(1, 0).unwrap();
    assert_eq!(leader.address(), "h1:9093");
    assert_eq!(leader.broker_id(), 1);
    assert!(endpoints.end_point(0, 0).is_none(), "never itself");
    assert!(endpoints.end_point(2, 0).is_none(), "not alive");
    // Each fetcher of a leader has its own connection; a fetcher reuses its own.
    endpoints.end_point(1, 1).unwrap();
    endpoints.end_point(1, 1).unwrap();
    let clients = lock(&endpoints.clients);
    let ids: Vec<i32> = {
        let mut ids: Vec<i32> = clients.keys().map(|(_, _, id)| *id).collect();
        ids.sort_unstable();
        ids
    };
    assert_eq!(ids, vec![0, 1]);
}

#[test]
fn a_fetch_at_ibp_3_9_is_v17_by_topic_id_in_a_session_with_kafkas_defaults() {
    let (endpoints, topic_id) = factory();
    let leader = RemoteLeaderEndPoint {
        broker: 1,
        address: "h1:9093".into(),
        client: Arc::new(NetworkClient::new(
            "h1:9093",
            NetworkClientConfig::default(),
        )),
        local: Arc::clone(&endpoints.local),
        session: Mutex::new(FetchSessionHandler::new()),
    };
    let partitions = [
        partition("t", 0, 10),
        partition("t", 1, 20),
        partition("unknown", 0, 0),
    ];
    let built = leader.build_fetch(&partitions);
    let (request, local) = (built.request, built.unanswerable);
    assert_eq!(endpoints.local.versions.fetch, 17);
    assert_eq!(request.replica_state.replica_id, 0);
    assert_eq!(request.replica_state.replica_epoch, 77);
    assert_eq!(
        (request.max_wait_ms, request.min_bytes, request.max_bytes),
        (500, 1, 10 << 20)
    );
    // The first fetch is full and asks for a session.
    assert_eq!((request.session_id, request.session_epoch), (0, 0));
    assert_eq!(request.isolation_level, 0);
    assert_eq!(request.topics.len(), 1);
    let topic = &request.topics[0];
    assert_eq!(topic.topic_id, topic_id);
    let offsets: Vec<_> = topic
        .partitions
        .iter()
        .map(|p| {
            (
                p.partition,
                p.fetch_offset,
                p.current_leader_epoch,
                p.last_fetched_epoch,
                p.partition_max_bytes,
            )
        })
        .collect();
    // A log without epochs sends -1.
    assert_eq!(
        offsets,
        vec![(0, 10, 4, 3, 1 << 20), (1, 20, 4, -1, 1 << 20)]
    );
    // A topic without an id cannot be asked for at v13+.
    assert_eq!(local.len(), 1);
    assert_eq!(local[0].1.error_code, ErrorCode::UnknownTopicId.code());
    let header = RequestHeader {
        request_api_key: ApiKey::Fetch as i16,
        request_api_version: 17,
        correlation_id: 1,
        client_id: None,
        unknown_tagged_fields: Vec::new(),
    };
    assert!(encode_request_frame(&header, &RequestKind::Fetch(request)).is_ok());

    // In the session the leader opened, only partition 1's move is sent.
    assert!(lock(&leader.session).handle_response(0, 9));
    let mut moved = partitions.clone();
    moved[1].fetch_offset = 25;
    let next = leader.build_fetch(&moved).request;
    assert_eq!((next.session_id, next.session_epoch), (9, 1));
    let sent: Vec<_> = next.topics[0]
        .partitions
        .iter()
        .map(|p| (p.partition, p.fetch_offset))
        .collect();
    assert_eq!(sent, vec![(1, 25)]);
    // Partition 0 no longer fetched: forgotten by topic id.
    let next = leader.build_fetch(&moved[1..2]);
    assert!(
        !next.empty,
        "an incremental fetch naming nothing is still sent"
    );
    assert!(next.request.topics.is_empty());
    let forgotten = &next.request.forgotten_topics_data[0];
    assert_eq!(
        (forgotten.topic_id, forgotten.partitions.clone()),
        (topic_id, vec![0])
    );
}
