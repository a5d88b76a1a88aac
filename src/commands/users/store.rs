//! Where `kcli users` keeps credentials: ZooKeeper directly (Kafka's `kafka-configs
//! --zookeeper`: the same checks and znode writes a ZooKeeper-mode controller makes, run here
//! through `UserScramAdmin`), or a broker (DescribeUserScramCredentials at the first bootstrap
//! broker that answers, AlterUserScramCredentials at the controller that Metadata names, asked
//! again after a NOT_CONTROLLER while the deadline allows). Every call is bounded by the
//! connection timeout.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};

use crate::cluster::client_quota::{self, ClientQuotaEntity, QuotaEntity, QuotaEntityName};
use crate::commands::assign::requests::{self, ClusterMetadata};
use crate::network::{NetworkClient, NetworkClientConfig};
use crate::protocol::codec::Bytes;
use crate::protocol::errors::ErrorCode;
use crate::protocol::messages::alter_user_scram_credentials_request::{
    AlterUserScramCredentialsRequest, ScramCredentialDeletion, ScramCredentialUpsertion,
};
use crate::protocol::messages::describe_client_quotas_request::{
    ComponentData, DescribeClientQuotasRequest,
};
use crate::protocol::messages::describe_client_quotas_response::DescribeClientQuotasResponse;
use crate::protocol::messages::describe_user_scram_credentials_request::{
    DescribeUserScramCredentialsRequest, UserName,
};
use crate::protocol::messages::{RequestKind, ResponseKind};
use crate::security::scram_credential::ScramMechanism;
use crate::server::client_quota_admin::{
    ComponentMatch, DescribedQuotas, FilterComponent, describe_client_quotas,
};
use crate::server::user_scram_admin::{
    AlterResult, Deletion, DescribeOutcome, DescribeResult, Upsertion, UserScramAdmin,
};
use crate::zk::ZkClient;

const SCRAM_API_VERSION: i16 = 0;
const QUOTAS_API_VERSION: i16 = 1;

/// One of the two ways in.
pub(super) enum Store {
    ZooKeeper {
        client: Arc<dyn ZkClient>,
        admin: UserScramAdmin,
        connect: String,
        timeout: Duration,
    },
    Broker {
        bootstrap: Vec<NetworkClient>,
        config: NetworkClientConfig,
        timeout: Duration,
    },
}

impl Store {
    /// Connects to the ensemble within `timeout`; a chroot that does not exist is an error.
    pub(super) async fn zookeeper(connect: &str, timeout: Duration) -> anyhow::Result<Store> {
        let client = crate::commands::zookeeper::connect(connect, timeout).await?;
        Ok(Store::ZooKeeper {
            admin: UserScramAdmin::new(Arc::clone(&client)),
            client,
            connect: connect.to_string(),
            timeout,
        })
    }

    /// Clients of the bootstrap brokers (they connect on the first request).
    pub(super) fn broker(bootstrap: &str, timeout: Duration) -> Store {
        let config = NetworkClientConfig {
            client_id: "kcli-users".into(),
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
            config,
            timeout,
        }
    }

    /// What the messages call this store.
    pub(super) fn name(&self) -> String {
        match self {
            Store::ZooKeeper { connect, .. } => format!("ZooKeeper {connect}"),
            Store::Broker { bootstrap, .. } => {
                let names: Vec<&str> = bootstrap.iter().map(NetworkClient::destination).collect();
                format!("the brokers {}", names.join(","))
            }
        }
    }

    pub(super) async fn close(&self) {
        if let Store::ZooKeeper {
            client, timeout, ..
        } = self
        {
            let _ = tokio::time::timeout(*timeout, client.close()).await;
        }
    }

    async fn bounded<T>(&self, what: &str, call: impl Future<Output = T>) -> anyhow::Result<T> {
        let (timeout, name) = match self {
            Store::ZooKeeper { timeout, .. } | Store::Broker { timeout, .. } => {
                (*timeout, self.name())
            }
        };
        tokio::time::timeout(timeout, call).await.map_err(|_| {
            anyhow!(
                "{what} on {name} did not finish within {} ms",
                timeout.as_millis()
            )
        })
    }

