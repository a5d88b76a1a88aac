//! Kafka's `AuthHelper`: what handlers ask the authorizer, for the request's principal and
//! client address. Without an authorizer (`authorizer.class.name` empty) everything is allowed
//! and the KIP-430 authorized-operations fields list every operation the resource type
//! supports, as Kafka's do.

use std::sync::Arc;

use crate::security::acl::{AclOperation, CLUSTER_NAME, ResourcePattern, ResourceType};

use crate::protocol::errors::ErrorCode;

use super::acl_authorizer::{AclAuthorizer, host_address};
use super::config_ops::{
    RESOURCE_BROKER, RESOURCE_BROKER_LOGGER, RESOURCE_CLIENT_METRICS, RESOURCE_TOPIC,
};
use super::request_context::RequestContext;

/// The broker's authorizer, if it has one, as handlers use it.
#[derive(Debug, Clone, Default)]
pub struct AuthHelper {
    authorizer: Option<Arc<AclAuthorizer>>,
}

impl AuthHelper {
    pub fn new(authorizer: Option<Arc<AclAuthorizer>>) -> Self {
        AuthHelper { authorizer }
    }

    pub fn authorizer(&self) -> Option<&Arc<AclAuthorizer>> {
        self.authorizer.as_ref()
    }

    /// Whether the request may perform `op` on the literal resource `name` of `resource_type`
    /// (`authorize`).
    pub fn authorize(
        &self,
        ctx: &RequestContext,
        op: AclOperation,
        resource_type: ResourceType,
        name: &str,
    ) -> bool {
        let Some(authorizer) = &self.authorizer else {
            return true;
        };
        authorizer.authorize(
            &ctx.principal.to_string(),
            &host_address(ctx.peer.ip()),
            op,
            &ResourcePattern::literal(resource_type, name),
        )
    }

    /// `authorize(request, op, CLUSTER, CLUSTER_NAME)`.
    pub fn authorize_cluster(&self, ctx: &RequestContext, op: AclOperation) -> bool {
        self.authorize(ctx, op, ResourceType::Cluster, CLUSTER_NAME)
    }

    /// `authorizeByResourceType`: may the request perform `op` on some resource of the type.
    pub fn authorize_by_resource_type(
        &self,
        ctx: &RequestContext,
        op: AclOperation,
        resource_type: ResourceType,
    ) -> bool {
        let Some(authorizer) = &self.authorizer else {
            return true;
        };
        authorizer.authorize_by_resource_type(
            &ctx.principal.to_string(),
            &host_address(ctx.peer.ip()),
            op,
            resource_type,
        )
    }

    /// The refusal of `op` (DescribeConfigs or AlterConfigs) on a config resource, as Kafka's
    /// config handlers decide it: a topic by its name (TOPIC_AUTHORIZATION_FAILED), brokers,
    /// broker loggers and client metrics on the cluster (CLUSTER_AUTHORIZATION_FAILED). `None`
    /// when allowed or of another type (the handler's own checks answer those).
    pub fn config_resource_denied(
        &self,
        ctx: &RequestContext,
        op: AclOperation,
        resource_type: i8,
        name: &str,
    ) -> Option<ErrorCode> {
        match resource_type {
            RESOURCE_TOPIC => (!self.authorize(ctx, op, ResourceType::Topic, name))
                .then_some(ErrorCode::TopicAuthorizationFailed),
            RESOURCE_BROKER | RESOURCE_BROKER_LOGGER | RESOURCE_CLIENT_METRICS => {
                (!self.authorize_cluster(ctx, op)).then_some(ErrorCode::ClusterAuthorizationFailed)
            }
            _ => None,
        }
    }

    /// `authorizedOperations`: the bit field (`Utils.to32BitField` of the codes) of the
    /// resource type's supported operations the request may perform on `name`.
    pub fn authorized_operations(
        &self,
        ctx: &RequestContext,
        resource_type: ResourceType,
        name: &str,
    ) -> i32 {
        let mut bits = 0u32;
        for op in resource_type.supported_operations() {
            if self.authorize(ctx, *op, resource_type, name) {
                bits |= 1 << op.code();
            }
        }
        bits as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::kafka_principal::KafkaPrincipal;
    use crate::protocol::messages::ApiKey;

    fn ctx() -> RequestContext {
        RequestContext {
            api_key: ApiKey::Metadata,
            api_version: 12,
            correlation_id: 1,
            client_id: String::new(),
            listener_name: Arc::from("PLAINTEXT"),
            peer: "127.0.0.1:5000".parse().unwrap(),
            principal: Arc::new(KafkaPrincipal::anonymous()),
            recorder: crate::network::RequestRecorder::default(),
            request_size: 0,
            dequeued_at: std::time::Instant::now(),
            handled_for: None,
            quotas: Arc::new(crate::server::quota::QuotaManagers::new(
                crate::metrics::sampled_stat::QuotaWindow::DEFAULT,
                crate::metrics::sampled_stat::QuotaWindow::DEFAULT,
            )),
            throttle: crate::network::ChannelThrottle::default(),
        }
    }

    #[test]
    fn without_an_authorizer_every_supported_operation() {
        let auth = AuthHelper::default();
        let ctx = ctx();
        assert_eq!(
            auth.authorized_operations(&ctx, ResourceType::Topic, "t"),
            3576
        );
        assert_eq!(
            auth.authorized_operations(&ctx, ResourceType::Cluster, CLUSTER_NAME),
            8096
        );
        assert_eq!(
            auth.authorized_operations(&ctx, ResourceType::Group, "g"),
            328
        );
        assert!(auth.authorize_cluster(&ctx, AclOperation::ClusterAction));
    }
}
