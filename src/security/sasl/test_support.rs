//! A [`CredentialProvider`] over a fixed list of users, for the SASL servers' tests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::security::sasl::CredentialProvider;
use crate::security::scram_credential::{ScramCredential, ScramMechanism};

/// Users with passwords; each SCRAM credential is derived on first use (salt `salt-of-<user>`,
/// 4096 iterations) and kept, so tests that never use SCRAM pay nothing for it.
#[derive(Debug, Default)]
pub(crate) struct Users {
    passwords: HashMap<String, String>,
    scram: Mutex<HashMap<(ScramMechanism, String), ScramCredential>>,
}

impl Users {
    pub(crate) fn new(users: &[(&str, &str)]) -> Arc<Users> {
        Arc::new(Users {
            passwords: users
                .iter()
                .map(|(u, p)| (u.to_string(), p.to_string()))
                .collect(),
            scram: Mutex::default(),
        })
    }

    /// A provider holding exactly this SCRAM credential and no passwords.
    pub(crate) fn with_credential(
        mechanism: ScramMechanism,
        user: &str,
        credential: ScramCredential,
    ) -> Arc<Users> {
        let users = Users::default();
        users
            .scram
            .lock()
            .unwrap()
            .insert((mechanism, user.to_string()), credential);
        Arc::new(users)
    }
}

impl CredentialProvider for Users {
    fn plain_password(&self, user: &str) -> Option<String> {
        self.passwords.get(user).cloned()
    }

    fn scram_credential(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential> {
        let mut cache = self.scram.lock().unwrap();
        let key = (mechanism, user.to_string());
        if let Some(c) = cache.get(&key) {
            return Some(c.clone());
        }
        let password = self.passwords.get(user)?;
        let salt = format!("salt-of-{user}");
        let c = ScramCredential::generate(mechanism, password, salt.as_bytes(), 4096).unwrap();
        cache.insert(key, c.clone());
        Some(c)
    }
}
