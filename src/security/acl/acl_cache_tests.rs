//! Tests of the authorization decision against Kafka's `AclAuthorizerTest` cases, and a
//! property test of the cache's pattern lookup against a scan of every binding.

use proptest::prelude::*;

use super::*;

const ALICE: &str = "User:alice";
const BOB: &str = "User:bob";
const HOST: &str = "192.168.1.1";

fn entry(principal: &str, host: &str, operation: AclOperation, allow: bool) -> AccessControlEntry {
    AccessControlEntry {
        principal: principal.to_string(),
        host: host.to_string(),
        operation,
        permission_type: if allow {
            AclPermissionType::Allow
        } else {
            AclPermissionType::Deny
        },
    }
}

fn add(cache: &mut AclCache, pattern: &ResourcePattern, e: AccessControlEntry) {
    let mut v = cache
        .get(pattern)
        .cloned()
        .unwrap_or_else(VersionedAcls::none);
    v.acls.insert(e);
    v.zk_version = 0;
    cache.update(pattern, v);
}

fn topic(name: &str) -> ResourcePattern {
    ResourcePattern::literal(ResourceType::Topic, name)
}

fn prefixed(name: &str) -> ResourcePattern {
    ResourcePattern::new(ResourceType::Topic, name, PatternType::Prefixed)
}

fn settings() -> AuthorizerSettings {
    AuthorizerSettings::default()
}

#[test]
fn no_acl_is_allow_everyone_and_super_users_skip_acls() {
    let mut cache = AclCache::new();
    let mut s = settings();
    assert!(!cache.authorize(&s, ALICE, HOST, AclOperation::Read, &topic("t")));
    s.allow_everyone_if_no_acl_found = true;
    assert!(cache.authorize(&s, ALICE, HOST, AclOperation::Read, &topic("t")));
    // Once any ACL matches the resource, the flag no longer applies.
    add(
        &mut cache,
        &topic("t"),
        entry(BOB, "*", AclOperation::Read, true),
    );
    assert!(!cache.authorize(&s, ALICE, HOST, AclOperation::Read, &topic("t")));
    s.super_users.insert(ALICE.to_string());
    add(
        &mut cache,
        &topic("t"),
        entry(ALICE, "*", AclOperation::All, false),
    );
    assert!(cache.authorize(&s, ALICE, HOST, AclOperation::Write, &topic("t")));
}

#[test]
fn deny_beats_allow_and_wildcards_apply() {
    let mut cache = AclCache::new();
    let s = settings();
    add(
        &mut cache,
        &topic("t"),
        entry(WILDCARD_PRINCIPAL, "*", AclOperation::Read, true),
    );
    assert!(cache.authorize(&s, ALICE, HOST, AclOperation::Read, &topic("t")));
    assert!(!cache.authorize(&s, ALICE, HOST, AclOperation::Write, &topic("t")));
    add(
        &mut cache,
        &topic("*"),
        entry(ALICE, HOST, AclOperation::All, false),
    );
    assert!(!cache.authorize(&s, ALICE, HOST, AclOperation::Read, &topic("t")));
    // The deny is for one host only.
    assert!(cache.authorize(&s, ALICE, "10.0.0.1", AclOperation::Read, &topic("t")));
    assert!(cache.authorize(&s, BOB, HOST, AclOperation::Read, &topic("t")));
}

#[test]
fn implied_operations() {
    let mut cache = AclCache::new();
    let s = settings();
    for (op, implies_describe) in [
        (AclOperation::Read, true),
        (AclOperation::Write, true),
        (AclOperation::Delete, true),
        (AclOperation::Alter, true),
        (AclOperation::Create, false),
        (AclOperation::AlterConfigs, false),
    ] {
        let name = format!("t-{op}");
        add(&mut cache, &topic(&name), entry(ALICE, "*", op, true));
        assert_eq!(
            cache.authorize(&s, ALICE, HOST, AclOperation::Describe, &topic(&name)),
            implies_describe,
            "{op}"
        );
        assert_eq!(
            cache.authorize(
                &s,
                ALICE,
                HOST,
                AclOperation::DescribeConfigs,
                &topic(&name)
            ),
            op == AclOperation::AlterConfigs,
            "{op}"
        );
    }
    // A DENY of Describe is not implied by an ALLOW, and a DENY of Read does not deny Describe.
    add(
        &mut cache,
        &topic("d"),
        entry(ALICE, "*", AclOperation::Read, true),
    );
    add(
        &mut cache,
        &topic("d"),
        entry(ALICE, "*", AclOperation::Write, false),
    );
    assert!(cache.authorize(&s, ALICE, HOST, AclOperation::Describe, &topic("d")));
    assert!(!cache.authorize(&s, ALICE, HOST, AclOperation::Write, &topic("d")));
}

