//! The text layers of a configuration: a `server.properties` file and `--override key=value`
//! arguments, as pairs for [`super::BrokerConfig::from_sources`].

use std::collections::BTreeMap;
use std::path::Path;

use super::ConfigError;
use crate::storage::meta_properties::load_properties;

/// Reads a `server.properties` file: `java.util.Properties` text, decoded as ISO-8859-1 as
/// Kafka's `Utils.loadProps` does. Pairs come back sorted by key (a key given twice keeps the
/// later value).
pub fn read_properties_file(path: &Path) -> Result<Vec<(String, String)>, ConfigError> {
    let bytes = std::fs::read(path).map_err(|source| ConfigError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let text: String = bytes.iter().map(|&b| char::from(b)).collect();
    parse_properties(&text).map_err(|reason| ConfigError::MalformedFile {
        path: path.to_path_buf(),
        reason,
    })
}

/// Parses `java.util.Properties` text (see `storage::meta_properties::load_properties`): `#`/`!`
/// comments, `key=value`, `key:value` or `key value`, backslash continuations and escapes.
pub fn parse_properties(text: &str) -> Result<Vec<(String, String)>, String> {
    let map: BTreeMap<String, String> = load_properties(text)?.into_iter().collect();
    Ok(map.into_iter().collect())
}

/// Splits one `--override` argument at its first `=`; the key is trimmed (values are trimmed
/// when parsed, as Kafka's `ConfigDef` does).
pub fn parse_override(arg: &str) -> Result<(String, String), ConfigError> {
    match arg.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.to_string()))
        }
        _ => Err(ConfigError::MalformedOverride {
            arg: arg.to_string(),
        }),
    }
}
