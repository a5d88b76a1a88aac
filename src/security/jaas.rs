//! The value of `sasl.jaas.config` (and `listener.name.<listener>.<mechanism>.sasl.jaas.config`)
//! parsed as Kafka 3.9's `JaasConfig` parses it, with the options the broker reads from
//! `PlainLoginModule` and `ScramLoginModule`.
//!
//! Format: one or more entries `<LoginModuleClass> <controlFlag> (<key>=<value>)* ;`. Kafka
//! reads it with Java's `StreamTokenizer`, whose rules this follows:
//!
//! - whitespace is any character up to U+0020; `//` and `/*...*/` are comments, and so is a lone
//!   `/` up to the end of the line;
//! - a word starts with a letter, `_`, `$` or a character at or above U+00A0, and goes on with
//!   those, digits, `.` and `-` (so `org.apache.kafka...PlainLoginModule` is one word);
//! - a value in `"..."` or `'...'` may hold anything; `\` escapes `\n \t \r \b \f \a \v`,
//!   octal `\0`..`\377`, and any other character as itself (`\"`, `\\`);
//! - a digit, `.` or `-` followed by a digit starts a number, which is not a value: Kafka
//!   refuses `key=123`, so quote numbers;
//! - any other character stands alone (`=`, `;`).
//!
//! One deviation: a quoted string that reaches the end of its line or of the input unclosed is
//! refused here, where `StreamTokenizer` silently closes it.

use std::collections::BTreeMap;
use std::fmt;
use std::iter::Peekable;
use std::str::Chars;

/// Kafka's `PlainLoginModule` class, whose `user_<name>` options are the PLAIN users.
pub(crate) const PLAIN_LOGIN_MODULE: &str =
    "org.apache.kafka.common.security.plain.PlainLoginModule";
/// Kafka's `ScramLoginModule` class.
#[cfg(test)]
pub(crate) const SCRAM_LOGIN_MODULE: &str =
    "org.apache.kafka.common.security.scram.ScramLoginModule";
/// The option prefix of PLAIN users: `user_alice="alice-secret"`.
pub(crate) const PLAIN_USER_PREFIX: &str = "user_";

/// JAAS's `LoginModuleControlFlag`; read case-insensitively.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoginModuleControlFlag {
    Required,
    Requisite,
    Sufficient,
    Optional,
}

/// One entry: the login module's class name, its control flag and its options (a repeated key
/// keeps its last value, as Kafka's map does). `Debug` shows option names, not values, since
/// they hold passwords.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct AppConfigurationEntry {
    pub login_module_name: String,
    pub control_flag: LoginModuleControlFlag,
    pub options: BTreeMap<String, String>,
}

impl AppConfigurationEntry {
    /// The option `key`.
    pub(crate) fn option(&self, key: &str) -> Option<&str> {
        self.options.get(key).map(String::as_str)
    }

    /// `username`: the broker's own user when it is the SASL client (inter-broker).
    pub(crate) fn username(&self) -> Option<&str> {
        self.option("username")
    }

    /// `password`: the broker's own password when it is the SASL client (inter-broker).
    pub(crate) fn password(&self) -> Option<&str> {
        self.option("password")
    }
}

impl fmt::Debug for AppConfigurationEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppConfigurationEntry")
            .field("login_module_name", &self.login_module_name)
            .field("control_flag", &self.control_flag)
            .field("options", &self.options.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// A parsed JAAS config value: at least one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JaasConfig {
    entries: Vec<AppConfigurationEntry>,
}

impl JaasConfig {
    /// Parses a `sasl.jaas.config` value (Kafka's `new JaasConfig(name, value)`).
    pub(crate) fn parse(text: &str) -> Result<JaasConfig, JaasError> {
        let mut tokens = Tokenizer::new(text);
        let mut entries = Vec::new();
        loop {
            let first = tokens.next_token()?;
            if first == Token::Eof {
                break;
            }
            entries.push(parse_entry(first, &mut tokens)?);
        }
        if entries.is_empty() {
            return Err(JaasError::LoginModuleNotSpecified);
        }
        Ok(JaasConfig { entries })
    }

    #[cfg(test)]
    pub(crate) fn entries(&self) -> &[AppConfigurationEntry] {
        &self.entries
    }

