//! Controller requests over the wire: the controller's channel (`ControllerChannel`) reaching a
//! broker that is not its own through `NetworkClient`, the broker obeying a newer controller
//! epoch while refusing an older one, requests refused whole answered on every partition as
//! Kafka's `getErrorResponse` does, and a topic given its id at an unchanged leader epoch.

use kcli::controller::channel_manager::{BrokerChannel, BrokerNode, ControllerResponse};
use kcli::controller::controller_request_batch::ControllerRequest;
use kcli::protocol::codec::StrBytes;
use kcli::protocol::errors::ErrorCode;
use kcli::protocol::messages::RequestKind;
use kcli::protocol::messages::ResponseKind;
use kcli::protocol::messages::leader_and_isr_request::{
    LeaderAndIsrPartitionState, LeaderAndIsrRequest, LeaderAndIsrTopicState,
};
use kcli::protocol::messages::metadata_request::MetadataRequest;
use kcli::protocol::messages::stop_replica_request::{
    StopReplicaPartitionState, StopReplicaRequest, StopReplicaTopicState,
};
use kcli::protocol::messages::update_metadata_request::{
    UpdateMetadataBroker, UpdateMetadataEndpoint, UpdateMetadataRequest,
};
use kcli::server::controller_channel::ControllerChannel;

use crate::acls::ACL_AUTHORIZER;
use crate::serve_support::{KafkaConn, TestBroker};

