//! The controller's answers to AlterPartition with the controller harness of
//! `controller_tests.rs`: each of Kafka's checks in order, the fenced write with its new
//! partition epoch, UpdateMetadata to every broker, and v2's topic ids.

use uuid::Uuid;

use crate::cluster::{BrokerId, TopicPartition};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_partition_request::{
    AlterPartitionRequest, BrokerState, PartitionData, TopicData,
};

use super::controller_tests::{Harness, summary};
use super::kafka_controller::KafkaController;
use super::leadership_tests::{CONTROLLER, active, settle};

fn tp() -> TopicPartition {
    TopicPartition::new("t", 0)
}

/// What the partition's leader would propose: `isr` at the controller's current epochs,
/// shifted by `leader_epoch` and `partition_epoch`.
fn proposal(
    c: &KafkaController,
    isr: &[BrokerId],
    leader_epoch: i32,
    partition_epoch: i32,
    version: i16,
) -> AlterPartitionRequest {
    let current = c.ctx.leadership[&tp()].clone();
    let leader = current.state.leader;
    let partition = PartitionData {
        partition_index: 0,
        leader_epoch: current.state.leader_epoch + leader_epoch,
        new_isr: if version < 3 {
            isr.to_vec()
        } else {
            Vec::new()
        },
        new_isr_with_epochs: if version >= 3 {
            isr.iter()
                .map(|id| BrokerState {
                    broker_id: *id,
                    broker_epoch: -1,
                    ..BrokerState::default()
                })
                .collect()
        } else {
            Vec::new()
        },
        partition_epoch: current.partition_epoch + partition_epoch,
        ..PartitionData::default()
    };
    AlterPartitionRequest {
        broker_id: leader,
        broker_epoch: c.ctx.broker_epoch(leader).unwrap(),
        topics: vec![TopicData {
            topic_name: if version < 2 { "t".into() } else { "".into() },
            topic_id: if version >= 2 {
                c.ctx.topic_ids["t"]
            } else {
                Uuid::nil()
            },
            partitions: vec![partition],
            ..TopicData::default()
        }],
        ..AlterPartitionRequest::default()
    }
}

/// The one partition's error code, or the top-level one.
async fn answer(c: &mut KafkaController, request: AlterPartitionRequest, version: i16) -> i16 {
    let (response, _, result) = c.process_alter_partition(request, version).await;
    result.unwrap();
    if response.error_code != 0 {
        return response.error_code;
    }
    response.topics[0].partitions[0].error_code
}

#[tokio::test]
async fn each_check_answers_with_kafkas_code() {
    let h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2, 3]])]).await;
    let code = |e: ErrorCode| e.code();
    let mut stale = proposal(&c, &[1, 2], 0, 0, 3);
    stale.broker_epoch -= 1;
    assert_eq!(
        answer(&mut c, stale, 3).await,
        code(ErrorCode::StaleBrokerEpoch)
    );
    let ahead = proposal(&c, &[1, 2], 1, 0, 3);
    assert_eq!(
        answer(&mut c, ahead, 3).await,
        code(ErrorCode::NotController)
    );
    let ahead = proposal(&c, &[1, 2], 0, 1, 3);
    assert_eq!(
        answer(&mut c, ahead, 3).await,
        code(ErrorCode::NotController)
    );
    let behind = proposal(&c, &[1, 2], -1, 0, 3);
    assert_eq!(
        answer(&mut c, behind, 3).await,
        code(ErrorCode::FencedLeaderEpoch)
    );
    // The same ISR as now is answered as it is, even at an old partition epoch.
    let same = proposal(&c, &[1, 2, 3], 0, -1, 3);
    assert_eq!(answer(&mut c, same, 3).await, 0);
    let old = proposal(&c, &[1, 2], 0, -1, 3);
    assert_eq!(
        answer(&mut c, old, 3).await,
        code(ErrorCode::InvalidUpdateVersion)
    );
    let mut recovering = proposal(&c, &[1, 2], 0, 0, 3);
    recovering.topics[0].partitions[0].leader_recovery_state = 1;
    assert_eq!(
        answer(&mut c, recovering, 3).await,
        code(ErrorCode::InvalidRequest)
    );
    let mut unknown = proposal(&c, &[1, 2], 0, 0, 3);
    unknown.topics[0].topic_id = Uuid::from_u128(1);
    assert_eq!(
        answer(&mut c, unknown, 3).await,
        code(ErrorCode::UnknownTopicId)
    );
    // None of them changed the znode.
    let (state, partition_epoch) = h.state(&tp()).await;
    assert_eq!(state.isr, vec![1, 2, 3]);
    assert_eq!(partition_epoch, c.ctx.leadership[&tp()].partition_epoch);
}

#[tokio::test]
async fn an_accepted_isr_is_written_at_the_next_partition_epoch_and_told_to_every_broker() {
    let h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2, 3]])]).await;
    let (before, epoch_before) = h.state(&tp()).await;
    let request = proposal(&c, &[1, 3], 0, 0, 3);
    let (response, _, result) = c.process_alter_partition(request, 3).await;
    result.unwrap();
    let p = &response.topics[0].partitions[0];
    assert_eq!(p.error_code, 0);
    assert_eq!(p.isr, vec![1, 3]);
    assert_eq!(
        p.leader_epoch, before.leader_epoch,
        "only elections bump the leader epoch"
    );
    assert_eq!(p.partition_epoch, epoch_before + 1);
    assert_eq!(response.topics[0].topic_id, c.ctx.topic_ids["t"]);
    let (after, epoch_after) = h.state(&tp()).await;
    assert_eq!(after.isr, vec![1, 3]);
    assert_eq!(epoch_after, epoch_before + 1);
    assert_eq!(after.controller_epoch, c.ctx.epoch);
    let sent = settle(&h).await;
    let mut updated: Vec<BrokerId> = summary(&sent)
        .into_iter()
        .filter(|(_, api)| *api == "UpdateMetadata")
        .map(|(b, _)| b)
        .collect();
    updated.sort_unstable();
    assert_eq!(updated, vec![1, 2, 3, CONTROLLER]);
}

#[tokio::test]
async fn a_member_that_is_not_a_live_broker_is_ineligible_from_v2() {
    let mut h = Harness::new(&[1, 2, 3, CONTROLLER]).await;
    let mut c = active(&h, &[("t", &[&[1, 2, 3]])]).await;
    // Broker 3 dies; the controller takes it out of the ISR itself.
    h.kill_broker(3).await;
    c.process(super::controller_event_manager::ControllerEvent::BrokerChange)
        .await;
    settle(&h).await;
    let back = proposal(&c, &[1, 2, 3], 0, 0, 2);
    assert_eq!(
        answer(&mut c, back, 2).await,
        ErrorCode::IneligibleReplica.code()
    );
    let back = proposal(&c, &[1, 2, 3], 0, 0, 1);
    assert_eq!(
        answer(&mut c, back, 1).await,
        ErrorCode::OperationNotAttempted.code()
    );
}
