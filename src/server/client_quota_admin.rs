//! Kafka's `ZkAdminManager.describeClientQuotas` and `alterClientQuotas`: quota configs read
//! from and written to `/config/{users,clients,ips}` (`zk::quota_configs`) by any broker, with
//! Kafka's filter semantics and errors.
//!
//! Describe: filter components by entity type (`user`, `client-id`, `ip`), each matching an
//! exact name, the default, or any specified name; `strict` excludes entities with parts the
//! filter does not name. Only entities with at least one quota key set are reported, with only
//! their quota keys (a user's SCRAM credentials are never reported). An IP component mixed with
//! a user or client-id one is INVALID_REQUEST; another entity type is UNSUPPORTED_VERSION.
//!
//! Alter: each entry fetches its entity's whole config, applies its ops (a removal drops the
//! key; a set must name a quota key of the entity's type, INVALID_REQUEST otherwise, and a
//! LONG or INT key must be a whole number), validates the result as Kafka's `DynamicConfig`
//! does, and, unless `validate_only`, writes it whole with its change notification, so keys
//! the ops do not name (SCRAM credentials) stay as they were. Deviations from Kafka, both
//! safer: removing a key that is not a quota key of the entity is a no-op (Kafka would delete
//! a SCRAM credential this way), and an IP entity is checked by its real name (Kafka checks
//! the sanitized one, which refuses IPv6 addresses).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use crate::cluster::client_quota::{
    CLIENT_ID, ClientQuotaEntity, IP, QuotaEntity, QuotaEntityName, QuotaKey, QuotaValueType, USER,
    java_double_to_string,
};
use crate::protocol::errors::ErrorCode;
use crate::security::scram_credential::ScramMechanism;
use crate::zk::ZkClient;
use crate::zk::kafka_zk_client::KafkaZkError;
use crate::zk::quota_configs::{
    self, CLIENT_ENTITY_TYPE, EntityConfigPath, IP_ENTITY_TYPE, entity_config_path, quota_entity_of,
};
use crate::zk::user_configs::USER_ENTITY_TYPE;

use super::user_scram_admin::UserScramAdmin;

/// The quota admin of one broker: its store, and the lock it shares with SCRAM alterations.
#[derive(Debug)]
pub(crate) struct ClientQuotaAdmin {
    zk: Arc<dyn ZkClient>,
    user_scram_admin: Arc<UserScramAdmin>,
}

impl ClientQuotaAdmin {
    pub(crate) fn new(zk: Arc<dyn ZkClient>, user_scram_admin: Arc<UserScramAdmin>) -> Self {
        ClientQuotaAdmin {
            zk,
            user_scram_admin,
        }
    }

    /// [`describe_client_quotas`] over this broker's store.
    pub(crate) async fn describe(
        &self,
        components: &[FilterComponent],
        strict: bool,
    ) -> Result<DescribedQuotas, ClientQuotaError> {
        describe_client_quotas(self.zk.as_ref(), components, strict).await
    }

    /// [`alter_client_quotas`] over this broker's store, serialised with this broker's SCRAM
    /// alterations.
    pub(crate) async fn alter(
        &self,
        alterations: &[QuotaAlteration],
        validate_only: bool,
    ) -> Vec<Result<(), ClientQuotaError>> {
        let _guard = self.user_scram_admin.lock_user_configs().await;
        alter_client_quotas(self.zk.as_ref(), alterations, validate_only).await
    }
}

/// What a quota request failed with; each maps to Kafka's error code.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientQuotaError {
    #[error("{message}")]
    InvalidRequest { message: String },
    #[error("Custom entity type '{entity_type}' not supported")]
    UnsupportedEntityType { entity_type: String },
    /// Kafka's `DynamicConfig.validate` failures (not API exceptions: UNKNOWN_SERVER_ERROR).
    #[error("{message}")]
    InvalidConfig { message: String },
    #[error("quota config store: {0}")]
    Store(#[from] KafkaZkError),
}

impl ClientQuotaError {
    pub(crate) fn code(&self) -> ErrorCode {
        match self {
            ClientQuotaError::InvalidRequest { .. } => ErrorCode::InvalidRequest,
            ClientQuotaError::UnsupportedEntityType { .. } => ErrorCode::UnsupportedVersion,
            ClientQuotaError::InvalidConfig { .. } | ClientQuotaError::Store(_) => {
                ErrorCode::UnknownServerError
            }
        }
    }
}

fn invalid(message: impl Into<String>) -> ClientQuotaError {
    ClientQuotaError::InvalidRequest {
        message: message.into(),
    }
}

/// How a filter component matches (the wire's `match_type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ComponentMatch {
    /// 0: this name.
    Exact(String),
    /// 1: the default entity.
    Default,
    /// 2: any name given (not the default... nor absent).
    Specified,
}

