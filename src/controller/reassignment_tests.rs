//! Reassignment with the controller harness of `controller_tests.rs`: the phases in ZooKeeper
//! and in the requests brokers get, completion on the AlterPartition that brings the target into
//! the ISR, cancellation, the legacy znode, validation, and resumption after failover.

use std::sync::Arc;

use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::zk::WatchedEventType;
use crate::zk::kafka_zk_client::KafkaZkClient;
use crate::zk::zk_data::{REASSIGN_PARTITIONS_PATH, TopicAssignment};

use super::controller_context::ReplicaAssignment;
use super::controller_event_manager::{ControllerEvent, event_for_watch};
use super::controller_request_batch::ControllerRequest;
use super::controller_tests::Harness;
use super::kafka_controller::KafkaController;
use super::leadership_tests::{CONTROLLER, active, alter_partition_request, settle};
use super::reassignment::{OngoingReassignments, ReassignmentResults};

fn tp(topic: &str, partition: i32) -> TopicPartition {
    TopicPartition::new(topic, partition)
}

fn zk(h: &Harness) -> KafkaZkClient {
    KafkaZkClient::new(Arc::new(h.store.session()))
}

async fn reassign(
    c: &mut KafkaController,
    reassignments: &[(TopicPartition, Option<&[BrokerId]>)],
) -> Vec<(TopicPartition, Result<(), ErrorCode>)> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    c.process(ControllerEvent::ApiPartitionReassignment {
        reassignments: reassignments
            .iter()
            .map(|(tp, r)| (tp.clone(), r.map(<[BrokerId]>::to_vec)))
            .collect(),
        reply,
    })
    .await;
    let results: ReassignmentResults = answer.await.unwrap();
    results
        .into_iter()
        .map(|(tp, r)| (tp, r.map_err(|(code, _)| code)))
        .collect()
}

async fn list(c: &mut KafkaController) -> OngoingReassignments {
    let (reply, answer) = tokio::sync::oneshot::channel();
    c.process(ControllerEvent::ListPartitionReassignments {
        partitions: None,
        reply,
    })
    .await;
    answer.await.unwrap()
}

/// The topic znode: (replicas, adding, removing) of partition 0.
async fn znode(h: &Harness, topic: &str) -> (Vec<BrokerId>, Vec<BrokerId>, Vec<BrokerId>) {
    let t: TopicAssignment = zk(h)
        .get_topic(topic, false)
        .await
        .unwrap()
        .unwrap()
        .assignment;
    (
        t.partitions[&0].clone(),
        t.adding_replicas.get(&0).cloned().unwrap_or_default(),
        t.removing_replicas.get(&0).cloned().unwrap_or_default(),
    )
}

/// The leader's AlterPartition, through the controller's queue as a broker's would come (so a
/// completed reassignment follows it).
async fn alter_isr(c: &mut KafkaController, p: &TopicPartition, isr: &[BrokerId]) {
    let (reply, answer) = tokio::sync::oneshot::channel();
    c.process(ControllerEvent::AlterPartitionReceived {
        request: alter_partition_request(c, p, isr),
        version: 1,
        reply,
    })
    .await;
    let response = answer.await.unwrap();
    assert_eq!(response.topics[0].partitions[0].error_code, 0);
}

/// Per LeaderAndIsr partition state sent: (broker, leader, leader epoch, replicas, adding,
/// removing, is_new).
type SentState = (BrokerId, BrokerId, i32, Vec<i32>, Vec<i32>, Vec<i32>, bool);

fn leader_and_isr(sent: &[(BrokerId, ControllerRequest)]) -> Vec<SentState> {
    let mut out: Vec<SentState> = sent
        .iter()
        .filter_map(|(b, r)| match r {
            ControllerRequest::LeaderAndIsr { request, .. } => Some((b, request)),
            _ => None,
        })
        .flat_map(|(b, r)| {
            r.ungrouped_partition_states
                .iter()
                .chain(r.topic_states.iter().flat_map(|t| &t.partition_states))
                .map(move |p| {
                    (
                        *b,
                        p.leader,
                        p.leader_epoch,
                        p.replicas.clone(),
                        p.adding_replicas.clone(),
                        p.removing_replicas.clone(),
                        p.is_new,
                    )
                })
        })
        .collect();
    out.sort();
    out
}

