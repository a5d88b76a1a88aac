//! Tests of the quota entity znodes: Kafka's paths for each entity (a table, then any name
//! through a property test), what a change writes and notifies, SCRAM keys left alone, and
//! the cleanup of emptied znodes.

use proptest::prelude::*;

use super::*;
use crate::zk::EmbeddedStore;

fn named(n: &str) -> QuotaEntityName {
    QuotaEntityName::Named(n.to_string())
}

fn client(user: Option<QuotaEntityName>, client_id: Option<QuotaEntityName>) -> QuotaEntity {
    QuotaEntity::Client(ClientQuotaEntity { user, client_id })
}

fn config(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn entities_live_where_kafka_keeps_them() {
    let d = || Some(QuotaEntityName::Default);
    for (entity, znode, entity_path) in [
        (
            client(Some(named("alice")), None),
            "/config/users/alice",
            "users/alice",
        ),
        (
            client(Some(named("User:bob smith")), Some(named("app*1"))),
            "/config/users/User%3Abob%20smith/clients/app%2A1",
            "users/User%3Abob%20smith/clients/app%2A1",
        ),
        (
            client(d(), Some(named("app"))),
            "/config/users/<default>/clients/app",
            "users/<default>/clients/app",
        ),
        (
            client(Some(named("alice")), d()),
            "/config/users/alice/clients/<default>",
            "users/alice/clients/<default>",
        ),
        (
            client(d(), None),
            "/config/users/<default>",
            "users/<default>",
        ),
        (
            client(None, Some(named("my.app-1_x"))),
            "/config/clients/my.app-1_x",
            "clients/my.app-1_x",
        ),
        (
            client(None, d()),
            "/config/clients/<default>",
            "clients/<default>",
        ),
        (
            QuotaEntity::Ip(named("10.0.0.1")),
            "/config/ips/10.0.0.1",
            "ips/10.0.0.1",
        ),
        (
            QuotaEntity::Ip(named("::1")),
            "/config/ips/%3A%3A1",
            "ips/%3A%3A1",
        ),
        (
            QuotaEntity::Ip(QuotaEntityName::Default),
            "/config/ips/<default>",
            "ips/<default>",
        ),
    ] {
        let path = entity_config_path(&entity).unwrap();
        assert_eq!(path.znode(), znode);
        assert_eq!(path.entity_path(), entity_path);
        assert_eq!(
            quota_entity_of(path.root_type, &path.full_name),
            Some(entity)
        );
    }
    assert_eq!(entity_config_path(&client(None, None)), None);
    assert_eq!(quota_entity_of("topics", "t"), None);
    assert_eq!(quota_entity_of("users", "a/clients"), None);
    assert_eq!(quota_entity_of("users", "a/b/c"), None);
    assert_eq!(quota_entity_of("clients", "bad%"), None);
}

fn entity_name() -> impl Strategy<Value = QuotaEntityName> {
    prop_oneof![
        Just(QuotaEntityName::Default),
        any::<String>()
            // ZooKeeper refuses `.` and `..` as path components (Kafka's sanitizer keeps them).
            .prop_filter("a znode name", |s| !s.is_empty() && s != "." && s != "..")
            .prop_map(QuotaEntityName::Named),
    ]
}

proptest! {
    /// Any names: the full name has no `/` but the ones the path puts there, the znode is a
    /// valid path, and the entity reads back.
    #[test]
    fn any_entity_round_trips_through_its_path(
        user in proptest::option::of(entity_name()),
        client_id in proptest::option::of(entity_name()),
        ip in entity_name(),
    ) {
        let mut entities = vec![QuotaEntity::Ip(ip)];
        if user.is_some() || client_id.is_some() {
            entities.push(client(user, client_id));
        }
        for entity in entities {
            let path = entity_config_path(&entity).unwrap();
            let slashes = path.full_name.matches('/').count();
            prop_assert!(slashes == 0 || slashes == 2);
            prop_assert!(crate::zk::client::validate_path(&path.znode()).is_ok());
            prop_assert_eq!(quota_entity_of(path.root_type, &path.full_name), Some(entity));
        }
    }
}

#[tokio::test]
async fn changes_write_notify_and_clean_up_as_kafka() {
    let store = EmbeddedStore::in_memory();
    let session = store.session();
    let zk: &dyn ZkClient = &session;
    let user = entity_config_path(&client(Some(named("alice")), None)).unwrap();
    let user_client =
        entity_config_path(&client(Some(named("alice")), Some(named("app")))).unwrap();
    let scram = (
        "SCRAM-SHA-256",
        "salt=c2FsdA==,stored_key=AA==,server_key=AA==,iterations=4096",
    );
    change_entity_config(zk, &user, &config(&[scram, ("producer_byte_rate", "1024")]))
        .await
        .unwrap();
    change_entity_config(zk, &user_client, &config(&[("request_percentage", "12.5")]))
        .await
        .unwrap();
    let (data, _) = zk
        .get_data("/config/users/alice/clients/app", false)
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8(data).unwrap(),
        r#"{"version":1,"config":{"request_percentage":"12.5"}}"#
    );
    assert_eq!(
        all_entity_names(zk, "users").await.unwrap(),
        ["alice/clients/app", "alice"]
    );
    // The user's quota removed: its credential stays, and its znode (it has children).
    change_entity_config(zk, &user, &config(&[scram]))
        .await
        .unwrap();
    assert_eq!(
        fetch_entity_config(zk, &user).await.unwrap(),
        config(&[scram])
    );
    // The user and client id emptied: its znode and the `clients` parent go; the user stays
    // (it has a credential).
    change_entity_config(zk, &user_client, &BTreeMap::new())
        .await
        .unwrap();
    assert!(
        zk.exists("/config/users/alice/clients", false)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        zk.exists("/config/users/alice", false)
            .await
            .unwrap()
            .is_some()
    );
    // Without a credential, emptying the last client id removes the user too.
    let bob_app = entity_config_path(&client(Some(named("bob")), Some(named("app")))).unwrap();
    change_entity_config(zk, &bob_app, &config(&[("consumer_byte_rate", "1")]))
        .await
        .unwrap();
    change_entity_config(zk, &bob_app, &BTreeMap::new())
        .await
        .unwrap();
    assert!(
        zk.exists("/config/users/bob", false)
            .await
            .unwrap()
            .is_none()
    );
    // An emptied IP; emptying what is not there writes nothing but still notifies.
    let ip = entity_config_path(&QuotaEntity::Ip(named("10.0.0.1"))).unwrap();
    change_entity_config(zk, &ip, &config(&[("connection_creation_rate", "5")]))
        .await
        .unwrap();
    change_entity_config(zk, &ip, &BTreeMap::new())
        .await
        .unwrap();
    assert!(
        zk.exists("/config/ips/10.0.0.1", false)
            .await
            .unwrap()
            .is_none()
    );
    let absent = entity_config_path(&client(None, Some(named("none")))).unwrap();
    change_entity_config(zk, &absent, &BTreeMap::new())
        .await
        .unwrap();
    assert!(
        zk.exists("/config/clients/none", false)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        crate::zk::user_configs::tests::changes(zk).await,
        [
            "users/alice",
            "users/alice/clients/app",
            "users/alice",
            "users/alice/clients/app",
            "users/bob/clients/app",
            "users/bob/clients/app",
            "ips/10.0.0.1",
            "ips/10.0.0.1",
            "clients/none",
        ]
        .map(|p| format!(r#"{{"version":2,"entity_path":"{p}"}}"#))
    );
}
