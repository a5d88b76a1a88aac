//! Tests of `user_scram_admin`: Kafka's per-user error codes and messages, the merge into
//! `/config/users/<user>`, and the describe answers, over the embedded store.

use std::num::NonZeroU32;

use super::*;
use crate::zk::EmbeddedStore;
use crate::zk::recipes;

const SHA256: i8 = 1;
const SHA512: i8 = 2;

fn admin() -> (UserScramAdmin, Arc<dyn ZkClient>) {
    let zk: Arc<dyn ZkClient> = Arc::new(EmbeddedStore::in_memory().session());
    (UserScramAdmin::new(Arc::clone(&zk)), zk)
}

fn upsert(name: &str, mechanism: i8, iterations: i32, password: &str) -> Upsertion {
    let salt = format!("salt-of-{name}").into_bytes();
    let salted_password = ScramMechanism::from_mechanism_type(mechanism)
        .zip(NonZeroU32::new(iterations.clamp(1, 20000) as u32))
        .map(|(m, i)| m.salted_password(password, &salt, i))
        .unwrap_or_else(|| vec![1; 32]);
    Upsertion {
        name: name.into(),
        mechanism,
        iterations,
        salt,
        salted_password,
    }
}

fn delete(name: &str, mechanism: i8) -> Deletion {
    Deletion {
        name: name.into(),
        mechanism,
    }
}

fn codes(results: &[AlterResult]) -> Vec<(&str, ErrorCode, Option<&str>)> {
    results
        .iter()
        .map(|r| (r.user.as_str(), r.error, r.message.as_deref()))
        .collect()
}

async fn stored(zk: &Arc<dyn ZkClient>, user: &str) -> BTreeMap<String, String> {
    user_configs::fetch_user_config(zk.as_ref(), &sanitize(user))
        .await
        .unwrap()
}

