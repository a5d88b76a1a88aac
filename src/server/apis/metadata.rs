//! Metadata (Kafka's `handleTopicMetadataRequest`): brokers on the request's listener, the
//! cluster id and controller, and the asked-for topics with their partitions' leaders, replicas
//! and ISR. Topics are named or (v12+) given by id; unknown named topics are auto-created when
//! both the request and `auto.create.topics.enable` allow it. Creation is synchronous here (the
//! broker is its own controller), so the new topic is answered with its leaders at once.
//!
//! Authorization as Kafka's: an all-topics request lists only the topics the principal may
//! Describe; a named (or by-id) topic it may not Describe is TOPIC_AUTHORIZATION_FAILED, and so
//! is a missing topic it would auto-create without Create on the cluster or the topic. Those
//! answers follow the others, as Kafka lists them.

use crate::network::Response;
use crate::protocol::codec::{StrBytes, Uuid};
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::metadata_request::MetadataRequest;
use crate::protocol::messages::metadata_response::{
    MetadataResponse, MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};

use super::super::kafka_apis::KafkaApis;
use super::super::metadata_cache::TopicMetadata;
use super::super::request_context::RequestContext;
use super::super::topic_manager::{NewTopic, TopicError};
use super::super::topic_validation::is_internal;
use super::super::topic_validation::validate_topic_name;
use crate::security::acl::{AclOperation, CLUSTER_NAME, ResourceType};

/// Kafka's "not requested" value of the authorized-operations fields.
const AUTHORIZED_OPERATIONS_OMITTED: i32 = i32::MIN;

pub(crate) async fn handle(
    apis: &KafkaApis,
    ctx: &RequestContext,
    request: MetadataRequest,
) -> Response {
    // v0 asks for every topic with an empty list; later versions with null.
    let all_topics = match &request.topics {
        None => true,
        Some(t) => t.is_empty() && ctx.api_version == 0,
    };
    let allow_auto_create = (ctx.api_version < 4 || request.allow_auto_topic_creation)
        && apis.config.auto_create_topics_enable;
    let include_topic_ops = request.include_topic_authorized_operations;

    let may_describe = |name: &str| {
        apis.auth
            .authorize(ctx, AclOperation::Describe, ResourceType::Topic, name)
    };
    let mut topics = Vec::new();
    if all_topics {
        for t in apis.metadata_cache.all_topics() {
            if may_describe(&t.name) {
                topics.push(topic_response(apis, ctx, &t, include_topic_ops));
            }
        }
    } else {
        let mut may_create_any: Option<bool> = None;
        let (mut denied_create, mut denied_describe) = (Vec::new(), Vec::new());
        for requested in request.topics.iter().flatten() {
            let by_name = requested
                .name
                .as_ref()
                .map(|n| n.to_string_lossy().into_owned());
            let response = match by_name {
                Some(name) if !may_describe(&name) => {
                    denied_describe.push(topic_error(
                        Some(&name),
                        ErrorCode::TopicAuthorizationFailed,
                    ));
                    continue;
                }
                Some(name) => {
                    if allow_auto_create
                        && apis.metadata_cache.topic(&name).is_none()
                        && !*may_create_any.get_or_insert_with(|| {
                            apis.auth.authorize_cluster(ctx, AclOperation::Create)
                        })
                        && !apis.auth.authorize(
                            ctx,
                            AclOperation::Create,
                            ResourceType::Topic,
                            &name,
                        )
                    {
                        denied_create.push(MetadataResponseTopic {
                            is_internal: is_internal(&name),
                            ..topic_error(Some(&name), ErrorCode::TopicAuthorizationFailed)
                        });
                        continue;
                    }
                    named_topic(apis, ctx, &name, allow_auto_create, include_topic_ops).await
                }
                None => {
                    let id = requested.topic_id;
                    match apis.metadata_cache.topic_name(id) {
                        Some(name) if !may_describe(&name) => {
                            denied_describe.push(MetadataResponseTopic {
                                topic_id: id,
                                ..topic_error(None, ErrorCode::TopicAuthorizationFailed)
                            });
                            continue;
                        }
                        _ => topic_by_id(apis, ctx, id, include_topic_ops),
                    }
                }
            };
            topics.push(response);
        }
        topics.extend(denied_create);
        topics.extend(denied_describe);
    }

    let brokers = apis
        .metadata_cache
        .alive_brokers()
        .into_iter()
        .filter_map(|b| {
            let e = b.endpoint(&ctx.listener_name)?;
            Some(MetadataResponseBroker {
                node_id: b.id,
                host: StrBytes::from(e.host.as_str()),
                port: e.port,
                rack: b.rack.as_deref().map(StrBytes::from),
                ..MetadataResponseBroker::default()
            })
        })
        .collect();
    let response = MetadataResponse {
        brokers,
        cluster_id: Some(StrBytes::from(apis.metadata_cache.cluster_id())),
        controller_id: apis.metadata_cache.controller_id().unwrap_or(-1),
        topics,
        // Kafka computes it for v8-10 only; 0 without Describe on the cluster.
        cluster_authorized_operations: if request.include_cluster_authorized_operations
            && ctx.api_version <= 10
        {
            if apis.auth.authorize_cluster(ctx, AclOperation::Describe) {
                apis.auth
                    .authorized_operations(ctx, ResourceType::Cluster, CLUSTER_NAME)
            } else {
                0
            }
        } else {
            AUTHORIZED_OPERATIONS_OMITTED
        },
        ..MetadataResponse::default()
    };
    ctx.respond(ResponseKind::Metadata(response))
}

