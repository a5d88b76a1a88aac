//! What AlterConfigs and IncrementalAlterConfigs share: the config resource types, Kafka's
//! preprocessing checks of a request (`ConfigAdminManager.preprocess`: each resource once, each
//! key once per resource, no null values), and the incremental operations
//! (`ConfigAdminManager.prepareIncrementalConfigs`: SET, DELETE, and APPEND/SUBTRACT on list
//! configs, which start from the stored value or else the config's default).

use std::collections::{BTreeMap, HashSet};

/// `ConfigResource.Type` ids.
pub(crate) const RESOURCE_TOPIC: i8 = 2;
pub(crate) const RESOURCE_BROKER: i8 = 4;
pub(crate) const RESOURCE_BROKER_LOGGER: i8 = 8;
pub(crate) const RESOURCE_CLIENT_METRICS: i8 = 16;

/// `ConfigResource.Type`'s name of a resource type id, as Kafka's messages print it.
pub(crate) fn resource_type_name(id: i8) -> &'static str {
    match id {
        RESOURCE_TOPIC => "TOPIC",
        RESOURCE_BROKER => "BROKER",
        RESOURCE_BROKER_LOGGER => "BROKER_LOGGER",
        RESOURCE_CLIENT_METRICS => "CLIENT_METRICS",
        _ => "UNKNOWN",
    }
}

/// Indexes of resources that appear more than once (by type and name): Kafka answers each of
/// them `INVALID_REQUEST` "Each resource must appear at most once.".
pub(crate) fn duplicate_resources<'a>(
    resources: impl IntoIterator<Item = (i8, &'a [u8])>,
) -> HashSet<usize> {
    let mut first: BTreeMap<(i8, &[u8]), usize> = BTreeMap::new();
    let mut dups = HashSet::new();
    for (i, key) in resources.into_iter().enumerate() {
        if let Some(j) = first.insert(key, i) {
            dups.insert(i);
            dups.insert(j);
        }
    }
    dups
}

/// Kafka's per-resource preprocessing checks, in its order; the message of the
/// `INVALID_REQUEST` a resource gets. `needs_value` says which entries must carry a value
/// (all of them in AlterConfigs, all but DELETE in IncrementalAlterConfigs).
pub(crate) fn check_entries(
    entries: impl IntoIterator<Item = (String, bool, bool)>,
) -> Result<(), String> {
    let entries: Vec<(String, bool, bool)> = entries.into_iter().collect();
    let mut seen = HashSet::new();
    if !entries
        .iter()
        .all(|(name, _, _)| seen.insert(name.as_str()))
    {
        return Err("Error due to duplicate config keys".into());
    }
    let nulls: Vec<&str> = entries
        .iter()
        .filter(|(_, needs_value, has_value)| *needs_value && !*has_value)
        .map(|(name, _, _)| name.as_str())
        .collect();
    if !nulls.is_empty() {
        return Err(format!(
            "Null value not supported for : {}",
            nulls.join(", ")
        ));
    }
    Ok(())
}

/// `AlterConfigOp.OpType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpType {
    Set,
    Delete,
    Append,
    Subtract,
}

impl OpType {
    pub(crate) fn from_id(id: i8) -> Option<OpType> {
        match id {
            0 => Some(OpType::Set),
            1 => Some(OpType::Delete),
            2 => Some(OpType::Append),
            3 => Some(OpType::Subtract),
            _ => None,
        }
    }
}

/// One incremental operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AlterConfigOp {
    pub name: String,
    pub op: OpType,
    /// `None` only for DELETE (preprocessing refuses a null value elsewhere).
    pub value: Option<String>,
}

/// Why an incremental operation cannot apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OpError {
    /// APPEND or SUBTRACT on a key the broker has no definition of (Kafka fails looking the
    /// key up and answers `UNKNOWN_SERVER_ERROR`).
    #[error("key not found: {0}")]
    UnknownKey(String),
    /// `INVALID_CONFIG`, Kafka's message.
    #[error("Config value {verb} is not allowed for config key: {name}")]
    NotAList { verb: &'static str, name: String },
}

/// What an operation needs to know of a key: whether it is a list, and its default as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyInfo {
    pub is_list: bool,
    pub default: Option<String>,
}

/// Java's `String.split(",")`: trailing empty items dropped, but `""` is one empty item.
fn java_split(s: &str) -> Vec<String> {
    if s.is_empty() {
        return vec![String::new()];
    }
    let mut items: Vec<String> = s.split(',').map(String::from).collect();
    while items.last().is_some_and(String::is_empty) {
        items.pop();
    }
    items
}

