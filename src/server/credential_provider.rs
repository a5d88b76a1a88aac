//! The broker's [`CredentialProvider`] for one SASL listener (Kafka's
//! `PlainServerCallbackHandler` and `ScramServerCallbackHandler` over its `CredentialCache`):
//! PLAIN passwords from the `user_<name>="<password>"` options of the listener's PLAIN JAAS
//! config (`PlainLoginModule`), SCRAM credentials from the shared
//! [`ScramCredentialCache`]. Both are in
//! memory, so lookups never block.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::security::sasl::CredentialProvider;
use crate::security::scram_credential::{ScramCredential, ScramMechanism};

use super::scram_credential_cache::ScramCredentialCache;

/// One listener's users. `Debug` shows the PLAIN user names, not their passwords.
pub(crate) struct BrokerCredentialProvider {
    /// From the listener's PLAIN JAAS config; empty when PLAIN is not enabled there.
    plain_users: BTreeMap<String, String>,
    scram: Arc<ScramCredentialCache>,
}

impl BrokerCredentialProvider {
    pub(crate) fn new(
        plain_users: BTreeMap<String, String>,
        scram: Arc<ScramCredentialCache>,
    ) -> BrokerCredentialProvider {
        BrokerCredentialProvider { plain_users, scram }
    }
}

impl fmt::Debug for BrokerCredentialProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BrokerCredentialProvider")
            .field("plain_users", &self.plain_users.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl CredentialProvider for BrokerCredentialProvider {
    fn plain_password(&self, user: &str) -> Option<String> {
        self.plain_users.get(user).cloned()
    }

    fn scram_credential(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential> {
        self.scram.get(mechanism, user)
    }
}
