//! Tests of the authorizer over the embedded store: what one broker writes reaches another's
//! cache through the change notifications, in Kafka's znodes; deletes by filter; an update
//! racing another writer retries at the new version; old notifications are purged; a new
//! session reloads everything.

use std::time::Instant;

use crate::security::acl::binding::WILDCARD_PRINCIPAL;
use crate::security::acl::{AccessControlEntryFilter, ResourcePatternFilter};
use crate::zk::EmbeddedStore;

use super::*;

const WAIT: Duration = Duration::from_secs(10);

fn now_ms() -> i64 {
    crate::storage::log_manager::now_ms()
}

fn binding(name: &str, pattern_type: PatternType, principal: &str, op: AclOperation) -> AclBinding {
    AclBinding {
        pattern: ResourcePattern::new(ResourceType::Topic, name, pattern_type),
        entry: AccessControlEntry {
            principal: principal.into(),
            host: "*".into(),
            operation: op,
            permission_type: AclPermissionType::Allow,
        },
    }
}

struct Broker {
    authorizer: Arc<AclAuthorizer>,
    _watches: WatchDispatcher,
}

async fn broker(store: &EmbeddedStore, tasks: &TaskTracker, stop: &CancellationToken) -> Broker {
    let zk: Arc<dyn ZkClient> = Arc::new(store.session());
    let watches = WatchDispatcher::start(Arc::clone(&zk), tasks, stop.clone()).unwrap();
    let authorizer = AclAuthorizer::new(zk, AuthorizerSettings::default());
    authorizer
        .startup(&watches, now_ms, tasks, stop.clone())
        .await
        .unwrap();
    Broker {
        authorizer,
        _watches: watches,
    }
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn may(b: &Broker, principal: &str, op: AclOperation, topic: &str) -> bool {
    b.authorizer.authorize(
        principal,
        "127.0.0.1",
        op,
        &ResourcePattern::literal(ResourceType::Topic, topic),
    )
}

#[tokio::test]
async fn acls_written_by_one_broker_reach_another() {
    let store = EmbeddedStore::in_memory();
    let (tasks, stop) = (TaskTracker::new(), CancellationToken::new());
    let a = broker(&store, &tasks, &stop).await;
    let b = broker(&store, &tasks, &stop).await;
    let results = a
        .authorizer
        .create_acls(&[
            binding(
                "pay",
                PatternType::Prefixed,
                "User:alice",
                AclOperation::Write,
            ),
            binding(
                "orders",
                PatternType::Literal,
                "User:alice",
                AclOperation::Read,
            ),
            binding(
                "bad/name",
                PatternType::Literal,
                "User:alice",
                AclOperation::Read,
            ),
        ])
        .await;
    assert!(results[0].is_ok() && results[1].is_ok());
    assert!(
        results[2]
            .as_ref()
            .unwrap_err()
            .1
            .contains("invalid resource name")
    );
    assert!(may(&a, "User:alice", AclOperation::Write, "payments"));
    eventually("b sees the prefixed ACL", || {
        may(&b, "User:alice", AclOperation::Write, "payments")
    })
    .await;
    eventually("b sees the literal ACL", || {
        may(&b, "User:alice", AclOperation::Describe, "orders")
    })
    .await;
    assert!(!may(&b, "User:bob", AclOperation::Read, "orders"));
    // Kafka's znodes and notifications.
    let zk = store.session();
    let (data, _) = zk.get_data("/kafka-acl/Topic/orders", false).await.unwrap();
    assert_eq!(
        std::str::from_utf8(&data).unwrap(),
        r#"{"acls":[{"principal":"User:alice","permissionType":"Allow","host":"*","operation":"Read"}],"version":1}"#
    );
    assert!(
        zk.exists("/kafka-acl-extended/prefixed/Topic/pay", false)
            .await
            .unwrap()
            .is_some()
    );
    let (literal, _) = zk.get_children(ACL_CHANGES, false).await.unwrap();
    let (data, _) = zk
        .get_data(&format!("{ACL_CHANGES}/{}", literal[0]), false)
        .await
        .unwrap();
    assert_eq!(data, b"TOPIC:orders");
    let (extended, _) = zk.get_children(EXTENDED_CHANGES, false).await.unwrap();
    let (data, _) = zk
        .get_data(&format!("{EXTENDED_CHANGES}/{}", extended[0]), false)
        .await
        .unwrap();
    assert_eq!(
        std::str::from_utf8(&data).unwrap(),
        r#"{"version":1,"resourceType":"TOPIC","name":"pay","patternType":"PREFIXED"}"#
    );

    // Deleting through the other broker by a filter: every matching binding, reported once,
    // against the first filter that matched it.
    let by_principal = AclBindingFilter {
        pattern_filter: ResourcePatternFilter::any(),
        entry_filter: AccessControlEntryFilter {
            principal: Some("User:alice".into()),
            ..AccessControlEntryFilter::any()
        },
    };
    let deleted = b
        .authorizer
        .delete_acls(&[by_principal, AclBindingFilter::any()])
        .await;
    assert_eq!(deleted[0].len(), 2);
    assert!(deleted[1].is_empty());
    assert!(deleted[0].iter().all(|(_, e)| e.is_none()));
    eventually("a sees the deletion", || {
        !may(&a, "User:alice", AclOperation::Write, "payments")
    })
    .await;
    assert!(
        zk.exists("/kafka-acl/Topic/orders", false)
            .await
            .unwrap()
            .is_none()
    );
    assert!(a.authorizer.acls(&AclBindingFilter::any()).is_empty());
    stop.cancel();
}

const ACL_CHANGES: &str = "/kafka-acl-changes";
const EXTENDED_CHANGES: &str = "/kafka-acl-extended-changes";

#[tokio::test]
async fn an_update_racing_another_writer_is_applied_at_the_new_version() {
    let store = EmbeddedStore::in_memory();
    let (tasks, stop) = (TaskTracker::new(), CancellationToken::new());
    let a = broker(&store, &tasks, &stop).await;
    let first = binding("t", PatternType::Literal, "User:alice", AclOperation::Read);
    assert!(a.authorizer.create_acls(&[first]).await[0].is_ok());
    // Another tool rewrites the znode behind a's back (a's cache still has version 0) and
    // sends no notification.
    let zk = store.session();
    let other = acl_store::encode_acls(&[AclEntryJson {
        principal: WILDCARD_PRINCIPAL.into(),
        permission_type: "Allow".into(),
        operation: "Write".into(),
        host: "*".into(),
    }]);
    zk.set_data("/kafka-acl/Topic/t", &other, 0).await.unwrap();
    let second = binding("t", PatternType::Literal, "User:bob", AclOperation::Read);
    assert!(a.authorizer.create_acls(&[second]).await[0].is_ok());
    let (data, stat) = zk.get_data("/kafka-acl/Topic/t", false).await.unwrap();
    assert_eq!(stat.version, 2);
    let stored = acl_store::decode_acls(&data).unwrap();
    // The other writer's entry kept, alice's gone with its overwrite, bob's added.
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert!(may(&a, "User:carol", AclOperation::Write, "t"));
    assert!(may(&a, "User:bob", AclOperation::Read, "t"));
    assert!(!may(&a, "User:alice", AclOperation::Read, "t"));
    stop.cancel();
}

#[tokio::test]
async fn old_notifications_are_purged_and_kafkas_written_ones_are_read() {
    let store = EmbeddedStore::in_memory();
    let (tasks, stop) = (TaskTracker::new(), CancellationToken::new());
    let zk = store.session();
    acl_store::create_acl_paths(&zk).await.unwrap();
    // What Kafka's AclCommand writes, before this broker starts: the ACL, then notifications
    // in the literal store's `Topic:` form and in Kafka's enum form.
    let data = br#"{"version":1,"acls":[{"principal":"User:ANONYMOUS","permissionType":"Allow","operation":"Write","host":"*"}]}"#;
    zk.create(
        "/kafka-acl/Topic/early",
        data,
        crate::zk::CreateMode::Persistent,
    )
    .await
    .unwrap();
    acl_store::create_change_notification(&zk, AclStore::Literal, b"Topic:early")
        .await
        .unwrap();
    let b = broker(&store, &tasks, &stop).await;
    assert!(may(&b, "User:ANONYMOUS", AclOperation::Write, "early"));
    // Another broker whose clock is 16 minutes ahead: the notification is stale to it.
    let zk2: Arc<dyn ZkClient> = Arc::new(store.session());
    let watches = WatchDispatcher::start(Arc::clone(&zk2), &tasks, stop.clone()).unwrap();
    let late = AclAuthorizer::new(zk2, AuthorizerSettings::default());
    late.startup(&watches, || now_ms() + 16 * 60 * 1000, &tasks, stop.clone())
        .await
        .unwrap();
    let deadline = Instant::now() + WAIT;
    while !zk
        .get_children(ACL_CHANGES, false)
        .await
        .unwrap()
        .0
        .is_empty()
    {
        assert!(
            Instant::now() < deadline,
            "the stale notification was not purged"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(late.authorize(
        "User:ANONYMOUS",
        "127.0.0.1",
        AclOperation::Write,
        &ResourcePattern::literal(ResourceType::Topic, "early")
    ));
    stop.cancel();
}

#[tokio::test]
async fn a_new_session_reloads_every_acl() {
    let store = EmbeddedStore::in_memory();
    let (tasks, stop) = (TaskTracker::new(), CancellationToken::new());
    let b = broker(&store, &tasks, &stop).await;
    // Written with no notification at all (as if it was purged while the session was gone).
    let zk = store.session();
    let data = acl_store::encode_acls(&[AclEntryJson {
        principal: "User:alice".into(),
        permission_type: "Allow".into(),
        operation: "Read".into(),
        host: "*".into(),
    }]);
    zk.create(
        "/kafka-acl/Topic/quiet",
        &data,
        crate::zk::CreateMode::Persistent,
    )
    .await
    .unwrap();
    assert!(!may(&b, "User:alice", AclOperation::Read, "quiet"));
    b.authorizer.after_new_session();
    eventually("the reload", || {
        may(&b, "User:alice", AclOperation::Read, "quiet")
    })
    .await;
    stop.cancel();
}

#[test]
fn host_addresses_print_as_java() {
    assert_eq!(host_address("10.1.2.3".parse().unwrap()), "10.1.2.3");
    assert_eq!(host_address("::1".parse().unwrap()), "0:0:0:0:0:0:0:1");
    assert_eq!(host_address("::ffff:10.0.0.1".parse().unwrap()), "10.0.0.1");
    assert_eq!(
        host_address("fe80::1:abcd".parse().unwrap()),
        "fe80:0:0:0:0:0:1:abcd"
    );
}
