//! Leadership moves with the controller harness of `controller_tests.rs`: controlled shutdown,
//! preferred elections (ElectLeaders, the znode, the imbalance check) and unclean elections.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_partition_request::{
    AlterPartitionRequest, PartitionData, TopicData,
};
use crate::protocol::messages::controlled_shutdown_response::ControlledShutdownResponse;
use crate::zk::kafka_zk_client::KafkaZkClient;
use crate::zk::{ZkClient, recipes, zk_data};

use super::controller_context::{
    ControllerContext, LeaderIsrAndControllerEpoch, ReplicaAssignment,
};
use super::controller_event_manager::{ControllerEvent, ControllerHandle};
use super::controller_request_batch::ControllerRequest;
use super::controller_tests::Harness;
use super::kafka_controller::KafkaController;
use super::replica_leader_election::{ElectionResults, ElectionType, leader_imbalance};

fn tp(topic: &str, partition: i32) -> TopicPartition {
    TopicPartition::new(topic, partition)
}

/// The broker that runs the controller in these tests: it hosts no replica and never stops,
/// so the others can come and go under it.
pub(super) const CONTROLLER: BrokerId = 9;

/// The active controller (on [`CONTROLLER`]), with the topics created and the requests so far
/// delivered and dropped.
pub(super) async fn active(h: &Harness, topics: &[(&str, &[&[BrokerId]])]) -> KafkaController {
    let mut c = h.controller(CONTROLLER);
    c.process(ControllerEvent::Startup).await;
    assert!(c.is_active());
    for (topic, assignment) in topics {
        h.create_topic(topic, assignment).await;
    }
    c.process(ControllerEvent::TopicChange).await;
    settle(h).await;
    c
}

/// Waits until the per-broker queues are idle for a moment, and drops what they delivered.
pub(super) async fn settle(h: &Harness) -> Vec<(BrokerId, ControllerRequest)> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut all = Vec::new();
    loop {
        tokio::time::sleep(Duration::from_millis(30)).await;
        let batch = h.channel.take();
        if batch.is_empty() || tokio::time::Instant::now() > deadline {
            return all;
        }
        all.extend(batch);
    }
}

async fn controlled_shutdown(
    c: &mut KafkaController,
    broker_id: BrokerId,
    broker_epoch: i64,
) -> ControlledShutdownResponse {
    let (reply, answer) = tokio::sync::oneshot::channel();
    c.process(ControllerEvent::ControlledShutdown {
        broker_id,
        broker_epoch,
        reply,
    })
    .await;
    answer.await.unwrap()
}

async fn elect(
    c: &mut KafkaController,
    partitions: &[TopicPartition],
    election_type: ElectionType,
) -> ElectionResults {
    let (reply, answer) = tokio::sync::oneshot::channel();
    c.process(ControllerEvent::ReplicaLeaderElection {
        partitions: Some(partitions.to_vec()),
        election_type,
        reply: Some(reply),
    })
    .await;
    answer.await.unwrap()
}

fn codes(results: &ElectionResults) -> Vec<Result<BrokerId, ErrorCode>> {
    results
        .values()
        .map(|r| r.clone().map_err(|(code, _)| code))
        .collect()
}

/// `(leader, leader_epoch, isr, leader_recovery_state)` of a partition's state znode.
async fn state_of(h: &Harness, p: &TopicPartition) -> (BrokerId, i32, Vec<BrokerId>, i8) {
    let (s, _) = h.state(p).await;
    (s.leader, s.leader_epoch, s.isr, s.leader_recovery_state)
}

/// The ISR change the leader of `p` would send (AlterPartition v1, by topic name).
pub(super) fn alter_partition_request(
    c: &KafkaController,
    p: &TopicPartition,
    isr: &[BrokerId],
) -> AlterPartitionRequest {
    let current = c.ctx.leadership[p].clone();
    let leader = current.state.leader;
    AlterPartitionRequest {
        broker_id: leader,
        broker_epoch: c.ctx.broker_epoch(leader).unwrap(),
        topics: vec![TopicData {
            topic_name: p.topic.as_str().into(),
            partitions: vec![PartitionData {
                partition_index: p.partition,
                leader_epoch: current.state.leader_epoch,
                new_isr: isr.to_vec(),
                leader_recovery_state: current.state.leader_recovery_state,
                partition_epoch: current.partition_epoch,
                ..PartitionData::default()
            }],
            ..TopicData::default()
        }],
        ..AlterPartitionRequest::default()
    }
}

