//! SCRAM credential administration in ZooKeeper mode, as Kafka 3.9's
//! `ZkAdminManager.alterUserScramCredentials` and `describeUserScramCredentials`: the checks and
//! per-user error codes of AlterUserScramCredentials and DescribeUserScramCredentials, the merge
//! of a user's new credentials into `/config/users/<user>` (other keys, such as quotas, kept),
//! and the reads back. The handlers in `apis/` only translate the wire.
//!
//! Results come in Kafka's groups (refused requests, duplicates, deletions of missing
//! credentials, failed writes, successes); within a group, users are in the order they first
//! appear in the request, where Kafka iterates a Scala map (the same order for up to four users).
//!
//! Concurrency: alterations on this broker are serialised by `alter_lock` (a tokio mutex held
//! from the read of a user's config to its write), so two requests for one user do not lose
//! one another's credential. Writers elsewhere (another broker, `kafka-configs --zookeeper`)
//! are last-writer-wins, as in Kafka.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use tokio::sync::Mutex;

use crate::protocol::errors::ErrorCode;
use crate::security::scram_credential::{ScramCredential, ScramMechanism};
use crate::zk::ZkClient;
use crate::zk::sanitizer::{desanitize, sanitize};
use crate::zk::user_configs;

/// Kafka's upper bound on iterations for a credential set through the API.
pub(crate) const MAX_ITERATIONS: i32 = 16384;

const USERNAME_EMPTY: &str = "Username must not be empty";
const UNKNOWN_MECHANISM: &str = "Unknown SCRAM mechanism";
const TOO_FEW_ITERATIONS: &str = "Too few iterations";
const TOO_MANY_ITERATIONS: &str = "Too many iterations";
const ALTERED_TWICE: &str = "A user credential cannot be altered twice in the same request";
const DELETE_MISSING: &str = "Attempt to delete a user credential that does not exist";
const DESCRIBE_MISSING: &str = "Attempt to describe a user credential that does not exist";

/// One credential to set: the client derived `salted_password` = Hi(password, salt,
/// iterations); the broker derives StoredKey and ServerKey from it.
#[derive(Clone, PartialEq, Eq)]
pub struct Upsertion {
    pub name: String,
    /// Kafka's mechanism type byte: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512.
    pub mechanism: i8,
    pub iterations: i32,
    pub salt: Vec<u8>,
    pub salted_password: Vec<u8>,
}

impl std::fmt::Debug for Upsertion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upsertion")
            .field("name", &self.name)
            .field("mechanism", &self.mechanism)
            .field("iterations", &self.iterations)
            .field("salted_password", &"[hidden]")
            .finish()
    }
}

/// One credential to remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deletion {
    pub name: String,
    pub mechanism: i8,
}

/// The answer for one user of an AlterUserScramCredentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlterResult {
    pub user: String,
    pub error: ErrorCode,
    pub message: Option<String>,
}

/// The answer for one user of a DescribeUserScramCredentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribeResult {
    pub user: String,
    pub error: ErrorCode,
    pub message: Option<String>,
    /// `(mechanism, iterations)` per stored credential, SCRAM-SHA-256 first.
    pub credentials: Vec<(ScramMechanism, i32)>,
}

/// A DescribeUserScramCredentials answer: a top-level error, or the users' results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DescribeOutcome {
    Results(Vec<DescribeResult>),
    Failed { error: ErrorCode, message: String },
}

/// Kafka's `ZkAdminManager` for SCRAM credentials, over the broker's ZooKeeper client.
pub struct UserScramAdmin {
    zk: Arc<dyn ZkClient>,
    alter_lock: Mutex<()>,
}

impl std::fmt::Debug for UserScramAdmin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserScramAdmin").finish_non_exhaustive()
    }
}

/// An error Kafka reports as `UNKNOWN_SERVER_ERROR`, whose message it never passes on.
fn unknown_server_error() -> (ErrorCode, String) {
    let error = ErrorCode::UnknownServerError;
    (error, error.message().to_string())
}

/// Pushes `key` unless present (insertion-ordered set).
fn push_once<T: PartialEq>(v: &mut Vec<T>, key: T) {
    if !v.contains(&key) {
        v.push(key);
    }
}

