//! Tests of the JAAS config parser: Kafka's documented broker and client examples, the cases of
//! Kafka's `JaasContextTest`, StreamTokenizer's quoting, comments and numbers, and errors.

use super::*;

/// Kafka's documentation (security.html, SASL/PLAIN), as `server.properties` joins the lines.
const PLAIN_BROKER: &str = "org.apache.kafka.common.security.plain.PlainLoginModule required \
    username=\"admin\" \
    password=\"admin-secret\" \
    user_admin=\"admin-secret\" \
    user_alice=\"alice-secret\";";

/// Kafka's documentation (security.html, SASL/SCRAM), the broker's own client credentials.
const SCRAM_BROKER: &str = "org.apache.kafka.common.security.scram.ScramLoginModule required \
    username=\"admin\" \
    password=\"admin-secret\";";

fn parse_err(text: &str) -> JaasError {
    JaasConfig::parse(text).unwrap_err()
}

#[test]
fn kafkas_plain_broker_example() {
    let config = JaasConfig::parse(PLAIN_BROKER).unwrap();
    let entry = config.single_entry().unwrap();
    assert_eq!(entry.login_module_name, PLAIN_LOGIN_MODULE);
    assert_eq!(entry.control_flag, LoginModuleControlFlag::Required);
    assert_eq!(entry.username(), Some("admin"));
    assert_eq!(entry.password(), Some("admin-secret"));
    assert_eq!(config.plain_password("alice"), Some("alice-secret"));
    assert_eq!(config.plain_password("admin"), Some("admin-secret"));
    assert_eq!(config.plain_password("bob"), None);
    let users: Vec<_> = config.plain_users().into_iter().collect();
    assert_eq!(
        users,
        [("admin", "admin-secret"), ("alice", "alice-secret")]
    );
    // The same across lines, as a JAAS file would have it.
    let multi_line = PLAIN_BROKER.replace("    ", "\n    ");
    assert_eq!(JaasConfig::parse(&multi_line).unwrap(), config);
}

#[test]
fn kafkas_scram_examples() {
    let config = JaasConfig::parse(SCRAM_BROKER).unwrap();
    let entry = config.single_entry().unwrap();
    assert_eq!(entry.login_module_name, SCRAM_LOGIN_MODULE);
    assert_eq!(
        (entry.username(), entry.password()),
        (Some("admin"), Some("admin-secret"))
    );
    // SCRAM entries hold no PLAIN users.
    assert!(config.plain_users().is_empty());
    assert_eq!(config.plain_password("admin"), None);

    // A delegation token client (docs, "Token Authentication"), unquoted-safe value quoted.
    let token = JaasConfig::parse(
        "org.apache.kafka.common.security.scram.ScramLoginModule required \
         username=\"tokenID123\" password=\"lAYYSFmLs4bTjf+lTZ1LCHR/ZZFNA==\" tokenauth=\"true\";",
    )
    .unwrap();
    let entry = token.single_entry().unwrap();
    assert_eq!(entry.option("tokenauth"), Some("true"));
    assert_eq!(entry.password(), Some("lAYYSFmLs4bTjf+lTZ1LCHR/ZZFNA=="));
}

#[test]
fn options_as_kafkas_jaas_context_test_has_them() {
    let flags = [
        ("required", LoginModuleControlFlag::Required),
        ("REQUISITE", LoginModuleControlFlag::Requisite),
        ("Sufficient", LoginModuleControlFlag::Sufficient),
        ("optional", LoginModuleControlFlag::Optional),
    ];
    for (text, flag) in flags {
        let config =
            JaasConfig::parse(&format!("test.testControlFlag {text} propName=propValue;")).unwrap();
        let entry = config.single_entry().unwrap();
        assert_eq!(entry.control_flag, flag);
        assert_eq!(entry.option("propName"), Some("propValue"));
    }
    let config = JaasConfig::parse("test.testConfigNoOptions required;").unwrap();
    assert!(config.single_entry().unwrap().options.is_empty());

    let config = JaasConfig::parse(
        "test.testQuotedOptionValue required propName=\"prop value\" \
         propName2=\"value1 = 1, value2 = 2\" \"prop name\"=propValue option1=\"3\";",
    )
    .unwrap();
    let entry = config.single_entry().unwrap();
    assert_eq!(entry.option("propName"), Some("prop value"));
    assert_eq!(entry.option("propName2"), Some("value1 = 1, value2 = 2"));
    assert_eq!(entry.option("prop name"), Some("propValue"));
    assert_eq!(entry.option("option1"), Some("3"));
}