#[tokio::test]
async fn an_upsertion_stores_the_credential_kafka_derives_and_keeps_other_keys() {
    let (admin, zk) = admin();
    recipes::create_recursive(
        zk.as_ref(),
        "/config/users/User%3Aalice",
        br#"{"version":1,"config":{"producer_byte_rate":"1024"}}"#,
    )
    .await
    .unwrap();
    let u = upsert("User:alice", SHA512, 8192, "alice-secret");
    let results = admin.alter(std::slice::from_ref(&u), &[]).await;
    assert_eq!(codes(&results), [("User:alice", ErrorCode::None, None)]);
    let config = stored(&zk, "User:alice").await;
    assert_eq!(config["producer_byte_rate"], "1024");
    let expected =
        ScramCredential::generate(ScramMechanism::ScramSha512, "alice-secret", &u.salt, 8192)
            .unwrap();
    assert_eq!(
        ScramCredential::from_credential_string(&config["SCRAM-SHA-512"]).unwrap(),
        expected
    );
    // A second mechanism joins the first; deleting one leaves the other and the quota.
    let results = admin
        .alter(&[upsert("User:alice", SHA256, 4096, "other")], &[])
        .await;
    assert_eq!(codes(&results), [("User:alice", ErrorCode::None, None)]);
    let results = admin.alter(&[], &[delete("User:alice", SHA512)]).await;
    assert_eq!(codes(&results), [("User:alice", ErrorCode::None, None)]);
    let config = stored(&zk, "User:alice").await;
    let keys: Vec<&str> = config.keys().map(String::as_str).collect();
    assert_eq!(keys, ["SCRAM-SHA-256", "producer_byte_rate"]);
    // Change notifications name the sanitized user, one per alteration.
    let (changes, _) = zk.get_children("/config/changes", false).await.unwrap();
    assert_eq!(changes.len(), 3);
    let (data, _) = zk
        .get_data(&format!("/config/changes/{}", changes[0]), false)
        .await
        .unwrap();
    assert_eq!(data, br#"{"version":2,"entity_path":"users/User%3Aalice"}"#);
}

#[tokio::test]
async fn deleting_the_last_key_removes_the_znode() {
    let (admin, zk) = admin();
    admin.alter(&[upsert("bob", SHA256, 4096, "pw")], &[]).await;
    assert!(
        zk.exists("/config/users/bob", false)
            .await
            .unwrap()
            .is_some()
    );
    let results = admin.alter(&[], &[delete("bob", SHA256)]).await;
    assert_eq!(codes(&results), [("bob", ErrorCode::None, None)]);
    assert!(
        zk.exists("/config/users/bob", false)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn refused_requests_get_kafkas_codes_and_messages() {
    let (admin, zk) = admin();
    admin
        .alter(&[upsert("exists", SHA256, 4096, "pw")], &[])
        .await;
    let results = admin
        .alter(
            &[
                upsert("", SHA256, 4096, "pw"),
                upsert("unknown-mech", 3, 4096, "pw"),
                upsert("few", SHA256, 4095, "pw"),
                upsert("many", SHA512, 16385, "pw"),
                upsert("twice", SHA256, 4096, "pw"),
                upsert("twice", SHA256, 8192, "pw"),
                upsert("ok", SHA512, 16384, "pw"),
                upsert("upsert-and-delete", SHA256, 4096, "pw"),
            ],
            &[
                delete("bad-delete", 0),
                delete("missing", SHA512),
                delete("exists", SHA512),
                delete("upsert-and-delete", SHA256),
            ],
        )
        .await;
    let unacceptable = ErrorCode::UnacceptableCredential;
    assert_eq!(
        codes(&results),
        [
            (
                "bad-delete",
                ErrorCode::UnsupportedSaslMechanism,
                Some(UNKNOWN_MECHANISM)
            ),
            ("", unacceptable, Some(USERNAME_EMPTY)),
            (
                "unknown-mech",
                ErrorCode::UnsupportedSaslMechanism,
                Some(UNKNOWN_MECHANISM)
            ),
            ("few", unacceptable, Some(TOO_FEW_ITERATIONS)),
            ("many", unacceptable, Some(TOO_MANY_ITERATIONS)),
            ("twice", ErrorCode::DuplicateResource, Some(ALTERED_TWICE)),
            (
                "upsert-and-delete",
                ErrorCode::DuplicateResource,
                Some(ALTERED_TWICE)
            ),
            ("missing", ErrorCode::ResourceNotFound, Some(DELETE_MISSING)),
            ("exists", ErrorCode::ResourceNotFound, Some(DELETE_MISSING)),
            ("ok", ErrorCode::None, None),
        ]
    );
    // Only "ok" was written; "exists" kept its credential.
    let users = user_configs::all_sanitized_users(zk.as_ref())
        .await
        .unwrap();
    assert_eq!(users, ["exists", "ok"]);
    assert!(stored(&zk, "exists").await.contains_key("SCRAM-SHA-256"));
}

#[tokio::test]
async fn a_user_refused_by_an_upsertion_and_a_deletion_gets_the_upsertions_message() {
    let (admin, _zk) = admin();
    let results = admin
        .alter(&[upsert("u", SHA256, 100, "pw")], &[delete("u", 7)])
        .await;
    assert_eq!(
        codes(&results),
        [(
            "u",
            ErrorCode::UnacceptableCredential,
            Some(TOO_FEW_ITERATIONS)
        )]
    );
}

#[tokio::test]
async fn an_empty_salted_password_is_an_unexpected_error_and_writes_nothing() {
    let (admin, zk) = admin();
    let mut u = upsert("carol", SHA256, 4096, "pw");
    u.salted_password.clear();
    let results = admin.alter(&[u], &[]).await;
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].error, ErrorCode::UnknownServerError);
    assert!(
        zk.exists("/config/users/carol", false)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn an_unreadable_user_config_fails_every_user_of_the_request() {
    let (admin, zk) = admin();
    recipes::create_recursive(zk.as_ref(), "/config/users/broken", b"{nope")
        .await
        .unwrap();
    let results = admin
        .alter(
            &[
                upsert("zed", SHA256, 4096, "pw"),
                upsert("broken", SHA256, 4096, "pw"),
            ],
            &[delete("amy", SHA256)],
        )
        .await;
    let users: Vec<(&str, ErrorCode)> =
        results.iter().map(|r| (r.user.as_str(), r.error)).collect();
    let e = ErrorCode::UnknownServerError;
    assert_eq!(users, [("amy", e), ("broken", e), ("zed", e)]);
}

#[tokio::test]
async fn describe_lists_users_with_credentials_sorted_and_named_users_in_order() {
    let (admin, zk) = admin();
    admin
        .alter(
            &[
                upsert("User:zoe", SHA512, 8192, "pw"),
                upsert("User:zoe", SHA256, 4096, "pw"),
                upsert("amy", SHA256, 5000, "pw"),
            ],
            &[],
        )
        .await;
    // A user with only a quota is not listed.
    recipes::create_recursive(
        zk.as_ref(),
        "/config/users/quota-only",
        br#"{"version":1,"config":{"consumer_byte_rate":"1"}}"#,
    )
    .await
    .unwrap();
    let all = admin.describe(None).await;
    let expected_all = DescribeOutcome::Results(vec![
        DescribeResult {
            user: "User:zoe".into(),
            error: ErrorCode::None,
            message: None,
            credentials: vec![
                (ScramMechanism::ScramSha256, 4096),
                (ScramMechanism::ScramSha512, 8192),
            ],
        },
        DescribeResult {
            user: "amy".into(),
            error: ErrorCode::None,
            message: None,
            credentials: vec![(ScramMechanism::ScramSha256, 5000)],
        },
    ]);
    assert_eq!(all, expected_all);
    assert_eq!(admin.describe(Some(&[])).await, expected_all);

    let named: Vec<String> = ["amy", "nobody", "", "quota-only", "amy", ""]
        .map(String::from)
        .to_vec();
    let DescribeOutcome::Results(results) = admin.describe(Some(&named)).await else {
        panic!("top-level error");
    };
    let got: Vec<(&str, ErrorCode, Option<&str>, usize)> = results
        .iter()
        .map(|r| {
            (
                r.user.as_str(),
                r.error,
                r.message.as_deref(),
                r.credentials.len(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "amy",
                ErrorCode::DuplicateResource,
                Some(
                    "Cannot describe SCRAM credentials for the same user twice in a single request: amy"
                ),
                0
            ),
            (
                "nobody",
                ErrorCode::ResourceNotFound,
                Some("Attempt to describe a user credential that does not exist: nobody"),
                0
            ),
            ("", ErrorCode::ResourceNotFound, Some(USERNAME_EMPTY), 0),
            (
                "quota-only",
                ErrorCode::ResourceNotFound,
                Some("Attempt to describe a user credential that does not exist: quota-only"),
                0
            ),
        ]
    );
}

#[tokio::test]
async fn describe_reports_bad_data_as_kafka_does() {
    let (admin, zk) = admin();
    recipes::create_recursive(
        zk.as_ref(),
        "/config/users/garbled",
        br#"{"version":1,"config":{"SCRAM-SHA-256":"not a credential"}}"#,
    )
    .await
    .unwrap();
    let DescribeOutcome::Results(results) = admin.describe(None).await else {
        panic!("top-level error");
    };
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].error, ErrorCode::UnknownServerError);
    // A znode name that does not desanitize fails the listing as a whole.
    recipes::create_recursive(zk.as_ref(), "/config/users/bad%zz", b"{}")
        .await
        .unwrap();
    assert!(matches!(
        admin.describe(None).await,
        DescribeOutcome::Failed {
            error: ErrorCode::UnknownServerError,
            ..
        }
    ));
}