fn deleting_stop_replicas(sent: &[(BrokerId, ControllerRequest)]) -> Vec<BrokerId> {
    let mut out: Vec<BrokerId> = sent
        .iter()
        .filter(|(_, r)| match r {
            ControllerRequest::StopReplica { request, .. } => request
                .topic_states
                .iter()
                .flat_map(|t| &t.partition_states)
                .any(|p| p.delete_partition),
            _ => false,
        })
        .map(|(b, _)| *b)
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn a_reassignment_adds_the_new_replica_waits_for_the_isr_then_moves_and_removes() {
    let h = Harness::new(&[1, 2, 3, 4, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2, 3]])]).await;
    let p = tp("t", 0);

    let results = reassign(&mut c, &[(p.clone(), Some(&[4, 2, 3]))]).await;
    assert_eq!(results, vec![(p.clone(), Ok(()))]);
    // U: target first, then what the origin has beyond it; A: a new leader epoch.
    assert_eq!(znode(&h, "t").await, (vec![4, 2, 3, 1], vec![4], vec![1]));
    let (state, _) = h.state(&p).await;
    assert_eq!((state.leader, state.leader_epoch), (1, 1));
    let sent = settle(&h).await;
    let full = vec![4, 2, 3, 1];
    assert_eq!(
        leader_and_isr(&sent),
        vec![
            (1, 1, 1, full.clone(), vec![4], vec![1], false),
            (2, 1, 1, full.clone(), vec![4], vec![1], false),
            (3, 1, 1, full.clone(), vec![4], vec![1], false),
            // Twice, as from Kafka: A1's request, then A2's as the replica becomes New.
            (4, 1, 1, full.clone(), vec![4], vec![1], true),
            (4, 1, 1, full.clone(), vec![4], vec![1], true),
        ]
    );
    assert_eq!(
        list(&mut c).await,
        vec![(
            p.clone(),
            ReplicaAssignment {
                replicas: full,
                adding: vec![4],
                removing: vec![1],
            }
        )]
    );
    // The ISR changes without the new replica: still in progress.
    alter_isr(&mut c, &p, &[1, 2]).await;
    assert!(c.ctx.partitions_being_reassigned.contains(&p));
    settle(&h).await;

    // 4 caught up: B runs on the same event. 1 is outside the target, so 4 (first of the target
    // in the ISR) leads, 1 leaves the ISR and is deleted; ZooKeeper gets the target last.
    alter_isr(&mut c, &p, &[1, 2, 4]).await;
    assert!(
        c.ctx.partitions_being_reassigned.contains(&p),
        "3 is not in the ISR"
    );
    alter_isr(&mut c, &p, &[1, 2, 4, 3]).await;
    assert_eq!(znode(&h, "t").await, (vec![4, 2, 3], vec![], vec![]));
    let (state, _) = h.state(&p).await;
    assert_eq!((state.leader, state.isr.as_slice()), (4, &[2, 4, 3][..]));
    assert!(list(&mut c).await.is_empty());
    let sent = settle(&h).await;
    assert_eq!(deleting_stop_replicas(&sent), vec![1]);
    // The new replica set reaches the target replicas, with nothing left adding or removing.
    assert!(
        leader_and_isr(&sent)
            .iter()
            .any(|(b, leader, _, replicas, adding, removing, _)| {
                *b == 4
                    && *leader == 4
                    && *replicas == [4, 2, 3]
                    && adding.is_empty()
                    && removing.is_empty()
            })
    );
}

#[tokio::test]
async fn a_leader_inside_the_target_keeps_leading_and_only_the_epoch_moves() {
    let h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2]])]).await;
    let p = tp("t", 0);
    assert_eq!(
        reassign(&mut c, &[(p.clone(), Some(&[1, 3]))]).await[0].1,
        Ok(())
    );
    alter_isr(&mut c, &p, &[1, 2, 3]).await;
    let (state, _) = h.state(&p).await;
    // A1 bumped it to 1, B3 to 2; B4 took 2 out of the ISR (3).
    assert_eq!(
        (state.leader, state.leader_epoch, state.isr.as_slice()),
        (1, 3, &[1, 3][..])
    );
    assert_eq!(znode(&h, "t").await, (vec![1, 3], vec![], vec![]));
    assert_eq!(deleting_stop_replicas(&settle(&h).await), vec![2]);
}