/// [`alter_partition_request`], processed.
async fn alter_isr(c: &mut KafkaController, p: &TopicPartition, isr: &[BrokerId]) {
    let request = alter_partition_request(c, p, isr);
    let (response, _, result) = c.process_alter_partition(request, 1).await;
    result.unwrap();
    let error = response.topics[0].partitions[0].error_code;
    assert_eq!(error, 0, "AlterPartition to {isr:?}");
}

fn stop_replicas_to(
    sent: &[(BrokerId, ControllerRequest)],
    broker: BrokerId,
) -> Vec<(String, i32, bool)> {
    sent.iter()
        .filter(|(b, _)| *b == broker)
        .filter_map(|(_, r)| match r {
            ControllerRequest::StopReplica { request, .. } => Some(request),
            _ => None,
        })
        .flat_map(|r| {
            r.topic_states.iter().flat_map(|t| {
                t.partition_states.iter().map(|p| {
                    (
                        t.topic_name.to_string(),
                        p.partition_index,
                        p.delete_partition,
                    )
                })
            })
        })
        .collect()
}

#[tokio::test]
async fn controlled_shutdown_moves_leadership_shrinks_isrs_and_answers_none_remaining() {
    let h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let assignment: &[&[BrokerId]] = &[&[1, 2, 3], &[2, 1, 3], &[3, 2, 1]];
    let mut c = active(&h, &[("t", assignment), ("single", &[&[1]])]).await;
    let epoch = c.ctx.broker_epoch(1).unwrap();

    let response = controlled_shutdown(&mut c, 1, epoch).await;
    assert_eq!(response.error_code, 0);
    // The single-replica partition has nowhere to go and is not reported, as in Kafka.
    assert!(response.remaining_partitions.is_empty());
    assert!(c.ctx.shutting_down_broker_ids.contains(&1));
    // Led by 1: the next assigned replica leads, and 1 leaves the ISR, with a new epoch.
    assert_eq!(state_of(&h, &tp("t", 0)).await, (2, 1, vec![2, 3], 0));
    // Followed by 1: the leader stays, 1 leaves the ISR.
    assert_eq!(state_of(&h, &tp("t", 1)).await, (2, 1, vec![2, 3], 0));
    assert_eq!(state_of(&h, &tp("t", 2)).await, (3, 1, vec![3, 2], 0));
    assert_eq!(state_of(&h, &tp("single", 0)).await.0, 1);
    let sent = settle(&h).await;
    // 1 stops its follower replicas, keeping their logs, and still hears that it follows t-0.
    let mut stopped = stop_replicas_to(&sent, 1);
    stopped.sort();
    assert_eq!(
        stopped,
        vec![("t".to_string(), 1, false), ("t".to_string(), 2, false)]
    );
    assert!(
        sent.iter()
            .any(|(b, r)| *b == 1 && r.api_name() == "LeaderAndIsr")
    );

    // While shutting down, 1 may not rejoin an ISR...
    let (response, _, _) = c
        .process_alter_partition(
            AlterPartitionRequest {
                broker_id: 2,
                broker_epoch: c.ctx.broker_epoch(2).unwrap(),
                topics: vec![TopicData {
                    topic_id: c.ctx.topic_ids["t"],
                    partitions: vec![PartitionData {
                        partition_index: 0,
                        leader_epoch: 1,
                        new_isr: vec![2, 3, 1],
                        partition_epoch: 1,
                        ..PartitionData::default()
                    }],
                    ..TopicData::default()
                }],
                ..AlterPartitionRequest::default()
            },
            2,
        )
        .await;
    assert_eq!(
        response.topics[0].partitions[0].error_code,
        ErrorCode::IneligibleReplica.code()
    );
    // ...nor lead, even as the preferred replica.
    let results = elect(&mut c, &[tp("t", 0)], ElectionType::Preferred).await;
    assert_eq!(
        codes(&results),
        vec![Err(ErrorCode::PreferredLeaderNotAvailable)]
    );
}

