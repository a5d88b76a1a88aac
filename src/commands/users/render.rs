//! What `kcli users` prints: the listing as a table (user, mechanism, iterations; one row per
//! credential) followed, when a listed user has quotas, by a table of them (user, client id,
//! quota, value), or as JSON; and one line (or a JSON object) for what add and remove did.
//! Only mechanisms and iteration counts appear, never salts, keys or passwords. Quotas are
//! the configs Kafka's `kafka-configs` sets, which the brokers enforce.
//!
//! JSON forms:
//! - list: `{"users":[{"user":"alice","credentials":[{"mechanism":"SCRAM-SHA-512","iterations":4096}],
//!   "quotas":[{"client_id":null,"values":{"producer_byte_rate":1024.0}},
//!   {"client_id":"app","values":{...}}]}]}` (`client_id` null: the user's own quotas;
//!   `"<default>"`: the user's default client id)
//! - add: `{"user":"alice","set":{"mechanism":"SCRAM-SHA-512","iterations":4096}}`
//! - remove: `{"user":"alice","removed":["SCRAM-SHA-256","SCRAM-SHA-512"]}`

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use serde_json::json;

use std::collections::BTreeMap;

use crate::cli::UsersFormat;
use crate::cluster::client_quota::{
    ClientQuotaEntity, QuotaEntity, QuotaEntityName, java_double_to_string,
};
use crate::protocol::errors::ErrorCode;
use crate::security::scram_credential::ScramMechanism;
use crate::server::client_quota_admin::DescribedQuotas;
use crate::server::user_scram_admin::DescribeResult;

