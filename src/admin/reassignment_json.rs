//! Kafka's JSON files for `kafka-reassign-partitions.sh`, read and written as its
//! `ReassignPartitionsCommand` does.
//!
//! The reassignment JSON (`--generate`'s output, `--execute`/`--verify`/`--cancel`'s input):
//! `{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}`,
//! compact, keys in that order, partitions sorted by topic then partition, `log_dirs` as long as
//! `replicas` with `"any"` for no particular dir. On input `version` defaults to 1 (the only
//! one), `partitions` may be absent and `log_dirs` too.
//!
//! The topics-to-move JSON (`--topics-to-move-json`): `{"topics":[{"topic":"foo"}],"version":1}`,
//! `version` defaulting to 1 (the only one).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::cluster::{BrokerId, TopicPartition};

/// `log_dirs` entry meaning "any log dir" (Kafka's `ANY_LOG_DIR`).
pub const ANY_LOG_DIR: &str = "any";

/// Why a file was refused, with Kafka's wording where Kafka has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReassignmentJsonError {
    #[error("not valid JSON: {0}")]
    Syntax(String),
    #[error("{path}: expected {expected}")]
    Type {
        path: String,
        expected: &'static str,
    },
    #[error("Not supported version field value {0}")]
    UnsupportedVersion(i64),
    #[error(
        "Size of replicas list {replicas} is different from size of log dirs list {log_dirs} for partition {partition}"
    )]
    LogDirsSize {
        replicas: String,
        log_dirs: String,
        partition: TopicPartition,
    },
    #[error("Partition reassignment list cannot be empty")]
    Empty,
    #[error("Partition replica list cannot be empty")]
    EmptyReplicas { partition: TopicPartition },
    #[error("Partition reassignment contains duplicate topic partitions: {0}")]
    DuplicatePartitions(String),
    #[error("Partition replica lists may not contain duplicate entries: {0}")]
    DuplicateReplicas(String),
    #[error("List of topics to reassign contains duplicate entries: [{0}]")]
    DuplicateTopics(String),
}

/// One partition's target in a reassignment file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionReassignment {
    pub partition: TopicPartition,
    pub replicas: Vec<BrokerId>,
    /// As long as `replicas`; [`ANY_LOG_DIR`] when none was asked for.
    pub log_dirs: Vec<String>,
}

fn type_error(path: impl Into<String>, expected: &'static str) -> ReassignmentJsonError {
    ReassignmentJsonError::Type {
        path: path.into(),
        expected,
    }
}

fn parse_object(text: &str) -> Result<Map<String, Value>, ReassignmentJsonError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| ReassignmentJsonError::Syntax(e.to_string()))?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(type_error("the document", "an object")),
    }
}

fn int(value: &Value, path: &str) -> Result<i64, ReassignmentJsonError> {
    value.as_i64().ok_or_else(|| type_error(path, "an integer"))
}

fn int32(value: &Value, path: &str) -> Result<i32, ReassignmentJsonError> {
    i32::try_from(int(value, path)?).map_err(|_| type_error(path, "a 32-bit integer"))
}

fn version(doc: &Map<String, Value>) -> Result<(), ReassignmentJsonError> {
    match doc.get("version") {
        None => Ok(()),
        Some(v) => match int(v, "version")? {
            1 => Ok(()),
            other => Err(ReassignmentJsonError::UnsupportedVersion(other)),
        },
    }
}

fn array<'a>(doc: &'a Map<String, Value>, key: &str) -> Result<&'a [Value], ReassignmentJsonError> {
    match doc.get(key) {
        None => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(type_error(key, "an array")),
    }
}

