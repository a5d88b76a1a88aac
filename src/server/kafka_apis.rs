//! Kafka's `KafkaApis`: the request handler the socket server calls. It decodes the header,
//! answers ApiVersions probes of any version (KIP-511), refuses what it does not advertise as
//! Kafka does (by closing the connection), decodes the body and hands it to the API's handler.
//!
//! A frame that does not decode closes its connection only; every other problem is an error
//! code in the response.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::watch;

use crate::config::BrokerConfig;
use crate::network::{Request, RequestHandler, Response};
use crate::protocol::codec::Reader;
use crate::protocol::messages::{self, ApiKey, RequestKind};
use crate::replication::ReplicaManager;

use crate::controller::ControllerHandle;

use super::add_partitions_to_txn_manager::AddPartitionsToTxnManager;
use super::api_versions;
use super::apis;
use super::auth_helper::AuthHelper;
use super::broker_epoch_manager::BrokerEpochManager;
use super::client_quota_admin::ClientQuotaAdmin;
use super::dynamic_broker_config::DynamicBrokerConfig;
use super::fetch_session::FetchManager;
use super::metadata_cache::MetadataCache;
use super::quota::QuotaManagers;
use super::request_context::RequestContext;
use super::rpc_producer_id_manager::RpcProducerIdManager;
use super::topic_manager::TopicManager;
use super::user_scram_admin::UserScramAdmin;
use super::zk_producer_id_manager::ZkProducerIdManager;
use crate::coordinator::group::GroupCoordinator;
use crate::coordinator::transaction::TransactionCoordinator;

/// The broker's request handler and the state its handlers share.
#[derive(Debug)]
pub struct KafkaApis {
    pub config: Arc<BrokerConfig>,
    pub metadata_cache: Arc<MetadataCache>,
    pub replica_manager: Arc<ReplicaManager>,
    pub topic_manager: Arc<TopicManager>,
    pub dynamic_config: Arc<DynamicBrokerConfig>,
    /// The fetch sessions (KIP-227): each Fetch's context.
    pub(crate) fetch_manager: Arc<FetchManager>,
    /// SCRAM credentials in `/config/users` (Alter/DescribeUserScramCredentials).
    pub user_scram_admin: Arc<UserScramAdmin>,
    /// This broker's producer ids, in blocks from the controller.
    pub producer_id_manager: Arc<RpcProducerIdManager>,
    /// The controller's half: the blocks it hands out while this broker is the controller.
    pub zk_producer_id_manager: Arc<ZkProducerIdManager>,
    pub group_coordinator: Arc<GroupCoordinator>,
    /// The transaction coordinator of the `__transaction_state` partitions this broker leads.
    pub txn_coordinator: Arc<TransactionCoordinator>,
    /// Leaders' verification of transactions with their coordinators (KIP-890); none below
    /// `inter.broker.protocol.version` 3.6.
    pub add_partitions_to_txn_manager: Option<Arc<AddPartitionsToTxnManager>>,
    /// This broker's epoch and the newest controller epoch it obeyed.
    pub epochs: Arc<BrokerEpochManager>,
    /// This broker's controller: whether it is the active one, and its queue.
    pub controller: ControllerHandle,
    /// The authorizer (`authorizer.class.name`), as handlers ask it.
    pub auth: AuthHelper,
    /// Describe/AlterClientQuotas over `/config/{users,clients,ips}`.
    pub(crate) client_quota_admin: Arc<ClientQuotaAdmin>,
    /// The client quotas (produce, fetch and request).
    pub(crate) quotas: Arc<QuotaManagers>,
    /// False until startup has loaded the topics; requests wait for it, as Kafka opens its
    /// data plane only at the end of startup.
    pub ready: watch::Receiver<bool>,
}

