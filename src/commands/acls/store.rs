//! Where `kcli acls` keeps ACLs: ZooKeeper directly (Kafka's `AclCommand
//! --authorizer-properties zookeeper.connect=...`: the broker's own `AclAuthorizer` run here,
//! loaded once, without watches, so its writes are the znodes and change notifications a
//! broker makes), or a broker (DescribeAcls, CreateAcls and DeleteAcls v3 at the first
//! bootstrap broker that answers; any broker serves them, ZooKeeper holds the result). Every
//! call is bounded by the connection timeout.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};

use crate::network::{NetworkClient, NetworkClientConfig};
use crate::protocol::codec::StrBytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::create_acls_request::{AclCreation, CreateAclsRequest};
use crate::protocol::messages::delete_acls_request::{DeleteAclsFilter, DeleteAclsRequest};
use crate::protocol::messages::describe_acls_request::DescribeAclsRequest;
use crate::protocol::messages::{RequestKind, ResponseKind};
use crate::security::acl::{
    AccessControlEntry, AclBinding, AclBindingFilter, AclOperation, AclPermissionType,
    AuthorizerSettings, PatternType, ResourcePattern, ResourceType,
};
use crate::server::acl_authorizer::AclAuthorizer;
use crate::zk::ZkClient;

use super::error_name;

/// The version of the three ACL APIs asked (Kafka 3.9's highest).
const ACL_API_VERSION: i16 = 3;

/// One creation's outcome: `Err` with the code and message.
pub(super) type CreateOutcome = Result<(), (ErrorCode, String)>;

/// One of the two ways in.
pub(super) enum Store {
    ZooKeeper {
        client: Arc<dyn ZkClient>,
        authorizer: Arc<AclAuthorizer>,
        connect: String,
        timeout: Duration,
    },
    Broker {
        bootstrap: Vec<NetworkClient>,
        timeout: Duration,
    },
}

fn code(c: i16) -> ErrorCode {
    ErrorCode::from_code(c).unwrap_or(ErrorCode::UnknownServerError)
}

fn text(m: &Option<StrBytes>, error: ErrorCode) -> String {
    m.as_ref()
        .map(|m| m.to_string_lossy().into_owned())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| error.message().to_string())
}

fn binding_of(
    resource_type: i8,
    name: &StrBytes,
    pattern_type: i8,
    principal: &StrBytes,
    host: &StrBytes,
    operation: i8,
    permission_type: i8,
) -> AclBinding {
    AclBinding {
        pattern: ResourcePattern::new(
            ResourceType::from_code(resource_type),
            name.to_string_lossy().into_owned(),
            PatternType::from_code(pattern_type),
        ),
        entry: AccessControlEntry {
            principal: principal.to_string_lossy().into_owned(),
            host: host.to_string_lossy().into_owned(),
            operation: AclOperation::from_code(operation),
            permission_type: AclPermissionType::from_code(permission_type),
        },
    }
}

fn opt(s: &Option<String>) -> Option<StrBytes> {
    s.as_ref().map(|s| StrBytes::from(s.clone()))
}

impl Store {
    /// Connects to the ensemble and loads every ACL within `timeout`.
    pub(super) async fn zookeeper(connect: &str, timeout: Duration) -> anyhow::Result<Store> {
        let client = crate::commands::zookeeper::connect(connect, timeout).await?;
        let loaded = tokio::time::timeout(
            timeout,
            AclAuthorizer::load_offline(Arc::clone(&client), AuthorizerSettings::default()),
        )
        .await;
        let authorizer = match loaded {
            Err(_) => bail!(
                "reading the ACLs in ZooKeeper {connect} did not finish within {} ms",
                timeout.as_millis()
            ),
            Ok(result) => {
                result.with_context(|| format!("reading the ACLs in ZooKeeper {connect}"))?
            }
        };
        Ok(Store::ZooKeeper {
            client,
            authorizer,
            connect: connect.to_string(),
            timeout,
        })
    }

    /// Clients of the bootstrap brokers (they connect on the first request).
    pub(super) fn broker(bootstrap: &str, timeout: Duration) -> Store {
        let config = NetworkClientConfig {
            client_id: "kcli-acls".into(),
            request_timeout: timeout,
            connect_timeout: timeout,
            ..NetworkClientConfig::default()
        };
        Store::Broker {
            bootstrap: bootstrap
                .split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(|a| NetworkClient::new(a, config.clone()))
                .collect(),
            timeout,
        }
    }

    pub(super) async fn close(&self) {
        match self {
            Store::ZooKeeper {
                client, timeout, ..
            } => {
                let _ = tokio::time::timeout(*timeout, client.close()).await;
            }
            Store::Broker { bootstrap, .. } => {
                for c in bootstrap {
                    c.disconnect().await;
                }
            }
        }
    }

    async fn bounded<T>(&self, what: &str, call: impl Future<Output = T>) -> anyhow::Result<T> {
        let (timeout, connect) = match self {
            Store::ZooKeeper {
                timeout, connect, ..
            } => (*timeout, connect.as_str()),
            Store::Broker { timeout, .. } => (*timeout, "the brokers"),
        };
        tokio::time::timeout(timeout, call).await.map_err(|_| {
            anyhow!(
                "{what} on {connect} did not finish within {} ms",
                timeout.as_millis()
            )
        })
    }

    /// The first bootstrap broker's answer to `request`.
    async fn ask(&self, request: &RequestKind, api: &str) -> anyhow::Result<ResponseKind> {
        let Store::Broker { bootstrap, .. } = self else {
            bail!("not a broker store");
        };
        let mut last = anyhow!("--bootstrap-server names no broker");
        for client in bootstrap {
            match client.send(request, ACL_API_VERSION).await {
                Ok(response) => return Ok(response),
                Err(e) => {
                    last =
                        anyhow::Error::new(e).context(format!("{api} to {}", client.destination()))
                }
            }
        }
        Err(last)
    }

