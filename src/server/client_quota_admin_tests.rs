//! Tests of DescribeClientQuotas' and AlterClientQuotas' semantics over the embedded store:
//! Kafka's filters (exact, default, specified, strict), its errors, validate_only, stored
//! values, and SCRAM credentials kept through quota changes.

use super::*;
use crate::zk::EmbeddedStore;
use crate::zk::user_configs;

fn alteration(entity: &[(&str, Option<&str>)], ops: &[(&str, Option<f64>)]) -> QuotaAlteration {
    QuotaAlteration {
        entity: entity
            .iter()
            .map(|(t, n)| (t.to_string(), n.map(str::to_string)))
            .collect(),
        ops: ops.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    }
}

fn component(entity_type: &str, matching: ComponentMatch) -> FilterComponent {
    FilterComponent {
        entity_type: entity_type.into(),
        matching,
    }
}

fn exact(entity_type: &str, name: &str) -> FilterComponent {
    component(entity_type, ComponentMatch::Exact(name.into()))
}

/// `user=a,client-id=<default> producer_byte_rate=1` per described entity, sorted.
async fn described(zk: &dyn ZkClient, components: &[FilterComponent], strict: bool) -> Vec<String> {
    describe_client_quotas(zk, components, strict)
        .await
        .unwrap()
        .into_iter()
        .map(|(entity, values)| {
            let values: Vec<String> = values.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{entity} {}", values.join(","))
        })
        .collect()
}

async fn setup(zk: &dyn ZkClient) {
    let results = alter_client_quotas(
        zk,
        &[
            alteration(
                &[(USER, Some("alice"))],
                &[("producer_byte_rate", Some(1024.0))],
            ),
            alteration(
                &[(USER, Some("alice")), (CLIENT_ID, Some("app"))],
                &[("request_percentage", Some(12.5))],
            ),
            alteration(&[(USER, None)], &[("consumer_byte_rate", Some(2048.0))]),
            alteration(
                &[(CLIENT_ID, Some("app"))],
                &[("controller_mutation_rate", Some(10.0))],
            ),
            alteration(&[(CLIENT_ID, None)], &[("producer_byte_rate", Some(1.0))]),
            alteration(
                &[(IP, Some("10.0.0.1"))],
                &[("connection_creation_rate", Some(5.0))],
            ),
            alteration(&[(IP, None)], &[("connection_creation_rate", Some(100.0))]),
        ],
        false,
    )
    .await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
}