    /// Kafka's DescribeUserScramCredentials: every user with a credential, or `users`.
    pub(super) async fn describe(
        &self,
        users: Option<&[String]>,
    ) -> anyhow::Result<DescribeOutcome> {
        match self {
            Store::ZooKeeper { admin, .. } => {
                self.bounded("reading /config/users", admin.describe(users))
                    .await
            }
            Store::Broker { bootstrap, .. } => {
                let request = RequestKind::DescribeUserScramCredentials(
                    DescribeUserScramCredentialsRequest {
                        users: users.map(|users| {
                            users
                                .iter()
                                .map(|u| UserName {
                                    name: u.as_str().into(),
                                    ..UserName::default()
                                })
                                .collect()
                        }),
                        ..DescribeUserScramCredentialsRequest::default()
                    },
                );
                let mut last = anyhow!("--bootstrap-server names no broker");
                for client in bootstrap {
                    match client.send(&request, SCRAM_API_VERSION).await {
                        Ok(ResponseKind::DescribeUserScramCredentials(r)) => {
                            return read_describe(&r);
                        }
                        Ok(_) => bail!(
                            "{} answered DescribeUserScramCredentials with another response",
                            client.destination()
                        ),
                        Err(e) => {
                            last = anyhow::Error::new(e).context("DescribeUserScramCredentials")
                        }
                    }
                }
                Err(last)
            }
        }
    }

    /// The quotas of every user and of every user's client ids (Kafka's DescribeClientQuotas
    /// with a `user` component matching any name, not strict), by entity.
    pub(super) async fn user_quotas(&self) -> anyhow::Result<DescribedQuotas> {
        let any_user = FilterComponent {
            entity_type: client_quota::USER.to_string(),
            matching: ComponentMatch::Specified,
        };
        match self {
            Store::ZooKeeper { client, .. } => self
                .bounded(
                    "reading /config/users",
                    describe_client_quotas(client.as_ref(), &[any_user], false),
                )
                .await?
                .map_err(anyhow::Error::new),
            Store::Broker { bootstrap, .. } => {
                let request = RequestKind::DescribeClientQuotas(DescribeClientQuotasRequest {
                    components: vec![ComponentData {
                        entity_type: client_quota::USER.into(),
                        match_type: 2,
                        r#match: None,
                        ..ComponentData::default()
                    }],
                    strict: false,
                    ..DescribeClientQuotasRequest::default()
                });
                let mut last = anyhow!("--bootstrap-server names no broker");
                for client in bootstrap {
                    match client.send(&request, QUOTAS_API_VERSION).await {
                        Ok(ResponseKind::DescribeClientQuotas(r)) => {
                            return read_quotas(&r, client.destination());
                        }
                        Ok(_) => bail!(
                            "{} answered DescribeClientQuotas with another response",
                            client.destination()
                        ),
                        Err(e) => last = anyhow::Error::new(e).context("DescribeClientQuotas"),
                    }
                }
                Err(last)
            }
        }
    }

    /// Kafka's AlterUserScramCredentials.
    pub(super) async fn alter(
        &self,
        upsertions: &[Upsertion],
        deletions: &[Deletion],
    ) -> anyhow::Result<Vec<AlterResult>> {
        match self {
            Store::ZooKeeper { admin, .. } => {
                self.bounded("writing /config/users", admin.alter(upsertions, deletions))
                    .await
            }
            Store::Broker { timeout, .. } => {
                let deadline = tokio::time::Instant::now() + *timeout;
                loop {
                    let results = self.alter_at_controller(upsertions, deletions).await?;
                    let not_controller =
                        results.iter().any(|r| r.error == ErrorCode::NotController);
                    // The controller moved between Metadata and the request: ask again.
                    if not_controller
                        && tokio::time::Instant::now() + Duration::from_millis(200) < deadline
                    {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        continue;
                    }
                    return Ok(results);
                }
            }
        }
    }

    async fn alter_at_controller(
        &self,
        upsertions: &[Upsertion],
        deletions: &[Deletion],
    ) -> anyhow::Result<Vec<AlterResult>> {
        let Store::Broker { config, .. } = self else {
            bail!("not a broker store");
        };
        let metadata = self.metadata().await?;
        let controller = metadata
            .brokers
            .iter()
            .find(|b| b.metadata.id == metadata.controller_id)
            .ok_or_else(|| {
                anyhow!(
                    "the cluster has no controller now (Metadata names {})",
                    metadata.controller_id
                )
            })?;
        let client = NetworkClient::new(&controller.address, config.clone());
        let request = RequestKind::AlterUserScramCredentials(AlterUserScramCredentialsRequest {
            upsertions: upsertions
                .iter()
                .map(|u| ScramCredentialUpsertion {
                    name: u.name.as_str().into(),
                    mechanism: u.mechanism,
                    iterations: u.iterations,
                    salt: Bytes::copy_from_slice(&u.salt),
                    salted_password: Bytes::copy_from_slice(&u.salted_password),
                    ..ScramCredentialUpsertion::default()
                })
                .collect(),
            deletions: deletions
                .iter()
                .map(|d| ScramCredentialDeletion {
                    name: d.name.as_str().into(),
                    mechanism: d.mechanism,
                    ..ScramCredentialDeletion::default()
                })
                .collect(),
            ..AlterUserScramCredentialsRequest::default()
        });
        let response = client
            .send(&request, SCRAM_API_VERSION)
            .await
            .with_context(|| {
                format!(
                    "AlterUserScramCredentials to the controller (broker {})",
                    controller.metadata.id
                )
            })?;
        client.disconnect().await;
        let ResponseKind::AlterUserScramCredentials(r) = response else {
            bail!(
                "broker {} answered AlterUserScramCredentials with another response",
                controller.metadata.id
            );
        };
        Ok(r.results
            .iter()
            .map(|r| AlterResult {
                user: r.user.to_string_lossy().into_owned(),
                error: ErrorCode::from_code(r.error_code).unwrap_or(ErrorCode::UnknownServerError),
                message: r
                    .error_message
                    .as_ref()
                    .map(|m| m.to_string_lossy().into_owned()),
            })
            .collect())
    }