/// Java's `List.toString`: `[1, 2]`.
fn java_list<T: std::fmt::Display>(items: &[T]) -> String {
    let parts: Vec<String> = items.iter().map(T::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// Reads a reassignment file (Kafka's `parsePartitionReassignmentData`), in file order.
pub fn parse_reassignment_json(
    text: &str,
) -> Result<Vec<PartitionReassignment>, ReassignmentJsonError> {
    let doc = parse_object(text)?;
    version(&doc)?;
    let mut out = Vec::new();
    for (i, item) in array(&doc, "partitions")?.iter().enumerate() {
        let at = |field: &str| format!("partitions[{i}].{field}");
        let fields = item
            .as_object()
            .ok_or_else(|| type_error(format!("partitions[{i}]"), "an object"))?;
        let topic = fields
            .get("topic")
            .and_then(Value::as_str)
            .ok_or_else(|| type_error(at("topic"), "a string"))?;
        let partition = int32(
            fields
                .get("partition")
                .ok_or_else(|| type_error(at("partition"), "an integer"))?,
            &at("partition"),
        )?;
        let replicas = match fields.get("replicas") {
            Some(Value::Array(ids)) => ids
                .iter()
                .map(|id| int32(id, &at("replicas")))
                .collect::<Result<Vec<_>, _>>()?,
            _ => return Err(type_error(at("replicas"), "an array of broker ids")),
        };
        let log_dirs = match fields.get("log_dirs") {
            None => vec![ANY_LOG_DIR.to_string(); replicas.len()],
            Some(Value::Array(dirs)) => dirs
                .iter()
                .map(|d| {
                    d.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| type_error(at("log_dirs"), "an array of strings"))
                })
                .collect::<Result<Vec<_>, _>>()?,
            Some(_) => return Err(type_error(at("log_dirs"), "an array of strings")),
        };
        let partition = TopicPartition::new(topic, partition);
        if log_dirs.len() != replicas.len() {
            return Err(ReassignmentJsonError::LogDirsSize {
                replicas: java_list(&replicas),
                log_dirs: java_list(&log_dirs),
                partition,
            });
        }
        out.push(PartitionReassignment {
            partition,
            replicas,
            log_dirs,
        });
    }
    Ok(out)
}

/// The checks `--execute` makes of a parsed file (Kafka's `parseExecuteAssignmentArgs`), in
/// Kafka's order; the targets by partition.
pub fn validate_for_execute(
    parsed: &[PartitionReassignment],
) -> Result<BTreeMap<TopicPartition, Vec<BrokerId>>, ReassignmentJsonError> {
    if parsed.is_empty() {
        return Err(ReassignmentJsonError::Empty);
    }
    if let Some(empty) = parsed.iter().find(|p| p.replicas.is_empty()) {
        return Err(ReassignmentJsonError::EmptyReplicas {
            partition: empty.partition.clone(),
        });
    }
    let mut seen = BTreeSet::new();
    let mut repeated = BTreeSet::new();
    for p in parsed {
        if !seen.insert(&p.partition) {
            repeated.insert(p.partition.to_string());
        }
    }
    if !repeated.is_empty() {
        let names: Vec<String> = repeated.into_iter().collect();
        return Err(ReassignmentJsonError::DuplicatePartitions(names.join(",")));
    }
    let mut messages = Vec::new();
    for p in parsed {
        let mut ids = BTreeSet::new();
        let mut twice = BTreeSet::new();
        for b in &p.replicas {
            if !ids.insert(*b) {
                twice.insert(*b);
            }
        }
        if !twice.is_empty() {
            let list: Vec<String> = twice.iter().map(i32::to_string).collect();
            messages.push(format!(
                "{} contains multiple entries for {}",
                p.partition,
                list.join(",")
            ));
        }
    }
    if !messages.is_empty() {
        return Err(ReassignmentJsonError::DuplicateReplicas(
            messages.join(". "),
        ));
    }
    Ok(parsed
        .iter()
        .map(|p| (p.partition.clone(), p.replicas.clone()))
        .collect())
}

/// Kafka's `formatAsReassignmentJson` with every log dir "any".
pub fn format_reassignment_json(assignment: &BTreeMap<TopicPartition, Vec<BrokerId>>) -> String {
    let partitions: Vec<String> = assignment
        .iter()
        .map(|(tp, replicas)| {
            let ids: Vec<String> = replicas.iter().map(i32::to_string).collect();
            let dirs = vec![format!("\"{ANY_LOG_DIR}\""); replicas.len()];
            format!(
                "{{\"topic\":{},\"partition\":{},\"replicas\":[{}],\"log_dirs\":[{}]}}",
                Value::String(tp.topic.clone()),
                tp.partition,
                ids.join(","),
                dirs.join(",")
            )
        })
        .collect();
    format!(
        "{{\"version\":1,\"partitions\":[{}]}}",
        partitions.join(",")
    )
}

/// Reads a topics-to-move file (Kafka's `parseTopicsData`), refusing a topic named twice.
pub fn parse_topics_to_move_json(text: &str) -> Result<Vec<String>, ReassignmentJsonError> {
    let doc = parse_object(text)?;
    version(&doc)?;
    let mut topics = Vec::new();
    for (i, item) in array(&doc, "topics")?.iter().enumerate() {
        let topic = item
            .as_object()
            .and_then(|o| o.get("topic"))
            .and_then(Value::as_str)
            .ok_or_else(|| type_error(format!("topics[{i}].topic"), "a string"))?;
        topics.push(topic.to_string());
    }
    let mut seen = BTreeSet::new();
    let repeated: BTreeSet<&String> = topics.iter().filter(|t| !seen.insert(*t)).collect();
    if !repeated.is_empty() {
        let names: Vec<&str> = repeated.into_iter().map(String::as_str).collect();
        return Err(ReassignmentJsonError::DuplicateTopics(names.join(", ")));
    }
    Ok(topics)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(t: &str, p: i32) -> TopicPartition {
        TopicPartition::new(t, p)
    }

    #[test]
    fn formats_as_kafka_does() {
        let a: BTreeMap<TopicPartition, Vec<BrokerId>> = [
            (tp("foo", 1), vec![2, 1]),
            (tp("bar", 0), vec![3]),
            (tp("foo", 0), vec![1, 2]),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            format_reassignment_json(&a),
            r#"{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[3],"log_dirs":["any"]},{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},{"topic":"foo","partition":1,"replicas":[2,1],"log_dirs":["any","any"]}]}"#
        );
        assert_eq!(
            format_reassignment_json(&BTreeMap::new()),
            r#"{"version":1,"partitions":[]}"#
        );
    }

    #[test]
    fn reads_what_it_writes_and_kafkas_optional_fields() {
        let a: BTreeMap<TopicPartition, Vec<BrokerId>> =
            [(tp("t", 0), vec![1, 2]), (tp("t", 1), vec![2, 3])]
                .into_iter()
                .collect();
        let parsed = parse_reassignment_json(&format_reassignment_json(&a)).unwrap();
        assert_eq!(validate_for_execute(&parsed).unwrap(), a);
        let bare = parse_reassignment_json(
            r#"{"partitions":[{"topic":"t","partition":3,"replicas":[4]}]}"#,
        )
        .unwrap();
        assert_eq!(bare[0].log_dirs, ["any"]);
        assert_eq!(parse_reassignment_json("{}").unwrap(), []);
    }

    #[test]
    fn refuses_with_kafkas_messages() {
        let err = |text: &str| parse_reassignment_json(text).unwrap_err().to_string();
        assert_eq!(
            err(r#"{"version":2,"partitions":[]}"#),
            "Not supported version field value 2"
        );
        assert_eq!(
            err(
                r#"{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}"#
            ),
            "Size of replicas list [1, 2] is different from size of log dirs list [any] for partition t-0"
        );
        assert_eq!(
            err(r#"{"partitions":[{"topic":"t","partition":"0","replicas":[1]}]}"#),
            "partitions[0].partition: expected an integer"
        );
        assert_eq!(
            err(r#"{"partitions":[{"partition":0,"replicas":[1]}]}"#),
            "partitions[0].topic: expected a string"
        );
        assert!(err("{").starts_with("not valid JSON: "));
        assert_eq!(err("[]"), "the document: expected an object");
        let validate = |text: &str| {
            validate_for_execute(&parse_reassignment_json(text).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            validate(r#"{"partitions":[]}"#),
            "Partition reassignment list cannot be empty"
        );
        assert_eq!(
            validate(r#"{"partitions":[{"topic":"t","partition":0,"replicas":[]}]}"#),
            "Partition replica list cannot be empty"
        );
        assert_eq!(
            validate(
                r#"{"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}"#
            ),
            "Partition reassignment contains duplicate topic partitions: t-0"
        );
        assert_eq!(
            validate(
                r#"{"partitions":[{"topic":"t","partition":0,"replicas":[1,1,2,2]},{"topic":"u","partition":1,"replicas":[3,3]}]}"#
            ),
            "Partition replica lists may not contain duplicate entries: t-0 contains multiple entries for 1,2. u-1 contains multiple entries for 3"
        );
    }

    #[test]
    fn topics_to_move() {
        assert_eq!(
            parse_topics_to_move_json(
                r#"{"topics":[{"topic":"foo"},{"topic":"foo1"}],"version":1}"#
            )
            .unwrap(),
            ["foo", "foo1"]
        );
        assert_eq!(
            parse_topics_to_move_json(r#"{"version":1}"#).unwrap(),
            [] as [&str; 0]
        );
        assert_eq!(
            parse_topics_to_move_json(r#"{"topics":[{"topic":"a"},{"topic":"a"}]}"#)
                .unwrap_err()
                .to_string(),
            "List of topics to reassign contains duplicate entries: [a]"
        );
        assert_eq!(
            parse_topics_to_move_json(r#"{"topics":[{"topic":"a"}],"version":3}"#)
                .unwrap_err()
                .to_string(),
            "Not supported version field value 3"
        );
        assert_eq!(
            parse_topics_to_move_json(r#"{"topics":[{"name":"a"}]}"#)
                .unwrap_err()
                .to_string(),
            "topics[0].topic: expected a string"
        );
    }
}