impl KafkaApis {
    async fn dispatch(&self, ctx: &RequestContext, body: RequestKind) -> Response {
        match body {
            RequestKind::ApiVersions(r) => apis::api_versions::handle(self, ctx, r),
            RequestKind::Metadata(r) => apis::metadata::handle(self, ctx, r).await,
            RequestKind::Produce(r) => apis::produce::handle(self, ctx, r).await,
            RequestKind::Fetch(r) => apis::fetch::handle(self, ctx, r).await,
            RequestKind::ListOffsets(r) => apis::list_offsets::handle(self, ctx, r),
            RequestKind::FindCoordinator(r) => apis::find_coordinator::handle(self, ctx, r).await,
            RequestKind::InitProducerId(r) => apis::init_producer_id::handle(self, ctx, r).await,
            RequestKind::AddPartitionsToTxn(r) => {
                apis::add_partitions_to_txn::handle(self, ctx, r).await
            }
            RequestKind::AddOffsetsToTxn(r) => apis::add_offsets_to_txn::handle(self, ctx, r).await,
            RequestKind::EndTxn(r) => apis::end_txn::handle(self, ctx, r).await,
            RequestKind::DescribeTransactions(r) => {
                apis::describe_transactions::handle(self, ctx, r)
            }
            RequestKind::ListTransactions(r) => apis::list_transactions::handle(self, ctx, r),
            RequestKind::DescribeProducers(r) => apis::describe_producers::handle(self, ctx, r),
            RequestKind::TxnOffsetCommit(r) => apis::txn_offset_commit::handle(self, ctx, r).await,
            RequestKind::WriteTxnMarkers(r) => apis::write_txn_markers::handle(self, ctx, r).await,
            RequestKind::AllocateProducerIds(r) => {
                apis::allocate_producer_ids::handle(self, ctx, r).await
            }
            RequestKind::AlterPartition(r) => apis::alter_partition::handle(self, ctx, r).await,
            RequestKind::ControlledShutdown(r) => {
                apis::controlled_shutdown::handle(self, ctx, r).await
            }
            RequestKind::ElectLeaders(r) => apis::elect_leaders::handle(self, ctx, r).await,
            RequestKind::SaslHandshake(_) => apis::sasl_handshake::handle(ctx),
            RequestKind::SaslAuthenticate(_) => apis::sasl_authenticate::handle(ctx),
            RequestKind::AlterPartitionReassignments(r) => {
                apis::alter_partition_reassignments::handle(self, ctx, r).await
            }
            RequestKind::ListPartitionReassignments(r) => {
                apis::list_partition_reassignments::handle(self, ctx, r).await
            }
            RequestKind::CreateTopics(r) => apis::create_topics::handle(self, ctx, r).await,
            RequestKind::DeleteTopics(r) => apis::delete_topics::handle(self, ctx, r).await,
            RequestKind::CreatePartitions(r) => apis::create_partitions::handle(self, ctx, r).await,
            RequestKind::DescribeConfigs(r) => apis::describe_configs::handle(self, ctx, r),
            RequestKind::AlterConfigs(r) => apis::alter_configs::handle(self, ctx, r).await,
            RequestKind::IncrementalAlterConfigs(r) => {
                apis::incremental_alter_configs::handle(self, ctx, r).await
            }
            RequestKind::DescribeCluster(r) => apis::describe_cluster::handle(self, ctx, r),
            RequestKind::DeleteRecords(r) => apis::delete_records::handle(self, ctx, r),
            RequestKind::DescribeLogDirs(r) => apis::describe_log_dirs::handle(self, ctx, r),
            RequestKind::DescribeClientQuotas(r) => {
                apis::describe_client_quotas::handle(self, ctx, r).await
            }
            RequestKind::AlterClientQuotas(r) => {
                apis::alter_client_quotas::handle(self, ctx, r).await
            }
            RequestKind::AlterUserScramCredentials(r) => {
                apis::alter_user_scram_credentials::handle(self, ctx, r).await
            }
            RequestKind::DescribeUserScramCredentials(r) => {
                apis::describe_user_scram_credentials::handle(self, ctx, r).await
            }
            RequestKind::AlterReplicaLogDirs(r) => {
                apis::alter_replica_log_dirs::handle(self, ctx, r)
            }
            RequestKind::OffsetForLeaderEpoch(r) => {
                apis::offset_for_leader_epoch::handle(self, ctx, r)
            }
            RequestKind::JoinGroup(r) => apis::join_group::handle(self, ctx, r),
            RequestKind::SyncGroup(r) => apis::sync_group::handle(self, ctx, r),
            RequestKind::Heartbeat(r) => apis::heartbeat::handle(self, ctx, r),
            RequestKind::LeaveGroup(r) => apis::leave_group::handle(self, ctx, r),
            RequestKind::OffsetCommit(r) => apis::offset_commit::handle(self, ctx, r).await,
            RequestKind::OffsetFetch(r) => apis::offset_fetch::handle(self, ctx, r).await,
            RequestKind::ListGroups(r) => apis::list_groups::handle(self, ctx, r),
            RequestKind::DescribeGroups(r) => apis::describe_groups::handle(self, ctx, r),
            RequestKind::DeleteGroups(r) => apis::delete_groups::handle(self, ctx, r),
            RequestKind::OffsetDelete(r) => apis::offset_delete::handle(self, ctx, r),
            RequestKind::LeaderAndIsr(r) => apis::leader_and_isr::handle(self, ctx, r).await,
            RequestKind::UpdateMetadata(r) => apis::update_metadata::handle(self, ctx, r),
            RequestKind::StopReplica(r) => apis::stop_replica::handle(self, ctx, r),
            RequestKind::CreateAcls(r) => apis::create_acls::handle(self, ctx, r).await,
            RequestKind::DescribeAcls(r) => apis::describe_acls::handle(self, ctx, r),
            RequestKind::DeleteAcls(r) => apis::delete_acls::handle(self, ctx, r).await,
            other => {
                // Unreachable while `api_versions` and this match agree; a test checks that.
                tracing::error!(api = ?other.api_key(), "advertised API without a handler");
                Response::CloseConnection
            }
        }
    }
}