impl UserScramAdmin {
    /// Holds off this broker's SCRAM alterations while a quota alteration rewrites a user's
    /// znode (both rewrite `/config/users/<user>` whole).
    pub(crate) async fn lock_user_configs(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.alter_lock.lock().await
    }

    pub fn new(zk: Arc<dyn ZkClient>) -> Self {
        UserScramAdmin {
            zk,
            alter_lock: Mutex::new(()),
        }
    }

    /// AlterUserScramCredentials on the active controller (the caller checks that).
    pub async fn alter(
        &self,
        upsertions: &[Upsertion],
        deletions: &[Deletion],
    ) -> Vec<AlterResult> {
        let mut results = Vec::new();
        let refused = refused_requests(upsertions, deletions);
        let invalid: HashSet<&str> = refused.iter().map(|(u, _)| u.as_str()).collect();
        for (user, message) in &refused {
            let error = if *message == UNKNOWN_MECHANISM {
                ErrorCode::UnsupportedSaslMechanism
            } else {
                ErrorCode::UnacceptableCredential
            };
            results.push(result(user, error, Some(message)));
        }

        // Valid (user, mechanism) pairs: upsertions first, then deletions, as Kafka lists them.
        let pairs: Vec<(&str, i8)> = upsertions
            .iter()
            .map(|u| (u.name.as_str(), u.mechanism))
            .chain(deletions.iter().map(|d| (d.name.as_str(), d.mechanism)))
            .filter(|(user, _)| !invalid.contains(user))
            .collect();
        let mut duplicated: Vec<&str> = Vec::new();
        for (i, pair) in pairs.iter().enumerate() {
            if pairs[..i].contains(pair) {
                push_once(&mut duplicated, pair.0);
            }
        }
        for user in &duplicated {
            results.push(result(
                user,
                ErrorCode::DuplicateResource,
                Some(ALTERED_TWICE),
            ));
        }
        let mut candidates: Vec<&str> = Vec::new();
        for (user, _) in &pairs {
            if !duplicated.contains(user) {
                push_once(&mut candidates, *user);
            }
        }

        let _guard = self.alter_lock.lock().await;
        let mut configs: HashMap<&str, BTreeMap<String, String>> = HashMap::new();
        for user in &candidates {
            match user_configs::fetch_user_config(self.zk.as_ref(), &sanitize(user)).await {
                Ok(config) => {
                    configs.insert(user, config);
                }
                Err(err) => {
                    // Kafka reads outside its per-user handling: the whole request fails.
                    tracing::warn!(%user, %err, "cannot read a user's config");
                    return whole_request_failed(upsertions, deletions);
                }
            }
        }

        let mut missing_deletions: Vec<&str> = Vec::new();
        for d in deletions {
            let Some(config) = configs.get(d.name.as_str()) else {
                continue;
            };
            let name = mechanism_name(d.mechanism);
            if !config.contains_key(name) {
                push_once(&mut missing_deletions, d.name.as_str());
            }
        }
        for user in &missing_deletions {
            results.push(result(
                user,
                ErrorCode::ResourceNotFound,
                Some(DELETE_MISSING),
            ));
        }
        let to_alter: Vec<&str> = candidates
            .into_iter()
            .filter(|u| !missing_deletions.contains(u))
            .collect();

        let mut failed: Vec<(&str, ErrorCode, String)> = Vec::new();
        let mut prepared: Vec<(&str, BTreeMap<String, String>)> = Vec::new();
        for user in &to_alter {
            let Some(mut config) = configs.remove(user) else {
                continue;
            };
            for d in deletions.iter().filter(|d| d.name == *user) {
                config.remove(mechanism_name(d.mechanism));
            }
            let mut ok = true;
            for u in upsertions.iter().filter(|u| u.name == *user) {
                match credential_of(u) {
                    Some((mechanism, credential)) => {
                        config.insert(
                            mechanism.mechanism_name().to_string(),
                            credential.to_credential_string(),
                        );
                    }
                    None => ok = false,
                }
            }
            if ok {
                prepared.push((user, config));
            } else {
                let (error, message) = unknown_server_error();
                failed.push((user, error, message));
            }
        }
        let mut succeeded = Vec::new();
        for (user, config) in prepared {
            match user_configs::change_user_config(self.zk.as_ref(), &sanitize(user), &config).await
            {
                Ok(()) => succeeded.push(user),
                Err(err) => {
                    tracing::info!(%user, %err, "error while altering user SCRAM credentials");
                    let (error, message) = unknown_server_error();
                    failed.push((user, error, message));
                }
            }
        }
        for (user, error, message) in failed {
            results.push(result(user, error, Some(&message)));
        }
        for user in succeeded {
            results.push(result(user, ErrorCode::None, None));
        }
        results
    }

