//! Every message of Kafka 3.9's specifications (`kafka-3.9-message-specs/`), generated
//! by `tests/it/codegen`: one module per spec, the [`ApiKey`] table (valid, flexible and
//! deprecated versions, listeners, header versions) and [`RequestKind`]/[`ResponseKind`],
//! which decode and encode a body by API key. Do not edit; regenerate with
//! `UPDATE_CODEGEN=1 cargo test --test it generated_protocol_code_is_fresh`.

// Generated code reads simplest with these patterns; the rules they relax are checked on
// the generator instead.
#![allow(unused_variables, unused_mut, clippy::field_reassign_with_default)]
#![allow(clippy::large_enum_variant, clippy::nonminimal_bool, clippy::overly_complex_bool_expr)]

use crate::protocol::codec as c;

pub mod add_offsets_to_txn_request;
pub mod add_offsets_to_txn_response;
pub mod add_partitions_to_txn_request;
pub mod add_partitions_to_txn_response;
pub mod add_raft_voter_request;
pub mod add_raft_voter_response;
pub mod allocate_producer_ids_request;
pub mod allocate_producer_ids_response;
pub mod alter_client_quotas_request;
pub mod alter_client_quotas_response;
pub mod alter_configs_request;
pub mod alter_configs_response;
pub mod alter_partition_reassignments_request;
pub mod alter_partition_reassignments_response;
pub mod alter_partition_request;
pub mod alter_partition_response;
pub mod alter_replica_log_dirs_request;
pub mod alter_replica_log_dirs_response;
pub mod alter_user_scram_credentials_request;
pub mod alter_user_scram_credentials_response;
pub mod api_versions_request;
pub mod api_versions_response;
pub mod assign_replicas_to_dirs_request;
pub mod assign_replicas_to_dirs_response;
pub mod begin_quorum_epoch_request;
pub mod begin_quorum_epoch_response;
pub mod broker_heartbeat_request;
pub mod broker_heartbeat_response;
pub mod broker_registration_request;
pub mod broker_registration_response;
pub mod consumer_group_describe_request;
pub mod consumer_group_describe_response;
pub mod consumer_group_heartbeat_request;
pub mod consumer_group_heartbeat_response;
pub mod consumer_protocol_assignment;
pub mod consumer_protocol_subscription;
pub mod controlled_shutdown_request;
pub mod controlled_shutdown_response;
pub mod controller_registration_request;
pub mod controller_registration_response;
pub mod create_acls_request;
pub mod create_acls_response;
pub mod create_delegation_token_request;
pub mod create_delegation_token_response;
pub mod create_partitions_request;
pub mod create_partitions_response;
pub mod create_topics_request;
pub mod create_topics_response;
pub mod default_principal_data;
pub mod delete_acls_request;
pub mod delete_acls_response;
pub mod delete_groups_request;
pub mod delete_groups_response;
pub mod delete_records_request;
pub mod delete_records_response;
pub mod delete_share_group_state_request;
pub mod delete_share_group_state_response;
pub mod delete_topics_request;
pub mod delete_topics_response;
pub mod describe_acls_request;
pub mod describe_acls_response;
pub mod describe_client_quotas_request;
pub mod describe_client_quotas_response;
pub mod describe_cluster_request;
pub mod describe_cluster_response;
pub mod describe_configs_request;
pub mod describe_configs_response;
pub mod describe_delegation_token_request;
pub mod describe_delegation_token_response;
pub mod describe_groups_request;
pub mod describe_groups_response;
pub mod describe_log_dirs_request;
pub mod describe_log_dirs_response;
pub mod describe_producers_request;
pub mod describe_producers_response;
pub mod describe_quorum_request;
pub mod describe_quorum_response;
pub mod describe_topic_partitions_request;
pub mod describe_topic_partitions_response;
pub mod describe_transactions_request;
pub mod describe_transactions_response;
pub mod describe_user_scram_credentials_request;
pub mod describe_user_scram_credentials_response;
pub mod elect_leaders_request;
pub mod elect_leaders_response;
pub mod end_quorum_epoch_request;
pub mod end_quorum_epoch_response;
pub mod end_txn_request;
pub mod end_txn_response;
pub mod envelope_request;
pub mod envelope_response;
pub mod expire_delegation_token_request;
pub mod expire_delegation_token_response;
pub mod fetch_request;
pub mod fetch_response;
pub mod fetch_snapshot_request;
pub mod fetch_snapshot_response;
pub mod find_coordinator_request;
pub mod find_coordinator_response;
pub mod get_telemetry_subscriptions_request;
pub mod get_telemetry_subscriptions_response;
pub mod heartbeat_request;
pub mod heartbeat_response;
pub mod incremental_alter_configs_request;
pub mod incremental_alter_configs_response;
pub mod init_producer_id_request;
pub mod init_producer_id_response;
pub mod initialize_share_group_state_request;
pub mod initialize_share_group_state_response;
pub mod join_group_request;
pub mod join_group_response;
pub mod k_raft_version_record;
pub mod leader_and_isr_request;
pub mod leader_and_isr_response;
pub mod leader_change_message;
pub mod leave_group_request;
pub mod leave_group_response;
pub mod list_client_metrics_resources_request;
pub mod list_client_metrics_resources_response;
pub mod list_groups_request;
pub mod list_groups_response;
pub mod list_offsets_request;
pub mod list_offsets_response;
pub mod list_partition_reassignments_request;
pub mod list_partition_reassignments_response;
pub mod list_transactions_request;
pub mod list_transactions_response;
pub mod metadata_request;
pub mod metadata_response;
pub mod offset_commit_request;
pub mod offset_commit_response;
pub mod offset_delete_request;
pub mod offset_delete_response;
pub mod offset_fetch_request;
pub mod offset_fetch_response;
pub mod offset_for_leader_epoch_request;
pub mod offset_for_leader_epoch_response;
pub mod produce_request;
pub mod produce_response;
pub mod push_telemetry_request;
pub mod push_telemetry_response;
pub mod read_share_group_state_request;
pub mod read_share_group_state_response;
pub mod read_share_group_state_summary_request;
pub mod read_share_group_state_summary_response;
pub mod remove_raft_voter_request;
pub mod remove_raft_voter_response;
pub mod renew_delegation_token_request;
pub mod renew_delegation_token_response;
pub mod request_header;
pub mod response_header;
pub mod sasl_authenticate_request;
pub mod sasl_authenticate_response;
pub mod sasl_handshake_request;
pub mod sasl_handshake_response;
pub mod share_acknowledge_request;
pub mod share_acknowledge_response;
pub mod share_fetch_request;
pub mod share_fetch_response;
pub mod share_group_describe_request;
pub mod share_group_describe_response;
pub mod share_group_heartbeat_request;
pub mod share_group_heartbeat_response;
pub mod snapshot_footer_record;
pub mod snapshot_header_record;
pub mod stop_replica_request;
pub mod stop_replica_response;
pub mod sync_group_request;
pub mod sync_group_response;
pub mod txn_offset_commit_request;
pub mod txn_offset_commit_response;
pub mod unregister_broker_request;
pub mod unregister_broker_response;
pub mod update_features_request;
pub mod update_features_response;
pub mod update_metadata_request;
pub mod update_metadata_response;
pub mod update_raft_voter_request;
pub mod update_raft_voter_response;
pub mod vote_request;
pub mod vote_response;
pub mod voters_record;
pub mod write_share_group_state_request;
pub mod write_share_group_state_response;
pub mod write_txn_markers_request;
pub mod write_txn_markers_response;
pub mod consumer_group_current_member_assignment_key;
pub mod consumer_group_current_member_assignment_value;
pub mod consumer_group_member_metadata_key;
pub mod consumer_group_member_metadata_value;
pub mod consumer_group_metadata_key;
pub mod consumer_group_metadata_value;
pub mod consumer_group_partition_metadata_key;
pub mod consumer_group_partition_metadata_value;
pub mod consumer_group_target_assignment_member_key;
pub mod consumer_group_target_assignment_member_value;
pub mod consumer_group_target_assignment_metadata_key;
pub mod consumer_group_target_assignment_metadata_value;
pub mod group_metadata_key;
pub mod group_metadata_value;
pub mod offset_commit_key;
pub mod offset_commit_value;
pub mod share_group_member_metadata_key;
pub mod share_group_member_metadata_value;
pub mod share_group_metadata_key;
pub mod share_group_metadata_value;
pub mod share_group_partition_metadata_key;
pub mod share_group_partition_metadata_value;
pub mod transaction_log_key;
pub mod transaction_log_value;

pub use add_offsets_to_txn_request::AddOffsetsToTxnRequest;
pub use add_offsets_to_txn_response::AddOffsetsToTxnResponse;
pub use add_partitions_to_txn_request::AddPartitionsToTxnRequest;
pub use add_partitions_to_txn_response::AddPartitionsToTxnResponse;
pub use add_raft_voter_request::AddRaftVoterRequest;
pub use add_raft_voter_response::AddRaftVoterResponse;
pub use allocate_producer_ids_request::AllocateProducerIdsRequest;
pub use allocate_producer_ids_response::AllocateProducerIdsResponse;
pub use alter_client_quotas_request::AlterClientQuotasRequest;
pub use alter_client_quotas_response::AlterClientQuotasResponse;
pub use alter_configs_request::AlterConfigsRequest;
pub use alter_configs_response::AlterConfigsResponse;
pub use alter_partition_reassignments_request::AlterPartitionReassignmentsRequest;
pub use alter_partition_reassignments_response::AlterPartitionReassignmentsResponse;
pub use alter_partition_request::AlterPartitionRequest;
pub use alter_partition_response::AlterPartitionResponse;
pub use alter_replica_log_dirs_request::AlterReplicaLogDirsRequest;
pub use alter_replica_log_dirs_response::AlterReplicaLogDirsResponse;
pub use alter_user_scram_credentials_request::AlterUserScramCredentialsRequest;
pub use alter_user_scram_credentials_response::AlterUserScramCredentialsResponse;
pub use api_versions_request::ApiVersionsRequest;
pub use api_versions_response::ApiVersionsResponse;
pub use assign_replicas_to_dirs_request::AssignReplicasToDirsRequest;
pub use assign_replicas_to_dirs_response::AssignReplicasToDirsResponse;
pub use begin_quorum_epoch_request::BeginQuorumEpochRequest;
pub use begin_quorum_epoch_response::BeginQuorumEpochResponse;
pub use broker_heartbeat_request::BrokerHeartbeatRequest;
pub use broker_heartbeat_response::BrokerHeartbeatResponse;
pub use broker_registration_request::BrokerRegistrationRequest;
pub use broker_registration_response::BrokerRegistrationResponse;
pub use consumer_group_describe_request::ConsumerGroupDescribeRequest;
pub use consumer_group_describe_response::ConsumerGroupDescribeResponse;
pub use consumer_group_heartbeat_request::ConsumerGroupHeartbeatRequest;
pub use consumer_group_heartbeat_response::ConsumerGroupHeartbeatResponse;
pub use consumer_protocol_assignment::ConsumerProtocolAssignment;
pub use consumer_protocol_subscription::ConsumerProtocolSubscription;
pub use controlled_shutdown_request::ControlledShutdownRequest;
pub use controlled_shutdown_response::ControlledShutdownResponse;
pub use controller_registration_request::ControllerRegistrationRequest;
pub use controller_registration_response::ControllerRegistrationResponse;
pub use create_acls_request::CreateAclsRequest;
pub use create_acls_response::CreateAclsResponse;
pub use create_delegation_token_request::CreateDelegationTokenRequest;
pub use create_delegation_token_response::CreateDelegationTokenResponse;
pub use create_partitions_request::CreatePartitionsRequest;
pub use create_partitions_response::CreatePartitionsResponse;
pub use create_topics_request::CreateTopicsRequest;
pub use create_topics_response::CreateTopicsResponse;
pub use default_principal_data::DefaultPrincipalData;
pub use delete_acls_request::DeleteAclsRequest;
pub use delete_acls_response::DeleteAclsResponse;
pub use delete_groups_request::DeleteGroupsRequest;
pub use delete_groups_response::DeleteGroupsResponse;
pub use delete_records_request::DeleteRecordsRequest;
pub use delete_records_response::DeleteRecordsResponse;
pub use delete_share_group_state_request::DeleteShareGroupStateRequest;
pub use delete_share_group_state_response::DeleteShareGroupStateResponse;
pub use delete_topics_request::DeleteTopicsRequest;
pub use delete_topics_response::DeleteTopicsResponse;
pub use describe_acls_request::DescribeAclsRequest;
pub use describe_acls_response::DescribeAclsResponse;
pub use describe_client_quotas_request::DescribeClientQuotasRequest;
pub use describe_client_quotas_response::DescribeClientQuotasResponse;
pub use describe_cluster_request::DescribeClusterRequest;
pub use describe_cluster_response::DescribeClusterResponse;
pub use describe_configs_request::DescribeConfigsRequest;
pub use describe_configs_response::DescribeConfigsResponse;
pub use describe_delegation_token_request::DescribeDelegationTokenRequest;
pub use describe_delegation_token_response::DescribeDelegationTokenResponse;
pub use describe_groups_request::DescribeGroupsRequest;
pub use describe_groups_response::DescribeGroupsResponse;
pub use describe_log_dirs_request::DescribeLogDirsRequest;
pub use describe_log_dirs_response::DescribeLogDirsResponse;
pub use describe_producers_request::DescribeProducersRequest;
pub use describe_producers_response::DescribeProducersResponse;
pub use describe_quorum_request::DescribeQuorumRequest;
pub use describe_quorum_response::DescribeQuorumResponse;
pub use describe_topic_partitions_request::DescribeTopicPartitionsRequest;
pub use describe_topic_partitions_response::DescribeTopicPartitionsResponse;
pub use describe_transactions_request::DescribeTransactionsRequest;
pub use describe_transactions_response::DescribeTransactionsResponse;
pub use describe_user_scram_credentials_request::DescribeUserScramCredentialsRequest;
pub use describe_user_scram_credentials_response::DescribeUserScramCredentialsResponse;
pub use elect_leaders_request::ElectLeadersRequest;
pub use elect_leaders_response::ElectLeadersResponse;
pub use end_quorum_epoch_request::EndQuorumEpochRequest;
pub use end_quorum_epoch_response::EndQuorumEpochResponse;
pub use end_txn_request::EndTxnRequest;
pub use end_txn_response::EndTxnResponse;
pub use envelope_request::EnvelopeRequest;
pub use envelope_response::EnvelopeResponse;
pub use expire_delegation_token_request::ExpireDelegationTokenRequest;
pub use expire_delegation_token_response::ExpireDelegationTokenResponse;
pub use fetch_request::FetchRequest;
pub use fetch_response::FetchResponse;
pub use fetch_snapshot_request::FetchSnapshotRequest;
pub use fetch_snapshot_response::FetchSnapshotResponse;
pub use find_coordinator_request::FindCoordinatorRequest;
pub use find_coordinator_response::FindCoordinatorResponse;
pub use get_telemetry_subscriptions_request::GetTelemetrySubscriptionsRequest;
pub use get_telemetry_subscriptions_response::GetTelemetrySubscriptionsResponse;
pub use heartbeat_request::HeartbeatRequest;
pub use heartbeat_response::HeartbeatResponse;
pub use incremental_alter_configs_request::IncrementalAlterConfigsRequest;
pub use incremental_alter_configs_response::IncrementalAlterConfigsResponse;
pub use init_producer_id_request::InitProducerIdRequest;
pub use init_producer_id_response::InitProducerIdResponse;
pub use initialize_share_group_state_request::InitializeShareGroupStateRequest;
pub use initialize_share_group_state_response::InitializeShareGroupStateResponse;
pub use join_group_request::JoinGroupRequest;
pub use join_group_response::JoinGroupResponse;
pub use k_raft_version_record::KRaftVersionRecord;
pub use leader_and_isr_request::LeaderAndIsrRequest;
pub use leader_and_isr_response::LeaderAndIsrResponse;
pub use leader_change_message::LeaderChangeMessage;
pub use leave_group_request::LeaveGroupRequest;
pub use leave_group_response::LeaveGroupResponse;
pub use list_client_metrics_resources_request::ListClientMetricsResourcesRequest;
pub use list_client_metrics_resources_response::ListClientMetricsResourcesResponse;
pub use list_groups_request::ListGroupsRequest;
pub use list_groups_response::ListGroupsResponse;
pub use list_offsets_request::ListOffsetsRequest;
pub use list_offsets_response::ListOffsetsResponse;
pub use list_partition_reassignments_request::ListPartitionReassignmentsRequest;
pub use list_partition_reassignments_response::ListPartitionReassignmentsResponse;
pub use list_transactions_request::ListTransactionsRequest;
pub use list_transactions_response::ListTransactionsResponse;
pub use metadata_request::MetadataRequest;
pub use metadata_response::MetadataResponse;
pub use offset_commit_request::OffsetCommitRequest;
pub use offset_commit_response::OffsetCommitResponse;
pub use offset_delete_request::OffsetDeleteRequest;
pub use offset_delete_response::OffsetDeleteResponse;
pub use offset_fetch_request::OffsetFetchRequest;
pub use offset_fetch_response::OffsetFetchResponse;
pub use offset_for_leader_epoch_request::OffsetForLeaderEpochRequest;
pub use offset_for_leader_epoch_response::OffsetForLeaderEpochResponse;
pub use produce_request::ProduceRequest;
pub use produce_response::ProduceResponse;
pub use push_telemetry_request::PushTelemetryRequest;
pub use push_telemetry_response::PushTelemetryResponse;
pub use read_share_group_state_request::ReadShareGroupStateRequest;
pub use read_share_group_state_response::ReadShareGroupStateResponse;
pub use read_share_group_state_summary_request::ReadShareGroupStateSummaryRequest;
pub use read_share_group_state_summary_response::ReadShareGroupStateSummaryResponse;
pub use remove_raft_voter_request::RemoveRaftVoterRequest;
pub use remove_raft_voter_response::RemoveRaftVoterResponse;
pub use renew_delegation_token_request::RenewDelegationTokenRequest;
pub use renew_delegation_token_response::RenewDelegationTokenResponse;
pub use request_header::RequestHeader;
pub use response_header::ResponseHeader;
pub use sasl_authenticate_request::SaslAuthenticateRequest;
pub use sasl_authenticate_response::SaslAuthenticateResponse;
pub use sasl_handshake_request::SaslHandshakeRequest;
pub use sasl_handshake_response::SaslHandshakeResponse;
pub use share_acknowledge_request::ShareAcknowledgeRequest;
pub use share_acknowledge_response::ShareAcknowledgeResponse;
pub use share_fetch_request::ShareFetchRequest;
pub use share_fetch_response::ShareFetchResponse;
pub use share_group_describe_request::ShareGroupDescribeRequest;
pub use share_group_describe_response::ShareGroupDescribeResponse;
pub use share_group_heartbeat_request::ShareGroupHeartbeatRequest;
pub use share_group_heartbeat_response::ShareGroupHeartbeatResponse;
pub use snapshot_footer_record::SnapshotFooterRecord;
pub use snapshot_header_record::SnapshotHeaderRecord;
pub use stop_replica_request::StopReplicaRequest;
pub use stop_replica_response::StopReplicaResponse;
pub use sync_group_request::SyncGroupRequest;
pub use sync_group_response::SyncGroupResponse;
pub use txn_offset_commit_request::TxnOffsetCommitRequest;
pub use txn_offset_commit_response::TxnOffsetCommitResponse;
pub use unregister_broker_request::UnregisterBrokerRequest;
pub use unregister_broker_response::UnregisterBrokerResponse;
pub use update_features_request::UpdateFeaturesRequest;
pub use update_features_response::UpdateFeaturesResponse;
pub use update_metadata_request::UpdateMetadataRequest;
pub use update_metadata_response::UpdateMetadataResponse;
pub use update_raft_voter_request::UpdateRaftVoterRequest;
pub use update_raft_voter_response::UpdateRaftVoterResponse;
pub use vote_request::VoteRequest;
pub use vote_response::VoteResponse;
pub use voters_record::VotersRecord;
pub use write_share_group_state_request::WriteShareGroupStateRequest;
pub use write_share_group_state_response::WriteShareGroupStateResponse;
pub use write_txn_markers_request::WriteTxnMarkersRequest;
pub use write_txn_markers_response::WriteTxnMarkersResponse;
pub use consumer_group_current_member_assignment_key::ConsumerGroupCurrentMemberAssignmentKey;
pub use consumer_group_current_member_assignment_value::ConsumerGroupCurrentMemberAssignmentValue;
pub use consumer_group_member_metadata_key::ConsumerGroupMemberMetadataKey;
pub use consumer_group_member_metadata_value::ConsumerGroupMemberMetadataValue;
pub use consumer_group_metadata_key::ConsumerGroupMetadataKey;
pub use consumer_group_metadata_value::ConsumerGroupMetadataValue;
pub use consumer_group_partition_metadata_key::ConsumerGroupPartitionMetadataKey;
pub use consumer_group_partition_metadata_value::ConsumerGroupPartitionMetadataValue;
pub use consumer_group_target_assignment_member_key::ConsumerGroupTargetAssignmentMemberKey;
pub use consumer_group_target_assignment_member_value::ConsumerGroupTargetAssignmentMemberValue;
pub use consumer_group_target_assignment_metadata_key::ConsumerGroupTargetAssignmentMetadataKey;
pub use consumer_group_target_assignment_metadata_value::ConsumerGroupTargetAssignmentMetadataValue;
pub use group_metadata_key::GroupMetadataKey;
pub use group_metadata_value::GroupMetadataValue;
pub use offset_commit_key::OffsetCommitKey;
pub use offset_commit_value::OffsetCommitValue;
pub use share_group_member_metadata_key::ShareGroupMemberMetadataKey;
pub use share_group_member_metadata_value::ShareGroupMemberMetadataValue;
pub use share_group_metadata_key::ShareGroupMetadataKey;
pub use share_group_metadata_value::ShareGroupMetadataValue;
pub use share_group_partition_metadata_key::ShareGroupPartitionMetadataKey;
pub use share_group_partition_metadata_value::ShareGroupPartitionMetadataValue;
pub use transaction_log_key::TransactionLogKey;
pub use transaction_log_value::TransactionLogValue;