/// One filter component (Kafka's `ClientQuotaFilterComponent`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FilterComponent {
    pub(crate) entity_type: String,
    pub(crate) matching: ComponentMatch,
}

impl FilterComponent {
    /// Kafka's `toOption(match)`: `None` for any specified name, `Some(None)` for the
    /// default, `Some(Some(name))` for an exact name.
    fn wanted(&self) -> Option<QuotaEntityName> {
        match &self.matching {
            ComponentMatch::Exact(n) => Some(QuotaEntityName::Named(n.clone())),
            ComponentMatch::Default => Some(QuotaEntityName::Default),
            ComponentMatch::Specified => None,
        }
    }

    fn is_exact(&self) -> bool {
        !matches!(self.matching, ComponentMatch::Specified)
    }
}

/// Every matching entity and its quota keys.
pub(crate) type DescribedQuotas = BTreeMap<QuotaEntity, BTreeMap<String, f64>>;

/// Kafka's `describeClientQuotas`.
pub(crate) async fn describe_client_quotas(
    zk: &dyn ZkClient,
    components: &[FilterComponent],
    strict: bool,
) -> Result<DescribedQuotas, ClientQuotaError> {
    let (mut user, mut client_id, mut ip) = (None, None, None);
    for component in components {
        let (slot, what) = match component.entity_type.as_str() {
            USER => (&mut user, "user"),
            CLIENT_ID => (&mut client_id, "client"),
            IP => (&mut ip, "ip"),
            "" => return Err(invalid("Unexpected empty filter component entity type")),
            other => {
                return Err(ClientQuotaError::UnsupportedEntityType {
                    entity_type: other.to_string(),
                });
            }
        };
        if slot.is_some() {
            return Err(invalid(format!(
                "Duplicate {what} filter component entity type"
            )));
        }
        *slot = Some(component);
    }
    if (user.is_some() || client_id.is_some()) && ip.is_some() {
        return Err(invalid(
            "Invalid entity filter component combination, IP filter component should not be \
             used with user or clientId filter component.",
        ));
    }
    let mut out = DescribedQuotas::new();
    if ip.is_none() {
        describe_user_client_quotas(zk, user, client_id, strict, &mut out).await?;
    }
    if user.is_none() && client_id.is_none() {
        describe_ip_quotas(zk, ip, strict, &mut out).await?;
    }
    Ok(out)
}

fn path(root_type: &'static str, full_name: String) -> EntityConfigPath {
    EntityConfigPath {
        root_type,
        full_name,
    }
}

/// Every entity of `root_type` (for `users`, the users alone or their client ids alone).
async fn all_of(
    zk: &dyn ZkClient,
    root_type: &'static str,
    user_client_ids: bool,
) -> Result<Vec<EntityConfigPath>, ClientQuotaError> {
    let names = quota_configs::all_entity_names(zk, root_type)
        .await
        .map_err(KafkaZkError::from)?;
    Ok(names
        .into_iter()
        .filter(|n| root_type != USER_ENTITY_TYPE || n.contains('/') == user_client_ids)
        .map(|n| path(root_type, n))
        .collect())
}

fn single(entity: QuotaEntity) -> Vec<EntityConfigPath> {
    entity_config_path(&entity).into_iter().collect()
}

/// Kafka's `handleDescribeClientQuotas`.
async fn describe_user_client_quotas(
    zk: &dyn ZkClient,
    user: Option<&FilterComponent>,
    client_id: Option<&FilterComponent>,
    strict: bool,
    out: &mut DescribedQuotas,
) -> Result<(), ClientQuotaError> {
    let wanted_user = user.and_then(FilterComponent::wanted);
    let wanted_client = client_id.and_then(FilterComponent::wanted);
    let exact_user = user.is_some_and(FilterComponent::is_exact);
    let exact_client = client_id.is_some_and(FilterComponent::is_exact);
    let exclude_user = strict && user.is_none();
    let exclude_client = strict && client_id.is_none();
    let client = |u, c| {
        QuotaEntity::Client(ClientQuotaEntity {
            user: u,
            client_id: c,
        })
    };

    let mut paths = Vec::new();
    if exact_user && exclude_client {
        paths.extend(single(client(wanted_user.clone(), None)));
    } else if !exclude_user && !exact_client {
        paths.extend(all_of(zk, USER_ENTITY_TYPE, false).await?);
    }
    if exclude_user && exact_client {
        paths.extend(single(client(None, wanted_client.clone())));
    } else if !exact_user && !exclude_client {
        paths.extend(all_of(zk, CLIENT_ENTITY_TYPE, false).await?);
    }
    if exact_user && exact_client {
        paths.extend(single(client(wanted_user, wanted_client)));
    } else if !exclude_user && !exclude_client {
        paths.extend(all_of(zk, USER_ENTITY_TYPE, true).await?);
    }

    let matches =
        |component: Option<&FilterComponent>, name: &Option<QuotaEntityName>| match component {
            Some(c) => match c.wanted() {
                Some(n) => name.as_ref() == Some(&n),
                None => name.is_some(),
            },
            None => name.is_none() || !strict,
        };
    for p in paths {
        let Some(entity) = quota_entity_of(p.root_type, &p.full_name) else {
            tracing::warn!(znode = p.znode(), "unreadable quota entity name is skipped");
            continue;
        };
        let QuotaEntity::Client(c) = &entity else {
            continue;
        };
        if !matches(user, &c.user) || !matches(client_id, &c.client_id) {
            continue;
        }
        let props = quota_configs::fetch_entity_config(zk, &p).await?;
        insert_quota_values(out, entity, &props);
    }
    Ok(())
}