/// Kafka's `prepareIncrementalConfigs`: applies `ops` in order to `props` (the stored
/// overrides). `key_info` describes a key, `None` when it is unknown.
pub(crate) fn prepare_incremental_configs(
    ops: &[AlterConfigOp],
    props: &mut BTreeMap<String, String>,
    key_info: impl Fn(&str) -> Option<KeyInfo>,
) -> Result<(), OpError> {
    let list_info = |name: &str, verb: &'static str| -> Result<KeyInfo, OpError> {
        let info = key_info(name).ok_or_else(|| OpError::UnknownKey(name.to_string()))?;
        if !info.is_list {
            return Err(OpError::NotAList {
                verb,
                name: name.to_string(),
            });
        }
        Ok(info)
    };
    for op in ops {
        let value = op.value.clone().unwrap_or_default();
        match op.op {
            OpType::Set => {
                props.insert(op.name.clone(), value);
            }
            OpType::Delete => {
                props.remove(&op.name);
            }
            OpType::Append => {
                let info = list_info(&op.name, "append")?;
                let old: Vec<String> = props
                    .get(&op.name)
                    .cloned()
                    .or(info.default)
                    .filter(|s| !s.is_empty())
                    .map(|s| java_split(&s))
                    .unwrap_or_default();
                let mut new = old.clone();
                new.extend(java_split(&value).into_iter().filter(|v| !old.contains(v)));
                props.insert(op.name.clone(), new.join(","));
            }
            OpType::Subtract => {
                let info = list_info(&op.name, "subtract")?;
                let mut new = java_split(
                    &props
                        .get(&op.name)
                        .cloned()
                        .or(info.default)
                        .unwrap_or_default(),
                );
                // Scala's `diff`: one occurrence removed per item subtracted.
                for item in java_split(&value) {
                    if let Some(i) = new.iter().position(|v| *v == item) {
                        new.remove(i);
                    }
                }
                props.insert(op.name.clone(), new.join(","));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, op: OpType, value: Option<&str>) -> AlterConfigOp {
        AlterConfigOp {
            name: name.into(),
            op,
            value: value.map(String::from),
        }
    }

    fn info(name: &str) -> Option<KeyInfo> {
        match name {
            "cleanup.policy" => Some(KeyInfo {
                is_list: true,
                default: Some("delete".into()),
            }),
            "throttled" => Some(KeyInfo {
                is_list: true,
                default: Some(String::new()),
            }),
            "retention.ms" => Some(KeyInfo {
                is_list: false,
                default: Some("604800000".into()),
            }),
            _ => None,
        }
    }

    fn apply(
        start: &[(&str, &str)],
        ops: &[AlterConfigOp],
    ) -> Result<BTreeMap<String, String>, OpError> {
        let mut props: BTreeMap<String, String> = start
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        prepare_incremental_configs(ops, &mut props, info)?;
        Ok(props)
    }

    fn get(r: Result<BTreeMap<String, String>, OpError>, key: &str) -> Option<String> {
        r.unwrap().get(key).cloned()
    }

    #[test]
    fn set_and_delete() {
        let r = apply(
            &[("retention.ms", "1")],
            &[
                op("segment.bytes", OpType::Set, Some("100")),
                op("retention.ms", OpType::Delete, None),
            ],
        )
        .unwrap();
        assert_eq!(r.get("segment.bytes").map(String::as_str), Some("100"));
        assert!(!r.contains_key("retention.ms"));
        // SET and DELETE need no definition of the key.
        assert!(apply(&[], &[op("unknown", OpType::Set, Some("1"))]).is_ok());
    }

    #[test]
    fn append_starts_from_the_stored_value_or_the_default_and_skips_present_items() {
        let append = |v| [op("cleanup.policy", OpType::Append, Some(v))];
        assert_eq!(
            get(apply(&[], &append("compact")), "cleanup.policy").as_deref(),
            Some("delete,compact")
        );
        assert_eq!(
            get(
                apply(&[("cleanup.policy", "compact")], &append("compact,delete")),
                "cleanup.policy"
            )
            .as_deref(),
            Some("compact,delete")
        );
        // An empty stored value appends to nothing.
        assert_eq!(
            get(
                apply(&[("cleanup.policy", "")], &append("compact")),
                "cleanup.policy"
            )
            .as_deref(),
            Some("compact")
        );
        assert_eq!(
            get(
                apply(&[], &[op("throttled", OpType::Append, Some("0:1"))]),
                "throttled"
            )
            .as_deref(),
            Some("0:1")
        );
    }

    #[test]
    fn subtract_removes_one_occurrence_per_item() {
        let sub = |v| [op("cleanup.policy", OpType::Subtract, Some(v))];
        assert_eq!(
            get(apply(&[], &sub("delete")), "cleanup.policy").as_deref(),
            Some("")
        );
        assert_eq!(
            get(
                apply(
                    &[("cleanup.policy", "compact,delete,compact")],
                    &sub("compact")
                ),
                "cleanup.policy"
            )
            .as_deref(),
            Some("delete,compact")
        );
        assert_eq!(
            get(
                apply(&[("cleanup.policy", "compact")], &sub("delete")),
                "cleanup.policy"
            )
            .as_deref(),
            Some("compact")
        );
    }

    #[test]
    fn list_operations_need_a_list_key() {
        assert_eq!(
            apply(&[], &[op("retention.ms", OpType::Append, Some("1"))]),
            Err(OpError::NotAList {
                verb: "append",
                name: "retention.ms".into()
            })
        );
        assert_eq!(
            apply(&[], &[op("retention.ms", OpType::Subtract, Some("1"))])
                .unwrap_err()
                .to_string(),
            "Config value subtract is not allowed for config key: retention.ms"
        );
        assert_eq!(
            apply(&[], &[op("nope", OpType::Append, Some("1"))]),
            Err(OpError::UnknownKey("nope".into()))
        );
    }

    #[test]
    fn preprocessing_checks() {
        let e = |n: &str, needs: bool, has: bool| (n.to_string(), needs, has);
        assert_eq!(
            check_entries([e("a", true, true), e("b", true, true)]),
            Ok(())
        );
        assert_eq!(
            check_entries([e("a", true, true), e("a", true, true)]),
            Err("Error due to duplicate config keys".into())
        );
        assert_eq!(
            check_entries([
                e("a", true, false),
                e("b", false, false),
                e("c", true, false)
            ]),
            Err("Null value not supported for : a, c".into())
        );
        let dups = duplicate_resources([
            (2, &b"t"[..]),
            (4, &b"0"[..]),
            (2, &b"t"[..]),
            (2, &b"u"[..]),
        ]);
        assert_eq!(dups, HashSet::from([0, 2]));
        assert_eq!(java_split(",,"), Vec::<String>::new());
        assert_eq!(java_split("a,,b,"), vec!["a", "", "b"]);
    }
}