/// The API keys of Kafka 3.9.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i16)]
pub enum ApiKey {
    /// `AddOffsetsToTxnRequest` requests and responses.
    AddOffsetsToTxn = 25,
    /// `AddPartitionsToTxnRequest` requests and responses.
    AddPartitionsToTxn = 24,
    /// `AddRaftVoterRequest` requests and responses.
    AddRaftVoter = 80,
    /// `AllocateProducerIdsRequest` requests and responses.
    AllocateProducerIds = 67,
    /// `AlterClientQuotasRequest` requests and responses.
    AlterClientQuotas = 49,
    /// `AlterConfigsRequest` requests and responses.
    AlterConfigs = 33,
    /// `AlterPartitionReassignmentsRequest` requests and responses.
    AlterPartitionReassignments = 45,
    /// `AlterPartitionRequest` requests and responses.
    AlterPartition = 56,
    /// `AlterReplicaLogDirsRequest` requests and responses.
    AlterReplicaLogDirs = 34,
    /// `AlterUserScramCredentialsRequest` requests and responses.
    AlterUserScramCredentials = 51,
    /// `ApiVersionsRequest` requests and responses.
    ApiVersions = 18,
    /// `AssignReplicasToDirsRequest` requests and responses.
    AssignReplicasToDirs = 73,
    /// `BeginQuorumEpochRequest` requests and responses.
    BeginQuorumEpoch = 53,
    /// `BrokerHeartbeatRequest` requests and responses.
    BrokerHeartbeat = 63,
    /// `BrokerRegistrationRequest` requests and responses.
    BrokerRegistration = 62,
    /// `ConsumerGroupDescribeRequest` requests and responses.
    ConsumerGroupDescribe = 69,
    /// `ConsumerGroupHeartbeatRequest` requests and responses.
    ConsumerGroupHeartbeat = 68,
    /// `ControlledShutdownRequest` requests and responses.
    ControlledShutdown = 7,
    /// `ControllerRegistrationRequest` requests and responses.
    ControllerRegistration = 70,
    /// `CreateAclsRequest` requests and responses.
    CreateAcls = 30,
    /// `CreateDelegationTokenRequest` requests and responses.
    CreateDelegationToken = 38,
    /// `CreatePartitionsRequest` requests and responses.
    CreatePartitions = 37,
    /// `CreateTopicsRequest` requests and responses.
    CreateTopics = 19,
    /// `DeleteAclsRequest` requests and responses.
    DeleteAcls = 31,
    /// `DeleteGroupsRequest` requests and responses.
    DeleteGroups = 42,
    /// `DeleteRecordsRequest` requests and responses.
    DeleteRecords = 21,
    /// `DeleteShareGroupStateRequest` requests and responses.
    DeleteShareGroupState = 86,
    /// `DeleteTopicsRequest` requests and responses.
    DeleteTopics = 20,
    /// `DescribeAclsRequest` requests and responses.
    DescribeAcls = 29,
    /// `DescribeClientQuotasRequest` requests and responses.
    DescribeClientQuotas = 48,
    /// `DescribeClusterRequest` requests and responses.
    DescribeCluster = 60,
    /// `DescribeConfigsRequest` requests and responses.
    DescribeConfigs = 32,
    /// `DescribeDelegationTokenRequest` requests and responses.
    DescribeDelegationToken = 41,
    /// `DescribeGroupsRequest` requests and responses.
    DescribeGroups = 15,
    /// `DescribeLogDirsRequest` requests and responses.
    DescribeLogDirs = 35,
    /// `DescribeProducersRequest` requests and responses.
    DescribeProducers = 61,
    /// `DescribeQuorumRequest` requests and responses.
    DescribeQuorum = 55,
    /// `DescribeTopicPartitionsRequest` requests and responses.
    DescribeTopicPartitions = 75,
    /// `DescribeTransactionsRequest` requests and responses.
    DescribeTransactions = 65,
    /// `DescribeUserScramCredentialsRequest` requests and responses.
    DescribeUserScramCredentials = 50,
    /// `ElectLeadersRequest` requests and responses.
    ElectLeaders = 43,
    /// `EndQuorumEpochRequest` requests and responses.
    EndQuorumEpoch = 54,
    /// `EndTxnRequest` requests and responses.
    EndTxn = 26,
    /// `EnvelopeRequest` requests and responses.
    Envelope = 58,
    /// `ExpireDelegationTokenRequest` requests and responses.
    ExpireDelegationToken = 40,
    /// `FetchRequest` requests and responses.
    Fetch = 1,
    /// `FetchSnapshotRequest` requests and responses.
    FetchSnapshot = 59,
    /// `FindCoordinatorRequest` requests and responses.
    FindCoordinator = 10,
    /// `GetTelemetrySubscriptionsRequest` requests and responses.
    GetTelemetrySubscriptions = 71,
    /// `HeartbeatRequest` requests and responses.
    Heartbeat = 12,
    /// `IncrementalAlterConfigsRequest` requests and responses.
    IncrementalAlterConfigs = 44,
    /// `InitProducerIdRequest` requests and responses.
    InitProducerId = 22,
    /// `InitializeShareGroupStateRequest` requests and responses.
    InitializeShareGroupState = 83,
    /// `JoinGroupRequest` requests and responses.
    JoinGroup = 11,
    /// `LeaderAndIsrRequest` requests and responses.
    LeaderAndIsr = 4,
    /// `LeaveGroupRequest` requests and responses.
    LeaveGroup = 13,
    /// `ListClientMetricsResourcesRequest` requests and responses.
    ListClientMetricsResources = 74,
    /// `ListGroupsRequest` requests and responses.
    ListGroups = 16,
    /// `ListOffsetsRequest` requests and responses.
    ListOffsets = 2,
    /// `ListPartitionReassignmentsRequest` requests and responses.
    ListPartitionReassignments = 46,
    /// `ListTransactionsRequest` requests and responses.
    ListTransactions = 66,
    /// `MetadataRequest` requests and responses.
    Metadata = 3,
    /// `OffsetCommitRequest` requests and responses.
    OffsetCommit = 8,
    /// `OffsetDeleteRequest` requests and responses.
    OffsetDelete = 47,
    /// `OffsetFetchRequest` requests and responses.
    OffsetFetch = 9,
    /// `OffsetForLeaderEpochRequest` requests and responses.
    OffsetForLeaderEpoch = 23,
    /// `ProduceRequest` requests and responses.
    Produce = 0,
    /// `PushTelemetryRequest` requests and responses.
    PushTelemetry = 72,
    /// `ReadShareGroupStateRequest` requests and responses.
    ReadShareGroupState = 84,
    /// `ReadShareGroupStateSummaryRequest` requests and responses.
    ReadShareGroupStateSummary = 87,
    /// `RemoveRaftVoterRequest` requests and responses.
    RemoveRaftVoter = 81,
    /// `RenewDelegationTokenRequest` requests and responses.
    RenewDelegationToken = 39,
    /// `SaslAuthenticateRequest` requests and responses.
    SaslAuthenticate = 36,
    /// `SaslHandshakeRequest` requests and responses.
    SaslHandshake = 17,
    /// `ShareAcknowledgeRequest` requests and responses.
    ShareAcknowledge = 79,
    /// `ShareFetchRequest` requests and responses.
    ShareFetch = 78,
    /// `ShareGroupDescribeRequest` requests and responses.
    ShareGroupDescribe = 77,
    /// `ShareGroupHeartbeatRequest` requests and responses.
    ShareGroupHeartbeat = 76,
    /// `StopReplicaRequest` requests and responses.
    StopReplica = 5,
    /// `SyncGroupRequest` requests and responses.
    SyncGroup = 14,
    /// `TxnOffsetCommitRequest` requests and responses.
    TxnOffsetCommit = 28,
    /// `UnregisterBrokerRequest` requests and responses.
    UnregisterBroker = 64,
    /// `UpdateFeaturesRequest` requests and responses.
    UpdateFeatures = 57,
    /// `UpdateMetadataRequest` requests and responses.
    UpdateMetadata = 6,
    /// `UpdateRaftVoterRequest` requests and responses.
    UpdateRaftVoter = 82,
    /// `VoteRequest` requests and responses.
    Vote = 52,
    /// `WriteShareGroupStateRequest` requests and responses.
    WriteShareGroupState = 85,
    /// `WriteTxnMarkersRequest` requests and responses.
    WriteTxnMarkers = 27,
}

impl ApiKey {
    /// Every API key, in key order.
    pub const ALL: [ApiKey; 88] = [
        ApiKey::AddOffsetsToTxn,
        ApiKey::AddPartitionsToTxn,
        ApiKey::AddRaftVoter,
        ApiKey::AllocateProducerIds,
        ApiKey::AlterClientQuotas,
        ApiKey::AlterConfigs,
        ApiKey::AlterPartitionReassignments,
        ApiKey::AlterPartition,
        ApiKey::AlterReplicaLogDirs,
        ApiKey::AlterUserScramCredentials,
        ApiKey::ApiVersions,
        ApiKey::AssignReplicasToDirs,
        ApiKey::BeginQuorumEpoch,
        ApiKey::BrokerHeartbeat,
        ApiKey::BrokerRegistration,
        ApiKey::ConsumerGroupDescribe,
        ApiKey::ConsumerGroupHeartbeat,
        ApiKey::ControlledShutdown,
        ApiKey::ControllerRegistration,
        ApiKey::CreateAcls,
        ApiKey::CreateDelegationToken,
        ApiKey::CreatePartitions,
        ApiKey::CreateTopics,
        ApiKey::DeleteAcls,
        ApiKey::DeleteGroups,
        ApiKey::DeleteRecords,
        ApiKey::DeleteShareGroupState,
        ApiKey::DeleteTopics,
        ApiKey::DescribeAcls,
        ApiKey::DescribeClientQuotas,
        ApiKey::DescribeCluster,
        ApiKey::DescribeConfigs,
        ApiKey::DescribeDelegationToken,
        ApiKey::DescribeGroups,
        ApiKey::DescribeLogDirs,
        ApiKey::DescribeProducers,
        ApiKey::DescribeQuorum,
        ApiKey::DescribeTopicPartitions,
        ApiKey::DescribeTransactions,
        ApiKey::DescribeUserScramCredentials,
        ApiKey::ElectLeaders,
        ApiKey::EndQuorumEpoch,
        ApiKey::EndTxn,
        ApiKey::Envelope,
        ApiKey::ExpireDelegationToken,
        ApiKey::Fetch,
        ApiKey::FetchSnapshot,
        ApiKey::FindCoordinator,
        ApiKey::GetTelemetrySubscriptions,
        ApiKey::Heartbeat,
        ApiKey::IncrementalAlterConfigs,
        ApiKey::InitProducerId,
        ApiKey::InitializeShareGroupState,
        ApiKey::JoinGroup,
        ApiKey::LeaderAndIsr,
        ApiKey::LeaveGroup,
        ApiKey::ListClientMetricsResources,
        ApiKey::ListGroups,
        ApiKey::ListOffsets,
        ApiKey::ListPartitionReassignments,
        ApiKey::ListTransactions,
        ApiKey::Metadata,
        ApiKey::OffsetCommit,
        ApiKey::OffsetDelete,
        ApiKey::OffsetFetch,
        ApiKey::OffsetForLeaderEpoch,
        ApiKey::Produce,
        ApiKey::PushTelemetry,
        ApiKey::ReadShareGroupState,
        ApiKey::ReadShareGroupStateSummary,
        ApiKey::RemoveRaftVoter,
        ApiKey::RenewDelegationToken,
        ApiKey::SaslAuthenticate,
        ApiKey::SaslHandshake,
        ApiKey::ShareAcknowledge,
        ApiKey::ShareFetch,
        ApiKey::ShareGroupDescribe,
        ApiKey::ShareGroupHeartbeat,
        ApiKey::StopReplica,
        ApiKey::SyncGroup,
        ApiKey::TxnOffsetCommit,
        ApiKey::UnregisterBroker,
        ApiKey::UpdateFeatures,
        ApiKey::UpdateMetadata,
        ApiKey::UpdateRaftVoter,
        ApiKey::Vote,
        ApiKey::WriteShareGroupState,
        ApiKey::WriteTxnMarkers,
    ];

