//! What `kcli users` prints: the listing as a table (user, mechanism, iterations; one row per
//! credential) or as JSON, and one line (or a JSON object) for what add and remove did. Only
//! mechanisms and iteration counts appear, never salts, keys or passwords.
//!
//! JSON forms:
//! - list: `{"users":[{"user":"alice","credentials":[{"mechanism":"SCRAM-SHA-512","iterations":4096}]}]}`
//! - add: `{"user":"alice","set":{"mechanism":"SCRAM-SHA-512","iterations":4096}}`
//! - remove: `{"user":"alice","removed":["SCRAM-SHA-256","SCRAM-SHA-512"]}`

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use serde_json::json;

use crate::cli::UsersFormat;
use crate::protocol::errors::ErrorCode;
use crate::security::scram_credential::ScramMechanism;
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

pub(super) fn list(results: &[DescribeResult], format: UsersFormat) -> String {
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
                    json!({"user": r.user, "credentials": credentials})
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
            format!("{table}\n")
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
        let text = list(&results, UsersFormat::Text);
        let rows: Vec<&str> = text.lines().filter(|l| l.contains("SCRAM")).collect();
        assert_eq!(rows.len(), 3, "{text}");
        assert!(
            rows[1].contains("alice")
                && rows[1].contains("SCRAM-SHA-512")
                && rows[1].contains("8192"),
            "{text}"
        );
        assert_eq!(
            list(&results[1..], UsersFormat::Json),
            "{\"users\":[{\"credentials\":[{\"iterations\":4096,\"mechanism\":\"SCRAM-SHA-512\"}],\"user\":\"bob\"}]}\n"
        );
        assert_eq!(
            list(&[], UsersFormat::Text),
            "No user has a SCRAM credential.\n"
        );
        assert_eq!(list(&[], UsersFormat::Json), "{\"users\":[]}\n");
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