    /// DescribeUserScramCredentials on any broker: every user with a credential (`users` None
    /// or empty), sorted by name, or the named ones in request order, each once.
    pub async fn describe(&self, users: Option<&[String]>) -> DescribeOutcome {
        match users.filter(|u| !u.is_empty()) {
            None => self.describe_all().await,
            Some(users) => DescribeOutcome::Results(self.describe_named(users).await),
        }
    }

    async fn describe_all(&self) -> DescribeOutcome {
        let failed = |what: &dyn std::fmt::Display| {
            tracing::warn!(err = %what, "cannot read the users' configs");
            let (error, message) = unknown_server_error();
            DescribeOutcome::Failed { error, message }
        };
        let all = match user_configs::fetch_all_user_configs(self.zk.as_ref()).await {
            Ok(all) => all,
            Err(err) => return failed(&err),
        };
        let mut by_user = BTreeMap::new();
        for (sanitized, config) in all {
            let user = match desanitize(&sanitized) {
                Ok(user) => user,
                Err(err) => return failed(&err),
            };
            if let Some(r) = credentials_result(&user, &config) {
                by_user.insert(user, r);
            }
        }
        DescribeOutcome::Results(by_user.into_values().collect())
    }

    async fn describe_named(&self, users: &[String]) -> Vec<DescribeResult> {
        let mut by_user: HashMap<&str, DescribeResult> = HashMap::new();
        let mut seen = HashSet::new();
        for user in users {
            let user = user.as_str();
            if user.is_empty() {
                by_user.insert(
                    user,
                    describe_error(user, ErrorCode::ResourceNotFound, USERNAME_EMPTY.into()),
                );
            } else if !seen.insert(user) {
                let message = format!(
                    "Cannot describe SCRAM credentials for the same user twice in a single request: {user}"
                );
                by_user.insert(
                    user,
                    describe_error(user, ErrorCode::DuplicateResource, message),
                );
            }
        }
        let mut order: Vec<&str> = Vec::new();
        for user in users {
            push_once(&mut order, user.as_str());
        }
        for user in &order {
            if by_user.contains_key(user) {
                continue;
            }
            let r = match user_configs::fetch_user_config(self.zk.as_ref(), &sanitize(user)).await {
                Ok(config) => credentials_result(user, &config).unwrap_or_else(|| {
                    describe_error(
                        user,
                        ErrorCode::ResourceNotFound,
                        format!("{DESCRIBE_MISSING}: {user}"),
                    )
                }),
                Err(err) => {
                    tracing::warn!(%user, %err, "cannot read a user's config");
                    let (error, message) = unknown_server_error();
                    describe_error(user, error, message)
                }
            };
            by_user.insert(user, r);
        }
        order
            .into_iter()
            .filter_map(|user| by_user.remove(user))
            .collect()
    }
}