    /// The key with this number, if Kafka 3.9 defines it.
    pub fn from_i16(key: i16) -> Option<ApiKey> {
        Some(match key {
            25 => ApiKey::AddOffsetsToTxn,
            24 => ApiKey::AddPartitionsToTxn,
            80 => ApiKey::AddRaftVoter,
            67 => ApiKey::AllocateProducerIds,
            49 => ApiKey::AlterClientQuotas,
            33 => ApiKey::AlterConfigs,
            45 => ApiKey::AlterPartitionReassignments,
            56 => ApiKey::AlterPartition,
            34 => ApiKey::AlterReplicaLogDirs,
            51 => ApiKey::AlterUserScramCredentials,
            18 => ApiKey::ApiVersions,
            73 => ApiKey::AssignReplicasToDirs,
            53 => ApiKey::BeginQuorumEpoch,
            63 => ApiKey::BrokerHeartbeat,
            62 => ApiKey::BrokerRegistration,
            69 => ApiKey::ConsumerGroupDescribe,
            68 => ApiKey::ConsumerGroupHeartbeat,
            7 => ApiKey::ControlledShutdown,
            70 => ApiKey::ControllerRegistration,
            30 => ApiKey::CreateAcls,
            38 => ApiKey::CreateDelegationToken,
            37 => ApiKey::CreatePartitions,
            19 => ApiKey::CreateTopics,
            31 => ApiKey::DeleteAcls,
            42 => ApiKey::DeleteGroups,
            21 => ApiKey::DeleteRecords,
            86 => ApiKey::DeleteShareGroupState,
            20 => ApiKey::DeleteTopics,
            29 => ApiKey::DescribeAcls,
            48 => ApiKey::DescribeClientQuotas,
            60 => ApiKey::DescribeCluster,
            32 => ApiKey::DescribeConfigs,
            41 => ApiKey::DescribeDelegationToken,
            15 => ApiKey::DescribeGroups,
            35 => ApiKey::DescribeLogDirs,
            61 => ApiKey::DescribeProducers,
            55 => ApiKey::DescribeQuorum,
            75 => ApiKey::DescribeTopicPartitions,
            65 => ApiKey::DescribeTransactions,
            50 => ApiKey::DescribeUserScramCredentials,
            43 => ApiKey::ElectLeaders,
            54 => ApiKey::EndQuorumEpoch,
            26 => ApiKey::EndTxn,
            58 => ApiKey::Envelope,
            40 => ApiKey::ExpireDelegationToken,
            1 => ApiKey::Fetch,
            59 => ApiKey::FetchSnapshot,
            10 => ApiKey::FindCoordinator,
            71 => ApiKey::GetTelemetrySubscriptions,
            12 => ApiKey::Heartbeat,
            44 => ApiKey::IncrementalAlterConfigs,
            22 => ApiKey::InitProducerId,
            83 => ApiKey::InitializeShareGroupState,
            11 => ApiKey::JoinGroup,
            4 => ApiKey::LeaderAndIsr,
            13 => ApiKey::LeaveGroup,
            74 => ApiKey::ListClientMetricsResources,
            16 => ApiKey::ListGroups,
            2 => ApiKey::ListOffsets,
            46 => ApiKey::ListPartitionReassignments,
            66 => ApiKey::ListTransactions,
            3 => ApiKey::Metadata,
            8 => ApiKey::OffsetCommit,
            47 => ApiKey::OffsetDelete,
            9 => ApiKey::OffsetFetch,
            23 => ApiKey::OffsetForLeaderEpoch,
            0 => ApiKey::Produce,
            72 => ApiKey::PushTelemetry,
            84 => ApiKey::ReadShareGroupState,
            87 => ApiKey::ReadShareGroupStateSummary,
            81 => ApiKey::RemoveRaftVoter,
            39 => ApiKey::RenewDelegationToken,
            36 => ApiKey::SaslAuthenticate,
            17 => ApiKey::SaslHandshake,
            79 => ApiKey::ShareAcknowledge,
            78 => ApiKey::ShareFetch,
            77 => ApiKey::ShareGroupDescribe,
            76 => ApiKey::ShareGroupHeartbeat,
            5 => ApiKey::StopReplica,
            14 => ApiKey::SyncGroup,
            28 => ApiKey::TxnOffsetCommit,
            64 => ApiKey::UnregisterBroker,
            57 => ApiKey::UpdateFeatures,
            6 => ApiKey::UpdateMetadata,
            82 => ApiKey::UpdateRaftVoter,
            52 => ApiKey::Vote,
            85 => ApiKey::WriteShareGroupState,
            27 => ApiKey::WriteTxnMarkers,
            _ => return None,
        })
    }

    /// The key's row of the API table.
    pub fn info(self) -> &'static c::ApiInfo {
        match self {
            ApiKey::AddOffsetsToTxn => &API_INFO[0],
            ApiKey::AddPartitionsToTxn => &API_INFO[1],
            ApiKey::AddRaftVoter => &API_INFO[2],
            ApiKey::AllocateProducerIds => &API_INFO[3],
            ApiKey::AlterClientQuotas => &API_INFO[4],
            ApiKey::AlterConfigs => &API_INFO[5],
            ApiKey::AlterPartitionReassignments => &API_INFO[6],
            ApiKey::AlterPartition => &API_INFO[7],
            ApiKey::AlterReplicaLogDirs => &API_INFO[8],
            ApiKey::AlterUserScramCredentials => &API_INFO[9],
            ApiKey::ApiVersions => &API_INFO[10],
            ApiKey::AssignReplicasToDirs => &API_INFO[11],
            ApiKey::BeginQuorumEpoch => &API_INFO[12],
            ApiKey::BrokerHeartbeat => &API_INFO[13],
            ApiKey::BrokerRegistration => &API_INFO[14],
            ApiKey::ConsumerGroupDescribe => &API_INFO[15],
            ApiKey::ConsumerGroupHeartbeat => &API_INFO[16],
            ApiKey::ControlledShutdown => &API_INFO[17],
            ApiKey::ControllerRegistration => &API_INFO[18],
            ApiKey::CreateAcls => &API_INFO[19],
            ApiKey::CreateDelegationToken => &API_INFO[20],
            ApiKey::CreatePartitions => &API_INFO[21],
            ApiKey::CreateTopics => &API_INFO[22],
            ApiKey::DeleteAcls => &API_INFO[23],
            ApiKey::DeleteGroups => &API_INFO[24],
            ApiKey::DeleteRecords => &API_INFO[25],
            ApiKey::DeleteShareGroupState => &API_INFO[26],
            ApiKey::DeleteTopics => &API_INFO[27],
            ApiKey::DescribeAcls => &API_INFO[28],
            ApiKey::DescribeClientQuotas => &API_INFO[29],
            ApiKey::DescribeCluster => &API_INFO[30],
            ApiKey::DescribeConfigs => &API_INFO[31],
            ApiKey::DescribeDelegationToken => &API_INFO[32],
            ApiKey::DescribeGroups => &API_INFO[33],
            ApiKey::DescribeLogDirs => &API_INFO[34],
            ApiKey::DescribeProducers => &API_INFO[35],
            ApiKey::DescribeQuorum => &API_INFO[36],
            ApiKey::DescribeTopicPartitions => &API_INFO[37],
            ApiKey::DescribeTransactions => &API_INFO[38],
            ApiKey::DescribeUserScramCredentials => &API_INFO[39],
            ApiKey::ElectLeaders => &API_INFO[40],
            ApiKey::EndQuorumEpoch => &API_INFO[41],
            ApiKey::EndTxn => &API_INFO[42],
            ApiKey::Envelope => &API_INFO[43],
            ApiKey::ExpireDelegationToken => &API_INFO[44],
            ApiKey::Fetch => &API_INFO[45],
            ApiKey::FetchSnapshot => &API_INFO[46],
            ApiKey::FindCoordinator => &API_INFO[47],
            ApiKey::GetTelemetrySubscriptions => &API_INFO[48],
            ApiKey::Heartbeat => &API_INFO[49],
            ApiKey::IncrementalAlterConfigs => &API_INFO[50],
            ApiKey::InitProducerId => &API_INFO[51],
            ApiKey::InitializeShareGroupState => &API_INFO[52],
            ApiKey::JoinGroup => &API_INFO[53],
            ApiKey::LeaderAndIsr => &API_INFO[54],
            ApiKey::LeaveGroup => &API_INFO[55],
            ApiKey::ListClientMetricsResources => &API_INFO[56],
            ApiKey::ListGroups => &API_INFO[57],
            ApiKey::ListOffsets => &API_INFO[58],
            ApiKey::ListPartitionReassignments => &API_INFO[59],
            ApiKey::ListTransactions => &API_INFO[60],
            ApiKey::Metadata => &API_INFO[61],
            ApiKey::OffsetCommit => &API_INFO[62],
            ApiKey::OffsetDelete => &API_INFO[63],
            ApiKey::OffsetFetch => &API_INFO[64],
            ApiKey::OffsetForLeaderEpoch => &API_INFO[65],
            ApiKey::Produce => &API_INFO[66],
            ApiKey::PushTelemetry => &API_INFO[67],
            ApiKey::ReadShareGroupState => &API_INFO[68],
            ApiKey::ReadShareGroupStateSummary => &API_INFO[69],
            ApiKey::RemoveRaftVoter => &API_INFO[70],
            ApiKey::RenewDelegationToken => &API_INFO[71],
            ApiKey::SaslAuthenticate => &API_INFO[72],
            ApiKey::SaslHandshake => &API_INFO[73],
            ApiKey::ShareAcknowledge => &API_INFO[74],
            ApiKey::ShareFetch => &API_INFO[75],
            ApiKey::ShareGroupDescribe => &API_INFO[76],
            ApiKey::ShareGroupHeartbeat => &API_INFO[77],
            ApiKey::StopReplica => &API_INFO[78],
            ApiKey::SyncGroup => &API_INFO[79],
            ApiKey::TxnOffsetCommit => &API_INFO[80],
            ApiKey::UnregisterBroker => &API_INFO[81],
            ApiKey::UpdateFeatures => &API_INFO[82],
            ApiKey::UpdateMetadata => &API_INFO[83],
            ApiKey::UpdateRaftVoter => &API_INFO[84],
            ApiKey::Vote => &API_INFO[85],
            ApiKey::WriteShareGroupState => &API_INFO[86],
            ApiKey::WriteTxnMarkers => &API_INFO[87],
        }
    }
}