/// Kafka's `handleDescribeIpQuotas`.
async fn describe_ip_quotas(
    zk: &dyn ZkClient,
    ip: Option<&FilterComponent>,
    strict: bool,
    out: &mut DescribedQuotas,
) -> Result<(), ClientQuotaError> {
    let paths = match ip {
        Some(c) if c.is_exact() => single(QuotaEntity::Ip(
            c.wanted().unwrap_or(QuotaEntityName::Default),
        )),
        Some(_) => all_of(zk, IP_ENTITY_TYPE, false).await?,
        None if !strict => all_of(zk, IP_ENTITY_TYPE, false).await?,
        None => Vec::new(),
    };
    for p in paths {
        let Some(entity) = quota_entity_of(p.root_type, &p.full_name) else {
            tracing::warn!(znode = p.znode(), "unreadable quota entity name is skipped");
            continue;
        };
        let props = quota_configs::fetch_entity_config(zk, &p).await?;
        insert_quota_values(out, entity, &props);
    }
    Ok(())
}

/// The entity's quota keys as doubles, if it has any.
fn insert_quota_values(
    out: &mut DescribedQuotas,
    entity: QuotaEntity,
    props: &BTreeMap<String, String>,
) {
    let mut values = BTreeMap::new();
    for key in entity.keys() {
        if let Some(text) = props.get(key.name()) {
            match text.trim().parse::<f64>() {
                Ok(v) => {
                    values.insert(key.name().to_string(), v);
                }
                Err(_) => tracing::warn!(%entity, key = key.name(), text, "unreadable quota value"),
            }
        }
    }
    if !values.is_empty() {
        out.insert(entity, values);
    }
}

/// One alteration's entity (the wire's `(entity_type, entity_name)` pairs) and ops (`None`
/// removes the key).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QuotaAlteration {
    pub(crate) entity: Vec<(String, Option<String>)>,
    pub(crate) ops: Vec<(String, Option<f64>)>,
}

/// Kafka's `parseAndSanitizeQuotaEntity` and the entity combinations `alterClientQuotas`
/// accepts.
async fn parse_entity(
    entries: &[(String, Option<String>)],
) -> Result<QuotaEntity, ClientQuotaError> {
    if entries.is_empty() {
        return Err(invalid("Invalid empty client quota entity"));
    }
    // The wire's list is a map in Kafka: a repeated type keeps its last name.
    let mut by_type: BTreeMap<&str, &Option<String>> = BTreeMap::new();
    for (entity_type, name) in entries {
        by_type.insert(entity_type, name);
    }
    let (mut user, mut client_id, mut ip) = (None, None, None);
    for (entity_type, name) in by_type {
        let slot = match entity_type {
            USER => &mut user,
            CLIENT_ID => &mut client_id,
            IP => &mut ip,
            other => {
                return Err(invalid(format!(
                    "Unhandled client quota entity type: {other}"
                )));
            }
        };
        if name.as_deref() == Some("") {
            return Err(invalid(format!("Empty {entity_type} not supported")));
        }
        *slot = Some(QuotaEntityName::from_wire(name.as_deref()));
    }
    match (user, client_id, ip) {
        (None, None, Some(ip)) => {
            if let QuotaEntityName::Named(name) = &ip
                && !is_valid_ip_entity(name).await
            {
                return Err(invalid(format!(
                    "{name} is not a valid IP or resolvable host."
                )));
            }
            Ok(QuotaEntity::Ip(ip))
        }
        (_, _, Some(_)) => Err(invalid(
            "Invalid quota entity combination, IP entity should not be used with user/client ID \
             entity.",
        )),
        (user, client_id, None) => Ok(QuotaEntity::Client(ClientQuotaEntity { user, client_id })),
    }
}

/// Kafka's `DynamicConfig.Ip.isValidIpEntity`: an IP address, or a host name that resolves.
async fn is_valid_ip_entity(name: &str) -> bool {
    if name.parse::<IpAddr>().is_ok() {
        return true;
    }
    tokio::net::lookup_host((name, 0))
        .await
        .is_ok_and(|mut addrs| addrs.next().is_some())
}