/// Kafka's first checks, user by user: an empty name, an unknown mechanism, or iterations
/// outside 4096..=16384 (upsertions only). A user refused by both lists gets the upsertion's
/// message (Kafka's `++` of two maps, the right one winning).
fn refused_requests(
    upsertions: &[Upsertion],
    deletions: &[Deletion],
) -> Vec<(String, &'static str)> {
    let mut refused: Vec<(String, &'static str)> = Vec::new();
    let mut put =
        |user: &str, message: &'static str| match refused.iter_mut().find(|(u, _)| u == user) {
            Some(entry) => entry.1 = message,
            None => refused.push((user.to_string(), message)),
        };
    for d in deletions {
        if d.name.is_empty() {
            put(&d.name, USERNAME_EMPTY);
        } else if ScramMechanism::from_mechanism_type(d.mechanism).is_none() {
            put(&d.name, UNKNOWN_MECHANISM);
        }
    }
    for u in upsertions {
        if u.name.is_empty() {
            put(&u.name, USERNAME_EMPTY);
            continue;
        }
        let Some(mechanism) = ScramMechanism::from_mechanism_type(u.mechanism) else {
            put(&u.name, UNKNOWN_MECHANISM);
            continue;
        };
        let min = i64::from(mechanism.min_iterations());
        let iterations = i64::from(u.iterations);
        if iterations > i64::from(MAX_ITERATIONS) {
            put(&u.name, TOO_MANY_ITERATIONS);
        } else if iterations < min {
            put(&u.name, TOO_FEW_ITERATIONS);
        }
    }
    refused
}

/// The stored credential of a checked upsertion. `None` for an empty salted password, which
/// Kafka's `Mac.init` refuses (an unexpected error, UNKNOWN_SERVER_ERROR).
fn credential_of(u: &Upsertion) -> Option<(ScramMechanism, ScramCredential)> {
    let mechanism = ScramMechanism::from_mechanism_type(u.mechanism)?;
    let iterations = u32::try_from(u.iterations).ok()?;
    if u.salted_password.is_empty() {
        return None;
    }
    let credential = ScramCredential::from_salted_password(
        mechanism,
        u.salt.clone(),
        &u.salted_password,
        iterations,
    );
    Some((mechanism, credential))
}

/// The config key of a mechanism type; an unknown type (already refused) names no key.
fn mechanism_name(mechanism: i8) -> &'static str {
    ScramMechanism::from_mechanism_type(mechanism).map_or("UNKNOWN", ScramMechanism::mechanism_name)
}

fn result(user: &str, error: ErrorCode, message: Option<&str>) -> AlterResult {
    AlterResult {
        user: user.to_string(),
        error,
        message: message.map(String::from),
    }
}

fn describe_error(user: &str, error: ErrorCode, message: String) -> DescribeResult {
    DescribeResult {
        user: user.to_string(),
        error,
        message: Some(message),
        credentials: Vec::new(),
    }
}

/// Kafka's `getErrorResponse`: every user named, sorted, with UNKNOWN_SERVER_ERROR.
fn whole_request_failed(upsertions: &[Upsertion], deletions: &[Deletion]) -> Vec<AlterResult> {
    let users: BTreeSet<&str> = deletions
        .iter()
        .map(|d| d.name.as_str())
        .chain(upsertions.iter().map(|u| u.name.as_str()))
        .collect();
    let (error, message) = unknown_server_error();
    users
        .into_iter()
        .map(|u| result(u, error, Some(&message)))
        .collect()
}

/// The result for a user with at least one SCRAM credential in `config`, else `None`. A
/// credential that does not parse makes the user's result UNKNOWN_SERVER_ERROR, as Kafka's
/// `credentialFromString` throwing does.
fn credentials_result(user: &str, config: &BTreeMap<String, String>) -> Option<DescribeResult> {
    let stored: Vec<(ScramMechanism, &String)> = ScramMechanism::ALL
        .into_iter()
        .filter_map(|m| config.get(m.mechanism_name()).map(|v| (m, v)))
        .collect();
    if stored.is_empty() {
        return None;
    }
    let mut credentials = Vec::new();
    for (mechanism, value) in stored {
        let parsed = ScramCredential::from_credential_string(value)
            .ok()
            .and_then(|c| i32::try_from(c.iterations).ok());
        let Some(iterations) = parsed else {
            tracing::warn!(%user, %mechanism, "unreadable SCRAM credential in ZooKeeper");
            let (error, message) = unknown_server_error();
            return Some(describe_error(user, error, message));
        };
        credentials.push((mechanism, iterations));
    }
    Some(DescribeResult {
        user: user.to_string(),
        error: ErrorCode::None,
        message: None,
        credentials,
    })
}

#[cfg(test)]
#[path = "user_scram_admin_tests.rs"]
mod tests;