#[test]
fn prefixed_patterns_match_names_they_start() {
    let mut cache = AclCache::new();
    let s = settings();
    add(
        &mut cache,
        &prefixed("pay"),
        entry(ALICE, "*", AclOperation::Write, true),
    );
    assert!(cache.authorize(&s, ALICE, HOST, AclOperation::Write, &topic("payments")));
    assert!(cache.authorize(&s, ALICE, HOST, AclOperation::Write, &topic("pay")));
    assert!(!cache.authorize(&s, ALICE, HOST, AclOperation::Write, &topic("pa")));
    assert!(!cache.authorize(&s, ALICE, HOST, AclOperation::Write, &topic("xpay")));
    add(
        &mut cache,
        &prefixed("payments-eu"),
        entry(ALICE, "*", AclOperation::Write, false),
    );
    assert!(!cache.authorize(
        &s,
        ALICE,
        HOST,
        AclOperation::Write,
        &topic("payments-eu-1")
    ));
    assert!(cache.authorize(&s, ALICE, HOST, AclOperation::Write, &topic("payments-us")));
    // A group pattern does not apply to topics.
    let group = ResourcePattern::new(ResourceType::Group, "", PatternType::Prefixed);
    add(
        &mut cache,
        &group,
        entry(BOB, "*", AclOperation::Read, true),
    );
    assert!(!cache.authorize(&s, BOB, HOST, AclOperation::Read, &topic("payments")));
}

#[test]
fn an_emptied_resource_leaves_the_cache_and_its_index() {
    let mut cache = AclCache::new();
    let s = settings();
    add(
        &mut cache,
        &topic("t"),
        entry(ALICE, "*", AclOperation::Write, true),
    );
    assert!(cache.authorize_by_resource_type(
        &s,
        ALICE,
        HOST,
        AclOperation::Write,
        ResourceType::Topic
    ));
    cache.update(&topic("t"), VersionedAcls::none());
    assert_eq!(cache.resources().count(), 0);
    assert!(!cache.authorize_by_resource_type(
        &s,
        ALICE,
        HOST,
        AclOperation::Write,
        ResourceType::Topic
    ));
}

#[test]
fn authorize_by_resource_type_as_kafka() {
    let s = settings();
    let by_type = |cache: &AclCache| {
        cache.authorize_by_resource_type(&s, ALICE, HOST, AclOperation::Write, ResourceType::Topic)
    };
    let mut cache = AclCache::new();
    assert!(!by_type(&cache));
    add(
        &mut cache,
        &topic("a"),
        entry(ALICE, "*", AclOperation::Write, true),
    );
    assert!(by_type(&cache));
    // Denied literally: no other name is allowed.
    add(
        &mut cache,
        &topic("a"),
        entry(ALICE, "*", AclOperation::Write, false),
    );
    assert!(!by_type(&cache));
    // An allowed prefix no deny prefix dominates.
    add(
        &mut cache,
        &prefixed("b-"),
        entry(ALICE, "*", AclOperation::All, true),
    );
    assert!(by_type(&cache));
    add(
        &mut cache,
        &prefixed("b"),
        entry(WILDCARD_PRINCIPAL, "*", AclOperation::Write, false),
    );
    assert!(!by_type(&cache));
    // A deny on the wildcard refuses whatever else is allowed, super users excepted.
    let mut cache = AclCache::new();
    add(
        &mut cache,
        &topic("a"),
        entry(ALICE, "*", AclOperation::Write, true),
    );
    add(
        &mut cache,
        &topic("*"),
        entry(ALICE, HOST, AclOperation::Write, false),
    );
    assert!(!by_type(&cache));
    let mut sup = settings();
    sup.super_users.insert(ALICE.to_string());
    assert!(cache.authorize_by_resource_type(
        &sup,
        ALICE,
        HOST,
        AclOperation::Write,
        ResourceType::Topic
    ));
    // An allow on another resource type does not count.
    let mut cache = AclCache::new();
    add(
        &mut cache,
        &ResourcePattern::literal(ResourceType::Group, "g"),
        entry(ALICE, "*", AclOperation::Write, true),
    );
    assert!(!by_type(&cache));
}