    /// The single login module a broker's `sasl.jaas.config` must hold (Kafka's
    /// `JaasContext.load`).
    pub(crate) fn single_entry(&self) -> Result<&AppConfigurationEntry, JaasError> {
        match self.entries.as_slice() {
            [entry] => Ok(entry),
            entries => Err(JaasError::NotOneLoginModule {
                count: entries.len(),
            }),
        }
    }

    /// Kafka's `JaasContext.configEntryOption`: `key` from the first entry that has it, among
    /// the entries of class `login_module` when one is given.
    #[cfg(test)]
    pub(crate) fn config_entry_option(
        &self,
        key: &str,
        login_module: Option<&str>,
    ) -> Option<&str> {
        self.entries
            .iter()
            .filter(|e| login_module.is_none_or(|m| e.login_module_name == m))
            .find_map(|e| e.option(key))
    }

    /// The PLAIN password of `user`: option `user_<user>` of a `PlainLoginModule` entry, as
    /// Kafka's `PlainServerCallbackHandler` looks it up.
    #[cfg(test)]
    pub(crate) fn plain_password(&self, user: &str) -> Option<&str> {
        let key = format!("{PLAIN_USER_PREFIX}{user}");
        self.config_entry_option(&key, Some(PLAIN_LOGIN_MODULE))
    }

    /// Every PLAIN user and password (`user_<name>` options of `PlainLoginModule` entries; the
    /// first entry wins for a name in several).
    #[cfg(test)]
    pub(crate) fn plain_users(&self) -> BTreeMap<&str, &str> {
        let mut users = BTreeMap::new();
        let plain = self
            .entries
            .iter()
            .filter(|e| e.login_module_name == PLAIN_LOGIN_MODULE);
        for entry in plain {
            for (key, value) in &entry.options {
                if let Some(user) = key.strip_prefix(PLAIN_USER_PREFIX) {
                    users.entry(user).or_insert(value.as_str());
                }
            }
        }
        users
    }
}

fn parse_entry(
    first: Token,
    tokens: &mut Tokenizer<'_>,
) -> Result<AppConfigurationEntry, JaasError> {
    let login_module_name = match first.into_string() {
        Some(name) if !name.is_empty() => name,
        _ => return Err(JaasError::LoginModuleNameMissing),
    };
    let flag = match tokens.next_token()? {
        Token::Eof => return Err(JaasError::ControlFlagNotSpecified),
        token => token
            .into_string()
            .ok_or(JaasError::ControlFlagNotAvailable)?,
    };
    let control_flag = match flag.to_ascii_uppercase().as_str() {
        "REQUIRED" => LoginModuleControlFlag::Required,
        "REQUISITE" => LoginModuleControlFlag::Requisite,
        "SUFFICIENT" => LoginModuleControlFlag::Sufficient,
        "OPTIONAL" => LoginModuleControlFlag::Optional,
        _ => return Err(JaasError::InvalidControlFlag { flag }),
    };
    let mut options = BTreeMap::new();
    loop {
        let key = match tokens.next_token()? {
            Token::Eof => return Err(JaasError::NotTerminated),
            Token::Char(';') => break,
            token => token
                .into_string()
                .ok_or_else(|| JaasError::OptionNameMissing {
                    module: login_module_name.clone(),
                })?,
        };
        if tokens.next_token()? != Token::Char('=') {
            return Err(JaasError::ValueNotSpecified { key });
        }
        let Some(value) = tokens.next_token()?.into_string() else {
            return Err(JaasError::ValueNotSpecified { key });
        };
        options.insert(key, value);
    }
    Ok(AppConfigurationEntry {
        login_module_name,
        control_flag,
        options,
    })
}

/// A token of Java's `StreamTokenizer` as Kafka configures it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Quoted(String),
    /// A number: its value is never used, and it is not a string.
    Number,
    Char(char),
    Eof,
}

impl Token {
    /// `StreamTokenizer.sval`: set for words and quoted strings only.
    fn into_string(self) -> Option<String> {
        match self {
            Token::Word(s) | Token::Quoted(s) => Some(s),
            Token::Number | Token::Char(_) | Token::Eof => None,
        }
    }
}

struct Tokenizer<'a> {
    chars: Peekable<Chars<'a>>,
}

fn is_whitespace(c: char) -> bool {
    c <= ' '
}

fn starts_word(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$' || c >= '\u{a0}'
}

fn continues_word(c: char) -> bool {
    starts_word(c) || c.is_ascii_digit() || c == '.' || c == '-'
}

