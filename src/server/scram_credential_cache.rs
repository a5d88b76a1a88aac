//! The SCRAM credentials of every user, in memory (Kafka's `CredentialCache` as its
//! `CredentialProvider` and `UserConfigHandler` fill it): read from `/config/users/<user>` at
//! startup, before any listener accepts, and kept current by the config change listener
//! (entity type `users`), so a lookup during authentication never waits for the store.
//!
//! `/config/users/<sanitized user>` holds `{"version":1,"config":{"SCRAM-SHA-512":
//! "salt=...,stored_key=...,server_key=...,iterations=4096", ...}}`, possibly beside quota keys.
//! For each SCRAM mechanism some listener enables, the user's entry is replaced by the
//! credential the config holds, or removed when it holds none (Kafka's `updateCredentials`);
//! other mechanisms are not cached. The znode name is the user name as Kafka's `Sanitizer`
//! writes it (URL-encoded, `*` as `%2A`), decoded here. `<default>` and
//! `<user>/clients/<client>` entities are quotas only. An unreadable credential is logged and
//! leaves the user without one for that mechanism.
//!
//! Lock order: one `RwLock`, never held across an await.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

use crate::cluster::sync::{read, write};
use crate::security::scram_credential::{ScramCredential, ScramMechanism};
use crate::zk::client::HandlerFuture;
use crate::zk::zk_data;
use crate::zk::{ZkClient, ZkError};

use super::config_change_listener::ConfigHandler;

/// Kafka's `ConfigEntityName.DEFAULT`: the entity of default quotas, never a user.
const DEFAULT_ENTITY: &str = "<default>";

/// The entity type of users under `/config`.
pub(crate) const USERS_ENTITY_TYPE: &str = "users";

/// Users' SCRAM credentials by mechanism, for the mechanisms some listener enables.
#[derive(Debug, Default)]
pub(crate) struct ScramCredentialCache {
    mechanisms: BTreeSet<ScramMechanism>,
    credentials: RwLock<HashMap<(ScramMechanism, String), ScramCredential>>,
}

impl ScramCredentialCache {
    /// An empty cache of `mechanisms` (the SCRAM ones among the listeners' enabled mechanisms).
    pub(crate) fn new(
        mechanisms: impl IntoIterator<Item = ScramMechanism>,
    ) -> ScramCredentialCache {
        ScramCredentialCache {
            mechanisms: mechanisms.into_iter().collect(),
            credentials: RwLock::default(),
        }
    }