    /// Kafka's `describeAcls`: the bindings `filter` matches.
    pub(super) async fn describe(
        &self,
        filter: &AclBindingFilter,
    ) -> anyhow::Result<Vec<AclBinding>> {
        if let Store::ZooKeeper { authorizer, .. } = self {
            return Ok(authorizer.acls(filter));
        }
        let p = &filter.pattern_filter;
        let e = &filter.entry_filter;
        let request = RequestKind::DescribeAcls(DescribeAclsRequest {
            resource_type_filter: p.resource_type.code(),
            resource_name_filter: opt(&p.name),
            pattern_type_filter: p.pattern_type.code(),
            principal_filter: opt(&e.principal),
            host_filter: opt(&e.host),
            operation: e.operation.code(),
            permission_type: e.permission_type.code(),
            ..DescribeAclsRequest::default()
        });
        let ResponseKind::DescribeAcls(r) = self.ask(&request, "DescribeAcls").await? else {
            bail!("the broker answered DescribeAcls with another response");
        };
        if r.error_code != 0 {
            let error = code(r.error_code);
            bail!(
                "the broker refused DescribeAcls: {}: {}",
                error_name(error),
                text(&r.error_message, error)
            );
        }
        let mut out = Vec::new();
        for res in &r.resources {
            for a in &res.acls {
                out.push(binding_of(
                    res.resource_type,
                    &res.resource_name,
                    res.pattern_type,
                    &a.principal,
                    &a.host,
                    a.operation,
                    a.permission_type,
                ));
            }
        }
        Ok(out)
    }

    /// Kafka's `createAcls`: each binding's outcome, in order.
    pub(super) async fn create(
        &self,
        bindings: &[AclBinding],
    ) -> anyhow::Result<Vec<CreateOutcome>> {
        if let Store::ZooKeeper { authorizer, .. } = self {
            return self
                .bounded("writing the ACLs", authorizer.create_acls(bindings))
                .await;
        }
        let request = RequestKind::CreateAcls(CreateAclsRequest {
            creations: bindings
                .iter()
                .map(|b| AclCreation {
                    resource_type: b.pattern.resource_type.code(),
                    resource_name: StrBytes::from(b.pattern.name.clone()),
                    resource_pattern_type: b.pattern.pattern_type.code(),
                    principal: StrBytes::from(b.entry.principal.clone()),
                    host: StrBytes::from(b.entry.host.clone()),
                    operation: b.entry.operation.code(),
                    permission_type: b.entry.permission_type.code(),
                    ..AclCreation::default()
                })
                .collect(),
            ..CreateAclsRequest::default()
        });
        let ResponseKind::CreateAcls(r) = self.ask(&request, "CreateAcls").await? else {
            bail!("the broker answered CreateAcls with another response");
        };
        if r.results.len() != bindings.len() {
            bail!(
                "the broker answered {} results to {} creations",
                r.results.len(),
                bindings.len()
            );
        }
        Ok(r.results
            .iter()
            .map(|res| match res.error_code {
                0 => Ok(()),
                c => Err((code(c), text(&res.error_message, code(c)))),
            })
            .collect())
    }

    /// Kafka's `deleteAcls`: every binding deleted (an error on one is an error).
    pub(super) async fn delete(
        &self,
        filters: &[AclBindingFilter],
    ) -> anyhow::Result<Vec<AclBinding>> {
        if let Store::ZooKeeper { authorizer, .. } = self {
            let results = self
                .bounded("writing the ACLs", authorizer.delete_acls(filters))
                .await?;
            let mut out = Vec::new();
            for (binding, error) in results.into_iter().flatten() {
                if let Some(error) = error {
                    bail!(
                        "removing {}: {error}",
                        super::render::binding_line(&binding)
                    );
                }
                out.push(binding);
            }
            return Ok(out);
        }
        let request = RequestKind::DeleteAcls(DeleteAclsRequest {
            filters: filters
                .iter()
                .map(|f| DeleteAclsFilter {
                    resource_type_filter: f.pattern_filter.resource_type.code(),
                    resource_name_filter: opt(&f.pattern_filter.name),
                    pattern_type_filter: f.pattern_filter.pattern_type.code(),
                    principal_filter: opt(&f.entry_filter.principal),
                    host_filter: opt(&f.entry_filter.host),
                    operation: f.entry_filter.operation.code(),
                    permission_type: f.entry_filter.permission_type.code(),
                    ..DeleteAclsFilter::default()
                })
                .collect(),
            ..DeleteAclsRequest::default()
        });
        let ResponseKind::DeleteAcls(r) = self.ask(&request, "DeleteAcls").await? else {
            bail!("the broker answered DeleteAcls with another response");
        };
        let mut out = Vec::new();
        for fr in &r.filter_results {
            if fr.error_code != 0 {
                let error = code(fr.error_code);
                bail!(
                    "the broker refused DeleteAcls: {}: {}",
                    error_name(error),
                    text(&fr.error_message, error)
                );
            }
            for m in &fr.matching_acls {
                let binding = binding_of(
                    m.resource_type,
                    &m.resource_name,
                    m.pattern_type,
                    &m.principal,
                    &m.host,
                    m.operation,
                    m.permission_type,
                );
                if m.error_code != 0 {
                    let error = code(m.error_code);
                    bail!(
                        "removing {}: {}: {}",
                        super::render::binding_line(&binding),
                        error_name(error),
                        text(&m.error_message, error)
                    );
                }
                out.push(binding);
            }
        }
        Ok(out)
    }
}