#[tokio::test]
async fn cancelling_goes_back_to_the_origin_and_deletes_the_added_replicas() {
    let h = Harness::new(&[1, 2, 3, 4, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2]])]).await;
    let p = tp("t", 0);
    assert_eq!(
        reassign(&mut c, &[(p.clone(), None)]).await[0].1,
        Err(ErrorCode::NoReassignmentInProgress)
    );
    reassign(&mut c, &[(p.clone(), Some(&[3, 4]))]).await;
    assert_eq!(
        znode(&h, "t").await,
        (vec![3, 4, 1, 2], vec![3, 4], vec![1, 2])
    );
    settle(&h).await;
    // A new target replaces the one in progress: 4 is no longer wanted and is deleted.
    reassign(&mut c, &[(p.clone(), Some(&[3, 2]))]).await;
    assert_eq!(znode(&h, "t").await, (vec![3, 2, 1], vec![3], vec![1]));
    assert_eq!(deleting_stop_replicas(&settle(&h).await), vec![4]);
    // Cancelled: the origin is back (in the order the full set kept it), 3 is deleted.
    assert_eq!(reassign(&mut c, &[(p.clone(), None)]).await[0].1, Ok(()));
    assert_eq!(znode(&h, "t").await, (vec![2, 1], vec![], vec![]));
    assert!(!c.ctx.partitions_being_reassigned.contains(&p));
    assert_eq!(deleting_stop_replicas(&settle(&h).await), vec![3]);
    let (state, _) = h.state(&p).await;
    assert_eq!(state.leader, 1);
}

#[tokio::test]
async fn invalid_targets_get_kafkas_errors_and_change_nothing() {
    let mut h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2]])]).await;
    h.kill_broker(3).await;
    c.process(ControllerEvent::BrokerChange).await;
    settle(&h).await;
    let p = tp("t", 0);
    let results = reassign(
        &mut c,
        &[
            (p.clone(), Some(&[])),
            (tp("t", 1), Some(&[1])),
            (tp("gone", 0), Some(&[1])),
        ],
    )
    .await;
    assert_eq!(
        results,
        vec![
            (tp("gone", 0), Err(ErrorCode::UnknownTopicOrPartition)),
            (p.clone(), Err(ErrorCode::InvalidReplicaAssignment)),
            (tp("t", 1), Err(ErrorCode::UnknownTopicOrPartition)),
        ]
    );
    for bad in [&[1, 1][..], &[1, -1], &[1, 3]] {
        assert_eq!(
            reassign(&mut c, &[(p.clone(), Some(bad))]).await[0].1,
            Err(ErrorCode::InvalidReplicaAssignment),
            "{bad:?}"
        );
    }
    assert_eq!(znode(&h, "t").await, (vec![1, 2], vec![], vec![]));
    // Reordering live replicas is a reassignment with nothing to add: it completes at once.
    assert_eq!(
        reassign(&mut c, &[(p.clone(), Some(&[2, 1]))]).await[0].1,
        Ok(())
    );
    assert_eq!(znode(&h, "t").await, (vec![2, 1], vec![], vec![]));
}

#[tokio::test]
async fn the_legacy_znode_starts_reassignments_drops_bad_entries_and_goes_when_done() {
    let h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1], &[2]])]).await;
    let zk = zk(&h);
    zk.create_partition_reassignment(&[(tp("t", 0), vec![3]), (tp("t", 1), vec![2, 2])])
        .await
        .unwrap();
    // A second request while one is in progress is refused.
    assert!(
        zk.create_partition_reassignment(&[(tp("t", 0), vec![2])])
            .await
            .is_err()
    );
    c.process(ControllerEvent::ZkPartitionReassignment).await;
    // The invalid entry left the znode; the valid one runs.
    assert_eq!(
        zk.get_partition_reassignment(false).await.unwrap(),
        Some(vec![(tp("t", 0), vec![3])])
    );
    assert_eq!(znode(&h, "t").await, (vec![3, 1], vec![3], vec![1]));
    settle(&h).await;
    alter_isr(&mut c, &tp("t", 0), &[1, 3]).await;
    assert_eq!(znode(&h, "t").await, (vec![3], vec![], vec![]));
    assert_eq!(zk.get_partition_reassignment(false).await.unwrap(), None);
    // The controller looks again after deleting it (so a request written meanwhile is not
    // missed), and the creation of the next one is a watch event of its own.
    c.process_pending_for_test().await;
    assert!(matches!(
        event_for_watch(REASSIGN_PARTITIONS_PATH, WatchedEventType::NodeCreated),
        Some(ControllerEvent::ZkPartitionReassignment)
    ));
    zk.create_partition_reassignment(&[(tp("t", 1), vec![1])])
        .await
        .unwrap();
    c.process(ControllerEvent::ZkPartitionReassignment).await;
    assert!(c.ctx.partitions_being_reassigned.contains(&tp("t", 1)));
}

