//! Kafka's `SslPrincipalMapper`: `ssl.principal.mapping.rules`, a comma-separated list of
//! `DEFAULT` (the distinguished name as it is) and `RULE:pattern/replacement/[LU]` (when the
//! pattern matches the whole name, every match of it is replaced, `$n` naming groups, and the
//! result lower- or upper-cased). The first rule that applies names the principal; a name no
//! rule applies to is refused. The default is `DEFAULT`.
//!
//! Rules are split and parsed with Kafka's own two regular expressions; patterns are Rust
//! `regex` syntax, which agrees with Java's for the patterns these rules use (no
//! back-references or look-around inside patterns). Replacements follow Java's
//! `Matcher.replaceAll` with Kafka's tweak: `$n` takes as many digits as name an existing group,
//! a `$n` naming no group is literal text, and `\x` is a literal `x`.

use regex::Regex;

/// One parsed rule.
#[derive(Debug, Clone)]
enum Rule {
    Default,
    Replace {
        /// The pattern matched against the whole name.
        whole: Regex,
        /// The same pattern, for the replacements.
        pattern: Regex,
        replacement: Vec<Piece>,
        case: Case,
        text: String,
    },
}

#[derive(Debug, Clone, Copy)]
enum Case {
    Keep,
    Lower,
    Upper,
}

/// A piece of a replacement: literal text or a capture group.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Group(usize),
}

/// The parsed `ssl.principal.mapping.rules`.
#[derive(Debug, Clone)]
pub struct SslPrincipalMapper {
    rules: Vec<Rule>,
}

/// Kafka's rule grammar: group 1 `DEFAULT`, groups 2 and 4 pattern and replacement, group 6
/// the case flag; the last alternative catches anything else.
const RULE_PATTERN: &str = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)";

impl Default for SslPrincipalMapper {
    fn default() -> Self {
        SslPrincipalMapper {
            rules: vec![Rule::Default],
        }
    }
}

impl SslPrincipalMapper {
    /// Parses the rules; the error is Kafka's "Invalid rule" text.
    pub fn from_rules(rules: &str) -> Result<Self, String> {
        let invalid = |e: regex::Error| format!("invalid rule grammar: {e}");
        let splitter = Regex::new(&format!(r"\s*({RULE_PATTERN})\s*(,\s*|$)")).map_err(invalid)?;
        let parser = Regex::new(&format!("^(?:{RULE_PATTERN})")).map_err(invalid)?;
        let mut parsed = Vec::new();
        for found in splitter.captures_iter(rules.trim()) {
            let Some(rule) = found.get(1).map(|m| m.as_str()) else {
                continue;
            };
            let Some(caps) = parser.captures(rule) else {
                return Err(format!("Invalid rule: {rule}"));
            };
            let end = caps.get(0).map_or(0, |m| m.end());
            if end != rule.len() {
                return Err(format!(
                    "Invalid rule: `{rule}`, unmatched substring: `{}`",
                    &rule[end..]
                ));
            }
            if caps.get(1).is_some() {
                parsed.push(Rule::Default);
            } else if let Some(pattern) = caps.get(2) {
                let pattern = pattern.as_str();
                let bad = |e: regex::Error| format!("Invalid rule: {rule}: {e}");
                let compiled = Regex::new(pattern).map_err(bad)?;
                let whole = Regex::new(&format!(r"\A(?:{pattern})\z")).map_err(bad)?;
                let groups = compiled.captures_len() - 1;
                let replacement = caps.get(4).map_or("", |m| m.as_str());
                parsed.push(Rule::Replace {
                    whole,
                    pattern: compiled,
                    replacement: parse_replacement(replacement, groups),
                    case: match caps.get(6).map(|m| m.as_str()) {
                        Some("L") => Case::Lower,
                        Some("U") => Case::Upper,
                        _ => Case::Keep,
                    },
                    text: rule.to_string(),
                });
            }
            // Empty rules are ignored, as in Kafka.
        }
        Ok(SslPrincipalMapper { rules: parsed })
    }

