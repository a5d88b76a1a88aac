//! Kafka's checks on topic names (`org.apache.kafka.common.internals.Topic`): legal characters,
//! length, the reserved `.`/`..`, internal topics, and the `.`/`_` collision rule (the two map to
//! the same metric name, so Kafka refuses a topic that differs from another only there).

/// Kafka's `Topic.MAX_NAME_LENGTH`.
pub(crate) const MAX_NAME_LENGTH: usize = 249;

/// Kafka's `Topic.validate`; the message is Kafka's (`InvalidTopicException`).
pub(crate) fn validate_topic_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("Topic name is illegal, it can't be empty".into());
    }
    if name == "." || name == ".." {
        return Err("Topic name cannot be \".\" or \"..\"".into());
    }
    if name.len() > MAX_NAME_LENGTH {
        return Err(format!(
            "Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, topic name: {name}"
        ));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
    {
        return Err(format!(
            "Topic name \"{name}\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'"
        ));
    }
    Ok(())
}

pub(crate) use crate::cluster::is_internal_topic as is_internal;

/// `Topic.unifyCollisionChars`: `.` and `_` are the same in metric names.
fn unify_collision_chars(name: &str) -> String {
    name.replace('.', "_")
}

/// Every existing topic `name` would collide with, in the order given (Kafka's
/// `validateTopicCreate` lists them all).
pub(crate) fn find_collisions<'a>(
    name: &str,
    existing: impl IntoIterator<Item = &'a String>,
) -> Vec<&'a String> {
    let unified = unify_collision_chars(name);
    existing
        .into_iter()
        .filter(|other| other.as_str() != name && unify_collision_chars(other) == unified)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafkas_rules() {
        assert!(validate_topic_name("orders.v1_x-2").is_ok());
        assert!(validate_topic_name("").is_err());
        assert!(validate_topic_name("..").is_err());
        assert!(validate_topic_name(&"a".repeat(249)).is_ok());
        assert!(validate_topic_name(&"a".repeat(250)).is_err());
        assert_eq!(
            validate_topic_name("a b").unwrap_err(),
            "Topic name \"a b\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'"
        );
        let existing = ["a_b".to_string(), "c".to_string()];
        assert_eq!(find_collisions("a.b", &existing), vec!["a_b"]);
        assert_eq!(find_collisions("a_b", &existing), Vec::<&String>::new());
        let more = ["a_b".to_string(), "a.b".to_string(), "ab".to_string()];
        assert_eq!(find_collisions("a_b", &more), vec!["a.b"]);
        assert_eq!(find_collisions("a-b", &more), Vec::<&String>::new());
        assert!(is_internal("__consumer_offsets"));
    }
}
