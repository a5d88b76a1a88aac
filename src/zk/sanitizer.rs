//! Kafka's `Sanitizer`: entity names (user principals, client ids) made safe as znode names by
//! URL-encoding, and read back. `/config/users/<sanitized user>` and the `users/<sanitized
//! user>` of a change notification use it.

/// Kafka's `Sanitizer.sanitize`: `java.net.URLEncoder.encode(name, "UTF-8")` with `*` written
/// `%2A` and the space `%20` (not `+`). ASCII letters, digits, `.`, `-` and `_` stay as they
/// are; every other character becomes the `%XX` escapes (upper-case hex) of its UTF-8 bytes.
pub(crate) fn sanitize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-' | b'_') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A sanitized name that `java.net.URLDecoder` refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DesanitizeError {
    #[error("entity name {name:?}: incomplete trailing escape (%) pattern")]
    IncompleteEscape { name: String },
    #[error("entity name {name:?}: illegal hex characters in escape (%) pattern at byte {at}")]
    IllegalHex { name: String, at: usize },
}

/// Kafka's `Sanitizer.desanitize`: `java.net.URLDecoder.decode(name, "UTF-8")`. `+` reads as a
/// space; each run of `%XX` escapes is decoded as UTF-8, malformed sequences becoming U+FFFD as
/// in Java; a `%` not followed by two hex digits is an error, as Java's `IllegalArgumentException`.
pub(crate) fn desanitize(name: &str) -> Result<String, DesanitizeError> {
    let bytes = name.as_bytes();
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => {
                out.push(' ');
                i += 1;
            }
            b'%' => {
                let mut run = Vec::new();
                while i < bytes.len() && bytes[i] == b'%' {
                    let Some(pair) = bytes.get(i + 1..i + 3) else {
                        return Err(DesanitizeError::IncompleteEscape {
                            name: name.to_string(),
                        });
                    };
                    let hex = std::str::from_utf8(pair).ok();
                    let Some(value) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) else {
                        return Err(DesanitizeError::IllegalHex {
                            name: name.to_string(),
                            at: i,
                        });
                    };
                    run.push(value);
                    i += 3;
                }
                out.push_str(&String::from_utf8_lossy(&run));
            }
            _ => {
                // Copy the whole character: `name` is UTF-8, and `i` is on a char boundary
                // because only ASCII bytes are consumed one by one.
                let rest = &name[i..];
                let Some(c) = rest.chars().next() else { break };
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_is_kafkas_url_encoding() {
        // Expected values are what Kafka 3.9.1's Sanitizer.sanitize returns.
        let cases = [
            ("alice", "alice"),
            ("a.b-c_d", "a.b-c_d"),
            ("User:alice", "User%3Aalice"),
            ("with space", "with%20space"),
            ("star*", "star%2A"),
            ("plus+", "plus%2B"),
            ("slash/", "slash%2F"),
            ("pct%", "pct%25"),
            ("ü", "%C3%BC"),
            ("CN=x,O=y", "CN%3Dx%2CO%3Dy"),
            ("<default>", "%3Cdefault%3E"),
            ("", ""),
        ];
        for (name, sanitized) in cases {
            assert_eq!(sanitize(name), sanitized, "{name:?}");
            assert_eq!(desanitize(sanitized).unwrap(), name, "{sanitized:?}");
        }
    }

    #[test]
    fn desanitize_reads_what_java_reads() {
        assert_eq!(desanitize("a+b").unwrap(), "a b");
        assert_eq!(desanitize("%c3%bc").unwrap(), "ü");
        // Names Kafka never writes but ZooKeeper may hold are read as Java reads them.
        assert_eq!(desanitize("ü*").unwrap(), "ü*");
        assert_eq!(desanitize("%FF").unwrap(), "\u{FFFD}");
        assert!(matches!(
            desanitize("a%4"),
            Err(DesanitizeError::IncompleteEscape { .. })
        ));
        assert!(matches!(
            desanitize("a%zz"),
            Err(DesanitizeError::IllegalHex { at: 1, .. })
        ));
    }
}