/// One row per API key, in [`ApiKey::ALL`] order.
pub static API_INFO: [c::ApiInfo; 88] = [
    c::ApiInfo {
        key: 25,
        name: "AddOffsetsToTxn",
        valid: c::VersionRange { min: 0, max: 4 },
        flexible_min: Some(3),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 24,
        name: "AddPartitionsToTxn",
        valid: c::VersionRange { min: 0, max: 5 },
        flexible_min: Some(3),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 80,
        name: "AddRaftVoter",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Controller, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 67,
        name: "AllocateProducerIds",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 49,
        name: "AlterClientQuotas",
        valid: c::VersionRange { min: 0, max: 1 },
        flexible_min: Some(1),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 33,
        name: "AlterConfigs",
        valid: c::VersionRange { min: 0, max: 2 },
        flexible_min: Some(2),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 45,
        name: "AlterPartitionReassignments",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker, c::Listener::Controller, c::Listener::ZkBroker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 56,
        name: "AlterPartition",
        valid: c::VersionRange { min: 0, max: 3 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 34,
        name: "AlterReplicaLogDirs",
        valid: c::VersionRange { min: 0, max: 2 },
        flexible_min: Some(2),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 51,
        name: "AlterUserScramCredentials",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 18,
        name: "ApiVersions",
        valid: c::VersionRange { min: 0, max: 4 },
        flexible_min: Some(3),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: true,
    },
    c::ApiInfo {
        key: 73,
        name: "AssignReplicasToDirs",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 53,
        name: "BeginQuorumEpoch",
        valid: c::VersionRange { min: 0, max: 1 },
        flexible_min: Some(1),
        deprecated: None,
        listeners: &[c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 63,
        name: "BrokerHeartbeat",
        valid: c::VersionRange { min: 0, max: 1 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 62,
        name: "BrokerRegistration",
        valid: c::VersionRange { min: 0, max: 4 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 69,
        name: "ConsumerGroupDescribe",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 68,
        name: "ConsumerGroupHeartbeat",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 7,
        name: "ControlledShutdown",
        valid: c::VersionRange { min: 0, max: 3 },
        flexible_min: Some(3),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: Some(c::VersionRange { min: 0, max: 0 }),
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 70,
        name: "ControllerRegistration",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 30,
        name: "CreateAcls",
        valid: c::VersionRange { min: 0, max: 3 },
        flexible_min: Some(2),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 38,
        name: "CreateDelegationToken",
        valid: c::VersionRange { min: 0, max: 3 },
        flexible_min: Some(2),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 37,
        name: "CreatePartitions",
        valid: c::VersionRange { min: 0, max: 3 },
        flexible_min: Some(2),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 19,
        name: "CreateTopics",
        valid: c::VersionRange { min: 0, max: 7 },
        flexible_min: Some(5),
        deprecated: Some(c::VersionRange { min: 0, max: 1 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 31,
        name: "DeleteAcls",
        valid: c::VersionRange { min: 0, max: 3 },
        flexible_min: Some(2),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 42,
        name: "DeleteGroups",
        valid: c::VersionRange { min: 0, max: 2 },
        flexible_min: Some(2),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 21,
        name: "DeleteRecords",
        valid: c::VersionRange { min: 0, max: 2 },
        flexible_min: Some(2),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 86,
        name: "DeleteShareGroupState",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker],
        latest_version_unstable: true,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 20,
        name: "DeleteTopics",
        valid: c::VersionRange { min: 0, max: 6 },
        flexible_min: Some(4),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 29,
        name: "DescribeAcls",
        valid: c::VersionRange { min: 0, max: 3 },
        flexible_min: Some(2),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 48,
        name: "DescribeClientQuotas",
        valid: c::VersionRange { min: 0, max: 1 },
        flexible_min: Some(1),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 60,
        name: "DescribeCluster",
        valid: c::VersionRange { min: 0, max: 1 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 32,
        name: "DescribeConfigs",
        valid: c::VersionRange { min: 0, max: 4 },
        flexible_min: Some(4),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 41,
        name: "DescribeDelegationToken",
        valid: c::VersionRange { min: 0, max: 3 },
        flexible_min: Some(2),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 15,
        name: "DescribeGroups",
        valid: c::VersionRange { min: 0, max: 5 },
        flexible_min: Some(5),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 35,
        name: "DescribeLogDirs",
        valid: c::VersionRange { min: 0, max: 4 },
        flexible_min: Some(2),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 61,
        name: "DescribeProducers",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 55,
        name: "DescribeQuorum",
        valid: c::VersionRange { min: 0, max: 2 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 75,
        name: "DescribeTopicPartitions",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 65,
        name: "DescribeTransactions",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 50,
        name: "DescribeUserScramCredentials",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 43,
        name: "ElectLeaders",
        valid: c::VersionRange { min: 0, max: 2 },
        flexible_min: Some(2),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 54,
        name: "EndQuorumEpoch",
        valid: c::VersionRange { min: 0, max: 1 },
        flexible_min: Some(1),
        deprecated: None,
        listeners: &[c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 26,
        name: "EndTxn",
        valid: c::VersionRange { min: 0, max: 4 },
        flexible_min: Some(3),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 58,
        name: "Envelope",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Controller, c::Listener::ZkBroker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 40,
        name: "ExpireDelegationToken",
        valid: c::VersionRange { min: 0, max: 2 },
        flexible_min: Some(2),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 1,
        name: "Fetch",
        valid: c::VersionRange { min: 0, max: 17 },
        flexible_min: Some(12),
        deprecated: Some(c::VersionRange { min: 0, max: 3 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 59,
        name: "FetchSnapshot",
        valid: c::VersionRange { min: 0, max: 1 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 10,
        name: "FindCoordinator",
        valid: c::VersionRange { min: 0, max: 6 },
        flexible_min: Some(3),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 71,
        name: "GetTelemetrySubscriptions",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 12,
        name: "Heartbeat",
        valid: c::VersionRange { min: 0, max: 4 },
        flexible_min: Some(4),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 44,
        name: "IncrementalAlterConfigs",
        valid: c::VersionRange { min: 0, max: 1 },
        flexible_min: Some(1),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 22,
        name: "InitProducerId",
        valid: c::VersionRange { min: 0, max: 5 },
        flexible_min: Some(2),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 83,
        name: "InitializeShareGroupState",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker],
        latest_version_unstable: true,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 11,
        name: "JoinGroup",
        valid: c::VersionRange { min: 0, max: 9 },
        flexible_min: Some(6),
        deprecated: Some(c::VersionRange { min: 0, max: 1 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 4,
        name: "LeaderAndIsr",
        valid: c::VersionRange { min: 0, max: 7 },
        flexible_min: Some(4),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 13,
        name: "LeaveGroup",
        valid: c::VersionRange { min: 0, max: 5 },
        flexible_min: Some(4),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 74,
        name: "ListClientMetricsResources",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 16,
        name: "ListGroups",
        valid: c::VersionRange { min: 0, max: 5 },
        flexible_min: Some(3),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 2,
        name: "ListOffsets",
        valid: c::VersionRange { min: 0, max: 9 },
        flexible_min: Some(6),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 46,
        name: "ListPartitionReassignments",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker, c::Listener::Controller, c::Listener::ZkBroker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 66,
        name: "ListTransactions",
        valid: c::VersionRange { min: 0, max: 1 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 3,
        name: "Metadata",
        valid: c::VersionRange { min: 0, max: 12 },
        flexible_min: Some(9),
        deprecated: Some(c::VersionRange { min: 0, max: 3 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 8,
        name: "OffsetCommit",
        valid: c::VersionRange { min: 0, max: 9 },
        flexible_min: Some(8),
        deprecated: Some(c::VersionRange { min: 0, max: 1 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 47,
        name: "OffsetDelete",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: None,
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 9,
        name: "OffsetFetch",
        valid: c::VersionRange { min: 0, max: 9 },
        flexible_min: Some(6),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 23,
        name: "OffsetForLeaderEpoch",
        valid: c::VersionRange { min: 0, max: 4 },
        flexible_min: Some(4),
        deprecated: Some(c::VersionRange { min: 0, max: 1 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 0,
        name: "Produce",
        valid: c::VersionRange { min: 0, max: 11 },
        flexible_min: Some(9),
        deprecated: Some(c::VersionRange { min: 0, max: 6 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 72,
        name: "PushTelemetry",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 84,
        name: "ReadShareGroupState",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker],
        latest_version_unstable: true,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 87,
        name: "ReadShareGroupStateSummary",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker],
        latest_version_unstable: true,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 81,
        name: "RemoveRaftVoter",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Controller, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 39,
        name: "RenewDelegationToken",
        valid: c::VersionRange { min: 0, max: 2 },
        flexible_min: Some(2),
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 36,
        name: "SaslAuthenticate",
        valid: c::VersionRange { min: 0, max: 2 },
        flexible_min: Some(2),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 17,
        name: "SaslHandshake",
        valid: c::VersionRange { min: 0, max: 1 },
        flexible_min: None,
        deprecated: Some(c::VersionRange { min: 0, max: 0 }),
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 79,
        name: "ShareAcknowledge",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker],
        latest_version_unstable: true,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 78,
        name: "ShareFetch",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker],
        latest_version_unstable: true,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 77,
        name: "ShareGroupDescribe",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker],
        latest_version_unstable: true,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 76,
        name: "ShareGroupHeartbeat",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker],
        latest_version_unstable: true,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 5,
        name: "StopReplica",
        valid: c::VersionRange { min: 0, max: 4 },
        flexible_min: Some(2),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 14,
        name: "SyncGroup",
        valid: c::VersionRange { min: 0, max: 5 },
        flexible_min: Some(4),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 28,
        name: "TxnOffsetCommit",
        valid: c::VersionRange { min: 0, max: 4 },
        flexible_min: Some(3),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 64,
        name: "UnregisterBroker",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 57,
        name: "UpdateFeatures",
        valid: c::VersionRange { min: 0, max: 1 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker, c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 6,
        name: "UpdateMetadata",
        valid: c::VersionRange { min: 0, max: 8 },
        flexible_min: Some(6),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 82,
        name: "UpdateRaftVoter",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 52,
        name: "Vote",
        valid: c::VersionRange { min: 0, max: 1 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Controller],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 85,
        name: "WriteShareGroupState",
        valid: c::VersionRange { min: 0, max: 0 },
        flexible_min: Some(0),
        deprecated: None,
        listeners: &[c::Listener::Broker],
        latest_version_unstable: true,
        request_header_v0: None,
        response_header_always_v0: false,
    },
    c::ApiInfo {
        key: 27,
        name: "WriteTxnMarkers",
        valid: c::VersionRange { min: 0, max: 1 },
        flexible_min: Some(1),
        deprecated: None,
        listeners: &[c::Listener::ZkBroker, c::Listener::Broker],
        latest_version_unstable: false,
        request_header_v0: None,
        response_header_always_v0: false,
    },
];

/// A request body of any API.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestKind {
    /// `AddOffsetsToTxnRequest`.
    AddOffsetsToTxn(AddOffsetsToTxnRequest),
    /// `AddPartitionsToTxnRequest`.
    AddPartitionsToTxn(AddPartitionsToTxnRequest),
    /// `AddRaftVoterRequest`.
    AddRaftVoter(AddRaftVoterRequest),
    /// `AllocateProducerIdsRequest`.
    AllocateProducerIds(AllocateProducerIdsRequest),
    /// `AlterClientQuotasRequest`.
    AlterClientQuotas(AlterClientQuotasRequest),
    /// `AlterConfigsRequest`.
    AlterConfigs(AlterConfigsRequest),
    /// `AlterPartitionReassignmentsRequest`.
    AlterPartitionReassignments(AlterPartitionReassignmentsRequest),
    /// `AlterPartitionRequest`.
    AlterPartition(AlterPartitionRequest),
    /// `AlterReplicaLogDirsRequest`.
    AlterReplicaLogDirs(AlterReplicaLogDirsRequest),
    /// `AlterUserScramCredentialsRequest`.
    AlterUserScramCredentials(AlterUserScramCredentialsRequest),
    /// `ApiVersionsRequest`.
    ApiVersions(ApiVersionsRequest),
    /// `AssignReplicasToDirsRequest`.
    AssignReplicasToDirs(AssignReplicasToDirsRequest),
    /// `BeginQuorumEpochRequest`.
    BeginQuorumEpoch(BeginQuorumEpochRequest),
    /// `BrokerHeartbeatRequest`.
    BrokerHeartbeat(BrokerHeartbeatRequest),
    /// `BrokerRegistrationRequest`.
    BrokerRegistration(BrokerRegistrationRequest),
    /// `ConsumerGroupDescribeRequest`.
    ConsumerGroupDescribe(ConsumerGroupDescribeRequest),
    /// `ConsumerGroupHeartbeatRequest`.
    ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest),
    /// `ControlledShutdownRequest`.
    ControlledShutdown(ControlledShutdownRequest),
    /// `ControllerRegistrationRequest`.
    ControllerRegistration(ControllerRegistrationRequest),
    /// `CreateAclsRequest`.
    CreateAcls(CreateAclsRequest),
    /// `CreateDelegationTokenRequest`.
    CreateDelegationToken(CreateDelegationTokenRequest),
    /// `CreatePartitionsRequest`.
    CreatePartitions(CreatePartitionsRequest),
    /// `CreateTopicsRequest`.
    CreateTopics(CreateTopicsRequest),
    /// `DeleteAclsRequest`.
    DeleteAcls(DeleteAclsRequest),
    /// `DeleteGroupsRequest`.
    DeleteGroups(DeleteGroupsRequest),
    /// `DeleteRecordsRequest`.
    DeleteRecords(DeleteRecordsRequest),
    /// `DeleteShareGroupStateRequest`.
    DeleteShareGroupState(DeleteShareGroupStateRequest),
    /// `DeleteTopicsRequest`.
    DeleteTopics(DeleteTopicsRequest),
    /// `DescribeAclsRequest`.
    DescribeAcls(DescribeAclsRequest),
    /// `DescribeClientQuotasRequest`.
    DescribeClientQuotas(DescribeClientQuotasRequest),
    /// `DescribeClusterRequest`.
    DescribeCluster(DescribeClusterRequest),
    /// `DescribeConfigsRequest`.
    DescribeConfigs(DescribeConfigsRequest),
    /// `DescribeDelegationTokenRequest`.
    DescribeDelegationToken(DescribeDelegationTokenRequest),
    /// `DescribeGroupsRequest`.
    DescribeGroups(DescribeGroupsRequest),
    /// `DescribeLogDirsRequest`.
    DescribeLogDirs(DescribeLogDirsRequest),
    /// `DescribeProducersRequest`.
    DescribeProducers(DescribeProducersRequest),
    /// `DescribeQuorumRequest`.
    DescribeQuorum(DescribeQuorumRequest),
    /// `DescribeTopicPartitionsRequest`.
    DescribeTopicPartitions(DescribeTopicPartitionsRequest),
    /// `DescribeTransactionsRequest`.
    DescribeTransactions(DescribeTransactionsRequest),
    /// `DescribeUserScramCredentialsRequest`.
    DescribeUserScramCredentials(DescribeUserScramCredentialsRequest),
    /// `ElectLeadersRequest`.
    ElectLeaders(ElectLeadersRequest),
    /// `EndQuorumEpochRequest`.
    EndQuorumEpoch(EndQuorumEpochRequest),
    /// `EndTxnRequest`.
    EndTxn(EndTxnRequest),
    /// `EnvelopeRequest`.
    Envelope(EnvelopeRequest),
    /// `ExpireDelegationTokenRequest`.
    ExpireDelegationToken(ExpireDelegationTokenRequest),
    /// `FetchRequest`.
    Fetch(FetchRequest),
    /// `FetchSnapshotRequest`.
    FetchSnapshot(FetchSnapshotRequest),
    /// `FindCoordinatorRequest`.
    FindCoordinator(FindCoordinatorRequest),
    /// `GetTelemetrySubscriptionsRequest`.
    GetTelemetrySubscriptions(GetTelemetrySubscriptionsRequest),
    /// `HeartbeatRequest`.
    Heartbeat(HeartbeatRequest),
    /// `IncrementalAlterConfigsRequest`.
    IncrementalAlterConfigs(IncrementalAlterConfigsRequest),
    /// `InitProducerIdRequest`.
    InitProducerId(InitProducerIdRequest),
    /// `InitializeShareGroupStateRequest`.
    InitializeShareGroupState(InitializeShareGroupStateRequest),
    /// `JoinGroupRequest`.
    JoinGroup(JoinGroupRequest),
    /// `LeaderAndIsrRequest`.
    LeaderAndIsr(LeaderAndIsrRequest),
    /// `LeaveGroupRequest`.
    LeaveGroup(LeaveGroupRequest),
    /// `ListClientMetricsResourcesRequest`.
    ListClientMetricsResources(ListClientMetricsResourcesRequest),
    /// `ListGroupsRequest`.
    ListGroups(ListGroupsRequest),
    /// `ListOffsetsRequest`.
    ListOffsets(ListOffsetsRequest),
    /// `ListPartitionReassignmentsRequest`.
    ListPartitionReassignments(ListPartitionReassignmentsRequest),
    /// `ListTransactionsRequest`.
    ListTransactions(ListTransactionsRequest),
    /// `MetadataRequest`.
    Metadata(MetadataRequest),
    /// `OffsetCommitRequest`.
    OffsetCommit(OffsetCommitRequest),
    /// `OffsetDeleteRequest`.
    OffsetDelete(OffsetDeleteRequest),
    /// `OffsetFetchRequest`.
    OffsetFetch(OffsetFetchRequest),
    /// `OffsetForLeaderEpochRequest`.
    OffsetForLeaderEpoch(OffsetForLeaderEpochRequest),
    /// `ProduceRequest`.
    Produce(ProduceRequest),
    /// `PushTelemetryRequest`.
    PushTelemetry(PushTelemetryRequest),
    /// `ReadShareGroupStateRequest`.
    ReadShareGroupState(ReadShareGroupStateRequest),
    /// `ReadShareGroupStateSummaryRequest`.
    ReadShareGroupStateSummary(ReadShareGroupStateSummaryRequest),
    /// `RemoveRaftVoterRequest`.
    RemoveRaftVoter(RemoveRaftVoterRequest),
    /// `RenewDelegationTokenRequest`.
    RenewDelegationToken(RenewDelegationTokenRequest),
    /// `SaslAuthenticateRequest`.
    SaslAuthenticate(SaslAuthenticateRequest),
    /// `SaslHandshakeRequest`.
    SaslHandshake(SaslHandshakeRequest),
    /// `ShareAcknowledgeRequest`.
    ShareAcknowledge(ShareAcknowledgeRequest),
    /// `ShareFetchRequest`.
    ShareFetch(ShareFetchRequest),
    /// `ShareGroupDescribeRequest`.
    ShareGroupDescribe(ShareGroupDescribeRequest),
    /// `ShareGroupHeartbeatRequest`.
    ShareGroupHeartbeat(ShareGroupHeartbeatRequest),
    /// `StopReplicaRequest`.
    StopReplica(StopReplicaRequest),
    /// `SyncGroupRequest`.
    SyncGroup(SyncGroupRequest),
    /// `TxnOffsetCommitRequest`.
    TxnOffsetCommit(TxnOffsetCommitRequest),
    /// `UnregisterBrokerRequest`.
    UnregisterBroker(UnregisterBrokerRequest),
    /// `UpdateFeaturesRequest`.
    UpdateFeatures(UpdateFeaturesRequest),
    /// `UpdateMetadataRequest`.
    UpdateMetadata(UpdateMetadataRequest),
    /// `UpdateRaftVoterRequest`.
    UpdateRaftVoter(UpdateRaftVoterRequest),
    /// `VoteRequest`.
    Vote(VoteRequest),
    /// `WriteShareGroupStateRequest`.
    WriteShareGroupState(WriteShareGroupStateRequest),
    /// `WriteTxnMarkersRequest`.
    WriteTxnMarkers(WriteTxnMarkersRequest),
}

impl RequestKind {
    /// The API key of the body.
    pub fn api_key(&self) -> ApiKey {
        match self {
            RequestKind::AddOffsetsToTxn(_) => ApiKey::AddOffsetsToTxn,
            RequestKind::AddPartitionsToTxn(_) => ApiKey::AddPartitionsToTxn,
            RequestKind::AddRaftVoter(_) => ApiKey::AddRaftVoter,
            RequestKind::AllocateProducerIds(_) => ApiKey::AllocateProducerIds,
            RequestKind::AlterClientQuotas(_) => ApiKey::AlterClientQuotas,
            RequestKind::AlterConfigs(_) => ApiKey::AlterConfigs,
            RequestKind::AlterPartitionReassignments(_) => ApiKey::AlterPartitionReassignments,
            RequestKind::AlterPartition(_) => ApiKey::AlterPartition,
            RequestKind::AlterReplicaLogDirs(_) => ApiKey::AlterReplicaLogDirs,
            RequestKind::AlterUserScramCredentials(_) => ApiKey::AlterUserScramCredentials,
            RequestKind::ApiVersions(_) => ApiKey::ApiVersions,
            RequestKind::AssignReplicasToDirs(_) => ApiKey::AssignReplicasToDirs,
            RequestKind::BeginQuorumEpoch(_) => ApiKey::BeginQuorumEpoch,
            RequestKind::BrokerHeartbeat(_) => ApiKey::BrokerHeartbeat,
            RequestKind::BrokerRegistration(_) => ApiKey::BrokerRegistration,
            RequestKind::ConsumerGroupDescribe(_) => ApiKey::ConsumerGroupDescribe,
            RequestKind::ConsumerGroupHeartbeat(_) => ApiKey::ConsumerGroupHeartbeat,
            RequestKind::ControlledShutdown(_) => ApiKey::ControlledShutdown,
            RequestKind::ControllerRegistration(_) => ApiKey::ControllerRegistration,
            RequestKind::CreateAcls(_) => ApiKey::CreateAcls,
            RequestKind::CreateDelegationToken(_) => ApiKey::CreateDelegationToken,
            RequestKind::CreatePartitions(_) => ApiKey::CreatePartitions,
            RequestKind::CreateTopics(_) => ApiKey::CreateTopics,
            RequestKind::DeleteAcls(_) => ApiKey::DeleteAcls,
            RequestKind::DeleteGroups(_) => ApiKey::DeleteGroups,
            RequestKind::DeleteRecords(_) => ApiKey::DeleteRecords,
            RequestKind::DeleteShareGroupState(_) => ApiKey::DeleteShareGroupState,
            RequestKind::DeleteTopics(_) => ApiKey::DeleteTopics,
            RequestKind::DescribeAcls(_) => ApiKey::DescribeAcls,
            RequestKind::DescribeClientQuotas(_) => ApiKey::DescribeClientQuotas,
            RequestKind::DescribeCluster(_) => ApiKey::DescribeCluster,
            RequestKind::DescribeConfigs(_) => ApiKey::DescribeConfigs,
            RequestKind::DescribeDelegationToken(_) => ApiKey::DescribeDelegationToken,
            RequestKind::DescribeGroups(_) => ApiKey::DescribeGroups,
            RequestKind::DescribeLogDirs(_) => ApiKey::DescribeLogDirs,
            RequestKind::DescribeProducers(_) => ApiKey::DescribeProducers,
            RequestKind::DescribeQuorum(_) => ApiKey::DescribeQuorum,
            RequestKind::DescribeTopicPartitions(_) => ApiKey::DescribeTopicPartitions,
            RequestKind::DescribeTransactions(_) => ApiKey::DescribeTransactions,
            RequestKind::DescribeUserScramCredentials(_) => ApiKey::DescribeUserScramCredentials,
            RequestKind::ElectLeaders(_) => ApiKey::ElectLeaders,
            RequestKind::EndQuorumEpoch(_) => ApiKey::EndQuorumEpoch,
            RequestKind::EndTxn(_) => ApiKey::EndTxn,
            RequestKind::Envelope(_) => ApiKey::Envelope,
            RequestKind::ExpireDelegationToken(_) => ApiKey::ExpireDelegationToken,
            RequestKind::Fetch(_) => ApiKey::Fetch,
            RequestKind::FetchSnapshot(_) => ApiKey::FetchSnapshot,
            RequestKind::FindCoordinator(_) => ApiKey::FindCoordinator,
            RequestKind::GetTelemetrySubscriptions(_) => ApiKey::GetTelemetrySubscriptions,
            RequestKind::Heartbeat(_) => ApiKey::Heartbeat,
            RequestKind::IncrementalAlterConfigs(_) => ApiKey::IncrementalAlterConfigs,
            RequestKind::InitProducerId(_) => ApiKey::InitProducerId,
            RequestKind::InitializeShareGroupState(_) => ApiKey::InitializeShareGroupState,
            RequestKind::JoinGroup(_) => ApiKey::JoinGroup,
            RequestKind::LeaderAndIsr(_) => ApiKey::LeaderAndIsr,
            RequestKind::LeaveGroup(_) => ApiKey::LeaveGroup,
            RequestKind::ListClientMetricsResources(_) => ApiKey::ListClientMetricsResources,
            RequestKind::ListGroups(_) => ApiKey::ListGroups,
            RequestKind::ListOffsets(_) => ApiKey::ListOffsets,
            RequestKind::ListPartitionReassignments(_) => ApiKey::ListPartitionReassignments,
            RequestKind::ListTransactions(_) => ApiKey::ListTransactions,
            RequestKind::Metadata(_) => ApiKey::Metadata,
            RequestKind::OffsetCommit(_) => ApiKey::OffsetCommit,
            RequestKind::OffsetDelete(_) => ApiKey::OffsetDelete,
            RequestKind::OffsetFetch(_) => ApiKey::OffsetFetch,
            RequestKind::OffsetForLeaderEpoch(_) => ApiKey::OffsetForLeaderEpoch,
            RequestKind::Produce(_) => ApiKey::Produce,
            RequestKind::PushTelemetry(_) => ApiKey::PushTelemetry,
            RequestKind::ReadShareGroupState(_) => ApiKey::ReadShareGroupState,
            RequestKind::ReadShareGroupStateSummary(_) => ApiKey::ReadShareGroupStateSummary,
            RequestKind::RemoveRaftVoter(_) => ApiKey::RemoveRaftVoter,
            RequestKind::RenewDelegationToken(_) => ApiKey::RenewDelegationToken,
            RequestKind::SaslAuthenticate(_) => ApiKey::SaslAuthenticate,
            RequestKind::SaslHandshake(_) => ApiKey::SaslHandshake,
            RequestKind::ShareAcknowledge(_) => ApiKey::ShareAcknowledge,
            RequestKind::ShareFetch(_) => ApiKey::ShareFetch,
            RequestKind::ShareGroupDescribe(_) => ApiKey::ShareGroupDescribe,
            RequestKind::ShareGroupHeartbeat(_) => ApiKey::ShareGroupHeartbeat,
            RequestKind::StopReplica(_) => ApiKey::StopReplica,
            RequestKind::SyncGroup(_) => ApiKey::SyncGroup,
            RequestKind::TxnOffsetCommit(_) => ApiKey::TxnOffsetCommit,
            RequestKind::UnregisterBroker(_) => ApiKey::UnregisterBroker,
            RequestKind::UpdateFeatures(_) => ApiKey::UpdateFeatures,
            RequestKind::UpdateMetadata(_) => ApiKey::UpdateMetadata,
            RequestKind::UpdateRaftVoter(_) => ApiKey::UpdateRaftVoter,
            RequestKind::Vote(_) => ApiKey::Vote,
            RequestKind::WriteShareGroupState(_) => ApiKey::WriteShareGroupState,
            RequestKind::WriteTxnMarkers(_) => ApiKey::WriteTxnMarkers,
        }
    }

    /// Decodes a body of API `key` at `version`.
    pub fn decode(key: ApiKey, r: &mut c::Reader, version: i16) -> Result<Self, c::DecodeError> {
        use c::Message as _;
        Ok(match key {
            ApiKey::AddOffsetsToTxn => RequestKind::AddOffsetsToTxn(AddOffsetsToTxnRequest::decode(r, version)?),
            ApiKey::AddPartitionsToTxn => RequestKind::AddPartitionsToTxn(AddPartitionsToTxnRequest::decode(r, version)?),
            ApiKey::AddRaftVoter => RequestKind::AddRaftVoter(AddRaftVoterRequest::decode(r, version)?),
            ApiKey::AllocateProducerIds => RequestKind::AllocateProducerIds(AllocateProducerIdsRequest::decode(r, version)?),
            ApiKey::AlterClientQuotas => RequestKind::AlterClientQuotas(AlterClientQuotasRequest::decode(r, version)?),
            ApiKey::AlterConfigs => RequestKind::AlterConfigs(AlterConfigsRequest::decode(r, version)?),
            ApiKey::AlterPartitionReassignments => RequestKind::AlterPartitionReassignments(AlterPartitionReassignmentsRequest::decode(r, version)?),
            ApiKey::AlterPartition => RequestKind::AlterPartition(AlterPartitionRequest::decode(r, version)?),
            ApiKey::AlterReplicaLogDirs => RequestKind::AlterReplicaLogDirs(AlterReplicaLogDirsRequest::decode(r, version)?),
            ApiKey::AlterUserScramCredentials => RequestKind::AlterUserScramCredentials(AlterUserScramCredentialsRequest::decode(r, version)?),
            ApiKey::ApiVersions => RequestKind::ApiVersions(ApiVersionsRequest::decode(r, version)?),
            ApiKey::AssignReplicasToDirs => RequestKind::AssignReplicasToDirs(AssignReplicasToDirsRequest::decode(r, version)?),
            ApiKey::BeginQuorumEpoch => RequestKind::BeginQuorumEpoch(BeginQuorumEpochRequest::decode(r, version)?),
            ApiKey::BrokerHeartbeat => RequestKind::BrokerHeartbeat(BrokerHeartbeatRequest::decode(r, version)?),
            ApiKey::BrokerRegistration => RequestKind::BrokerRegistration(BrokerRegistrationRequest::decode(r, version)?),
            ApiKey::ConsumerGroupDescribe => RequestKind::ConsumerGroupDescribe(ConsumerGroupDescribeRequest::decode(r, version)?),
            ApiKey::ConsumerGroupHeartbeat => RequestKind::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest::decode(r, version)?),
            ApiKey::ControlledShutdown => RequestKind::ControlledShutdown(ControlledShutdownRequest::decode(r, version)?),
            ApiKey::ControllerRegistration => RequestKind::ControllerRegistration(ControllerRegistrationRequest::decode(r, version)?),
            ApiKey::CreateAcls => RequestKind::CreateAcls(CreateAclsRequest::decode(r, version)?),
            ApiKey::CreateDelegationToken => RequestKind::CreateDelegationToken(CreateDelegationTokenRequest::decode(r, version)?),
            ApiKey::CreatePartitions => RequestKind::CreatePartitions(CreatePartitionsRequest::decode(r, version)?),
            ApiKey::CreateTopics => RequestKind::CreateTopics(CreateTopicsRequest::decode(r, version)?),
            ApiKey::DeleteAcls => RequestKind::DeleteAcls(DeleteAclsRequest::decode(r, version)?),
            ApiKey::DeleteGroups => RequestKind::DeleteGroups(DeleteGroupsRequest::decode(r, version)?),
            ApiKey::DeleteRecords => RequestKind::DeleteRecords(DeleteRecordsRequest::decode(r, version)?),
            ApiKey::DeleteShareGroupState => RequestKind::DeleteShareGroupState(DeleteShareGroupStateRequest::decode(r, version)?),
            ApiKey::DeleteTopics => RequestKind::DeleteTopics(DeleteTopicsRequest::decode(r, version)?),
            ApiKey::DescribeAcls => RequestKind::DescribeAcls(DescribeAclsRequest::decode(r, version)?),
            ApiKey::DescribeClientQuotas => RequestKind::DescribeClientQuotas(DescribeClientQuotasRequest::decode(r, version)?),
            ApiKey::DescribeCluster => RequestKind::DescribeCluster(DescribeClusterRequest::decode(r, version)?),
            ApiKey::DescribeConfigs => RequestKind::DescribeConfigs(DescribeConfigsRequest::decode(r, version)?),
            ApiKey::DescribeDelegationToken => RequestKind::DescribeDelegationToken(DescribeDelegationTokenRequest::decode(r, version)?),
            ApiKey::DescribeGroups => RequestKind::DescribeGroups(DescribeGroupsRequest::decode(r, version)?),
            ApiKey::DescribeLogDirs => RequestKind::DescribeLogDirs(DescribeLogDirsRequest::decode(r, version)?),
            ApiKey::DescribeProducers => RequestKind::DescribeProducers(DescribeProducersRequest::decode(r, version)?),
            ApiKey::DescribeQuorum => RequestKind::DescribeQuorum(DescribeQuorumRequest::decode(r, version)?),
            ApiKey::DescribeTopicPartitions => RequestKind::DescribeTopicPartitions(DescribeTopicPartitionsRequest::decode(r, version)?),
            ApiKey::DescribeTransactions => RequestKind::DescribeTransactions(DescribeTransactionsRequest::decode(r, version)?),
            ApiKey::DescribeUserScramCredentials => RequestKind::DescribeUserScramCredentials(DescribeUserScramCredentialsRequest::decode(r, version)?),
            ApiKey::ElectLeaders => RequestKind::ElectLeaders(ElectLeadersRequest::decode(r, version)?),
            ApiKey::EndQuorumEpoch => RequestKind::EndQuorumEpoch(EndQuorumEpochRequest::decode(r, version)?),
            ApiKey::EndTxn => RequestKind::EndTxn(EndTxnRequest::decode(r, version)?),
            ApiKey::Envelope => RequestKind::Envelope(EnvelopeRequest::decode(r, version)?),
            ApiKey::ExpireDelegationToken => RequestKind::ExpireDelegationToken(ExpireDelegationTokenRequest::decode(r, version)?),
            ApiKey::Fetch => RequestKind::Fetch(FetchRequest::decode(r, version)?),
            ApiKey::FetchSnapshot => RequestKind::FetchSnapshot(FetchSnapshotRequest::decode(r, version)?),
            ApiKey::FindCoordinator => RequestKind::FindCoordinator(FindCoordinatorRequest::decode(r, version)?),
            ApiKey::GetTelemetrySubscriptions => RequestKind::GetTelemetrySubscriptions(GetTelemetrySubscriptionsRequest::decode(r, version)?),
            ApiKey::Heartbeat => RequestKind::Heartbeat(HeartbeatRequest::decode(r, version)?),
            ApiKey::IncrementalAlterConfigs => RequestKind::IncrementalAlterConfigs(IncrementalAlterConfigsRequest::decode(r, version)?),
            ApiKey::InitProducerId => RequestKind::InitProducerId(InitProducerIdRequest::decode(r, version)?),
            ApiKey::InitializeShareGroupState => RequestKind::InitializeShareGroupState(InitializeShareGroupStateRequest::decode(r, version)?),
            ApiKey::JoinGroup => RequestKind::JoinGroup(JoinGroupRequest::decode(r, version)?),
            ApiKey::LeaderAndIsr => RequestKind::LeaderAndIsr(LeaderAndIsrRequest::decode(r, version)?),
            ApiKey::LeaveGroup => RequestKind::LeaveGroup(LeaveGroupRequest::decode(r, version)?),
            ApiKey::ListClientMetricsResources => RequestKind::ListClientMetricsResources(ListClientMetricsResourcesRequest::decode(r, version)?),
            ApiKey::ListGroups => RequestKind::ListGroups(ListGroupsRequest::decode(r, version)?),
            ApiKey::ListOffsets => RequestKind::ListOffsets(ListOffsetsRequest::decode(r, version)?),
            ApiKey::ListPartitionReassignments => RequestKind::ListPartitionReassignments(ListPartitionReassignmentsRequest::decode(r, version)?),
            ApiKey::ListTransactions => RequestKind::ListTransactions(ListTransactionsRequest::decode(r, version)?),
            ApiKey::Metadata => RequestKind::Metadata(MetadataRequest::decode(r, version)?),
            ApiKey::OffsetCommit => RequestKind::OffsetCommit(OffsetCommitRequest::decode(r, version)?),
            ApiKey::OffsetDelete => RequestKind::OffsetDelete(OffsetDeleteRequest::decode(r, version)?),
            ApiKey::OffsetFetch => RequestKind::OffsetFetch(OffsetFetchRequest::decode(r, version)?),
            ApiKey::OffsetForLeaderEpoch => RequestKind::OffsetForLeaderEpoch(OffsetForLeaderEpochRequest::decode(r, version)?),
            ApiKey::Produce => RequestKind::Produce(ProduceRequest::decode(r, version)?),
            ApiKey::PushTelemetry => RequestKind::PushTelemetry(PushTelemetryRequest::decode(r, version)?),
            ApiKey::ReadShareGroupState => RequestKind::ReadShareGroupState(ReadShareGroupStateRequest::decode(r, version)?),
            ApiKey::ReadShareGroupStateSummary => RequestKind::ReadShareGroupStateSummary(ReadShareGroupStateSummaryRequest::decode(r, version)?),
            ApiKey::RemoveRaftVoter => RequestKind::RemoveRaftVoter(RemoveRaftVoterRequest::decode(r, version)?),
            ApiKey::RenewDelegationToken => RequestKind::RenewDelegationToken(RenewDelegationTokenRequest::decode(r, version)?),
            ApiKey::SaslAuthenticate => RequestKind::SaslAuthenticate(SaslAuthenticateRequest::decode(r, version)?),
            ApiKey::SaslHandshake => RequestKind::SaslHandshake(SaslHandshakeRequest::decode(r, version)?),
            ApiKey::ShareAcknowledge => RequestKind::ShareAcknowledge(ShareAcknowledgeRequest::decode(r, version)?),
            ApiKey::ShareFetch => RequestKind::ShareFetch(ShareFetchRequest::decode(r, version)?),
            ApiKey::ShareGroupDescribe => RequestKind::ShareGroupDescribe(ShareGroupDescribeRequest::decode(r, version)?),
            ApiKey::ShareGroupHeartbeat => RequestKind::ShareGroupHeartbeat(ShareGroupHeartbeatRequest::decode(r, version)?),
            ApiKey::StopReplica => RequestKind::StopReplica(StopReplicaRequest::decode(r, version)?),
            ApiKey::SyncGroup => RequestKind::SyncGroup(SyncGroupRequest::decode(r, version)?),
            ApiKey::TxnOffsetCommit => RequestKind::TxnOffsetCommit(TxnOffsetCommitRequest::decode(r, version)?),
            ApiKey::UnregisterBroker => RequestKind::UnregisterBroker(UnregisterBrokerRequest::decode(r, version)?),
            ApiKey::UpdateFeatures => RequestKind::UpdateFeatures(UpdateFeaturesRequest::decode(r, version)?),
            ApiKey::UpdateMetadata => RequestKind::UpdateMetadata(UpdateMetadataRequest::decode(r, version)?),
            ApiKey::UpdateRaftVoter => RequestKind::UpdateRaftVoter(UpdateRaftVoterRequest::decode(r, version)?),
            ApiKey::Vote => RequestKind::Vote(VoteRequest::decode(r, version)?),
            ApiKey::WriteShareGroupState => RequestKind::WriteShareGroupState(WriteShareGroupStateRequest::decode(r, version)?),
            ApiKey::WriteTxnMarkers => RequestKind::WriteTxnMarkers(WriteTxnMarkersRequest::decode(r, version)?),
        })
    }

    /// Encodes the body at `version`.
    pub fn encode(&self, w: &mut c::Writer, version: i16) -> Result<(), c::EncodeError> {
        use c::Message as _;
        match self {
            RequestKind::AddOffsetsToTxn(m) => m.encode(w, version),
            RequestKind::AddPartitionsToTxn(m) => m.encode(w, version),
            RequestKind::AddRaftVoter(m) => m.encode(w, version),
            RequestKind::AllocateProducerIds(m) => m.encode(w, version),
            RequestKind::AlterClientQuotas(m) => m.encode(w, version),
            RequestKind::AlterConfigs(m) => m.encode(w, version),
            RequestKind::AlterPartitionReassignments(m) => m.encode(w, version),
            RequestKind::AlterPartition(m) => m.encode(w, version),
            RequestKind::AlterReplicaLogDirs(m) => m.encode(w, version),
            RequestKind::AlterUserScramCredentials(m) => m.encode(w, version),
            RequestKind::ApiVersions(m) => m.encode(w, version),
            RequestKind::AssignReplicasToDirs(m) => m.encode(w, version),
            RequestKind::BeginQuorumEpoch(m) => m.encode(w, version),
            RequestKind::BrokerHeartbeat(m) => m.encode(w, version),
            RequestKind::BrokerRegistration(m) => m.encode(w, version),
            RequestKind::ConsumerGroupDescribe(m) => m.encode(w, version),
            RequestKind::ConsumerGroupHeartbeat(m) => m.encode(w, version),
            RequestKind::ControlledShutdown(m) => m.encode(w, version),
            RequestKind::ControllerRegistration(m) => m.encode(w, version),
            RequestKind::CreateAcls(m) => m.encode(w, version),
            RequestKind::CreateDelegationToken(m) => m.encode(w, version),
            RequestKind::CreatePartitions(m) => m.encode(w, version),
            RequestKind::CreateTopics(m) => m.encode(w, version),
            RequestKind::DeleteAcls(m) => m.encode(w, version),
            RequestKind::DeleteGroups(m) => m.encode(w, version),
            RequestKind::DeleteRecords(m) => m.encode(w, version),
            RequestKind::DeleteShareGroupState(m) => m.encode(w, version),
            RequestKind::DeleteTopics(m) => m.encode(w, version),
            RequestKind::DescribeAcls(m) => m.encode(w, version),
            RequestKind::DescribeClientQuotas(m) => m.encode(w, version),
            RequestKind::DescribeCluster(m) => m.encode(w, version),
            RequestKind::DescribeConfigs(m) => m.encode(w, version),
            RequestKind::DescribeDelegationToken(m) => m.encode(w, version),
            RequestKind::DescribeGroups(m) => m.encode(w, version),
            RequestKind::DescribeLogDirs(m) => m.encode(w, version),
            RequestKind::DescribeProducers(m) => m.encode(w, version),
            RequestKind::DescribeQuorum(m) => m.encode(w, version),
            RequestKind::DescribeTopicPartitions(m) => m.encode(w, version),
            RequestKind::DescribeTransactions(m) => m.encode(w, version),
            RequestKind::DescribeUserScramCredentials(m) => m.encode(w, version),
            RequestKind::ElectLeaders(m) => m.encode(w, version),
            RequestKind::EndQuorumEpoch(m) => m.encode(w, version),
            RequestKind::EndTxn(m) => m.encode(w, version),
            RequestKind::Envelope(m) => m.encode(w, version),
            RequestKind::ExpireDelegationToken(m) => m.encode(w, version),
            RequestKind::Fetch(m) => m.encode(w, version),
            RequestKind::FetchSnapshot(m) => m.encode(w, version),
            RequestKind::FindCoordinator(m) => m.encode(w, version),
            RequestKind::GetTelemetrySubscriptions(m) => m.encode(w, version),
            RequestKind::Heartbeat(m) => m.encode(w, version),
            RequestKind::IncrementalAlterConfigs(m) => m.encode(w, version),
            RequestKind::InitProducerId(m) => m.encode(w, version),
            RequestKind::InitializeShareGroupState(m) => m.encode(w, version),
            RequestKind::JoinGroup(m) => m.encode(w, version),
            RequestKind::LeaderAndIsr(m) => m.encode(w, version),
            RequestKind::LeaveGroup(m) => m.encode(w, version),
            RequestKind::ListClientMetricsResources(m) => m.encode(w, version),
            RequestKind::ListGroups(m) => m.encode(w, version),
            RequestKind::ListOffsets(m) => m.encode(w, version),
            RequestKind::ListPartitionReassignments(m) => m.encode(w, version),
            RequestKind::ListTransactions(m) => m.encode(w, version),
            RequestKind::Metadata(m) => m.encode(w, version),
            RequestKind::OffsetCommit(m) => m.encode(w, version),
            RequestKind::OffsetDelete(m) => m.encode(w, version),
            RequestKind::OffsetFetch(m) => m.encode(w, version),
            RequestKind::OffsetForLeaderEpoch(m) => m.encode(w, version),
            RequestKind::Produce(m) => m.encode(w, version),
            RequestKind::PushTelemetry(m) => m.encode(w, version),
            RequestKind::ReadShareGroupState(m) => m.encode(w, version),
            RequestKind::ReadShareGroupStateSummary(m) => m.encode(w, version),
            RequestKind::RemoveRaftVoter(m) => m.encode(w, version),
            RequestKind::RenewDelegationToken(m) => m.encode(w, version),
            RequestKind::SaslAuthenticate(m) => m.encode(w, version),
            RequestKind::SaslHandshake(m) => m.encode(w, version),
            RequestKind::ShareAcknowledge(m) => m.encode(w, version),
            RequestKind::ShareFetch(m) => m.encode(w, version),
            RequestKind::ShareGroupDescribe(m) => m.encode(w, version),
            RequestKind::ShareGroupHeartbeat(m) => m.encode(w, version),
            RequestKind::StopReplica(m) => m.encode(w, version),
            RequestKind::SyncGroup(m) => m.encode(w, version),
            RequestKind::TxnOffsetCommit(m) => m.encode(w, version),
            RequestKind::UnregisterBroker(m) => m.encode(w, version),
            RequestKind::UpdateFeatures(m) => m.encode(w, version),
            RequestKind::UpdateMetadata(m) => m.encode(w, version),
            RequestKind::UpdateRaftVoter(m) => m.encode(w, version),
            RequestKind::Vote(m) => m.encode(w, version),
            RequestKind::WriteShareGroupState(m) => m.encode(w, version),
            RequestKind::WriteTxnMarkers(m) => m.encode(w, version),
        }
    }
}

/// A response body of any API.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseKind {
    /// `AddOffsetsToTxnResponse`.
    AddOffsetsToTxn(AddOffsetsToTxnResponse),
    /// `AddPartitionsToTxnResponse`.
    AddPartitionsToTxn(AddPartitionsToTxnResponse),
    /// `AddRaftVoterResponse`.
    AddRaftVoter(AddRaftVoterResponse),
    /// `AllocateProducerIdsResponse`.
    AllocateProducerIds(AllocateProducerIdsResponse),
    /// `AlterClientQuotasResponse`.
    AlterClientQuotas(AlterClientQuotasResponse),
    /// `AlterConfigsResponse`.
    AlterConfigs(AlterConfigsResponse),
    /// `AlterPartitionReassignmentsResponse`.
    AlterPartitionReassignments(AlterPartitionReassignmentsResponse),
    /// `AlterPartitionResponse`.
    AlterPartition(AlterPartitionResponse),
    /// `AlterReplicaLogDirsResponse`.
    AlterReplicaLogDirs(AlterReplicaLogDirsResponse),
    /// `AlterUserScramCredentialsResponse`.
    AlterUserScramCredentials(AlterUserScramCredentialsResponse),
    /// `ApiVersionsResponse`.
    ApiVersions(ApiVersionsResponse),
    /// `AssignReplicasToDirsResponse`.
    AssignReplicasToDirs(AssignReplicasToDirsResponse),
    /// `BeginQuorumEpochResponse`.
    BeginQuorumEpoch(BeginQuorumEpochResponse),
    /// `BrokerHeartbeatResponse`.
    BrokerHeartbeat(BrokerHeartbeatResponse),
    /// `BrokerRegistrationResponse`.
    BrokerRegistration(BrokerRegistrationResponse),
    /// `ConsumerGroupDescribeResponse`.
    ConsumerGroupDescribe(ConsumerGroupDescribeResponse),
    /// `ConsumerGroupHeartbeatResponse`.
    ConsumerGroupHeartbeat(ConsumerGroupHeartbeatResponse),
    /// `ControlledShutdownResponse`.
    ControlledShutdown(ControlledShutdownResponse),
    /// `ControllerRegistrationResponse`.
    ControllerRegistration(ControllerRegistrationResponse),
    /// `CreateAclsResponse`.
    CreateAcls(CreateAclsResponse),
    /// `CreateDelegationTokenResponse`.
    CreateDelegationToken(CreateDelegationTokenResponse),
    /// `CreatePartitionsResponse`.
    CreatePartitions(CreatePartitionsResponse),
    /// `CreateTopicsResponse`.
    CreateTopics(CreateTopicsResponse),
    /// `DeleteAclsResponse`.
    DeleteAcls(DeleteAclsResponse),
    /// `DeleteGroupsResponse`.
    DeleteGroups(DeleteGroupsResponse),
    /// `DeleteRecordsResponse`.
    DeleteRecords(DeleteRecordsResponse),
    /// `DeleteShareGroupStateResponse`.
    DeleteShareGroupState(DeleteShareGroupStateResponse),
    /// `DeleteTopicsResponse`.
    DeleteTopics(DeleteTopicsResponse),
    /// `DescribeAclsResponse`.
    DescribeAcls(DescribeAclsResponse),
    /// `DescribeClientQuotasResponse`.
    DescribeClientQuotas(DescribeClientQuotasResponse),
    /// `DescribeClusterResponse`.
    DescribeCluster(DescribeClusterResponse),
    /// `DescribeConfigsResponse`.
    DescribeConfigs(DescribeConfigsResponse),
    /// `DescribeDelegationTokenResponse`.
    DescribeDelegationToken(DescribeDelegationTokenResponse),
    /// `DescribeGroupsResponse`.
    DescribeGroups(DescribeGroupsResponse),
    /// `DescribeLogDirsResponse`.
    DescribeLogDirs(DescribeLogDirsResponse),
    /// `DescribeProducersResponse`.
    DescribeProducers(DescribeProducersResponse),
    /// `DescribeQuorumResponse`.
    DescribeQuorum(DescribeQuorumResponse),
    /// `DescribeTopicPartitionsResponse`.
    DescribeTopicPartitions(DescribeTopicPartitionsResponse),
    /// `DescribeTransactionsResponse`.
    DescribeTransactions(DescribeTransactionsResponse),
    /// `DescribeUserScramCredentialsResponse`.
    DescribeUserScramCredentials(DescribeUserScramCredentialsResponse),
    /// `ElectLeadersResponse`.
    ElectLeaders(ElectLeadersResponse),
    /// `EndQuorumEpochResponse`.
    EndQuorumEpoch(EndQuorumEpochResponse),
    /// `EndTxnResponse`.
    EndTxn(EndTxnResponse),
    /// `EnvelopeResponse`.
    Envelope(EnvelopeResponse),
    /// `ExpireDelegationTokenResponse`.
    ExpireDelegationToken(ExpireDelegationTokenResponse),
    /// `FetchResponse`.
    Fetch(FetchResponse),
    /// `FetchSnapshotResponse`.
    FetchSnapshot(FetchSnapshotResponse),
    /// `FindCoordinatorResponse`.
    FindCoordinator(FindCoordinatorResponse),
    /// `GetTelemetrySubscriptionsResponse`.
    GetTelemetrySubscriptions(GetTelemetrySubscriptionsResponse),
    /// `HeartbeatResponse`.
    Heartbeat(HeartbeatResponse),
    /// `IncrementalAlterConfigsResponse`.
    IncrementalAlterConfigs(IncrementalAlterConfigsResponse),
    /// `InitProducerIdResponse`.
    InitProducerId(InitProducerIdResponse),
    /// `InitializeShareGroupStateResponse`.
    InitializeShareGroupState(InitializeShareGroupStateResponse),
    /// `JoinGroupResponse`.
    JoinGroup(JoinGroupResponse),
    /// `LeaderAndIsrResponse`.
    LeaderAndIsr(LeaderAndIsrResponse),
    /// `LeaveGroupResponse`.
    LeaveGroup(LeaveGroupResponse),
    /// `ListClientMetricsResourcesResponse`.
    ListClientMetricsResources(ListClientMetricsResourcesResponse),
    /// `ListGroupsResponse`.
    ListGroups(ListGroupsResponse),
    /// `ListOffsetsResponse`.
    ListOffsets(ListOffsetsResponse),
    /// `ListPartitionReassignmentsResponse`.
    ListPartitionReassignments(ListPartitionReassignmentsResponse),
    /// `ListTransactionsResponse`.
    ListTransactions(ListTransactionsResponse),
    /// `MetadataResponse`.
    Metadata(MetadataResponse),
    /// `OffsetCommitResponse`.
    OffsetCommit(OffsetCommitResponse),
    /// `OffsetDeleteResponse`.
    OffsetDelete(OffsetDeleteResponse),
    /// `OffsetFetchResponse`.
    OffsetFetch(OffsetFetchResponse),
    /// `OffsetForLeaderEpochResponse`.
    OffsetForLeaderEpoch(OffsetForLeaderEpochResponse),
    /// `ProduceResponse`.
    Produce(ProduceResponse),
    /// `PushTelemetryResponse`.
    PushTelemetry(PushTelemetryResponse),
    /// `ReadShareGroupStateResponse`.
    ReadShareGroupState(ReadShareGroupStateResponse),
    /// `ReadShareGroupStateSummaryResponse`.
    ReadShareGroupStateSummary(ReadShareGroupStateSummaryResponse),
    /// `RemoveRaftVoterResponse`.
    RemoveRaftVoter(RemoveRaftVoterResponse),
    /// `RenewDelegationTokenResponse`.
    RenewDelegationToken(RenewDelegationTokenResponse),
    /// `SaslAuthenticateResponse`.
    SaslAuthenticate(SaslAuthenticateResponse),
    /// `SaslHandshakeResponse`.
    SaslHandshake(SaslHandshakeResponse),
    /// `ShareAcknowledgeResponse`.
    ShareAcknowledge(ShareAcknowledgeResponse),
    /// `ShareFetchResponse`.
    ShareFetch(ShareFetchResponse),
    /// `ShareGroupDescribeResponse`.
    ShareGroupDescribe(ShareGroupDescribeResponse),
    /// `ShareGroupHeartbeatResponse`.
    ShareGroupHeartbeat(ShareGroupHeartbeatResponse),
    /// `StopReplicaResponse`.
    StopReplica(StopReplicaResponse),
    /// `SyncGroupResponse`.
    SyncGroup(SyncGroupResponse),
    /// `TxnOffsetCommitResponse`.
    TxnOffsetCommit(TxnOffsetCommitResponse),
    /// `UnregisterBrokerResponse`.
    UnregisterBroker(UnregisterBrokerResponse),
    /// `UpdateFeaturesResponse`.
    UpdateFeatures(UpdateFeaturesResponse),
    /// `UpdateMetadataResponse`.
    UpdateMetadata(UpdateMetadataResponse),
    /// `UpdateRaftVoterResponse`.
    UpdateRaftVoter(UpdateRaftVoterResponse),
    /// `VoteResponse`.
    Vote(VoteResponse),
    /// `WriteShareGroupStateResponse`.
    WriteShareGroupState(WriteShareGroupStateResponse),
    /// `WriteTxnMarkersResponse`.
    WriteTxnMarkers(WriteTxnMarkersResponse),
}

impl ResponseKind {
    /// The API key of the body.
    pub fn api_key(&self) -> ApiKey {
        match self {
            ResponseKind::AddOffsetsToTxn(_) => ApiKey::AddOffsetsToTxn,
            ResponseKind::AddPartitionsToTxn(_) => ApiKey::AddPartitionsToTxn,
            ResponseKind::AddRaftVoter(_) => ApiKey::AddRaftVoter,
            ResponseKind::AllocateProducerIds(_) => ApiKey::AllocateProducerIds,
            ResponseKind::AlterClientQuotas(_) => ApiKey::AlterClientQuotas,
            ResponseKind::AlterConfigs(_) => ApiKey::AlterConfigs,
            ResponseKind::AlterPartitionReassignments(_) => ApiKey::AlterPartitionReassignments,
            ResponseKind::AlterPartition(_) => ApiKey::AlterPartition,
            ResponseKind::AlterReplicaLogDirs(_) => ApiKey::AlterReplicaLogDirs,
            ResponseKind::AlterUserScramCredentials(_) => ApiKey::AlterUserScramCredentials,
            ResponseKind::ApiVersions(_) => ApiKey::ApiVersions,
            ResponseKind::AssignReplicasToDirs(_) => ApiKey::AssignReplicasToDirs,
            ResponseKind::BeginQuorumEpoch(_) => ApiKey::BeginQuorumEpoch,
            ResponseKind::BrokerHeartbeat(_) => ApiKey::BrokerHeartbeat,
            ResponseKind::BrokerRegistration(_) => ApiKey::BrokerRegistration,
            ResponseKind::ConsumerGroupDescribe(_) => ApiKey::ConsumerGroupDescribe,
            ResponseKind::ConsumerGroupHeartbeat(_) => ApiKey::ConsumerGroupHeartbeat,
            ResponseKind::ControlledShutdown(_) => ApiKey::ControlledShutdown,
            ResponseKind::ControllerRegistration(_) => ApiKey::ControllerRegistration,
            ResponseKind::CreateAcls(_) => ApiKey::CreateAcls,
            ResponseKind::CreateDelegationToken(_) => ApiKey::CreateDelegationToken,
            ResponseKind::CreatePartitions(_) => ApiKey::CreatePartitions,
            ResponseKind::CreateTopics(_) => ApiKey::CreateTopics,
            ResponseKind::DeleteAcls(_) => ApiKey::DeleteAcls,
            ResponseKind::DeleteGroups(_) => ApiKey::DeleteGroups,
            ResponseKind::DeleteRecords(_) => ApiKey::DeleteRecords,
            ResponseKind::DeleteShareGroupState(_) => ApiKey::DeleteShareGroupState,
            ResponseKind::DeleteTopics(_) => ApiKey::DeleteTopics,
            ResponseKind::DescribeAcls(_) => ApiKey::DescribeAcls,
            ResponseKind::DescribeClientQuotas(_) => ApiKey::DescribeClientQuotas,
            ResponseKind::DescribeCluster(_) => ApiKey::DescribeCluster,
            ResponseKind::DescribeConfigs(_) => ApiKey::DescribeConfigs,
            ResponseKind::DescribeDelegationToken(_) => ApiKey::DescribeDelegationToken,
            ResponseKind::DescribeGroups(_) => ApiKey::DescribeGroups,
            ResponseKind::DescribeLogDirs(_) => ApiKey::DescribeLogDirs,
            ResponseKind::DescribeProducers(_) => ApiKey::DescribeProducers,
            ResponseKind::DescribeQuorum(_) => ApiKey::DescribeQuorum,
            ResponseKind::DescribeTopicPartitions(_) => ApiKey::DescribeTopicPartitions,
            ResponseKind::DescribeTransactions(_) => ApiKey::DescribeTransactions,
            ResponseKind::DescribeUserScramCredentials(_) => ApiKey::DescribeUserScramCredentials,
            ResponseKind::ElectLeaders(_) => ApiKey::ElectLeaders,
            ResponseKind::EndQuorumEpoch(_) => ApiKey::EndQuorumEpoch,
            ResponseKind::EndTxn(_) => ApiKey::EndTxn,
            ResponseKind::Envelope(_) => ApiKey::Envelope,
            ResponseKind::ExpireDelegationToken(_) => ApiKey::ExpireDelegationToken,
            ResponseKind::Fetch(_) => ApiKey::Fetch,
            ResponseKind::FetchSnapshot(_) => ApiKey::FetchSnapshot,
            ResponseKind::FindCoordinator(_) => ApiKey::FindCoordinator,
            ResponseKind::GetTelemetrySubscriptions(_) => ApiKey::GetTelemetrySubscriptions,
            ResponseKind::Heartbeat(_) => ApiKey::Heartbeat,
            ResponseKind::IncrementalAlterConfigs(_) => ApiKey::IncrementalAlterConfigs,
            ResponseKind::InitProducerId(_) => ApiKey::InitProducerId,
            ResponseKind::InitializeShareGroupState(_) => ApiKey::InitializeShareGroupState,
            ResponseKind::JoinGroup(_) => ApiKey::JoinGroup,
            ResponseKind::LeaderAndIsr(_) => ApiKey::LeaderAndIsr,
            ResponseKind::LeaveGroup(_) => ApiKey::LeaveGroup,
            ResponseKind::ListClientMetricsResources(_) => ApiKey::ListClientMetricsResources,
            ResponseKind::ListGroups(_) => ApiKey::ListGroups,
            ResponseKind::ListOffsets(_) => ApiKey::ListOffsets,
            ResponseKind::ListPartitionReassignments(_) => ApiKey::ListPartitionReassignments,
            ResponseKind::ListTransactions(_) => ApiKey::ListTransactions,
            ResponseKind::Metadata(_) => ApiKey::Metadata,
            ResponseKind::OffsetCommit(_) => ApiKey::OffsetCommit,
            ResponseKind::OffsetDelete(_) => ApiKey::OffsetDelete,
            ResponseKind::OffsetFetch(_) => ApiKey::OffsetFetch,
            ResponseKind::OffsetForLeaderEpoch(_) => ApiKey::OffsetForLeaderEpoch,
            ResponseKind::Produce(_) => ApiKey::Produce,
            ResponseKind::PushTelemetry(_) => ApiKey::PushTelemetry,
            ResponseKind::ReadShareGroupState(_) => ApiKey::ReadShareGroupState,
            ResponseKind::ReadShareGroupStateSummary(_) => ApiKey::ReadShareGroupStateSummary,
            ResponseKind::RemoveRaftVoter(_) => ApiKey::RemoveRaftVoter,
            ResponseKind::RenewDelegationToken(_) => ApiKey::RenewDelegationToken,
            ResponseKind::SaslAuthenticate(_) => ApiKey::SaslAuthenticate,
            ResponseKind::SaslHandshake(_) => ApiKey::SaslHandshake,
            ResponseKind::ShareAcknowledge(_) => ApiKey::ShareAcknowledge,
            ResponseKind::ShareFetch(_) => ApiKey::ShareFetch,
            ResponseKind::ShareGroupDescribe(_) => ApiKey::ShareGroupDescribe,
            ResponseKind::ShareGroupHeartbeat(_) => ApiKey::ShareGroupHeartbeat,
            ResponseKind::StopReplica(_) => ApiKey::StopReplica,
            ResponseKind::SyncGroup(_) => ApiKey::SyncGroup,
            ResponseKind::TxnOffsetCommit(_) => ApiKey::TxnOffsetCommit,
            ResponseKind::UnregisterBroker(_) => ApiKey::UnregisterBroker,
            ResponseKind::UpdateFeatures(_) => ApiKey::UpdateFeatures,
            ResponseKind::UpdateMetadata(_) => ApiKey::UpdateMetadata,
            ResponseKind::UpdateRaftVoter(_) => ApiKey::UpdateRaftVoter,
            ResponseKind::Vote(_) => ApiKey::Vote,
            ResponseKind::WriteShareGroupState(_) => ApiKey::WriteShareGroupState,
            ResponseKind::WriteTxnMarkers(_) => ApiKey::WriteTxnMarkers,
        }
    }

    /// Decodes a body of API `key` at `version`.
    pub fn decode(key: ApiKey, r: &mut c::Reader, version: i16) -> Result<Self, c::DecodeError> {
        use c::Message as _;
        Ok(match key {
            ApiKey::AddOffsetsToTxn => ResponseKind::AddOffsetsToTxn(AddOffsetsToTxnResponse::decode(r, version)?),
            ApiKey::AddPartitionsToTxn => ResponseKind::AddPartitionsToTxn(AddPartitionsToTxnResponse::decode(r, version)?),
            ApiKey::AddRaftVoter => ResponseKind::AddRaftVoter(AddRaftVoterResponse::decode(r, version)?),
            ApiKey::AllocateProducerIds => ResponseKind::AllocateProducerIds(AllocateProducerIdsResponse::decode(r, version)?),
            ApiKey::AlterClientQuotas => ResponseKind::AlterClientQuotas(AlterClientQuotasResponse::decode(r, version)?),
            ApiKey::AlterConfigs => ResponseKind::AlterConfigs(AlterConfigsResponse::decode(r, version)?),
            ApiKey::AlterPartitionReassignments => ResponseKind::AlterPartitionReassignments(AlterPartitionReassignmentsResponse::decode(r, version)?),
            ApiKey::AlterPartition => ResponseKind::AlterPartition(AlterPartitionResponse::decode(r, version)?),
            ApiKey::AlterReplicaLogDirs => ResponseKind::AlterReplicaLogDirs(AlterReplicaLogDirsResponse::decode(r, version)?),
            ApiKey::AlterUserScramCredentials => ResponseKind::AlterUserScramCredentials(AlterUserScramCredentialsResponse::decode(r, version)?),
            ApiKey::ApiVersions => ResponseKind::ApiVersions(ApiVersionsResponse::decode(r, version)?),
            ApiKey::AssignReplicasToDirs => ResponseKind::AssignReplicasToDirs(AssignReplicasToDirsResponse::decode(r, version)?),
            ApiKey::BeginQuorumEpoch => ResponseKind::BeginQuorumEpoch(BeginQuorumEpochResponse::decode(r, version)?),
            ApiKey::BrokerHeartbeat => ResponseKind::BrokerHeartbeat(BrokerHeartbeatResponse::decode(r, version)?),
            ApiKey::BrokerRegistration => ResponseKind::BrokerRegistration(BrokerRegistrationResponse::decode(r, version)?),
            ApiKey::ConsumerGroupDescribe => ResponseKind::ConsumerGroupDescribe(ConsumerGroupDescribeResponse::decode(r, version)?),
            ApiKey::ConsumerGroupHeartbeat => ResponseKind::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatResponse::decode(r, version)?),
            ApiKey::ControlledShutdown => ResponseKind::ControlledShutdown(ControlledShutdownResponse::decode(r, version)?),
            ApiKey::ControllerRegistration => ResponseKind::ControllerRegistration(ControllerRegistrationResponse::decode(r, version)?),
            ApiKey::CreateAcls => ResponseKind::CreateAcls(CreateAclsResponse::decode(r, version)?),
            ApiKey::CreateDelegationToken => ResponseKind::CreateDelegationToken(CreateDelegationTokenResponse::decode(r, version)?),
            ApiKey::CreatePartitions => ResponseKind::CreatePartitions(CreatePartitionsResponse::decode(r, version)?),
            ApiKey::CreateTopics => ResponseKind::CreateTopics(CreateTopicsResponse::decode(r, version)?),
            ApiKey::DeleteAcls => ResponseKind::DeleteAcls(DeleteAclsResponse::decode(r, version)?),
            ApiKey::DeleteGroups => ResponseKind::DeleteGroups(DeleteGroupsResponse::decode(r, version)?),
            ApiKey::DeleteRecords => ResponseKind::DeleteRecords(DeleteRecordsResponse::decode(r, version)?),
            ApiKey::DeleteShareGroupState => ResponseKind::DeleteShareGroupState(DeleteShareGroupStateResponse::decode(r, version)?),
            ApiKey::DeleteTopics => ResponseKind::DeleteTopics(DeleteTopicsResponse::decode(r, version)?),
            ApiKey::DescribeAcls => ResponseKind::DescribeAcls(DescribeAclsResponse::decode(r, version)?),
            ApiKey::DescribeClientQuotas => ResponseKind::DescribeClientQuotas(DescribeClientQuotasResponse::decode(r, version)?),
            ApiKey::DescribeCluster => ResponseKind::DescribeCluster(DescribeClusterResponse::decode(r, version)?),
            ApiKey::DescribeConfigs => ResponseKind::DescribeConfigs(DescribeConfigsResponse::decode(r, version)?),
            ApiKey::DescribeDelegationToken => ResponseKind::DescribeDelegationToken(DescribeDelegationTokenResponse::decode(r, version)?),
            ApiKey::DescribeGroups => ResponseKind::DescribeGroups(DescribeGroupsResponse::decode(r, version)?),
            ApiKey::DescribeLogDirs => ResponseKind::DescribeLogDirs(DescribeLogDirsResponse::decode(r, version)?),
            ApiKey::DescribeProducers => ResponseKind::DescribeProducers(DescribeProducersResponse::decode(r, version)?),
            ApiKey::DescribeQuorum => ResponseKind::DescribeQuorum(DescribeQuorumResponse::decode(r, version)?),
            ApiKey::DescribeTopicPartitions => ResponseKind::DescribeTopicPartitions(DescribeTopicPartitionsResponse::decode(r, version)?),
            ApiKey::DescribeTransactions => ResponseKind::DescribeTransactions(DescribeTransactionsResponse::decode(r, version)?),
            ApiKey::DescribeUserScramCredentials => ResponseKind::DescribeUserScramCredentials(DescribeUserScramCredentialsResponse::decode(r, version)?),
            ApiKey::ElectLeaders => ResponseKind::ElectLeaders(ElectLeadersResponse::decode(r, version)?),
            ApiKey::EndQuorumEpoch => ResponseKind::EndQuorumEpoch(EndQuorumEpochResponse::decode(r, version)?),
            ApiKey::EndTxn => ResponseKind::EndTxn(EndTxnResponse::decode(r, version)?),
            ApiKey::Envelope => ResponseKind::Envelope(EnvelopeResponse::decode(r, version)?),
            ApiKey::ExpireDelegationToken => ResponseKind::ExpireDelegationToken(ExpireDelegationTokenResponse::decode(r, version)?),
            ApiKey::Fetch => ResponseKind::Fetch(FetchResponse::decode(r, version)?),
            ApiKey::FetchSnapshot => ResponseKind::FetchSnapshot(FetchSnapshotResponse::decode(r, version)?),
            ApiKey::FindCoordinator => ResponseKind::FindCoordinator(FindCoordinatorResponse::decode(r, version)?),
            ApiKey::GetTelemetrySubscriptions => ResponseKind::GetTelemetrySubscriptions(GetTelemetrySubscriptionsResponse::decode(r, version)?),
            ApiKey::Heartbeat => ResponseKind::Heartbeat(HeartbeatResponse::decode(r, version)?),
            ApiKey::IncrementalAlterConfigs => ResponseKind::IncrementalAlterConfigs(IncrementalAlterConfigsResponse::decode(r, version)?),
            ApiKey::InitProducerId => ResponseKind::InitProducerId(InitProducerIdResponse::decode(r, version)?),
            ApiKey::InitializeShareGroupState => ResponseKind::InitializeShareGroupState(InitializeShareGroupStateResponse::decode(r, version)?),
            ApiKey::JoinGroup => ResponseKind::JoinGroup(JoinGroupResponse::decode(r, version)?),
            ApiKey::LeaderAndIsr => ResponseKind::LeaderAndIsr(LeaderAndIsrResponse::decode(r, version)?),
            ApiKey::LeaveGroup => ResponseKind::LeaveGroup(LeaveGroupResponse::decode(r, version)?),
            ApiKey::ListClientMetricsResources => ResponseKind::ListClientMetricsResources(ListClientMetricsResourcesResponse::decode(r, version)?),
            ApiKey::ListGroups => ResponseKind::ListGroups(ListGroupsResponse::decode(r, version)?),
            ApiKey::ListOffsets => ResponseKind::ListOffsets(ListOffsetsResponse::decode(r, version)?),
            ApiKey::ListPartitionReassignments => ResponseKind::ListPartitionReassignments(ListPartitionReassignmentsResponse::decode(r, version)?),
            ApiKey::ListTransactions => ResponseKind::ListTransactions(ListTransactionsResponse::decode(r, version)?),
            ApiKey::Metadata => ResponseKind::Metadata(MetadataResponse::decode(r, version)?),
            ApiKey::OffsetCommit => ResponseKind::OffsetCommit(OffsetCommitResponse::decode(r, version)?),
            ApiKey::OffsetDelete => ResponseKind::OffsetDelete(OffsetDeleteResponse::decode(r, version)?),
            ApiKey::OffsetFetch => ResponseKind::OffsetFetch(OffsetFetchResponse::decode(r, version)?),
            ApiKey::OffsetForLeaderEpoch => ResponseKind::OffsetForLeaderEpoch(OffsetForLeaderEpochResponse::decode(r, version)?),
            ApiKey::Produce => ResponseKind::Produce(ProduceResponse::decode(r, version)?),
            ApiKey::PushTelemetry => ResponseKind::PushTelemetry(PushTelemetryResponse::decode(r, version)?),
            ApiKey::ReadShareGroupState => ResponseKind::ReadShareGroupState(ReadShareGroupStateResponse::decode(r, version)?),
            ApiKey::ReadShareGroupStateSummary => ResponseKind::ReadShareGroupStateSummary(ReadShareGroupStateSummaryResponse::decode(r, version)?),
            ApiKey::RemoveRaftVoter => ResponseKind::RemoveRaftVoter(RemoveRaftVoterResponse::decode(r, version)?),
            ApiKey::RenewDelegationToken => ResponseKind::RenewDelegationToken(RenewDelegationTokenResponse::decode(r, version)?),
            ApiKey::SaslAuthenticate => ResponseKind::SaslAuthenticate(SaslAuthenticateResponse::decode(r, version)?),
            ApiKey::SaslHandshake => ResponseKind::SaslHandshake(SaslHandshakeResponse::decode(r, version)?),
            ApiKey::ShareAcknowledge => ResponseKind::ShareAcknowledge(ShareAcknowledgeResponse::decode(r, version)?),
            ApiKey::ShareFetch => ResponseKind::ShareFetch(ShareFetchResponse::decode(r, version)?),
            ApiKey::ShareGroupDescribe => ResponseKind::ShareGroupDescribe(ShareGroupDescribeResponse::decode(r, version)?),
            ApiKey::ShareGroupHeartbeat => ResponseKind::ShareGroupHeartbeat(ShareGroupHeartbeatResponse::decode(r, version)?),
            ApiKey::StopReplica => ResponseKind::StopReplica(StopReplicaResponse::decode(r, version)?),
            ApiKey::SyncGroup => ResponseKind::SyncGroup(SyncGroupResponse::decode(r, version)?),
            ApiKey::TxnOffsetCommit => ResponseKind::TxnOffsetCommit(TxnOffsetCommitResponse::decode(r, version)?),
            ApiKey::UnregisterBroker => ResponseKind::UnregisterBroker(UnregisterBrokerResponse::decode(r, version)?),
            ApiKey::UpdateFeatures => ResponseKind::UpdateFeatures(UpdateFeaturesResponse::decode(r, version)?),
            ApiKey::UpdateMetadata => ResponseKind::UpdateMetadata(UpdateMetadataResponse::decode(r, version)?),
            ApiKey::UpdateRaftVoter => ResponseKind::UpdateRaftVoter(UpdateRaftVoterResponse::decode(r, version)?),
            ApiKey::Vote => ResponseKind::Vote(VoteResponse::decode(r, version)?),
            ApiKey::WriteShareGroupState => ResponseKind::WriteShareGroupState(WriteShareGroupStateResponse::decode(r, version)?),
            ApiKey::WriteTxnMarkers => ResponseKind::WriteTxnMarkers(WriteTxnMarkersResponse::decode(r, version)?),
        })
    }

    /// Encodes the body at `version`.
    pub fn encode(&self, w: &mut c::Writer, version: i16) -> Result<(), c::EncodeError> {
        use c::Message as _;
        match self {
            ResponseKind::AddOffsetsToTxn(m) => m.encode(w, version),
            ResponseKind::AddPartitionsToTxn(m) => m.encode(w, version),
            ResponseKind::AddRaftVoter(m) => m.encode(w, version),
            ResponseKind::AllocateProducerIds(m) => m.encode(w, version),
            ResponseKind::AlterClientQuotas(m) => m.encode(w, version),
            ResponseKind::AlterConfigs(m) => m.encode(w, version),
            ResponseKind::AlterPartitionReassignments(m) => m.encode(w, version),
            ResponseKind::AlterPartition(m) => m.encode(w, version),
            ResponseKind::AlterReplicaLogDirs(m) => m.encode(w, version),
            ResponseKind::AlterUserScramCredentials(m) => m.encode(w, version),
            ResponseKind::ApiVersions(m) => m.encode(w, version),
            ResponseKind::AssignReplicasToDirs(m) => m.encode(w, version),
            ResponseKind::BeginQuorumEpoch(m) => m.encode(w, version),
            ResponseKind::BrokerHeartbeat(m) => m.encode(w, version),
            ResponseKind::BrokerRegistration(m) => m.encode(w, version),
            ResponseKind::ConsumerGroupDescribe(m) => m.encode(w, version),
            ResponseKind::ConsumerGroupHeartbeat(m) => m.encode(w, version),
            ResponseKind::ControlledShutdown(m) => m.encode(w, version),
            ResponseKind::ControllerRegistration(m) => m.encode(w, version),
            ResponseKind::CreateAcls(m) => m.encode(w, version),
            ResponseKind::CreateDelegationToken(m) => m.encode(w, version),
            ResponseKind::CreatePartitions(m) => m.encode(w, version),
            ResponseKind::CreateTopics(m) => m.encode(w, version),
            ResponseKind::DeleteAcls(m) => m.encode(w, version),
            ResponseKind::DeleteGroups(m) => m.encode(w, version),
            ResponseKind::DeleteRecords(m) => m.encode(w, version),
            ResponseKind::DeleteShareGroupState(m) => m.encode(w, version),
            ResponseKind::DeleteTopics(m) => m.encode(w, version),
            ResponseKind::DescribeAcls(m) => m.encode(w, version),
            ResponseKind::DescribeClientQuotas(m) => m.encode(w, version),
            ResponseKind::DescribeCluster(m) => m.encode(w, version),
            ResponseKind::DescribeConfigs(m) => m.encode(w, version),
            ResponseKind::DescribeDelegationToken(m) => m.encode(w, version),
            ResponseKind::DescribeGroups(m) => m.encode(w, version),
            ResponseKind::DescribeLogDirs(m) => m.encode(w, version),
            ResponseKind::DescribeProducers(m) => m.encode(w, version),
            ResponseKind::DescribeQuorum(m) => m.encode(w, version),
            ResponseKind::DescribeTopicPartitions(m) => m.encode(w, version),
            ResponseKind::DescribeTransactions(m) => m.encode(w, version),
            ResponseKind::DescribeUserScramCredentials(m) => m.encode(w, version),
            ResponseKind::ElectLeaders(m) => m.encode(w, version),
            ResponseKind::EndQuorumEpoch(m) => m.encode(w, version),
            ResponseKind::EndTxn(m) => m.encode(w, version),
            ResponseKind::Envelope(m) => m.encode(w, version),
            ResponseKind::ExpireDelegationToken(m) => m.encode(w, version),
            ResponseKind::Fetch(m) => m.encode(w, version),
            ResponseKind::FetchSnapshot(m) => m.encode(w, version),
            ResponseKind::FindCoordinator(m) => m.encode(w, version),
            ResponseKind::GetTelemetrySubscriptions(m) => m.encode(w, version),
            ResponseKind::Heartbeat(m) => m.encode(w, version),
            ResponseKind::IncrementalAlterConfigs(m) => m.encode(w, version),
            ResponseKind::InitProducerId(m) => m.encode(w, version),
            ResponseKind::InitializeShareGroupState(m) => m.encode(w, version),
            ResponseKind::JoinGroup(m) => m.encode(w, version),
            ResponseKind::LeaderAndIsr(m) => m.encode(w, version),
            ResponseKind::LeaveGroup(m) => m.encode(w, version),
            ResponseKind::ListClientMetricsResources(m) => m.encode(w, version),
            ResponseKind::ListGroups(m) => m.encode(w, version),
            ResponseKind::ListOffsets(m) => m.encode(w, version),
            ResponseKind::ListPartitionReassignments(m) => m.encode(w, version),
            ResponseKind::ListTransactions(m) => m.encode(w, version),
            ResponseKind::Metadata(m) => m.encode(w, version),
            ResponseKind::OffsetCommit(m) => m.encode(w, version),
            ResponseKind::OffsetDelete(m) => m.encode(w, version),
            ResponseKind::OffsetFetch(m) => m.encode(w, version),
            ResponseKind::OffsetForLeaderEpoch(m) => m.encode(w, version),
            ResponseKind::Produce(m) => m.encode(w, version),
            ResponseKind::PushTelemetry(m) => m.encode(w, version),
            ResponseKind::ReadShareGroupState(m) => m.encode(w, version),
            ResponseKind::ReadShareGroupStateSummary(m) => m.encode(w, version),
            ResponseKind::RemoveRaftVoter(m) => m.encode(w, version),
            ResponseKind::RenewDelegationToken(m) => m.encode(w, version),
            ResponseKind::SaslAuthenticate(m) => m.encode(w, version),
            ResponseKind::SaslHandshake(m) => m.encode(w, version),
            ResponseKind::ShareAcknowledge(m) => m.encode(w, version),
            ResponseKind::ShareFetch(m) => m.encode(w, version),
            ResponseKind::ShareGroupDescribe(m) => m.encode(w, version),
            ResponseKind::ShareGroupHeartbeat(m) => m.encode(w, version),
            ResponseKind::StopReplica(m) => m.encode(w, version),
            ResponseKind::SyncGroup(m) => m.encode(w, version),
            ResponseKind::TxnOffsetCommit(m) => m.encode(w, version),
            ResponseKind::UnregisterBroker(m) => m.encode(w, version),
            ResponseKind::UpdateFeatures(m) => m.encode(w, version),
            ResponseKind::UpdateMetadata(m) => m.encode(w, version),
            ResponseKind::UpdateRaftVoter(m) => m.encode(w, version),
            ResponseKind::Vote(m) => m.encode(w, version),
            ResponseKind::WriteShareGroupState(m) => m.encode(w, version),
            ResponseKind::WriteTxnMarkers(m) => m.encode(w, version),
        }
    }

    /// Sets the top-level `throttle_time_ms` of a body that has the field (KIP-219: how
    /// long the broker mutes the connection for a quota); false for one without it.
    pub fn set_throttle_time_ms(&mut self, ms: i32) -> bool {
        match self {
            ResponseKind::AddOffsetsToTxn(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::AddPartitionsToTxn(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::AddRaftVoter(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::AllocateProducerIds(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::AlterClientQuotas(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::AlterConfigs(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::AlterPartitionReassignments(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::AlterPartition(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::AlterReplicaLogDirs(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::AlterUserScramCredentials(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ApiVersions(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::AssignReplicasToDirs(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::BrokerHeartbeat(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::BrokerRegistration(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ConsumerGroupDescribe(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ConsumerGroupHeartbeat(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ControllerRegistration(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::CreateAcls(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::CreateDelegationToken(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::CreatePartitions(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::CreateTopics(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DeleteAcls(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DeleteGroups(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DeleteRecords(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DeleteTopics(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DescribeAcls(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DescribeClientQuotas(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DescribeCluster(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DescribeConfigs(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DescribeDelegationToken(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DescribeGroups(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DescribeLogDirs(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DescribeProducers(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DescribeTopicPartitions(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DescribeTransactions(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::DescribeUserScramCredentials(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ElectLeaders(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::EndTxn(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ExpireDelegationToken(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::Fetch(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::FetchSnapshot(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::FindCoordinator(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::GetTelemetrySubscriptions(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::Heartbeat(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::IncrementalAlterConfigs(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::InitProducerId(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::JoinGroup(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::LeaveGroup(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ListClientMetricsResources(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ListGroups(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ListOffsets(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ListPartitionReassignments(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ListTransactions(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::Metadata(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::OffsetCommit(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::OffsetDelete(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::OffsetFetch(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::OffsetForLeaderEpoch(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::Produce(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::PushTelemetry(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::RemoveRaftVoter(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::RenewDelegationToken(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ShareAcknowledge(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ShareFetch(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ShareGroupDescribe(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::ShareGroupHeartbeat(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::SyncGroup(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::TxnOffsetCommit(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::UnregisterBroker(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::UpdateFeatures(m) => {
                m.throttle_time_ms = ms;
                true
            }
            ResponseKind::UpdateRaftVoter(m) => {
                m.throttle_time_ms = ms;
                true
            }
            _ => false,
        }
    }

    /// Calls `f` with every `ErrorCode` field of the body, at any depth and whatever the
    /// version (an absent field holds its default, as in Kafka's response data): what
    /// Kafka's `errorCounts()` counts for most responses (see `protocol::error_counts`).
    pub fn for_each_error_code(&self, mut f: impl FnMut(i16)) {
        match self {
            ResponseKind::AddOffsetsToTxn(m) => {
                f(m.error_code);
            }
            ResponseKind::AddPartitionsToTxn(m) => {
                f(m.error_code);
            }
            ResponseKind::AddRaftVoter(m) => {
                f(m.error_code);
            }
            ResponseKind::AllocateProducerIds(m) => {
                f(m.error_code);
            }
            ResponseKind::AlterClientQuotas(m) => {
                for x0 in &m.entries {
                    f(x0.error_code);
                }
            }
            ResponseKind::AlterConfigs(m) => {
                for x0 in &m.responses {
                    f(x0.error_code);
                }
            }
            ResponseKind::AlterPartitionReassignments(m) => {
                f(m.error_code);
                for x0 in &m.responses {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::AlterPartition(m) => {
                f(m.error_code);
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::AlterReplicaLogDirs(m) => {
                for x0 in &m.results {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::AlterUserScramCredentials(m) => {
                for x0 in &m.results {
                    f(x0.error_code);
                }
            }
            ResponseKind::ApiVersions(m) => {
                f(m.error_code);
            }
            ResponseKind::AssignReplicasToDirs(m) => {
                f(m.error_code);
                for x0 in &m.directories {
                    for x1 in &x0.topics {
                        for x2 in &x1.partitions {
                            f(x2.error_code);
                        }
                    }
                }
            }
            ResponseKind::BeginQuorumEpoch(m) => {
                f(m.error_code);
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::BrokerHeartbeat(m) => {
                f(m.error_code);
            }
            ResponseKind::BrokerRegistration(m) => {
                f(m.error_code);
            }
            ResponseKind::ConsumerGroupDescribe(m) => {
                for x0 in &m.groups {
                    f(x0.error_code);
                }
            }
            ResponseKind::ConsumerGroupHeartbeat(m) => {
                f(m.error_code);
            }
            ResponseKind::ControlledShutdown(m) => {
                f(m.error_code);
            }
            ResponseKind::ControllerRegistration(m) => {
                f(m.error_code);
            }
            ResponseKind::CreateAcls(m) => {
                for x0 in &m.results {
                    f(x0.error_code);
                }
            }
            ResponseKind::CreateDelegationToken(m) => {
                f(m.error_code);
            }
            ResponseKind::CreatePartitions(m) => {
                for x0 in &m.results {
                    f(x0.error_code);
                }
            }
            ResponseKind::CreateTopics(m) => {
                for x0 in &m.topics {
                    f(x0.error_code);
                }
            }
            ResponseKind::DeleteAcls(m) => {
                for x0 in &m.filter_results {
                    f(x0.error_code);
                    for x1 in &x0.matching_acls {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::DeleteGroups(m) => {
                for x0 in &m.results {
                    f(x0.error_code);
                }
            }
            ResponseKind::DeleteRecords(m) => {
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::DeleteShareGroupState(m) => {
                for x0 in &m.results {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::DeleteTopics(m) => {
                for x0 in &m.responses {
                    f(x0.error_code);
                }
            }
            ResponseKind::DescribeAcls(m) => {
                f(m.error_code);
            }
            ResponseKind::DescribeClientQuotas(m) => {
                f(m.error_code);
            }
            ResponseKind::DescribeCluster(m) => {
                f(m.error_code);
            }
            ResponseKind::DescribeConfigs(m) => {
                for x0 in &m.results {
                    f(x0.error_code);
                }
            }
            ResponseKind::DescribeDelegationToken(m) => {
                f(m.error_code);
            }
            ResponseKind::DescribeGroups(m) => {
                for x0 in &m.groups {
                    f(x0.error_code);
                }
            }
            ResponseKind::DescribeLogDirs(m) => {
                f(m.error_code);
                for x0 in &m.results {
                    f(x0.error_code);
                }
            }
            ResponseKind::DescribeProducers(m) => {
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::DescribeQuorum(m) => {
                f(m.error_code);
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::DescribeTopicPartitions(m) => {
                for x0 in &m.topics {
                    f(x0.error_code);
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::DescribeTransactions(m) => {
                for x0 in &m.transaction_states {
                    f(x0.error_code);
                }
            }
            ResponseKind::DescribeUserScramCredentials(m) => {
                f(m.error_code);
                for x0 in &m.results {
                    f(x0.error_code);
                }
            }
            ResponseKind::ElectLeaders(m) => {
                f(m.error_code);
                for x0 in &m.replica_election_results {
                    for x1 in &x0.partition_result {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::EndQuorumEpoch(m) => {
                f(m.error_code);
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::EndTxn(m) => {
                f(m.error_code);
            }
            ResponseKind::Envelope(m) => {
                f(m.error_code);
            }
            ResponseKind::ExpireDelegationToken(m) => {
                f(m.error_code);
            }
            ResponseKind::Fetch(m) => {
                f(m.error_code);
                for x0 in &m.responses {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::FetchSnapshot(m) => {
                f(m.error_code);
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::FindCoordinator(m) => {
                f(m.error_code);
                for x0 in &m.coordinators {
                    f(x0.error_code);
                }
            }
            ResponseKind::GetTelemetrySubscriptions(m) => {
                f(m.error_code);
            }
            ResponseKind::Heartbeat(m) => {
                f(m.error_code);
            }
            ResponseKind::IncrementalAlterConfigs(m) => {
                for x0 in &m.responses {
                    f(x0.error_code);
                }
            }
            ResponseKind::InitProducerId(m) => {
                f(m.error_code);
            }
            ResponseKind::InitializeShareGroupState(m) => {
                for x0 in &m.results {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::JoinGroup(m) => {
                f(m.error_code);
            }
            ResponseKind::LeaderAndIsr(m) => {
                f(m.error_code);
                for x0 in &m.partition_errors {
                    f(x0.error_code);
                }
                for x0 in &m.topics {
                    for x1 in &x0.partition_errors {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::LeaveGroup(m) => {
                f(m.error_code);
                for x0 in &m.members {
                    f(x0.error_code);
                }
            }
            ResponseKind::ListClientMetricsResources(m) => {
                f(m.error_code);
            }
            ResponseKind::ListGroups(m) => {
                f(m.error_code);
            }
            ResponseKind::ListOffsets(m) => {
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::ListPartitionReassignments(m) => {
                f(m.error_code);
            }
            ResponseKind::ListTransactions(m) => {
                f(m.error_code);
            }
            ResponseKind::Metadata(m) => {
                for x0 in &m.topics {
                    f(x0.error_code);
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::OffsetCommit(m) => {
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::OffsetDelete(m) => {
                f(m.error_code);
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::OffsetFetch(m) => {
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
                f(m.error_code);
                for x0 in &m.groups {
                    for x1 in &x0.topics {
                        for x2 in &x1.partitions {
                            f(x2.error_code);
                        }
                    }
                    f(x0.error_code);
                }
            }
            ResponseKind::OffsetForLeaderEpoch(m) => {
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::Produce(m) => {
                for x0 in &m.responses {
                    for x1 in &x0.partition_responses {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::PushTelemetry(m) => {
                f(m.error_code);
            }
            ResponseKind::ReadShareGroupState(m) => {
                for x0 in &m.results {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::ReadShareGroupStateSummary(m) => {
                for x0 in &m.results {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::RemoveRaftVoter(m) => {
                f(m.error_code);
            }
            ResponseKind::RenewDelegationToken(m) => {
                f(m.error_code);
            }
            ResponseKind::SaslAuthenticate(m) => {
                f(m.error_code);
            }
            ResponseKind::SaslHandshake(m) => {
                f(m.error_code);
            }
            ResponseKind::ShareAcknowledge(m) => {
                f(m.error_code);
                for x0 in &m.responses {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::ShareFetch(m) => {
                f(m.error_code);
                for x0 in &m.responses {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::ShareGroupDescribe(m) => {
                for x0 in &m.groups {
                    f(x0.error_code);
                }
            }
            ResponseKind::ShareGroupHeartbeat(m) => {
                f(m.error_code);
            }
            ResponseKind::StopReplica(m) => {
                f(m.error_code);
                for x0 in &m.partition_errors {
                    f(x0.error_code);
                }
            }
            ResponseKind::SyncGroup(m) => {
                f(m.error_code);
            }
            ResponseKind::TxnOffsetCommit(m) => {
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::UnregisterBroker(m) => {
                f(m.error_code);
            }
            ResponseKind::UpdateFeatures(m) => {
                f(m.error_code);
                for x0 in &m.results {
                    f(x0.error_code);
                }
            }
            ResponseKind::UpdateMetadata(m) => {
                f(m.error_code);
            }
            ResponseKind::UpdateRaftVoter(m) => {
                f(m.error_code);
            }
            ResponseKind::Vote(m) => {
                f(m.error_code);
                for x0 in &m.topics {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::WriteShareGroupState(m) => {
                for x0 in &m.results {
                    for x1 in &x0.partitions {
                        f(x1.error_code);
                    }
                }
            }
            ResponseKind::WriteTxnMarkers(m) => {
                for x0 in &m.markers {
                    for x1 in &x0.topics {
                        for x2 in &x1.partitions {
                            f(x2.error_code);
                        }
                    }
                }
            }
        }
    }
}

pub use super::frame::{
    decode_request, decode_request_header, encode_request_frame, encode_response_frame,
    encode_response_segments,
};