/// How long an auto-creating Metadata waits for the new topic's leaders before answering
/// LEADER_NOT_AVAILABLE.
const AUTO_CREATE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

async fn named_topic(
    apis: &KafkaApis,
    ctx: &RequestContext,
    name: &str,
    allow_auto_create: bool,
    include_ops: bool,
) -> MetadataResponseTopic {
    if let Some(t) = apis.metadata_cache.topic(name) {
        return topic_response(apis, ctx, &t, include_ops);
    }
    if let Err(_reason) = validate_topic_name(name) {
        return topic_error(Some(name), ErrorCode::InvalidTopicException);
    }
    if !allow_auto_create {
        return topic_error(Some(name), ErrorCode::UnknownTopicOrPartition);
    }
    let new_topic = NewTopic {
        name: name.to_string(),
        num_partitions: -1,
        replication_factor: -1,
        ..NewTopic::default()
    };
    // Kafka counts an auto-created topic against the client's controller mutation quota.
    let mut quota = ctx.permissive_mutation_quota();
    match apis
        .topic_manager
        .create_topic(&new_topic, false, &mut quota)
        .await
    {
        // Another request created it meanwhile: answer with it once its leaders are known.
        // Kafka answers LEADER_NOT_AVAILABLE at once; the controller usually elects within
        // milliseconds, so a short wait spares the client a retry round.
        result @ (Ok(_) | Err(TopicError::TopicAlreadyExists(_))) => match apis
            .topic_manager
            .wait_for_leaders(
                name,
                result.map_or(1, |c| usize::try_from(c.num_partitions).unwrap_or(1)),
                AUTO_CREATE_WAIT,
            )
            .await
            .then(|| apis.metadata_cache.topic(name))
            .flatten()
        {
            Some(t) => topic_response(apis, ctx, &t, include_ops),
            None => topic_error(Some(name), ErrorCode::LeaderNotAvailable),
        },
        Err(err) => {
            tracing::warn!(topic = name, %err, "auto-creation failed");
            let code = match err.error_code() {
                // Kafka reports an impossible replication factor on auto-creation this way.
                ErrorCode::InvalidReplicationFactor => ErrorCode::InvalidReplicationFactor,
                ErrorCode::InvalidTopicException => ErrorCode::InvalidTopicException,
                _ => ErrorCode::UnknownTopicOrPartition,
            };
            topic_error(Some(name), code)
        }
    }
}

fn topic_by_id(
    apis: &KafkaApis,
    ctx: &RequestContext,
    id: Uuid,
    include_ops: bool,
) -> MetadataResponseTopic {
    match apis
        .metadata_cache
        .topic_name(id)
        .and_then(|n| apis.metadata_cache.topic(&n))
    {
        Some(t) => topic_response(apis, ctx, &t, include_ops),
        None => MetadataResponseTopic {
            topic_id: id,
            ..topic_error(None, ErrorCode::UnknownTopicId)
        },
    }
}

fn topic_error(name: Option<&str>, code: ErrorCode) -> MetadataResponseTopic {
    MetadataResponseTopic {
        error_code: code.code(),
        name: name.map(StrBytes::from),
        topic_authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
        ..MetadataResponseTopic::default()
    }
}

fn topic_response(
    apis: &KafkaApis,
    ctx: &RequestContext,
    t: &TopicMetadata,
    include_ops: bool,
) -> MetadataResponseTopic {
    let alive = apis.metadata_cache.alive_broker_ids();
    // The live brokers this listener reaches: a leader without an endpoint here is as good as
    // none to this client.
    let reachable: Vec<i32> = apis
        .metadata_cache
        .alive_brokers()
        .into_iter()
        .filter(|b| b.endpoint(&ctx.listener_name).is_some())
        .map(|b| b.id)
        .collect();
    let partitions = t
        .partitions
        .iter()
        .map(|(index, p)| {
            let offline: Vec<i32> = p
                .replicas
                .iter()
                .copied()
                .filter(|r| !alive.contains(r) || p.offline_replicas.contains(r))
                .collect();
            // Kafka's `getPartitionMetadata`: a leader that is not alive, or has no endpoint
            // on this listener, is answered as none (-1), so clients wait for the next one
            // instead of connecting to a dead broker.
            let (error, leader_id) = if p.leader == -1 || !alive.contains(&p.leader) {
                (ErrorCode::LeaderNotAvailable, -1)
            } else if !reachable.contains(&p.leader) {
                let error = if ctx.api_version >= 6 {
                    ErrorCode::ListenerNotFound
                } else {
                    ErrorCode::LeaderNotAvailable
                };
                (error, -1)
            } else {
                (ErrorCode::None, p.leader)
            };
            MetadataResponsePartition {
                error_code: error.code(),
                partition_index: *index,
                leader_id,
                leader_epoch: p.leader_epoch,
                replica_nodes: p.replicas.clone(),
                isr_nodes: p.isr.clone(),
                offline_replicas: offline,
                ..MetadataResponsePartition::default()
            }
        })
        .collect();
    MetadataResponseTopic {
        error_code: ErrorCode::None.code(),
        name: Some(StrBytes::from(t.name.as_str())),
        topic_id: t.topic_id,
        is_internal: t.is_internal,
        partitions,
        topic_authorized_operations: if include_ops {
            apis.auth
                .authorized_operations(ctx, ResourceType::Topic, &t.name)
        } else {
            AUTHORIZED_OPERATIONS_OMITTED
        },
        ..MetadataResponseTopic::default()
    }
}