#[test]
fn super_users_parse_as_kafka() {
    let users =
        AuthorizerSettings::parse_super_users(" User:admin ; User:CN=broker,O=kcli").unwrap();
    assert!(users.contains("User:admin") && users.contains("User:CN=broker,O=kcli"));
    assert!(
        AuthorizerSettings::parse_super_users("")
            .unwrap()
            .is_empty()
    );
    assert!(AuthorizerSettings::parse_super_users("admin").is_err());
}

fn arb_name() -> impl Strategy<Value = String> {
    prop_oneof![Just("*".to_string()), "[ab]{0,3}".prop_map(|s| s),]
}

fn arb_binding() -> impl Strategy<Value = (ResourcePattern, AccessControlEntry)> {
    (
        prop_oneof![Just(ResourceType::Topic), Just(ResourceType::Group)],
        arb_name(),
        prop_oneof![Just(PatternType::Literal), Just(PatternType::Prefixed)],
        prop_oneof![Just(ALICE), Just(BOB), Just(WILDCARD_PRINCIPAL)],
        prop_oneof![Just(HOST), Just("*")],
        prop_oneof![
            Just(AclOperation::Read),
            Just(AclOperation::Write),
            Just(AclOperation::All),
            Just(AclOperation::Describe)
        ],
        any::<bool>(),
    )
        .prop_map(|(rt, name, pt, p, h, op, allow)| {
            (ResourcePattern::new(rt, name, pt), entry(p, h, op, allow))
        })
}

/// The decision written from the definitions, scanning every binding.
fn model(
    bindings: &[(ResourcePattern, AccessControlEntry)],
    s: &AuthorizerSettings,
    principal: &str,
    op: AclOperation,
    resource: &ResourcePattern,
) -> bool {
    if s.super_users.contains(principal) {
        return true;
    }
    let applies: Vec<&AccessControlEntry> = bindings
        .iter()
        .filter(|(p, _)| {
            p.resource_type == resource.resource_type
                && match p.pattern_type {
                    PatternType::Literal => p.name == resource.name || p.name == "*",
                    PatternType::Prefixed => {
                        resource.name.starts_with(&p.name)
                            && (!p.name.is_empty() || resource.name.is_empty())
                    }
                    _ => false,
                }
        })
        .map(|(_, e)| e)
        .collect();
    if applies.is_empty() {
        return s.allow_everyone_if_no_acl_found;
    }
    let hit = |e: &&AccessControlEntry, o: AclOperation, perm| {
        e.permission_type == perm
            && (e.principal == principal || e.principal == WILDCARD_PRINCIPAL)
            && (e.operation == o || e.operation == AclOperation::All)
            && (e.host == HOST || e.host == "*")
    };
    if applies.iter().any(|e| hit(e, op, AclPermissionType::Deny)) {
        return false;
    }
    op.implied_by()
        .iter()
        .any(|o| applies.iter().any(|e| hit(e, *o, AclPermissionType::Allow)))
}

proptest! {
    #[test]
    fn authorize_agrees_with_a_scan_of_every_binding(
        bindings in proptest::collection::vec(arb_binding(), 0..12),
        name in "[ab]{0,4}",
        op in prop_oneof![Just(AclOperation::Read), Just(AclOperation::Write), Just(AclOperation::Describe)],
        allow_everyone in any::<bool>(),
    ) {
        let mut cache = AclCache::new();
        for (p, e) in &bindings {
            add(&mut cache, p, e.clone());
        }
        let s = AuthorizerSettings { allow_everyone_if_no_acl_found: allow_everyone, ..AuthorizerSettings::default() };
        let resource = topic(&name);
        prop_assert_eq!(
            cache.authorize(&s, ALICE, HOST, op, &resource),
            model(&bindings, &s, ALICE, op, &resource)
        );
        // Removing everything again leaves nothing behind.
        for (p, _) in &bindings {
            cache.update(p, VersionedAcls::none());
        }
        prop_assert_eq!(cache.resources().count(), 0);
        prop_assert!(cache.by_type.is_empty());
    }
}