#[tokio::test]
async fn controlled_shutdown_reports_what_it_cannot_move_and_checks_the_broker_epoch() {
    let mut h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let mut c = active(&h, &[("u", &[&[1, 2]])]).await;
    // 2 goes: the ISR is 1 alone, so no other replica may lead u-0.
    h.kill_broker(2).await;
    c.process(ControllerEvent::BrokerChange).await;
    settle(&h).await;
    let epoch = c.ctx.broker_epoch(1).unwrap();

    let stale = controlled_shutdown(&mut c, 1, epoch - 1).await;
    assert_eq!(stale.error_code, ErrorCode::StaleBrokerEpoch.code());
    assert!(c.ctx.shutting_down_broker_ids.is_empty());
    let unknown = controlled_shutdown(&mut c, 7, 0).await;
    assert_eq!(unknown.error_code, ErrorCode::BrokerNotAvailable.code());

    // An unknown epoch (-1, a pre-KIP-380 broker) is accepted.
    let response = controlled_shutdown(&mut c, 1, -1).await;
    assert_eq!(response.error_code, 0);
    let remaining: Vec<(String, i32)> = response
        .remaining_partitions
        .iter()
        .map(|p| (p.topic_name.to_string(), p.partition_index))
        .collect();
    assert_eq!(remaining, vec![("u".to_string(), 0)]);
    assert_eq!(state_of(&h, &tp("u", 0)).await, (1, 1, vec![1], 0));
}

#[tokio::test]
async fn preferred_election_only_when_the_preferred_replica_is_live_and_in_the_isr() {
    let mut h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2, 3]])]).await;
    let p = tp("t", 0);
    h.kill_broker(1).await;
    c.process(ControllerEvent::BrokerChange).await;
    // Dead: not available.
    let results = elect(&mut c, std::slice::from_ref(&p), ElectionType::Preferred).await;
    assert_eq!(
        codes(&results),
        vec![Err(ErrorCode::PreferredLeaderNotAvailable)]
    );
    // Back, but not in the ISR: still not available.
    h.start_broker(1).await;
    c.process(ControllerEvent::BrokerChange).await;
    let results = elect(&mut c, std::slice::from_ref(&p), ElectionType::Preferred).await;
    assert_eq!(
        codes(&results),
        vec![Err(ErrorCode::PreferredLeaderNotAvailable)]
    );
    assert_eq!(state_of(&h, &p).await.0, 2);
    // Caught up (the leader added it to the ISR): it leads again, the ISR unchanged.
    alter_isr(&mut c, &p, &[2, 3, 1]).await;
    let before = state_of(&h, &p).await.1;
    let results = elect(
        &mut c,
        &[p.clone(), tp("t", 7), tp("nope", 0)],
        ElectionType::Preferred,
    )
    .await;
    assert_eq!(results[&p], Ok(1));
    assert_eq!(
        results[&tp("t", 7)].clone().unwrap_err().0,
        ErrorCode::UnknownTopicOrPartition
    );
    assert_eq!(
        results[&tp("nope", 0)].clone().unwrap_err().0,
        ErrorCode::UnknownTopicOrPartition
    );
    assert_eq!(state_of(&h, &p).await, (1, before + 1, vec![2, 3, 1], 0));
    let results = elect(&mut c, std::slice::from_ref(&p), ElectionType::Preferred).await;
    assert_eq!(codes(&results), vec![Err(ErrorCode::ElectionNotNeeded)]);
    // A live leader needs no unclean election either.
    let results = elect(&mut c, std::slice::from_ref(&p), ElectionType::Unclean).await;
    assert_eq!(codes(&results), vec![Err(ErrorCode::ElectionNotNeeded)]);
}

#[test]
fn imbalance_is_the_share_of_a_brokers_preferred_partitions_led_elsewhere() {
    let mut ctx = ControllerContext::default();
    let assignment: BTreeMap<i32, ReplicaAssignment> = [
        (0, vec![1, 2]),
        (1, vec![1, 2]),
        (2, vec![1, 2]),
        (3, vec![1, 2]),
        (4, vec![2, 1]),
        (5, vec![3, 1]),
    ]
    .into_iter()
    .map(|(p, r)| (p, ReplicaAssignment::new(r)))
    .collect();
    ctx.update_assignment("t", assignment);
    for (p, leader) in [(0, 1), (1, 2), (2, 1), (3, 1), (4, 2)] {
        ctx.leadership.insert(
            tp("t", p),
            LeaderIsrAndControllerEpoch {
                state: zk_data::PartitionState {
                    leader,
                    leader_epoch: 0,
                    isr: vec![1, 2],
                    controller_epoch: 1,
                    leader_recovery_state: 0,
                },
                partition_epoch: 0,
            },
        );
    }
    let imbalance = leader_imbalance(&ctx);
    assert_eq!(imbalance[&1].preferred, 4);
    assert_eq!(imbalance[&1].led_elsewhere, vec![tp("t", 1)]);
    assert!((imbalance[&1].ratio() - 0.25).abs() < 1e-9);
    assert_eq!(imbalance[&2].ratio(), 0.0);
    // No leadership known: preferred, but not led elsewhere.
    assert_eq!((imbalance[&3].preferred, imbalance[&3].ratio()), (1, 0.0));
    // Topics being deleted do not count.
    ctx.topics_to_be_deleted.insert("t".into());
    assert!(leader_imbalance(&ctx).is_empty());
}