#[tokio::test]
async fn a_new_controller_resumes_a_reassignment_from_zookeeper() {
    let mut h = Harness::new(&[1, 2, 3, 8, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2]])]).await;
    let p = tp("t", 0);
    reassign(&mut c, &[(p.clone(), Some(&[2, 3]))]).await;
    settle(&h).await;

    h.kill_broker(CONTROLLER).await;
    let mut next = h.controller(8);
    next.process(ControllerEvent::Reelect).await;
    assert!(next.is_active());
    assert!(next.ctx.partitions_being_reassigned.contains(&p));
    assert_eq!(
        list(&mut next).await[0].1,
        ReplicaAssignment {
            replicas: vec![2, 3, 1],
            adding: vec![3],
            removing: vec![1],
        }
    );
    // Failover re-sent the reassigning state, the new replica as new.
    let sent = settle(&h).await;
    assert!(
        leader_and_isr(&sent)
            .iter()
            .any(|(b, _, _, replicas, _, _, is_new)| *b == 3 && *replicas == [2, 3, 1] && *is_new)
    );
    alter_isr(&mut next, &p, &[1, 2, 3]).await;
    assert_eq!(znode(&h, "t").await, (vec![2, 3], vec![], vec![]));
    let (state, _) = h.state(&p).await;
    assert_eq!((state.leader, state.isr.as_slice()), (2, &[2, 3][..]));
}

#[tokio::test]
async fn deletion_of_a_topic_waits_for_its_reassignment() {
    let h = Harness::new(&[1, 2, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1]])]).await;
    let p = tp("t", 0);
    reassign(&mut c, &[(p.clone(), Some(&[2]))]).await;
    settle(&h).await;
    zk(&h).create_delete_topic_path("t").await.unwrap();
    c.process(ControllerEvent::TopicDeletion).await;
    assert!(c.ctx.topics_ineligible_for_deletion.contains("t"));
    assert_eq!(
        deleting_stop_replicas(&settle(&h).await),
        Vec::<BrokerId>::new()
    );
    alter_isr(&mut c, &p, &[1, 2]).await;
    c.process_pending_for_test().await;
    // Once the move completed, the deletion ran.
    assert!(zk(&h).get_all_topics(false).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_target_broker_that_returns_gets_the_reassigning_partition_again() {
    let mut h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2]])]).await;
    let p = tp("t", 0);
    reassign(&mut c, &[(p.clone(), Some(&[1, 3]))]).await;
    settle(&h).await;
    h.kill_broker(3).await;
    c.process(ControllerEvent::BrokerChange).await;
    settle(&h).await;
    assert!(c.ctx.partitions_being_reassigned.contains(&p));

    h.start_broker(3).await;
    c.process(ControllerEvent::BrokerChange).await;
    let sent = settle(&h).await;
    // Its replica goes Online, and the resumed reassignment bumps the epoch and tells every
    // replica, 3 as new.
    let to_3: Vec<SentState> = leader_and_isr(&sent)
        .into_iter()
        .filter(|s| s.0 == 3)
        .collect();
    assert!(to_3.iter().any(|s| s.3 == [1, 3, 2] && s.6), "{to_3:?}");
    alter_isr(&mut c, &p, &[1, 2, 3]).await;
    assert_eq!(znode(&h, "t").await, (vec![1, 3], vec![], vec![]));
}
