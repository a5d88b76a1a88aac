//! Tidy checks that read the sources: the layering rule of docs/architecture.md, a `//!` doc at
//! the top of every source file, and the size limit that keeps files to one job.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Which top-level modules of the crate each module may name. A module may always name itself.
const LAYERS: &[(&str, &[&str])] = &[
    ("protocol", &[]),
    ("cluster", &[]),
    ("metrics", &[]),
    ("storage", &["protocol", "cluster", "metrics"]),
    ("zk", &["cluster", "metrics"]),
    ("admin", &["cluster"]),
    (
        "controller",
        &["zk", "admin", "cluster", "protocol", "metrics"],
    ),
    (
        "replication",
        &["storage", "protocol", "cluster", "metrics"],
    ),
    (
        "coordinator",
        &["replication", "protocol", "cluster", "zk", "metrics"],
    ),
    ("network", &["protocol", "cluster", "metrics"]),
    ("config", &["storage", "protocol", "cluster", "security"]),
    ("cli", &[]),
    ("security", &[]),
    // The broker wires every layer together; the commands sit on top of everything.
    ("server", EVERY_MODULE),
    ("commands", EVERY_MODULE),
];

/// Every top-level module, for the two layers that may name them all.
const EVERY_MODULE: &[&str] = &[
    "admin",
    "cli",
    "cluster",
    "commands",
    "metrics",
    "config",
    "controller",
    "coordinator",
    "network",
    "protocol",
    "replication",
    "security",
    "server",
    "storage",
    "zk",
];

/// Files longer than this have grown past one job; generated protocol messages are exempt.
const MAX_LINES: usize = 800;

fn source_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches"] {
        walk(&root.join(dir), &mut files);
    }
    files.sort();
    files
}

/// The top-level module a file under `src/` belongs to (`src/storage/log_segment.rs` → storage).
fn module_of(path: &Path) -> Option<String> {
    let rel = path
        .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    Some(first.trim_end_matches(".rs").to_string())
}

/// Every top-level module named through `crate::` paths, including `use crate::{a::X, b}`.
fn crate_modules_named(source: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let mut rest = source;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        rest = &group[i..];
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_alphanumeric() || c == '_') => {
                        let ident: String = group[i..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        named.insert(ident);
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let ident: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !ident.is_empty() {
                named.insert(ident);
            }
        }
    }
    named
}

#[test]
fn every_source_file_opens_with_a_module_doc() {
    let missing: Vec<_> = source_files()
        .into_iter()
        .filter(|path| {
            let text = fs::read_to_string(path).unwrap();
            !text.trim_start().starts_with("//!")
        })
        .collect();
    assert!(missing.is_empty(), "files without a `//!` doc: {missing:?}");
}

#[test]
fn every_module_of_lib_rs_is_in_the_layer_table() {
    let lib = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';'))
        .collect();
    assert!(declared.contains(&"controller"), "{declared:?}");
    for module in &declared {
        assert!(
            LAYERS.iter().any(|(m, _)| m == module),
            "top-level module `{module}` is missing from tidy's layer table"
        );
        assert!(
            EVERY_MODULE.contains(module),
            "{module} missing from EVERY_MODULE"
        );
    }
}

#[test]
fn modules_respect_the_layering_rule() {
    let mut violations = Vec::new();
    for path in source_files() {
        let Some(module) = module_of(&path) else {
            continue;
        };
        if module == "lib" || module == "main" {
            continue;
        }
        let Some((_, allowed)) = LAYERS.iter().find(|(m, _)| *m == module) else {
            violations.push(format!(
                "{}: top-level module `{module}` is missing from tidy's layer table",
                path.display()
            ));
            continue;
        };
        let text = fs::read_to_string(&path).unwrap();
        for named in crate_modules_named(&text) {
            if named != module && !allowed.contains(&named.as_str()) && named != "self" {
                violations.push(format!("{} names crate::{named}", path.display()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layering violations:\n{}",
        violations.join("\n")
    );
}

#[test]
fn files_stay_small() {
    let too_long: Vec<_> = source_files()
        .into_iter()
        .filter(|path| !path.components().any(|c| c.as_os_str() == "messages"))
        .filter_map(|path| {
            let lines = fs::read_to_string(&path).unwrap().lines().count();
            (lines > MAX_LINES).then(|| format!("{} has {lines} lines", path.display()))
        })
        .collect();
    assert!(too_long.is_empty(), "split these files: {too_long:?}");
}

#[test]
fn the_import_scanner_sees_grouped_and_plain_paths() {
    let named = crate_modules_named(
        "use crate::protocol::record;\nuse crate::{cluster::TopicPartition, storage::{a, b}};",
    );
    let expected: BTreeSet<String> = ["protocol", "cluster", "storage"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(named, expected);
}