#[tokio::test]
async fn the_imbalance_check_moves_leaders_back_above_the_threshold_and_reschedules() {
    let mut h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2, 3], &[2, 1, 3]])]).await;
    assert!(c.auto_rebalance_at.is_some(), "scheduled at failover");
    h.kill_broker(1).await;
    c.process(ControllerEvent::BrokerChange).await;
    h.start_broker(1).await;
    c.process(ControllerEvent::BrokerChange).await;
    let p0 = tp("t", 0);
    // Broker 1 prefers one partition and leads none (ratio 1), but it is out of the ISR.
    c.process(ControllerEvent::AutoPreferredReplicaLeaderElection)
        .await;
    assert_eq!(state_of(&h, &p0).await.0, 2);
    alter_isr(&mut c, &p0, &[2, 3, 1]).await;
    let due = c.auto_rebalance_at.unwrap();
    c.process(ControllerEvent::AutoPreferredReplicaLeaderElection)
        .await;
    assert_eq!(state_of(&h, &p0).await.0, 1);
    assert_eq!(state_of(&h, &tp("t", 1)).await.0, 2);
    assert!(c.auto_rebalance_at.unwrap() >= due);
}

#[tokio::test]
async fn unclean_election_only_when_asked_or_enabled_and_then_recovering() {
    let mut h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2]]), ("v", &[&[1, 3]])]).await;
    // 2 and 3 go, then 1 (the last ISR member) goes, then 2 and 3 return: clean leaders none.
    h.kill_broker(2).await;
    h.kill_broker(3).await;
    c.process(ControllerEvent::BrokerChange).await;
    h.kill_broker(1).await;
    c.process(ControllerEvent::BrokerChange).await;
    h.start_broker(2).await;
    h.start_broker(3).await;
    c.process(ControllerEvent::BrokerChange).await;
    let t0 = tp("t", 0);
    assert_eq!(state_of(&h, &t0).await.0, -1);
    // Each broker change timed; both partitions offline; no unclean election yet.
    assert_eq!(metric(&c, "LeaderElectionRateAndTimeMs"), 3.0);
    assert_eq!(metric(&c, "OfflinePartitionsCount"), 2.0);
    assert_eq!(metric(&c, "GlobalTopicCount"), 2.0);
    assert_eq!(metric(&c, "ActiveControllerCount"), 1.0);
    assert_eq!(metric(&c, "UncleanLeaderElectionsPerSec"), 0.0);

    // A preferred election cannot help; the topic event without the config changes nothing.
    let results = elect(&mut c, std::slice::from_ref(&t0), ElectionType::Preferred).await;
    assert_eq!(
        codes(&results),
        vec![Err(ErrorCode::PreferredLeaderNotAvailable)]
    );
    c.process(ControllerEvent::TopicUncleanLeaderElectionEnable { topic: "t".into() })
        .await;
    assert_eq!(state_of(&h, &t0).await.0, -1);

    // ElectLeaders UNCLEAN: the live replica leads alone, RECOVERING.
    let results = elect(&mut c, std::slice::from_ref(&t0), ElectionType::Unclean).await;
    assert_eq!(codes(&results), vec![Ok(2)]);
    let (leader, _, isr, recovery) = state_of(&h, &t0).await;
    assert_eq!((leader, isr, recovery), (2, vec![2], 1));
    assert_eq!(metric(&c, "UncleanLeaderElectionsPerSec"), 1.0);
    assert_eq!(metric(&c, "OfflinePartitionsCount"), 1.0);

    // The topic's config enables it: its offline partition is elected.
    let v0 = tp("v", 0);
    assert_eq!(state_of(&h, &v0).await.0, -1);
    let config: BTreeMap<String, String> = [(
        "unclean.leader.election.enable".to_string(),
        "true".to_string(),
    )]
    .into();
    recipes::create_recursive(
        &h.store.session(),
        &zk_data::topic_config_path("v"),
        &zk_data::encode_entity_config(&config),
    )
    .await
    .unwrap();
    c.process(ControllerEvent::TopicUncleanLeaderElectionEnable { topic: "v".into() })
        .await;
    let (leader, _, isr, recovery) = state_of(&h, &v0).await;
    assert_eq!((leader, isr, recovery), (3, vec![3], 1));
    assert_eq!(metric(&c, "UncleanLeaderElectionsPerSec"), 2.0);
    assert_eq!(metric(&c, "OfflinePartitionsCount"), 0.0);
    assert_eq!(
        metric(&c, "LeaderElectionRateAndTimeMs"),
        3.0,
        "only broker changes are timed"
    );
}