    /// The principal name for `distinguished_name`; the error is Kafka's when no rule applies.
    pub fn name(&self, distinguished_name: &str) -> Result<String, String> {
        for rule in &self.rules {
            match rule {
                Rule::Default => return Ok(distinguished_name.to_string()),
                Rule::Replace {
                    whole,
                    pattern,
                    replacement,
                    case,
                    ..
                } => {
                    if !whole.is_match(distinguished_name) {
                        continue;
                    }
                    let replaced = replace_all(pattern, distinguished_name, replacement);
                    return Ok(match case {
                        Case::Keep => replaced,
                        Case::Lower => replaced.to_lowercase(),
                        Case::Upper => replaced.to_uppercase(),
                    });
                }
            }
        }
        let rules: Vec<&str> = self
            .rules
            .iter()
            .map(|r| match r {
                Rule::Default => "DEFAULT",
                Rule::Replace { text, .. } => text.as_str(),
            })
            .collect();
        Err(format!(
            "No rules apply to {distinguished_name}, rules [{}]",
            rules.join(", ")
        ))
    }
}

/// Java's replacement syntax with Kafka's literal treatment of group numbers beyond the
/// pattern's (see the module doc).
fn parse_replacement(text: &str, groups: usize) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    literal.push(next);
                }
            }
            '$' if chars.peek().is_some_and(char::is_ascii_digit) => {
                let mut group = 0usize;
                let mut first = true;
                while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                    let next = group * 10 + d as usize;
                    if !first && next > groups {
                        break;
                    }
                    group = next;
                    first = false;
                    chars.next();
                }
                if group > groups {
                    literal.push('$');
                    literal.push_str(&group.to_string());
                } else {
                    if !literal.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Group(group));
                }
            }
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        pieces.push(Piece::Text(literal));
    }
    pieces
}

/// `Matcher.replaceAll`: every match of `pattern` in `text` replaced by the pieces.
fn replace_all(pattern: &Regex, text: &str, pieces: &[Piece]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for caps in pattern.captures_iter(text) {
        let Some(whole) = caps.get(0) else { continue };
        out.push_str(&text[last..whole.start()]);
        for piece in pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Group(g) => out.push_str(caps.get(*g).map_or("", |m| m.as_str())),
            }
        }
        last = whole.end();
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(rules: &str, dn: &str) -> Result<String, String> {
        SslPrincipalMapper::from_rules(rules)?.name(dn)
    }

    /// Kafka's SslPrincipalMapperTest cases.
    #[test]
    fn applies_rules_as_kafka() {
        let rules = "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,\
                     RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,\
                     RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U,\
                     RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U,\
                     DEFAULT";
        for (dn, want) in [
            ("CN=Duke,OU=ServiceUsers,O=Org,C=US", "Duke"),
            ("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US", "duke@sme"),
            ("cn=duke,ou=test,dc=mycp,dc=com", "DUKE@TEST"),
            ("cN=regex.Fun,ou=exmaple.com", "REGEX.FUN"),
            ("Organization=kafka", "Organization=kafka"),
        ] {
            assert_eq!(map(rules, dn).unwrap(), want, "{dn}");
        }
        assert_eq!(map("DEFAULT", "CN=x").unwrap(), "CN=x");
        assert_eq!(
            map("", "CN=x").unwrap_err(),
            "No rules apply to CN=x, rules []"
        );
        assert_eq!(
            map("RULE:^CN=(.*?)$/$1/", "O=y").unwrap_err(),
            "No rules apply to O=y, rules [RULE:^CN=(.*?)$/$1/]"
        );
    }

    /// Kafka's SslPrincipalMapperTest.testValidRules.
    #[test]
    fn accepts_kafkas_valid_rules() {
        for rules in [
            "DEFAULT",
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
            "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
            "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
            "RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
            "RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
            "RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
        ] {
            assert!(SslPrincipalMapper::from_rules(rules).is_ok(), "{rules}");
        }
    }

    #[test]
    fn back_references_beyond_the_groups_are_literal() {
        assert_eq!(
            map("RULE:^CN=(.*),OU=(.*),O=(.*)$/$1@$4/", "CN=a,OU=b,O=c").unwrap(),
            "a@$4"
        );
        assert_eq!(map(r"RULE:^CN=(.*)$/$12\$x/", "CN=a").unwrap(), "a2$x");
        assert_eq!(map(r"RULE:^CN=(.*)$/a\/b/", "CN=z").unwrap(), "a/b");
    }

    #[test]
    fn refuses_invalid_rules() {
        // Kafka's SslPrincipalMapperTest.testInvalidRules.
        for rules in [
            "default",
            "DEFAUL",
            "DEFAULT/L",
            "DEFAULT/U",
            "RULE:CN=(.*?),OU=ServiceUsers.*/$1",
            "rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
        ] {
            assert!(
                SslPrincipalMapper::from_rules(rules).is_err(),
                "{rules} was accepted"
            );
        }
    }
}
