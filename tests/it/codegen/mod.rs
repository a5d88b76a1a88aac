//! The protocol code generator, run as a golden test (the rust-analyzer `codegen` pattern):
//! it reads Kafka 3.9's message specs from `../shared/kafka-3.9-message-specs` (beside the
//! checkout), regenerates `src/protocol/messages/` and the test-only `tests/it/messages/` in
//! memory, and fails when the committed files differ. `UPDATE_CODEGEN=1` writes them instead.
//! A missing specs directory is a failure, never a skip.

// The generator runs only as a test: a malformed spec must fail it loudly, with the file named.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod emit;
mod emit_arb;
mod emit_error_codes;
mod emit_mod;
mod spec;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn specs_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    root.parent()
        .unwrap_or(root)
        .join("shared/kafka-3.9-message-specs")
}

/// Every generated file, by path relative to the crate root.
fn generate() -> BTreeMap<PathBuf, String> {
    let dir = specs_dir();
    assert!(
        dir.join("clients").is_dir(),
        "the message specs are missing: expected {} (Kafka 3.9.0's \
         clients/src/main/resources/common/message and the coordinators' schemas)",
        dir.display()
    );
    let specs = spec::read_all(&dir);
    assert!(
        specs.len() > 200,
        "only {} specs found in {}",
        specs.len(),
        dir.display()
    );
    let mut files = BTreeMap::new();
    for s in &specs {
        files.insert(
            PathBuf::from(format!("src/protocol/messages/{}.rs", emit::module_name(s))),
            emit::emit_module(s),
        );
    }
    files.insert(
        PathBuf::from("src/protocol/messages/mod.rs"),
        emit_mod::emit_mod(&specs),
    );
    files.insert(
        PathBuf::from("tests/it/messages/mod.rs"),
        emit_arb::emit_arb(&specs),
    );
    files
}

#[test]
fn generated_protocol_code_is_fresh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = generate();
    let update = std::env::var_os("UPDATE_CODEGEN").is_some();
    let mut stale = Vec::new();
    for (rel, text) in &files {
        let path = root.join(rel);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(rel.display().to_string());
            if update {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, text).unwrap();
            }
        }
    }
    // Files left over from specs that no longer exist.
    for entry in std::fs::read_dir(root.join("src/protocol/messages")).unwrap() {
        let path = entry.unwrap().path();
        let rel = path.strip_prefix(root).unwrap().to_path_buf();
        if !files.contains_key(&rel) {
            stale.push(format!("{} (not generated)", rel.display()));
            if update {
                std::fs::remove_file(&path).unwrap();
            }
        }
    }
    assert!(
        update || stale.is_empty(),
        "generated protocol code is stale; run `UPDATE_CODEGEN=1 cargo test --test it \
         generated_protocol_code_is_fresh` and commit the result. Stale files:\n{}",
        stale.join("\n")
    );
}

#[test]
fn spec_comments_are_stripped_outside_strings_only() {
    let text = "{ // a comment\n \"about\": \"see http://x\" // trailing\n}";
    let v: serde_json::Value = serde_json::from_str(&spec::strip_comments(text)).unwrap();
    assert_eq!(v["about"], "see http://x");
}

#[test]
fn names_become_snake_case_identifiers() {
    assert_eq!(spec::snake("TopicProduceData"), "topic_produce_data");
    assert_eq!(spec::snake("IsrEpoch"), "isr_epoch");
    assert_eq!(spec::field_ident("Type"), "r#type");
    assert_eq!(spec::field_ident("Match"), "r#match");
}

#[test]
fn version_conditions_are_minimal() {
    let ctx = spec::Versions::parse("0-11");
    assert_eq!(spec::Versions::parse("0+").cond(ctx), None);
    assert_eq!(
        spec::Versions::parse("3+").cond(ctx).as_deref(),
        Some("v >= 3")
    );
    assert_eq!(
        spec::Versions::parse("1-2").cond(ctx).as_deref(),
        Some("(1..=2).contains(&v)")
    );
    assert_eq!(
        spec::Versions::parse("none").cond(ctx).as_deref(),
        Some("false")
    );
    assert_eq!(
        spec::Versions::parse("3+").neg_cond(ctx).as_deref(),
        Some("v < 3")
    );
}