fn broker(id: i32, port: u16) -> UpdateMetadataBroker {
    UpdateMetadataBroker {
        id,
        endpoints: vec![UpdateMetadataEndpoint {
            port: i32::from(port),
            host: StrBytes::from("127.0.0.1"),
            listener: StrBytes::from("PLAINTEXT"),
            security_protocol: 0,
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn metadata_brokers(port: u16) -> (Vec<i32>, i32) {
    let mut conn = KafkaConn::connect(port);
    let body = RequestKind::Metadata(MetadataRequest {
        topics: Some(Vec::new()),
        ..Default::default()
    });
    match conn.call(&body, 12) {
        ResponseKind::Metadata(m) => (
            m.brokers.iter().map(|b| b.node_id).collect(),
            m.controller_id,
        ),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_remote_controllers_update_metadata_is_obeyed_and_a_stale_one_refused() {
    let b = TestBroker::start(&[]);
    let (before, controller) = metadata_brokers(b.port());
    assert_eq!((before, controller), (vec![0], 0));
    // Broker 99 plays a controller with a newer epoch, reaching broker 0 over the wire.
    let channel = ControllerChannel::new(99);
    let node = BrokerNode {
        id: 0,
        host: "127.0.0.1".into(),
        port: i32::from(b.port()),
    };
    let update =
        |epoch: i32, brokers: Vec<UpdateMetadataBroker>| ControllerRequest::UpdateMetadata {
            version: 8,
            request: UpdateMetadataRequest {
                controller_id: 99,
                controller_epoch: epoch,
                broker_epoch: -1,
                live_brokers: brokers,
                ..Default::default()
            },
        };
    let request = update(100, vec![broker(0, b.port()), broker(7, 1)]);
    match channel.send(&node, &request).await.unwrap() {
        ControllerResponse::UpdateMetadata(r) => assert_eq!(r.error_code, 0),
        other => panic!("{other:?}"),
    }
    assert_eq!(metadata_brokers(b.port()), (vec![0, 7], 99));
    // An older controller is refused and changes nothing.
    let stale = update(99, vec![broker(0, b.port())]);
    match channel.send(&node, &stale).await.unwrap() {
        ControllerResponse::UpdateMetadata(r) => assert_eq!(r.error_code, 11),
        other => panic!("{other:?}"),
    }
    assert_eq!(metadata_brokers(b.port()), (vec![0, 7], 99));
}

/// A LeaderAndIsr from controller 99 at `controller_epoch` making this broker (0) lead
/// partitions 0 and 1 of topic `t` at leader epoch 5: grouped by topic (with `topic_id` from v5)
/// from v2, ungrouped before.
fn leader_and_isr(version: i16, controller_epoch: i32, topic_id: uuid::Uuid) -> RequestKind {
    leader_and_isr_at(version, controller_epoch, 5, topic_id)
}

fn leader_and_isr_at(
    version: i16,
    controller_epoch: i32,
    leader_epoch: i32,
    topic_id: uuid::Uuid,
) -> RequestKind {
    let state = |partition_index| LeaderAndIsrPartitionState {
        topic_name: StrBytes::from(if version < 2 { "t" } else { "" }),
        partition_index,
        controller_epoch,
        leader: 0,
        leader_epoch,
        isr: vec![0],
        replicas: vec![0],
        ..Default::default()
    };
    let mut request = LeaderAndIsrRequest {
        controller_id: 99,
        controller_epoch,
        broker_epoch: -1,
        ..Default::default()
    };
    if version < 2 {
        request.ungrouped_partition_states = vec![state(0), state(1)];
    } else {
        request.topic_states = vec![LeaderAndIsrTopicState {
            topic_name: StrBytes::from("t"),
            topic_id,
            partition_states: vec![state(0), state(1)],
            ..Default::default()
        }];
    }
    RequestKind::LeaderAndIsr(request)
}

/// `(top-level error, [(topic, partition, error)])` of a LeaderAndIsr answer; the topic is the
/// name below v5 and the id's string from v5.
fn leader_and_isr_errors(response: ResponseKind) -> (i16, Vec<(String, i32, i16)>) {
    let ResponseKind::LeaderAndIsr(r) = response else {
        panic!("{response:?}");
    };
    let mut partitions: Vec<(String, i32, i16)> = r
        .partition_errors
        .iter()
        .map(|p| (p.topic_name.to_string(), p.partition_index, p.error_code))
        .collect();
    for t in &r.topics {
        for p in &t.partition_errors {
            partitions.push((t.topic_id.to_string(), p.partition_index, p.error_code));
        }
    }
    (r.error_code, partitions)
}

/// Asserts a LeaderAndIsr refused whole with `code`, at every version's layout.
fn assert_leader_and_isr_refused(port: u16, controller_epoch: i32, code: ErrorCode) {
    let topic_id = uuid::Uuid::from_u128(0x7e57);
    let code = code.code();
    let mut conn = KafkaConn::connect(port);
    for version in [1, 4, 7] {
        let response = conn.call(
            &leader_and_isr(version, controller_epoch, topic_id),
            version,
        );
        let topic = if version < 5 {
            "t".to_string()
        } else {
            topic_id.to_string()
        };
        assert_eq!(
            leader_and_isr_errors(response),
            (code, vec![(topic.clone(), 0, code), (topic, 1, code)]),
            "LeaderAndIsr v{version}"
        );
    }
}

#[test]
fn a_stale_controllers_leader_and_isr_is_refused_on_every_partition() {
    let b = TestBroker::start(&[]);
    // The broker's own (embedded) controller is at epoch 1 or later: epoch 0 is stale.
    assert_leader_and_isr_refused(b.port(), 0, ErrorCode::StaleControllerEpoch);
    let mut conn = KafkaConn::connect(b.port());
    let body = RequestKind::Metadata(MetadataRequest {
        topics: None,
        ..Default::default()
    });
    let ResponseKind::Metadata(m) = conn.call(&body, 12) else {
        panic!("not a Metadata answer");
    };
    assert!(
        m.topics.is_empty(),
        "the refused request made no partition: {m:?}"
    );
}

#[test]
fn an_unauthorized_principals_controller_requests_are_refused_on_every_partition() {
    let b = TestBroker::start(&[("authorizer.class.name", ACL_AUTHORIZER)]);
    let denied = ErrorCode::ClusterAuthorizationFailed;
    assert_leader_and_isr_refused(b.port(), i32::MAX, denied);
    let request = RequestKind::StopReplica(StopReplicaRequest {
        controller_id: 99,
        controller_epoch: i32::MAX,
        broker_epoch: -1,
        topic_states: vec![StopReplicaTopicState {
            topic_name: StrBytes::from("t"),
            partition_states: [0, 1]
                .map(|partition_index| StopReplicaPartitionState {
                    partition_index,
                    leader_epoch: -1,
                    ..Default::default()
                })
                .to_vec(),
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::StopReplica(r) = KafkaConn::connect(b.port()).call(&request, 3) else {
        panic!("not a StopReplica answer");
    };
    let partitions: Vec<(String, i32, i16)> = r
        .partition_errors
        .iter()
        .map(|p| (p.topic_name.to_string(), p.partition_index, p.error_code))
        .collect();
    let code = denied.code();
    assert_eq!(
        (r.error_code, partitions),
        (code, vec![("t".into(), 0, code), ("t".into(), 1, code)])
    );
}

#[test]
fn a_topic_without_an_id_gets_one_at_an_unchanged_leader_epoch() {
    let b = TestBroker::start(&[]);
    let mut conn = KafkaConn::connect(b.port());
    let id = uuid::Uuid::from_u128(0x1d);
    let none = ErrorCode::None.code();
    let stale = ErrorCode::StaleControllerEpoch.code();
    // A controller of the days before topic ids (v4) makes the partitions, at leader epoch 5.
    let first = leader_and_isr_errors(conn.call(&leader_and_isr_at(4, 100, 5, id), 4));
    assert_eq!(
        first,
        (none, vec![("t".into(), 0, none), ("t".into(), 1, none)])
    );
    let metadata_file = b.data_dir().join("t-0").join("partition.metadata");
    assert!(!metadata_file.exists(), "no id yet");
    // The same epoch with the topic's new id: recorded, not refused.
    let topic = id.to_string();
    let answer = leader_and_isr_errors(conn.call(&leader_and_isr_at(7, 100, 5, id), 7));
    assert_eq!(
        answer,
        (
            none,
            vec![(topic.clone(), 0, none), (topic.clone(), 1, none)]
        )
    );
    let recorded = std::fs::read_to_string(&metadata_file).unwrap();
    assert!(
        recorded.contains(&format!(
            "topic_id: {}",
            kcli::storage::partition_metadata::TopicId(id.as_u128())
        )),
        "{recorded}"
    );
    // Once it has one, the same epoch is stale again, and another id is inconsistent.
    let again = leader_and_isr_errors(conn.call(&leader_and_isr_at(7, 100, 5, id), 7));
    assert_eq!(
        again,
        (none, vec![(topic.clone(), 0, stale), (topic, 1, stale)])
    );
    let other = uuid::Uuid::from_u128(0x2e);
    let answer = leader_and_isr_errors(conn.call(&leader_and_isr_at(7, 100, 6, other), 7));
    let inconsistent = ErrorCode::InconsistentTopicId.code();
    let other = other.to_string();
    assert_eq!(
        answer,
        (
            none,
            vec![(other.clone(), 0, inconsistent), (other, 1, inconsistent)]
        )
    );
}