/// Kafka's `alterClientQuotas`: one outcome per alteration, in order.
pub(crate) async fn alter_client_quotas(
    zk: &dyn ZkClient,
    alterations: &[QuotaAlteration],
    validate_only: bool,
) -> Vec<Result<(), ClientQuotaError>> {
    let mut out = Vec::with_capacity(alterations.len());
    for alteration in alterations {
        let outcome = alter_entity_quotas(zk, alteration, validate_only).await;
        if let Err(err) = &outcome {
            tracing::info!(?alteration.entity, %err, "error while updating client quotas");
        }
        out.push(outcome);
    }
    out
}

async fn alter_entity_quotas(
    zk: &dyn ZkClient,
    alteration: &QuotaAlteration,
    validate_only: bool,
) -> Result<(), ClientQuotaError> {
    let entity = parse_entity(&alteration.entity).await?;
    let Some(path) = entity_config_path(&entity) else {
        return Err(invalid("Invalid client quota entity"));
    };
    let mut props = quota_configs::fetch_entity_config(zk, &path).await?;
    for (key, value) in &alteration.ops {
        let quota_key = QuotaKey::parse(key).filter(|k| entity.keys().contains(k));
        match (value, quota_key) {
            (None, Some(_)) => {
                props.remove(key);
            }
            (None, None) => {}
            (Some(_), None) => {
                return Err(invalid(format!("Invalid configuration key {key}")));
            }
            (Some(value), Some(k)) => {
                props.insert(key.clone(), stored_value(k, *value)?);
            }
        }
    }
    validate(&entity, &path, &props)?;
    if !validate_only {
        quota_configs::change_entity_config(zk, &path, &props).await?;
    }
    Ok(())
}

/// The text Kafka stores for `value` of `key`.
fn stored_value(key: QuotaKey, value: f64) -> Result<String, ClientQuotaError> {
    const EPSILON: f64 = 1e-6;
    let whole = match key.value_type() {
        QuotaValueType::Double => return Ok(java_double_to_string(value)),
        // Java's double-to-integer casts saturate, as Rust's `as` does.
        QuotaValueType::Long => (value + EPSILON) as i64,
        QuotaValueType::Int => i64::from((value + EPSILON) as i32),
    };
    #[expect(clippy::cast_precision_loss, reason = "Kafka compares as doubles")]
    let whole_f = whole as f64;
    if (whole_f - value).abs() > EPSILON {
        let type_name = match key.value_type() {
            QuotaValueType::Long => "LONG",
            _ => "INT",
        };
        return Err(invalid(format!(
            "Configuration {} must be a {type_name} value",
            key.name()
        )));
    }
    Ok(whole.to_string())
}

/// Kafka's `DynamicConfig.{User,Client,Ip}.validate` of the whole config to be written: no
/// unknown keys (a plain user may also hold SCRAM credentials), every quota value of its type,
/// an IP's rate at least 0.
fn validate(
    entity: &QuotaEntity,
    path: &EntityConfigPath,
    props: &BTreeMap<String, String>,
) -> Result<(), ClientQuotaError> {
    let plain_user = path.root_type == USER_ENTITY_TYPE
        && !path.full_name.contains('/')
        && path.full_name != quota_configs::DEFAULT_ENTITY;
    let unknown: Vec<&str> = props
        .keys()
        .filter(|k| {
            let quota = QuotaKey::parse(k).is_some_and(|q| entity.keys().contains(&q));
            let scram = plain_user && ScramMechanism::for_mechanism_name(k).is_some();
            !quota && !scram
        })
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        return Err(ClientQuotaError::InvalidConfig {
            message: format!(
                "requirement failed: Unknown Dynamic Configuration: Set({}).",
                unknown.join(", ")
            ),
        });
    }
    for key in entity.keys() {
        let Some(text) = props.get(key.name()) else {
            continue;
        };
        let bad = |why: &str| ClientQuotaError::InvalidConfig {
            message: format!("Invalid value {text} for configuration {key}: {why}"),
        };
        let text = text.trim();
        match key.value_type() {
            QuotaValueType::Long => {
                text.parse::<i64>()
                    .map_err(|_| bad("Not a number of type LONG"))?;
            }
            QuotaValueType::Double => {
                text.parse::<f64>()
                    .map_err(|_| bad("Not a number of type DOUBLE"))?;
            }
            QuotaValueType::Int => {
                let v = text
                    .parse::<i32>()
                    .map_err(|_| bad("Not a number of type INT"))?;
                if v < 0 {
                    return Err(bad("Value must be at least 0"));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "client_quota_admin_tests.rs"]
mod tests;