#[test]
fn several_login_modules() {
    let text = " test.Module0 required index=Index0 module=Module0; \
                test.Module1 required index=Index1 module=Module1;\
                test.Module2 required index=Index2 module=Module2;";
    let config = JaasConfig::parse(text).unwrap();
    assert_eq!(config.entries().len(), 3);
    for (i, entry) in config.entries().iter().enumerate() {
        assert_eq!(entry.login_module_name, format!("test.Module{i}"));
        assert_eq!(entry.option("index"), Some(format!("Index{i}").as_str()));
    }
    assert_eq!(
        config.single_entry().unwrap_err().to_string(),
        "JAAS config property contains 3 login modules, should be 1 module"
    );
    assert_eq!(config.config_entry_option("module", None), Some("Module0"));
    assert_eq!(
        config.config_entry_option("module", Some("test.Module2")),
        Some("Module2")
    );
}

#[test]
fn tokens_follow_stream_tokenizer() {
    let config = JaasConfig::parse(
        "// a comment line\n\
         org.apache.kafka.common.security.plain.PlainLoginModule /* inline */ required\n\
         user_$svc-1.x=pass-word_9 / the rest of this line is a comment = ;\n\
         user_q='single \"quoted\"' user_e=\"tab\\there \\\"q\\\" back\\\\slash \\101\\7\\477 \\z\"\n\
         user_ü=\"ünïcode\" user_dup=first user_dup=last;",
    )
    .unwrap();
    let entry = config.single_entry().unwrap();
    assert_eq!(entry.option("user_$svc-1.x"), Some("pass-word_9"));
    assert_eq!(entry.option("user_q"), Some("single \"quoted\""));
    assert_eq!(
        entry.option("user_e"),
        Some("tab\there \"q\" back\\slash A\u{7}\u{27}7 z")
    );
    assert_eq!(config.plain_password("ü"), Some("ünïcode"));
    assert_eq!(config.plain_password("dup"), Some("last"));
}

#[test]
fn debug_hides_option_values() {
    let config = JaasConfig::parse(PLAIN_BROKER).unwrap();
    let shown = format!("{config:?}");
    assert!(shown.contains("user_alice"), "{shown}");
    assert!(!shown.contains("secret"), "{shown}");
}

#[test]
fn malformed_configs_name_the_problem() {
    use JaasError::*;
    let cases: [(&str, JaasError); 14] = [
        ("", LoginModuleNotSpecified),
        ("  /* only a comment */ ", LoginModuleNotSpecified),
        // Kafka's JaasContextTest: testMissingLoginModule reads `required` as the class.
        (
            "  required option1=value1;",
            InvalidControlFlag {
                flag: "option1".into(),
            },
        ),
        (
            "test.loginModule option1=value1;",
            InvalidControlFlag {
                flag: "option1".into(),
            },
        ),
        (
            "loginModule required option1;",
            ValueNotSpecified {
                key: "option1".into(),
            },
        ),
        (
            "test.testMissingSemicolon required option1=value1",
            NotTerminated,
        ),
        (
            "test.testNumericOptionWithoutQuotes required option1=3;",
            ValueNotSpecified {
                key: "option1".into(),
            },
        ),
        (
            "test.testInvalidControlFlag { option1=3;",
            ControlFlagNotAvailable,
        ),
        ("test.Module", ControlFlagNotSpecified),
        ("; test.Module required;", LoginModuleNameMissing),
        ("\"\" required;", LoginModuleNameMissing),
        (
            "test.Module required =value;",
            OptionNameMissing {
                module: "test.Module".into(),
            },
        ),
        ("test.Module required key=\"open;", UnterminatedQuote),
        (
            "test.Module required key=\"line\nbreak\";",
            UnterminatedQuote,
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_err(text), expected, "{text:?}");
    }
    assert_eq!(
        parse_err("x required key=-1;").to_string(),
        "Value not specified for key 'key' in JAAS config"
    );
    assert_eq!(
        parse_err("x required key=-;"),
        ValueNotSpecified { key: "key".into() }
    );
    assert_eq!(
        parse_err("x sometimes;").to_string(),
        "Invalid login module control flag 'sometimes' in JAAS config"
    );
}
