//! Fuzzes reading a broker's configuration: `server.properties` bytes (ISO-8859-1, as Kafka's
//! `Utils.loadProps` reads them) through the `java.util.Properties` parser, then the broker's
//! config layers and `KafkaConfig`-style validation. Nothing may panic; every refusal is one
//! line naming the culprit (the CLI prints it as the whole error); and what parses writes back
//! as properties text that parses to the same pairs.
//!
//! Input: the file's bytes.

#![no_main]

use kcli::config::{BrokerConfig, KCLI_SERVE_BASE, parse_properties};
use libfuzzer_sys::fuzz_target;

/// `Properties.store`'s escaping: every character that would end a key or start a comment, and
/// every control or non-ASCII character, escaped so the text reads back the same.
fn escape(s: &str, is_key: bool) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{c}' => out.push_str("\\f"),
            ' ' if is_key || i == 0 => out.push_str("\\ "),
            '=' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c if (' '..='~').contains(&c) => out.push(c),
            c => {
                let code = u16::try_from(u32::from(c)).ok()?;
                out.push_str(&format!("\\u{code:04X}"));
            }
        }
    }
    Some(out)
}

fuzz_target!(|data: &[u8]| {
    let text: String = data.iter().map(|&b| char::from(b)).collect();
    let pairs = match parse_properties(&text) {
        Ok(pairs) => pairs,
        Err(reason) => {
            assert!(
                !reason.contains(['\n', '\r']),
                "a multi-line reason: {reason:?}"
            );
            return;
        }
    };
    let mut written = String::new();
    let mut writable = true;
    for (key, value) in &pairs {
        match (escape(key, true), escape(value, false)) {
            (Some(k), Some(v)) => written.push_str(&format!("{k}={v}\n")),
            _ => writable = false,
        }
    }
    if writable {
        let again = parse_properties(&written).expect("written properties parse");
        assert_eq!(
            again, pairs,
            "properties written back read differently:\n{written}"
        );
    }
    if let Err(e) = BrokerConfig::from_sources(KCLI_SERVE_BASE, &pairs, &[]) {
        let message = e.to_string();
        assert!(
            !message.contains(['\n', '\r']),
            "a multi-line error: {message:?}"
        );
    }
});
