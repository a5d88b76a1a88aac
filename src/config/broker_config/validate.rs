//! The cross-key checks of Kafka's `KafkaConfig.validateValues` over the parsed [`Settings`]:
//! what no single key's validator can see (id ranges, roll and retention units, cleaner memory,
//! log dirs, listeners and advertised listeners).

use super::Settings;
use crate::config::ConfigError;
use crate::config::listeners::EndPoint;
use crate::config::sasl_config::validate_sasl;

/// The class name that enables authorization (`authorizer.class.name`).
pub(crate) const ACL_AUTHORIZER_CLASS: &str = "kafka.security.authorizer.AclAuthorizer";

impl Settings {
    /// The checks of Kafka's `KafkaConfig.validateValues` that apply to a ZooKeeper-mode broker,
    /// except that `zookeeper.connect` may be unset (kcli then keeps metadata in its embedded
    /// store). The error names the key at fault.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let fail = |key: &str, value: String, reason: &str| {
            Err(ConfigError::InvalidValue {
                key: key.to_string(),
                value,
                reason: reason.to_string(),
            })
        };
        if self.broker_id_generation_enable {
            if self.broker_id < -1 || self.broker_id > self.reserved_broker_max_id {
                return fail(
                    "broker.id",
                    self.broker_id.to_string(),
                    "broker.id must be greater than or equal to -1 and not greater than \
                     reserved.broker.max.id",
                );
            }
        } else if self.broker_id < 0 {
            return fail(
                "broker.id",
                self.broker_id.to_string(),
                "broker.id must be greater than or equal to 0",
            );
        }
        if self.log_roll_time_millis() < 1 {
            return fail(
                "log.roll.ms",
                self.log_roll_time_millis().to_string(),
                "log.roll.ms must be greater than or equal to 1",
            );
        }
        if self.log_roll_time_jitter_millis() < 0 {
            return fail(
                "log.roll.jitter.ms",
                self.log_roll_time_jitter_millis().to_string(),
                "log.roll.jitter.ms must be greater than or equal to 0",
            );
        }
        if self.log_retention_time_millis() == 0 {
            let key = match (self.log_retention_ms, self.log_retention_minutes) {
                (Some(_), _) => "log.retention.ms",
                (None, Some(_)) => "log.retention.minutes",
                (None, None) => "log.retention.hours",
            };
            return fail(
                key,
                "0".into(),
                "log.retention.ms must be unlimited (-1) or, greater than or equal to 1",
            );
        }
        // Kafka divides by the thread count (and fails on 0 threads); kcli runs no cleaner
        // thread then.
        if self.log_cleaner_threads > 0
            && self.log_cleaner_dedupe_buffer_size / i64::from(self.log_cleaner_threads)
                <= 1024 * 1024
        {
            return fail(
                "log.cleaner.dedupe.buffer.size",
                self.log_cleaner_dedupe_buffer_size.to_string(),
                "log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.",
            );
        }
        if self.log_dirs().is_empty() {
            return fail(
                "log.dirs",
                self.log_dirs.clone().unwrap_or_default(),
                "At least one log directory must be defined via log.dirs or log.dir.",
            );
        }
        if self.listeners.is_empty() {
            return fail(
                "listeners",
                String::new(),
                "at least one listener is needed",
            );
        }
        let advertised = self.effective_advertised_listeners();
        let advertised_text = || {
            let items: Vec<String> = advertised.iter().map(ToString::to_string).collect();
            items.join(",")
        };
        if advertised
            .iter()
            .any(|e| e.host.as_deref() == Some("0.0.0.0"))
        {
            return fail(
                "advertised.listeners",
                advertised_text(),
                "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a \
                 routable IP address.",
            );
        }
        if advertised.iter().any(|a| {
            !self
                .listeners
                .iter()
                .any(|l| l.listener_name == a.listener_name)
        }) {
            return fail(
                "advertised.listeners",
                advertised_text(),
                &format!(
                    "advertised.listeners listener names must be equal to or a subset of the \
                     ones defined in listeners. Found {}. The valid options based on the current \
                     configuration are {}",
                    names(advertised),
                    names(&self.listeners),
                ),
            );
        }
        if self.queued_max_request_bytes > 0
            && self.queued_max_request_bytes < i64::from(self.socket_request_max_bytes)
        {
            return fail(
                "queued.max.request.bytes",
                self.queued_max_request_bytes.to_string(),
                "queued.max.request.bytes must be larger or equal to socket.request.max.bytes",
            );
        }
        if self.max_connections_per_ip == 0 && self.max_connections_per_ip_overrides.is_empty() {
            return fail(
                "max.connections.per.ip",
                "0".to_string(),
                "max.connections.per.ip can be set to zero only if \
                 max.connections.per.ip.overrides property is set.",
            );
        }
        self.validate_authorizer()?;
        self.validate_replica_selector()?;
        self.validate_inter_broker_listener()?;
        validate_sasl(
            &self.sasl,
            &self.listeners,
            &self.inter_broker_listener_name(),
        )
    }

    /// `authorizer.class.name`: only Kafka's ZooKeeper-mode `AclAuthorizer` exists here (empty:
    /// no authorization); `super.users`: each `;`-separated element a `type:name` principal.
    fn validate_authorizer(&self) -> Result<(), ConfigError> {
        let class = self.authorizer_class_name.trim();
        if !class.is_empty() && class != ACL_AUTHORIZER_CLASS {
            return Err(ConfigError::InvalidValue {
                key: "authorizer.class.name".to_string(),
                value: class.to_string(),
                reason: format!("kcli's only authorizer is {ACL_AUTHORIZER_CLASS}"),
            });
        }
        let users = self.super_users.as_deref().unwrap_or("");
        if let Some(bad) = users
            .split(';')
            .map(str::trim)
            .find(|p| !p.is_empty() && p.split_once(':').is_none_or(|(t, _)| t.is_empty()))
        {
            return Err(ConfigError::InvalidValue {
                key: "super.users".to_string(),
                value: users.to_string(),
                reason: format!(
                    "expected a string in format principalType:principalName but got {bad}"
                ),
            });
        }
        Ok(())
    }

    /// `replica.selector.class`: Kafka instantiates the class at start-up and fails on one it
    /// cannot load; kcli has only Kafka's rack-aware selector (empty: the leader-only default).
    fn validate_replica_selector(&self) -> Result<(), ConfigError> {
        let class = self.replica_selector_class.trim();
        if !class.is_empty() && class != crate::cluster::RACK_AWARE_REPLICA_SELECTOR {
            return Err(ConfigError::InvalidValue {
                key: "replica.selector.class".to_string(),
                value: class.to_string(),
                reason: format!(
                    "kcli's only replica selector is {} (unset: consumers fetch from the leader)",
                    crate::cluster::RACK_AWARE_REPLICA_SELECTOR
                ),
            });
        }
        Ok(())
    }

    /// Kafka's `interBrokerListenerName` check: the listener must be an advertised one.
    fn validate_inter_broker_listener(&self) -> Result<(), ConfigError> {
        let fail = |key: &str, value: &str, reason: &str| {
            Err(ConfigError::InvalidValue {
                key: key.to_string(),
                value: value.to_string(),
                reason: reason.to_string(),
            })
        };
        // Without inter.broker.listener.name, the protocol names the listener: SSL must be an
        // advertised listener called SSL, as in Kafka.
        let name = self.inter_broker_listener_name();
        let advertised = self.effective_advertised_listeners();
        if !advertised.iter().any(|l| l.listener_name == name) {
            let key = if self.inter_broker_listener_name.is_some() {
                "inter.broker.listener.name"
            } else {
                "security.inter.broker.protocol"
            };
            return fail(
                key,
                &name,
                &format!(
                    "inter.broker.listener.name must be a listener name defined in \
                     advertised.listeners. The valid options based on currently configured \
                     listeners are {}",
                    names(advertised)
                ),
            );
        }
        Ok(())
    }

    /// The listener brokers and the controller reach this broker on: `inter.broker.listener.name`,
    /// else the listener named after `security.inter.broker.protocol` (PLAINTEXT by default).
    pub fn inter_broker_listener_name(&self) -> String {
        match &self.inter_broker_listener_name {
            Some(name) => name.clone(),
            None => self.security_inter_broker_protocol.to_ascii_uppercase(),
        }
    }
}

/// `NAME1,NAME2`: the listener names as Kafka's messages list them. Names are unique within
/// each list (checked when parsed), so this is Kafka's set of them, in order.
fn names(listeners: &[EndPoint]) -> String {
    let names: Vec<&str> = listeners.iter().map(|l| l.listener_name.as_str()).collect();
    names.join(",")
}
