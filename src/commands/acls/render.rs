//! What `kcli acls` prints: bindings as a table (resource type, name, pattern type,
//! principal, host, operation, permission; one row per ACL) or as JSON, with a line saying
//! what was done.
//!
//! JSON form (list, add and remove alike, the key saying which):
//! `{"listed":[{"resourceType":"Topic","name":"t","patternType":"Literal",
//! "principal":"User:alice","host":"*","operation":"Write","permissionType":"Allow"}]}`

use comfy_table::Table;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use serde_json::json;

use crate::cli::UsersFormat;
use crate::security::acl::AclBinding;

/// One binding on one line, for messages.
pub(super) fn binding_line(b: &AclBinding) -> String {
    format!(
        "{} {} {:?}: {} {} {} from {}",
        b.pattern.pattern_type,
        b.pattern.resource_type,
        b.pattern.name,
        b.entry.principal,
        b.entry.permission_type,
        b.entry.operation,
        b.entry.host
    )
}

/// The bindings, under `what` (`listed`, `added`, `removed`).
pub(super) fn bindings(bindings: &[AclBinding], format: UsersFormat, what: &str) -> String {
    match format {
        UsersFormat::Json => {
            let rows: Vec<serde_json::Value> = bindings
                .iter()
                .map(|b| {
                    json!({
                        "resourceType": b.pattern.resource_type.name(),
                        "name": b.pattern.name,
                        "patternType": b.pattern.pattern_type.name(),
                        "principal": b.entry.principal,
                        "host": b.entry.host,
                        "operation": b.entry.operation.name(),
                        "permissionType": b.entry.permission_type.name(),
                    })
                })
                .collect();
            format!("{}\n", json!({ what: rows }))
        }
        UsersFormat::Text => {
            if bindings.is_empty() {
                return format!("No ACL {what}.\n");
            }
            let mut table = Table::new();
            table.load_style(UTF8_FULL_CONDENSED).set_header(vec![
                "resource type",
                "name",
                "pattern type",
                "principal",
                "host",
                "operation",
                "permission",
            ]);
            for b in bindings {
                table.add_row(vec![
                    b.pattern.resource_type.name(),
                    b.pattern.name.as_str(),
                    b.pattern.pattern_type.name(),
                    b.entry.principal.as_str(),
                    b.entry.host.as_str(),
                    b.entry.operation.name(),
                    b.entry.permission_type.name(),
                ]);
            }
            let n = bindings.len();
            format!(
                "{table}\n{n} ACL{} {what}.\n",
                if n == 1 { "" } else { "s" }
            )
        }
    }
}