/// Kafka's name of an error code (`Errors.name()`), e.g. `UNACCEPTABLE_CREDENTIAL`.
pub(crate) fn error_name(error: ErrorCode) -> String {
    let debug = format!("{error:?}");
    let mut out = String::new();
    for (i, c) in debug.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// One user's quotas: (client id, or `None` for the user's own; quota key → value), the
/// user's own first.
fn quotas_of<'a>(
    user: &str,
    quotas: &'a DescribedQuotas,
) -> Vec<(Option<String>, &'a BTreeMap<String, f64>)> {
    let mut out: Vec<(Option<String>, &BTreeMap<String, f64>)> = quotas
        .iter()
        .filter_map(|(entity, values)| match entity {
            QuotaEntity::Client(ClientQuotaEntity {
                user: Some(QuotaEntityName::Named(u)),
                client_id,
            }) if u == user => Some((client_id.as_ref().map(ToString::to_string), values)),
            _ => None,
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

pub(super) fn list(
    results: &[DescribeResult],
    quotas: &DescribedQuotas,
    format: UsersFormat,
) -> String {
    match format {
        UsersFormat::Json => {
            let users: Vec<serde_json::Value> = results
                .iter()
                .map(|r| {
                    let credentials: Vec<serde_json::Value> = r
                        .credentials
                        .iter()
                        .map(|(m, i)| json!({"mechanism": m.mechanism_name(), "iterations": i}))
                        .collect();
                    let quotas: Vec<serde_json::Value> = quotas_of(&r.user, quotas)
                        .into_iter()
                        .map(
                            |(client_id, values)| json!({"client_id": client_id, "values": values}),
                        )
                        .collect();
                    json!({"user": r.user, "credentials": credentials, "quotas": quotas})
                })
                .collect();
            format!("{}\n", json!({ "users": users }))
        }
        UsersFormat::Text => {
            if results.is_empty() {
                return "No user has a SCRAM credential.\n".to_string();
            }
            let mut table = Table::new();
            table.load_style(UTF8_FULL_CONDENSED).set_header(vec![
                "user",
                "mechanism",
                "iterations",
            ]);
            for r in results {
                for (m, i) in &r.credentials {
                    table.add_row(vec![
                        r.user.clone(),
                        m.mechanism_name().to_string(),
                        i.to_string(),
                    ]);
                }
            }
            if let Some(col) = table.column_mut(2) {
                col.set_cell_alignment(CellAlignment::Right);
            }
            let mut out = format!("{table}\n");
            let mut quota_table = Table::new();
            quota_table.load_style(UTF8_FULL_CONDENSED).set_header(vec![
                "user",
                "client id",
                "quota",
                "value",
            ]);
            let mut any = false;
            for r in results {
                for (client_id, values) in quotas_of(&r.user, quotas) {
                    for (key, value) in values {
                        any = true;
                        quota_table.add_row(vec![
                            r.user.clone(),
                            client_id.clone().unwrap_or_else(|| "-".to_string()),
                            key.clone(),
                            java_double_to_string(*value),
                        ]);
                    }
                }
            }
            if any {
                if let Some(col) = quota_table.column_mut(3) {
                    col.set_cell_alignment(CellAlignment::Right);
                }
                out.push_str(&format!("Quotas:\n{quota_table}\n"));
            }
            out
        }
    }
}

pub(super) fn added(
    user: &str,
    mechanism: ScramMechanism,
    iterations: u32,
    format: UsersFormat,
) -> String {
    match format {
        UsersFormat::Json => format!(
            "{}\n",
            json!({"user": user, "set": {"mechanism": mechanism.mechanism_name(), "iterations": iterations}})
        ),
        UsersFormat::Text => {
            format!("Set the {mechanism} credential of user {user:?} ({iterations} iterations).\n")
        }
    }
}

pub(super) fn removed(user: &str, mechanisms: &[ScramMechanism], format: UsersFormat) -> String {
    let names: Vec<&str> = mechanisms.iter().map(|m| m.mechanism_name()).collect();
    match format {
        UsersFormat::Json => format!("{}\n", json!({"user": user, "removed": names})),
        UsersFormat::Text => format!(
            "Removed the {} credential{} of user {user:?}.\n",
            names.join(" and "),
            if names.len() > 1 { "s" } else { "" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(user: &str, credentials: Vec<(ScramMechanism, i32)>) -> DescribeResult {
        DescribeResult {
            user: user.into(),
            error: ErrorCode::None,
            message: None,
            credentials,
        }
    }

    #[test]
    fn listing_shows_mechanisms_and_iterations() {
        let results = [
            result(
                "alice",
                vec![
                    (ScramMechanism::ScramSha256, 4096),
                    (ScramMechanism::ScramSha512, 8192),
                ],
            ),
            result("bob", vec![(ScramMechanism::ScramSha512, 4096)]),
        ];
        let none = DescribedQuotas::new();
        let text = list(&results, &none, UsersFormat::Text);
        assert!(!text.contains("Quotas"), "{text}");
        let rows: Vec<&str> = text.lines().filter(|l| l.contains("SCRAM")).collect();
        assert_eq!(rows.len(), 3, "{text}");
        assert!(
            rows[1].contains("alice")
                && rows[1].contains("SCRAM-SHA-512")
                && rows[1].contains("8192"),
            "{text}"
        );
        assert_eq!(
            list(&results[1..], &none, UsersFormat::Json),
            "{\"users\":[{\"credentials\":[{\"iterations\":4096,\"mechanism\":\"SCRAM-SHA-512\"}],\"quotas\":[],\"user\":\"bob\"}]}\n"
        );
        assert_eq!(
            list(&[], &none, UsersFormat::Text),
            "No user has a SCRAM credential.\n"
        );
        assert_eq!(list(&[], &none, UsersFormat::Json), "{\"users\":[]}\n");
    }

    #[test]
    fn listing_shows_each_users_quotas_beside_its_credentials() {
        let user_entity = |user: &str, client: Option<QuotaEntityName>| {
            QuotaEntity::Client(ClientQuotaEntity {
                user: Some(QuotaEntityName::Named(user.into())),
                client_id: client,
            })
        };
        let quotas = DescribedQuotas::from([
            (
                user_entity("bob", None),
                BTreeMap::from([("producer_byte_rate".to_string(), 1024.0)]),
            ),
            (
                user_entity("bob", Some(QuotaEntityName::Named("app".into()))),
                BTreeMap::from([("request_percentage".to_string(), 12.5)]),
            ),
            (
                user_entity("carol", None),
                BTreeMap::from([("consumer_byte_rate".to_string(), 1.0)]),
            ),
        ]);
        let results = [result("bob", vec![(ScramMechanism::ScramSha512, 4096)])];
        assert_eq!(
            list(&results, &quotas, UsersFormat::Json),
            "{\"users\":[{\"credentials\":[{\"iterations\":4096,\"mechanism\":\"SCRAM-SHA-512\"}],\"quotas\":[{\"client_id\":null,\"values\":{\"producer_byte_rate\":1024.0}},{\"client_id\":\"app\",\"values\":{\"request_percentage\":12.5}}],\"user\":\"bob\"}]}\n"
        );
        let text = list(&results, &quotas, UsersFormat::Text);
        let rows: Vec<&str> = text.lines().filter(|l| l.contains("_")).collect();
        assert_eq!(rows.len(), 2, "{text}");
        assert!(
            rows[0].contains("bob") && rows[0].contains(" - ") && rows[0].contains("1024.0"),
            "{text}"
        );
        assert!(
            rows[1].contains("app") && rows[1].contains("12.5"),
            "{text}"
        );
        assert!(!text.contains("carol"), "{text}");
    }

    #[test]
    fn add_and_remove_say_what_they_did() {
        assert_eq!(
            added(
                "alice",
                ScramMechanism::ScramSha512,
                8192,
                UsersFormat::Text
            ),
            "Set the SCRAM-SHA-512 credential of user \"alice\" (8192 iterations).\n"
        );
        assert_eq!(
            removed("a", &ScramMechanism::ALL, UsersFormat::Text),
            "Removed the SCRAM-SHA-256 and SCRAM-SHA-512 credentials of user \"a\".\n"
        );
        assert_eq!(
            removed("a", &[ScramMechanism::ScramSha256], UsersFormat::Json),
            "{\"removed\":[\"SCRAM-SHA-256\"],\"user\":\"a\"}\n"
        );
        assert_eq!(
            error_name(ErrorCode::UnacceptableCredential),
            "UNACCEPTABLE_CREDENTIAL"
        );
        assert_eq!(error_name(ErrorCode::NotController), "NOT_CONTROLLER");
    }
}