impl RequestHandler for KafkaApis {
    async fn handle(&self, request: Request) -> Response {
        let dequeued_at = Instant::now();
        let mut ready = self.ready.clone();
        if ready.wait_for(|r| *r).await.is_err() {
            return Response::CloseConnection;
        }
        let mut r = Reader::new(request.frame.clone());
        let header = match messages::decode_request_header(&mut r) {
            Ok(h) => h,
            Err(err) => {
                tracing::debug!(peer = %request.peer, %err, "closing connection: bad request header");
                return Response::CloseConnection;
            }
        };
        let Some(api_key) = ApiKey::from_i16(header.request_api_key) else {
            return Response::CloseConnection;
        };
        let ctx = RequestContext {
            api_key,
            api_version: header.request_api_version,
            correlation_id: header.correlation_id,
            client_id: header
                .client_id
                .as_ref()
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default(),
            listener_name: Arc::clone(&request.listener_name),
            peer: request.peer,
            principal: Arc::clone(&request.principal),
            recorder: request.recorder.clone(),
            request_size: request.frame.len(),
            dequeued_at,
            handled_for: None,
            quotas: Arc::clone(&self.quotas),
            throttle: request.throttle.clone(),
        };
        let Some(range) = api_versions::advertised(api_key) else {
            tracing::debug!(peer = %request.peer, api = ?api_key, "closing connection: API not supported");
            return Response::CloseConnection;
        };
        if !range.contains(ctx.api_version) {
            if api_key == ApiKey::ApiVersions {
                return apis::api_versions::unsupported_version(&ctx);
            }
            tracing::debug!(peer = %request.peer, api = ?api_key, version = ctx.api_version, "closing connection: unsupported version");
            return Response::CloseConnection;
        }
        let body = match RequestKind::decode(api_key, &mut r, ctx.api_version) {
            Ok(body) => body,
            Err(err) => {
                tracing::debug!(peer = %request.peer, %err, "closing connection: undecodable request");
                return Response::CloseConnection;
            }
        };
        tracing::trace!(peer = %request.peer, api = ?api_key, version = ctx.api_version,
            correlation_id = ctx.correlation_id, client_id = %ctx.client_id, "request");
        self.dispatch(&ctx, body).await
    }
}