    /// The cached credential of `user` for `mechanism`.
    pub(crate) fn get(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential> {
        read(&self.credentials)
            .get(&(mechanism, user.to_string()))
            .cloned()
    }

    /// Kafka's `CredentialProvider.updateCredentials`: `user`'s entries from `config` (the
    /// `config` map of its znode; empty when the znode is gone).
    pub(crate) fn update_credentials(&self, user: &str, config: &BTreeMap<String, String>) {
        let mut credentials = write(&self.credentials);
        for &mechanism in &self.mechanisms {
            let key = (mechanism, user.to_string());
            let parsed = config
                .get(mechanism.mechanism_name())
                .map(|text| ScramCredential::from_credential_string(text));
            match parsed {
                Some(Ok(credential)) => {
                    credentials.insert(key, credential);
                }
                Some(Err(err)) => {
                    tracing::error!(user, %mechanism, %err, "unreadable SCRAM credential in /config/users is ignored");
                    credentials.remove(&key);
                }
                None => {
                    credentials.remove(&key);
                }
            }
        }
    }

    /// Reads every `/config/users/<user>` (Kafka's `ZkConfigManager.startup` for users).
    pub(crate) async fn load_all(&self, zk: &dyn ZkClient) -> Result<usize, ZkError> {
        if self.mechanisms.is_empty() {
            return Ok(0);
        }
        let type_path = zk_data::config_entity_type_path(USERS_ENTITY_TYPE);
        let names = match zk.get_children(&type_path, false).await {
            Ok((names, _)) => names,
            Err(ZkError::NoNode(_)) => return Ok(0),
            Err(e) => return Err(e),
        };
        let mut loaded = 0;
        for name in &names {
            let Some(user) = user_of_entity(name) else {
                continue;
            };
            let path = zk_data::config_entity_path(USERS_ENTITY_TYPE, name);
            let config = match zk.get_data(&path, false).await {
                Ok((data, _)) => zk_data::decode_entity_config(&data).unwrap_or_else(|err| {
                    tracing::error!(path, %err, "unreadable user config is taken as empty");
                    BTreeMap::new()
                }),
                Err(ZkError::NoNode(_)) => continue,
                Err(e) => return Err(e),
            };
            self.update_credentials(&user, &config);
            loaded += 1;
        }
        Ok(loaded)
    }
}

/// The user a `/config/users` entity names, or `None` for `<default>` and client entities.
pub(crate) fn user_of_entity(sanitized: &str) -> Option<String> {
    if sanitized == DEFAULT_ENTITY || sanitized.contains('/') {
        return None;
    }
    Some(desanitize(sanitized))
}

/// Kafka's `Sanitizer.desanitize` (Java's `URLDecoder.decode` in UTF-8): `%XX` decoded, `+` a
/// space. A malformed escape is kept as it is.
pub(crate) fn desanitize(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = |j: usize| bytes.get(j).and_then(|&c| char::from(c).to_digit(16));
        match b {
            b'%' => match (hex(i + 1), hex(i + 2)) {
                (Some(hi), Some(lo)) => {
                    out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
                    i += 3;
                    continue;
                }
                _ => out.push(b),
            },
            b'+' => out.push(b' '),
            _ => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Kafka's `UserConfigHandler`, credentials only (kcli has no quotas).
#[derive(Debug)]
pub(crate) struct UserConfigHandler {
    pub cache: Arc<ScramCredentialCache>,
}

impl ConfigHandler for UserConfigHandler {
    fn process_config_changes<'a>(
        &'a self,
        entity_name: &'a str,
        props: BTreeMap<String, String>,
    ) -> HandlerFuture<'a> {
        Box::pin(async move {
            if let Some(user) = user_of_entity(entity_name) {
                self.cache.update_credentials(&user, &props);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::EmbeddedStore;
    use crate::zk::client::CreateMode;

    fn credential(password: &str) -> ScramCredential {
        ScramCredential::generate(ScramMechanism::ScramSha512, password, b"salt", 4096).unwrap()
    }

    #[test]
    fn sanitized_names_decode_as_kafkas() {
        assert_eq!(desanitize("alice"), "alice");
        assert_eq!(desanitize("user%40example.com"), "user@example.com");
        assert_eq!(desanitize("a%2Ab%20c+d"), "a*b c d");
        assert_eq!(desanitize("%E2%82%AC"), "€");
        assert_eq!(desanitize("50%"), "50%");
        assert_eq!(user_of_entity("<default>"), None);
        assert_eq!(user_of_entity("alice/clients/app"), None);
    }

    #[tokio::test]
    async fn credentials_load_from_the_store_and_follow_updates() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let zk = store.session();
        for path in ["/config", "/config/users"] {
            zk.create(path, b"", CreateMode::Persistent).await.unwrap();
        }
        let alice = credential("alice-secret");
        let config: BTreeMap<String, String> = [
            ("SCRAM-SHA-512".to_string(), alice.to_credential_string()),
            ("SCRAM-SHA-256".to_string(), "garbage".to_string()),
            ("producer_byte_rate".to_string(), "1024".to_string()),
        ]
        .into_iter()
        .collect();
        for name in ["alice", "bob%40corp", "<default>"] {
            zk.create(
                &format!("/config/users/{name}"),
                &zk_data::encode_entity_config(&config),
                CreateMode::Persistent,
            )
            .await
            .unwrap();
        }
        let cache = ScramCredentialCache::new(ScramMechanism::ALL);
        assert_eq!(cache.load_all(&zk).await.unwrap(), 2);
        assert_eq!(
            cache.get(ScramMechanism::ScramSha512, "alice"),
            Some(alice.clone())
        );
        assert_eq!(
            cache.get(ScramMechanism::ScramSha512, "bob@corp"),
            Some(alice.clone())
        );
        // The unreadable one is not cached.
        assert_eq!(cache.get(ScramMechanism::ScramSha256, "alice"), None);
        assert_eq!(cache.get(ScramMechanism::ScramSha512, "<default>"), None);

        // A change replaces, an emptied config removes.
        let handler = UserConfigHandler {
            cache: Arc::new(cache),
        };
        let new = credential("new-secret");
        let changed: BTreeMap<String, String> =
            [("SCRAM-SHA-512".to_string(), new.to_credential_string())]
                .into_iter()
                .collect();
        handler.process_config_changes("alice", changed).await;
        assert_eq!(
            handler.cache.get(ScramMechanism::ScramSha512, "alice"),
            Some(new)
        );
        handler
            .process_config_changes("bob%40corp", BTreeMap::new())
            .await;
        assert_eq!(
            handler.cache.get(ScramMechanism::ScramSha512, "bob@corp"),
            None
        );

        // Only enabled mechanisms are cached; none enabled reads nothing.
        let sha256_only = ScramCredentialCache::new([ScramMechanism::ScramSha256]);
        sha256_only.load_all(&zk).await.unwrap();
        assert_eq!(sha256_only.get(ScramMechanism::ScramSha512, "alice"), None);
        let none = ScramCredentialCache::new([]);
        assert_eq!(none.load_all(&zk).await.unwrap(), 0);
    }
}