/// The controller's metric `name` as a scrape reads it: a gauge's value, a meter's or timer's
/// count.
fn metric(c: &KafkaController, name: &str) -> f64 {
    use crate::metrics::{MetricsSource, Reading};
    let mut samples = Vec::new();
    c.metrics.collect(&mut samples);
    let sample = samples
        .iter()
        .find(|s| s.mbean.to_string().ends_with(&format!("name={name}")))
        .unwrap_or_else(|| panic!("{name} in {samples:#?}"));
    match &sample.reading {
        Reading::Gauge(v) => *v,
        Reading::Meter(m) | Reading::Timer(_, m) => m.count as f64,
        other => panic!("{name} is {other:?}"),
    }
}

#[tokio::test]
async fn the_preferred_replica_election_znode_is_served_and_deleted() {
    let mut h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2, 3]])]).await;
    let p = tp("t", 0);
    h.kill_broker(1).await;
    c.process(ControllerEvent::BrokerChange).await;
    h.start_broker(1).await;
    c.process(ControllerEvent::BrokerChange).await;
    alter_isr(&mut c, &p, &[2, 3, 1]).await;
    let session = h.store.session();
    recipes::create_recursive(
        &session,
        zk_data::PREFERRED_REPLICA_ELECTION_PATH,
        &zk_data::encode_preferred_replica_election(&[p.clone(), tp("gone", 0)]),
    )
    .await
    .unwrap();
    // The watch's event: the znode is read, served and removed.
    let event = super::controller_event_manager::event_for_watch(
        zk_data::PREFERRED_REPLICA_ELECTION_PATH,
        crate::zk::WatchedEventType::NodeCreated,
    )
    .unwrap();
    c.process(event).await;
    assert_eq!(state_of(&h, &p).await.0, 1);
    assert!(
        session
            .exists(zk_data::PREFERRED_REPLICA_ELECTION_PATH, false)
            .await
            .unwrap()
            .is_none()
    );
    let zk = KafkaZkClient::new(std::sync::Arc::new(h.store.session()));
    assert_eq!(
        zk.get_partitions_for_preferred_replica_election()
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn a_broker_that_is_not_the_controller_answers_not_controller() {
    let handle = ControllerHandle::detached(1);
    assert_eq!(
        handle.controlled_shutdown(1, 5).await.error_code,
        ErrorCode::NotController.code()
    );
    assert_eq!(
        handle
            .elect_leaders(Some(vec![tp("t", 0)]), ElectionType::Preferred)
            .await
            .unwrap_err(),
        ErrorCode::NotController
    );
}

#[test]
fn election_types_are_kafkas_bytes() {
    assert_eq!(ElectionType::from_wire(0), Some(ElectionType::Preferred));
    assert_eq!(ElectionType::from_wire(1), Some(ElectionType::Unclean));
    assert_eq!(ElectionType::from_wire(2), None);
}

#[tokio::test(start_paused = true)]
async fn the_running_controller_checks_the_imbalance_5_s_after_failover() {
    let mut h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2, 3]])]).await;
    let p = tp("t", 0);
    h.kill_broker(1).await;
    c.process(ControllerEvent::BrokerChange).await;
    h.start_broker(1).await;
    c.process(ControllerEvent::BrokerChange).await;
    alter_isr(&mut c, &p, &[2, 3, 1]).await;
    assert_eq!(state_of(&h, &p).await.0, 2);
    let due = c.auto_rebalance_at.unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn(c.run(stop.clone()));
    tokio::time::sleep_until(due + Duration::from_millis(100)).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    while state_of(&h, &p).await.0 != 1 {
        assert!(tokio::time::Instant::now() < deadline, "no rebalance");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.cancel();
    running.await.unwrap();
}