    async fn metadata(&self) -> anyhow::Result<ClusterMetadata> {
        let Store::Broker { bootstrap, .. } = self else {
            bail!("not a broker store");
        };
        let request = RequestKind::Metadata(requests::metadata_request(&[]));
        let mut last = anyhow!("--bootstrap-server names no broker");
        for client in bootstrap {
            match client.send(&request, requests::METADATA_VERSION).await {
                Ok(ResponseKind::Metadata(m)) => {
                    return requests::read_metadata(&m)
                        .map_err(|e| anyhow!("Metadata from {}: {e}", client.destination()));
                }
                Ok(_) => bail!(
                    "{} answered Metadata with another response",
                    client.destination()
                ),
                Err(e) => last = anyhow::Error::new(e).context("Metadata"),
            }
        }
        Err(last)
    }
}

/// A DescribeClientQuotas answer as entities and values; a top-level error fails it.
fn read_quotas(r: &DescribeClientQuotasResponse, broker: &str) -> anyhow::Result<DescribedQuotas> {
    let error = ErrorCode::from_code(r.error_code).unwrap_or(ErrorCode::UnknownServerError);
    if error != ErrorCode::None {
        let message = r.error_message.as_ref().map(ToString::to_string);
        bail!(
            "{broker} refused DescribeClientQuotas: {}: {}",
            super::render::error_name(error),
            message.as_deref().unwrap_or(error.message())
        );
    }
    let mut out = DescribedQuotas::new();
    for entry in r.entries.iter().flatten() {
        let mut entity = ClientQuotaEntity {
            user: None,
            client_id: None,
        };
        for e in &entry.entity {
            let name = QuotaEntityName::from_wire(
                e.entity_name.as_ref().map(|n| n.to_string()).as_deref(),
            );
            if e.entity_type == client_quota::USER {
                entity.user = Some(name);
            } else if e.entity_type == client_quota::CLIENT_ID {
                entity.client_id = Some(name);
            }
        }
        let values = entry
            .values
            .iter()
            .map(|v| (v.key.to_string(), v.value))
            .collect();
        out.insert(QuotaEntity::Client(entity), values);
    }
    Ok(out)
}

fn read_describe(
    r: &crate::protocol::messages::DescribeUserScramCredentialsResponse,
) -> anyhow::Result<DescribeOutcome> {
    let code = |c: i16| ErrorCode::from_code(c).unwrap_or(ErrorCode::UnknownServerError);
    let text = |m: &Option<crate::protocol::codec::StrBytes>| {
        m.as_ref().map(|m| m.to_string_lossy().into_owned())
    };
    if r.error_code != 0 {
        return Ok(DescribeOutcome::Failed {
            error: code(r.error_code),
            message: text(&r.error_message).unwrap_or_default(),
        });
    }
    let mut results = Vec::new();
    for u in &r.results {
        let mut credentials = Vec::new();
        for c in &u.credential_infos {
            let mechanism = ScramMechanism::from_mechanism_type(c.mechanism).ok_or_else(|| {
                anyhow!(
                    "the broker names SCRAM mechanism type {} for user {}",
                    c.mechanism,
                    u.user.to_string_lossy()
                )
            })?;
            credentials.push((mechanism, c.iterations));
        }
        results.push(DescribeResult {
            user: u.user.to_string_lossy().into_owned(),
            error: code(u.error_code),
            message: text(&u.error_message),
            credentials,
        });
    }
    Ok(DescribeOutcome::Results(results))
}
