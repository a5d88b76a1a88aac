//! WriteTxnMarkers (Kafka's `handleWriteTxnMarkersRequest`), v0-1: a transaction coordinator
//! asks this broker, the leader of some of a transaction's partitions, to write its COMMIT or
//! ABORT marker there. Needs ALTER or CLUSTER_ACTION on the cluster, else every partition gets
//! CLUSTER_AUTHORIZATION_FAILED.
//!
//! Each marker is one control batch per partition (Kafka's exact bytes: one record, key
//! `{version 0, type}`, value `{version 0, coordinator epoch}`, the producer's id and epoch,
//! base sequence -1) appended through the replica manager as the coordinator, at acks=-1,
//! waiting up to `request.timeout.ms`. A partition not hosted here is
//! UNKNOWN_TOPIC_OR_PARTITION; the leader's own checks answer NOT_LEADER_OR_FOLLOWER,
//! INVALID_PRODUCER_EPOCH (an older producer epoch) or TRANSACTION_COORDINATOR_FENCED (an older
//! coordinator epoch). The response, sent once every append is done, holds every producer id of
//! the request, as a Kafka coordinator requires. The group coordinator is told of each marker
//! written to a `__consumer_offsets` partition: the transaction's pending offsets there are
//! committed or dropped.

use bytes::Bytes;

use crate::cluster::{GROUP_METADATA_TOPIC_NAME, TopicPartition};
use crate::network::Response;
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::write_txn_markers_request::{
    WritableTxnMarker, WriteTxnMarkersRequest,
};
use crate::protocol::messages::write_txn_markers_response::{
    WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
    WriteTxnMarkersResponse,
};
use crate::protocol::record::builder::{ControlRecordType, build_control_batch};
use crate::replication::{AppendEntry, AppendParams, PartitionResponse, ProduceResult};
use crate::security::acl::AclOperation;

use super::super::kafka_apis::KafkaApis;
use super::super::request_context::RequestContext;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: WriteTxnMarkersRequest,
) -> Response {
    let authorized = apis.auth.authorize_cluster(ctx, AclOperation::Alter)
        || apis
            .auth
            .authorize_cluster(ctx, AclOperation::ClusterAction);
    let mut markers = Vec::with_capacity(request.markers.len());
    for marker in &request.markers {
        let answers = if authorized {
            write_marker(apis, marker).await
        } else {
            partitions_of(marker)
                .map(|tp| (tp, ErrorCode::ClusterAuthorizationFailed))
                .collect()
        };
        markers.push(result(marker.producer_id, answers));
    }
    ctx.respond(ResponseKind::WriteTxnMarkers(WriteTxnMarkersResponse {
        markers,
        ..WriteTxnMarkersResponse::default()
    }))
}

fn partitions_of(marker: &WritableTxnMarker) -> impl Iterator<Item = TopicPartition> + '_ {
    marker.topics.iter().flat_map(|t| {
        let name = t.name.to_string_lossy().into_owned();
        t.partition_indexes
            .iter()
            .map(move |p| TopicPartition::new(name.clone(), *p))
    })
}

/// Appends one marker's control batches; each partition's error.
async fn write_marker(
    apis: &KafkaApis,
    marker: &WritableTxnMarker,
) -> Vec<(TopicPartition, ErrorCode)> {
    let rm = &apis.replica_manager;
    let kind = if marker.transaction_result {
        ControlRecordType::Commit
    } else {
        ControlRecordType::Abort
    };
    let now_ms = rm.time().milliseconds();
    let mut answers: Vec<(TopicPartition, ErrorCode)> = Vec::new();
    let mut entries = Vec::new();
    for tp in partitions_of(marker) {
        if rm.get_partition(&tp).is_none() {
            answers.push((tp, ErrorCode::UnknownTopicOrPartition));
            continue;
        }
        match build_control_batch(
            kind,
            0,
            -1,
            marker.producer_id,
            marker.producer_epoch,
            marker.coordinator_epoch,
            now_ms,
        ) {
            Ok(batch) => entries.push(AppendEntry {
                topic_partition: tp,
                records: Bytes::from(batch),
                verification_guard: None,
            }),
            Err(e) => {
                tracing::error!(%e, "cannot build a transaction marker");
                answers.push((tp, ErrorCode::UnknownServerError));
            }
        }
    }
    if entries.is_empty() {
        return answers;
    }
    let appended: Vec<TopicPartition> = entries.iter().map(|e| e.topic_partition.clone()).collect();
    let responses: Vec<PartitionResponse> = match rm.append_records(
        AppendParams::coordinator(apis.config.request_timeout_ms),
        entries,
    ) {
        ProduceResult::Ready(responses) => responses,
        ProduceResult::Delayed(delayed) => delayed.complete().await,
    };
    let written: Vec<(TopicPartition, ErrorCode)> = appended
        .into_iter()
        .zip(responses.into_iter().map(|r| r.error_code))
        .collect();
    let offsets_partitions: Vec<i32> = written
        .iter()
        .filter(|(tp, code)| tp.topic == GROUP_METADATA_TOPIC_NAME && *code == ErrorCode::None)
        .map(|(tp, _)| tp.partition)
        .collect();
    if !offsets_partitions.is_empty() {
        apis.group_coordinator.on_transaction_completed(
            marker.producer_id,
            &offsets_partitions,
            marker.transaction_result,
        );
    }
    answers.extend(written);
    answers
}

/// One producer's answers, grouped by topic in order.
fn result(
    producer_id: i64,
    answers: impl IntoIterator<Item = (TopicPartition, ErrorCode)>,
) -> WritableTxnMarkerResult {
    let mut topics: Vec<WritableTxnMarkerTopicResult> = Vec::new();
    for (tp, code) in answers {
        let partition = WritableTxnMarkerPartitionResult {
            partition_index: tp.partition,
            error_code: code.code(),
            ..WritableTxnMarkerPartitionResult::default()
        };
        match topics.iter_mut().find(|t| t.name == tp.topic.as_str()) {
            Some(t) => t.partitions.push(partition),
            None => topics.push(WritableTxnMarkerTopicResult {
                name: StrBytes::from(tp.topic),
                partitions: vec![partition],
                ..WritableTxnMarkerTopicResult::default()
            }),
        }
    }
    WritableTxnMarkerResult {
        producer_id,
        topics,
        ..WritableTxnMarkerResult::default()
    }
}