#[tokio::test]
async fn filters_match_as_kafkas() {
    let store = EmbeddedStore::in_memory();
    let session = store.session();
    let zk: &dyn ZkClient = &session;
    setup(zk).await;
    // Stored as Kafka stores them.
    let (data, _) = zk
        .get_data("/config/users/alice/clients/app", false)
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8(data).unwrap(),
        r#"{"version":1,"config":{"request_percentage":"12.5"}}"#
    );
    let (data, _) = zk.get_data("/config/clients/app", false).await.unwrap();
    assert_eq!(
        String::from_utf8(data).unwrap(),
        r#"{"version":1,"config":{"controller_mutation_rate":"10.0"}}"#
    );
    // No components, not strict: everything.
    assert_eq!(
        described(zk, &[], false).await,
        [
            "client-id=<default> producer_byte_rate=1",
            "client-id=app controller_mutation_rate=10",
            "user=<default> consumer_byte_rate=2048",
            "user=alice producer_byte_rate=1024",
            "user=alice,client-id=app request_percentage=12.5",
            "ip=<default> connection_creation_rate=100",
            "ip=10.0.0.1 connection_creation_rate=5",
        ]
    );
    assert!(described(zk, &[], true).await.is_empty());
    // An exact user, strict: that user alone; not strict: with its client ids too.
    assert_eq!(
        described(zk, &[exact(USER, "alice")], true).await,
        ["user=alice producer_byte_rate=1024"]
    );
    assert_eq!(
        described(zk, &[exact(USER, "alice")], false).await,
        [
            "user=alice producer_byte_rate=1024",
            "user=alice,client-id=app request_percentage=12.5",
        ]
    );
    // The default user; any specified user, strict.
    assert_eq!(
        described(zk, &[component(USER, ComponentMatch::Default)], true).await,
        ["user=<default> consumer_byte_rate=2048"]
    );
    assert_eq!(
        described(zk, &[component(USER, ComponentMatch::Specified)], true).await,
        [
            "user=<default> consumer_byte_rate=2048",
            "user=alice producer_byte_rate=1024",
        ]
    );
    // User and client id, both exact.
    assert_eq!(
        described(zk, &[exact(USER, "alice"), exact(CLIENT_ID, "app")], true).await,
        ["user=alice,client-id=app request_percentage=12.5"]
    );
    assert_eq!(
        described(
            zk,
            &[component(CLIENT_ID, ComponentMatch::Specified)],
            false
        )
        .await,
        [
            "client-id=<default> producer_byte_rate=1",
            "client-id=app controller_mutation_rate=10",
            "user=alice,client-id=app request_percentage=12.5",
        ]
    );
    // IPs.
    assert_eq!(
        described(zk, &[exact(IP, "10.0.0.1")], false).await,
        ["ip=10.0.0.1 connection_creation_rate=5"]
    );
    assert_eq!(
        described(zk, &[component(IP, ComponentMatch::Default)], true).await,
        ["ip=<default> connection_creation_rate=100"]
    );
    assert!(
        described(zk, &[exact(USER, "nobody")], true)
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn bad_filters_fail_with_kafkas_codes() {
    let store = EmbeddedStore::in_memory();
    let session = store.session();
    let zk: &dyn ZkClient = &session;
    for (components, code, message) in [
        (
            vec![exact(USER, "a"), exact(USER, "b")],
            ErrorCode::InvalidRequest,
            "Duplicate user filter component entity type",
        ),
        (
            vec![exact(USER, "a"), exact(IP, "1.2.3.4")],
            ErrorCode::InvalidRequest,
            "Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component.",
        ),
        (
            vec![exact("", "a")],
            ErrorCode::InvalidRequest,
            "Unexpected empty filter component entity type",
        ),
        (
            vec![exact("group", "a")],
            ErrorCode::UnsupportedVersion,
            "Custom entity type 'group' not supported",
        ),
    ] {
        let err = describe_client_quotas(zk, &components, false)
            .await
            .unwrap_err();
        assert_eq!((err.code(), err.to_string().as_str()), (code, message));
    }
}

#[tokio::test]
async fn bad_alterations_fail_alone_with_kafkas_messages() {
    let store = EmbeddedStore::in_memory();
    let session = store.session();
    let zk: &dyn ZkClient = &session;
    let alterations = [
        alteration(&[], &[("producer_byte_rate", Some(1.0))]),
        alteration(&[(USER, Some("a"))], &[("bogus", Some(1.0))]),
        alteration(
            &[(USER, Some("a"))],
            &[("connection_creation_rate", Some(1.0))],
        ),
        alteration(&[(USER, Some("a"))], &[("producer_byte_rate", Some(1.5))]),
        alteration(
            &[(IP, Some("1.2.3.4"))],
            &[("connection_creation_rate", Some(2.5))],
        ),
        alteration(
            &[(IP, Some("1.2.3.4"))],
            &[("connection_creation_rate", Some(-1.0))],
        ),
        alteration(&[(IP, Some("1.2.3.4")), (USER, Some("a"))], &[]),
        alteration(&[(IP, Some("not a host!"))], &[]),
        alteration(&[(USER, Some(""))], &[]),
        alteration(&[("group", Some("g"))], &[]),
        alteration(
            &[(CLIENT_ID, Some("ok"))],
            &[("request_percentage", Some(50.0))],
        ),
    ];
    let results = alter_client_quotas(zk, &alterations, false).await;
    let seen: Vec<(ErrorCode, String)> = results
        .iter()
        .map(|r| match r {
            Ok(()) => (ErrorCode::None, String::new()),
            Err(e) => (e.code(), e.to_string()),
        })
        .collect();
    let want = [
        (
            ErrorCode::InvalidRequest,
            "Invalid empty client quota entity",
        ),
        (ErrorCode::InvalidRequest, "Invalid configuration key bogus"),
        (
            ErrorCode::InvalidRequest,
            "Invalid configuration key connection_creation_rate",
        ),
        (
            ErrorCode::InvalidRequest,
            "Configuration producer_byte_rate must be a LONG value",
        ),
        (
            ErrorCode::InvalidRequest,
            "Configuration connection_creation_rate must be a INT value",
        ),
        // As Kafka: -1 + 1e-6 truncates to 0, so a negative rate is not an INT.
        (
            ErrorCode::InvalidRequest,
            "Configuration connection_creation_rate must be a INT value",
        ),
        (
            ErrorCode::InvalidRequest,
            "Invalid quota entity combination, IP entity should not be used with user/client ID entity.",
        ),
        (
            ErrorCode::InvalidRequest,
            "not a host! is not a valid IP or resolvable host.",
        ),
        (ErrorCode::InvalidRequest, "Empty user not supported"),
        (
            ErrorCode::InvalidRequest,
            "Unhandled client quota entity type: group",
        ),
        (ErrorCode::None, ""),
    ];
    assert_eq!(seen, want.map(|(c, m)| (c, m.to_string())).to_vec());
    assert!(zk.exists("/config/users/a", false).await.unwrap().is_none());
    assert_eq!(
        described(zk, &[], false).await,
        ["client-id=ok request_percentage=50"]
    );
}

#[tokio::test]
async fn validate_only_writes_nothing_and_scram_credentials_stay() {
    let store = EmbeddedStore::in_memory();
    let session = store.session();
    let zk: &dyn ZkClient = &session;
    let scram = "salt=c2FsdA==,stored_key=AA==,server_key=AA==,iterations=4096";
    let credential = BTreeMap::from([("SCRAM-SHA-256".to_string(), scram.to_string())]);
    user_configs::change_user_config(zk, "bob", &credential)
        .await
        .unwrap();
    let set = [alteration(
        &[(USER, Some("bob"))],
        &[("producer_byte_rate", Some(10.0))],
    )];
    assert!(alter_client_quotas(zk, &set, true).await[0].is_ok());
    assert_eq!(
        user_configs::fetch_user_config(zk, "bob").await.unwrap(),
        credential
    );
    assert!(alter_client_quotas(zk, &set, false).await[0].is_ok());
    assert_eq!(
        described(zk, &[exact(USER, "bob")], true).await,
        ["user=bob producer_byte_rate=10"]
    );
    // Removing the quota (and trying to remove the credential through quotas) keeps it.
    let remove = [alteration(
        &[(USER, Some("bob"))],
        &[("producer_byte_rate", None), ("SCRAM-SHA-256", None)],
    )];
    assert!(alter_client_quotas(zk, &remove, false).await[0].is_ok());
    assert_eq!(
        user_configs::fetch_user_config(zk, "bob").await.unwrap(),
        credential
    );
    assert!(described(zk, &[], false).await.is_empty());
    // Setting a credential through quotas is refused.
    let bad = [alteration(
        &[(USER, Some("bob"))],
        &[("SCRAM-SHA-256", Some(1.0))],
    )];
    assert_eq!(
        alter_client_quotas(zk, &bad, false).await[0]
            .as_ref()
            .unwrap_err()
            .code(),
        ErrorCode::InvalidRequest
    );
}