impl<'a> Tokenizer<'a> {
    fn new(text: &'a str) -> Tokenizer<'a> {
        Tokenizer {
            chars: text.chars().peekable(),
        }
    }

    fn skip_line(&mut self) {
        while self.chars.next_if(|&c| c != '\n' && c != '\r').is_some() {}
    }

    fn next_token(&mut self) -> Result<Token, JaasError> {
        loop {
            let Some(c) = self.chars.next() else {
                return Ok(Token::Eof);
            };
            if is_whitespace(c) {
                continue;
            }
            if c.is_ascii_digit() || c == '.' {
                return Ok(self.number(c));
            }
            if c == '-' {
                return Ok(
                    match self.chars.next_if(|&d| d.is_ascii_digit() || d == '.') {
                        Some(d) => self.number(d),
                        None => Token::Char('-'),
                    },
                );
            }
            if starts_word(c) {
                let mut word = String::from(c);
                while let Some(c) = self.chars.next_if(|&c| continues_word(c)) {
                    word.push(c);
                }
                return Ok(Token::Word(word));
            }
            if c == '"' || c == '\'' {
                return self.quoted(c).map(Token::Quoted);
            }
            if c == '/' {
                if self.chars.next_if_eq(&'*').is_some() {
                    let mut previous = '\0';
                    loop {
                        match self.chars.next() {
                            None => return Ok(Token::Eof),
                            Some('/') if previous == '*' => break,
                            Some(c) => previous = c,
                        }
                    }
                } else {
                    // `//` and, since `/` is StreamTokenizer's comment character, a lone `/`.
                    self.skip_line();
                }
                continue;
            }
            return Ok(Token::Char(c));
        }
    }

    /// Consumes the rest of a number whose first digit or `.`, `first`, was just read.
    fn number(&mut self, first: char) -> Token {
        let mut seen_dot = first == '.';
        while let Some(c) = self
            .chars
            .next_if(|&c| c.is_ascii_digit() || (c == '.' && !seen_dot))
        {
            seen_dot |= c == '.';
        }
        Token::Number
    }

    fn quoted(&mut self, quote: char) -> Result<String, JaasError> {
        let mut value = String::new();
        loop {
            let c = match self.chars.next() {
                None | Some('\n') | Some('\r') => return Err(JaasError::UnterminatedQuote),
                Some(c) if c == quote => return Ok(value),
                Some(c) => c,
            };
            if c != '\\' {
                value.push(c);
                continue;
            }
            let escaped = self.chars.next().ok_or(JaasError::UnterminatedQuote)?;
            value.push(match escaped {
                'a' => '\u{7}',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                'v' => '\u{b}',
                '0'..='7' => self.octal(escaped),
                other => other,
            });
        }
    }

    /// An octal escape after `\`: up to three digits, the third only when the first is 0-3.
    fn octal(&mut self, first: char) -> char {
        let digit = |c: char| c.to_digit(8);
        let mut value = digit(first).unwrap_or(0);
        if let Some(second) = self.chars.next_if(|&c| digit(c).is_some()) {
            value = value * 8 + digit(second).unwrap_or(0);
            if first <= '3'
                && let Some(third) = self.chars.next_if(|&c| digit(c).is_some())
            {
                value = value * 8 + digit(third).unwrap_or(0);
            }
        }
        char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER)
    }
}

/// A JAAS config Kafka would refuse. The messages are Kafka's where it has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JaasError {
    #[error("Login module not specified in JAAS config")]
    LoginModuleNotSpecified,
    #[error("Login module class name not specified in JAAS config (it must come first)")]
    LoginModuleNameMissing,
    #[error("Login module control flag not specified in JAAS config")]
    ControlFlagNotSpecified,
    #[error("Login module control flag is not available in the JAAS config")]
    ControlFlagNotAvailable,
    #[error("Invalid login module control flag '{flag}' in JAAS config")]
    InvalidControlFlag { flag: String },
    #[error("Option name expected in the JAAS config entry of {module}")]
    OptionNameMissing { module: String },
    /// Also for an unquoted number: quote it.
    #[error("Value not specified for key '{key}' in JAAS config")]
    ValueNotSpecified { key: String },
    #[error("JAAS config entry not terminated by semi-colon")]
    NotTerminated,
    #[error("Unterminated quoted string in JAAS config")]
    UnterminatedQuote,
    #[error("JAAS config property contains {count} login modules, should be 1 module")]
    NotOneLoginModule { count: usize },
}

#[cfg(test)]
#[path = "jaas_tests.rs"]
mod tests;
