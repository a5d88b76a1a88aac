//! The refusals on the wire, from one kcli broker with the authorizer on and no ACLs for the
//! PLAINTEXT principal `User:ANONYMOUS` (not a super user): the ACL APIs, DescribeLogDirs and
//! UpdateMetadata answer CLUSTER_AUTHORIZATION_FAILED (and Describe/AlterClientQuotas, at the
//! top level and per entry), DeleteRecords TOPIC_AUTHORIZATION_FAILED;
//! without an authorizer the ACL APIs answer SECURITY_DISABLED; another authorizer class or a
//! super user not `type:name` is refused at startup naming the key.

use kcli::protocol::errors::ErrorCode;
use kcli::protocol::messages::alter_client_quotas_request::{
    AlterClientQuotasRequest, EntityData, EntryData, OpData,
};
use kcli::protocol::messages::create_acls_request::{AclCreation, CreateAclsRequest};
use kcli::protocol::messages::delete_records_request::{
    DeleteRecordsPartition, DeleteRecordsRequest, DeleteRecordsTopic,
};
use kcli::protocol::messages::describe_acls_request::DescribeAclsRequest;
use kcli::protocol::messages::describe_client_quotas_request::DescribeClientQuotasRequest;
use kcli::protocol::messages::describe_log_dirs_request::DescribeLogDirsRequest;
use kcli::protocol::messages::update_metadata_request::UpdateMetadataRequest;
use kcli::protocol::messages::{RequestKind, ResponseKind};

use super::ACL_AUTHORIZER;
use crate::serve_support::TestBroker;

fn send(port: u16, request: RequestKind, version: i16) -> ResponseKind {
    crate::support::requests::send_request(port, &request, version)
}

fn describe_acls(port: u16) -> i16 {
    let request = RequestKind::DescribeAcls(DescribeAclsRequest {
        resource_type_filter: 1,
        pattern_type_filter: 1,
        operation: 1,
        permission_type: 1,
        ..DescribeAclsRequest::default()
    });
    match send(port, request, 3) {
        ResponseKind::DescribeAcls(r) => r.error_code,
        other => panic!("{other:?}"),
    }
}

fn create_acl(port: u16) -> i16 {
    let request = RequestKind::CreateAcls(CreateAclsRequest {
        creations: vec![AclCreation {
            resource_type: 2,
            resource_name: "t".into(),
            resource_pattern_type: 3,
            principal: "User:ANONYMOUS".into(),
            host: "*".into(),
            operation: 2,
            permission_type: 3,
            ..AclCreation::default()
        }],
        ..CreateAclsRequest::default()
    });
    match send(port, request, 3) {
        ResponseKind::CreateAcls(r) => r.results[0].error_code,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_principal_without_acls_is_refused_with_kafkas_codes() {
    let broker = TestBroker::start(&[("authorizer.class.name", ACL_AUTHORIZER)]);
    let port = broker.port();
    let cluster_denied = ErrorCode::ClusterAuthorizationFailed.code();
    assert_eq!(describe_acls(port), cluster_denied);
    // The refused creation grants nothing: the next one is refused too.
    assert_eq!(create_acl(port), cluster_denied);
    assert_eq!(create_acl(port), cluster_denied);
    match send(
        port,
        RequestKind::DescribeLogDirs(DescribeLogDirsRequest::default()),
        4,
    ) {
        ResponseKind::DescribeLogDirs(r) => {
            assert_eq!(r.error_code, cluster_denied);
            assert!(r.results.is_empty());
        }
        other => panic!("{other:?}"),
    }
    match send(
        port,
        RequestKind::UpdateMetadata(UpdateMetadataRequest::default()),
        8,
    ) {
        ResponseKind::UpdateMetadata(r) => assert_eq!(r.error_code, cluster_denied),
        other => panic!("{other:?}"),
    }
    // Client quotas need DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster.
    let request = RequestKind::DescribeClientQuotas(DescribeClientQuotasRequest::default());
    match send(port, request, 1) {
        ResponseKind::DescribeClientQuotas(r) => {
            assert_eq!(r.error_code, cluster_denied);
            assert_eq!(r.entries, None);
        }
        other => panic!("{other:?}"),
    }
    let request = RequestKind::AlterClientQuotas(AlterClientQuotasRequest {
        entries: vec![EntryData {
            entity: vec![EntityData {
                entity_type: "user".into(),
                entity_name: Some("alice".into()),
                ..EntityData::default()
            }],
            ops: vec![OpData {
                key: "producer_byte_rate".into(),
                value: 1024.0,
                ..OpData::default()
            }],
            ..EntryData::default()
        }],
        ..AlterClientQuotasRequest::default()
    });
    match send(port, request, 1) {
        ResponseKind::AlterClientQuotas(r) => {
            assert_eq!(r.entries.len(), 1);
            assert_eq!(r.entries[0].error_code, cluster_denied);
            assert_eq!(
                r.entries[0].entity[0].entity_name.as_ref().unwrap(),
                "alice"
            );
        }
        other => panic!("{other:?}"),
    }
    let request = RequestKind::DeleteRecords(DeleteRecordsRequest {
        topics: vec![DeleteRecordsTopic {
            name: "t".into(),
            partitions: vec![DeleteRecordsPartition {
                partition_index: 0,
                offset: -1,
                ..DeleteRecordsPartition::default()
            }],
            ..DeleteRecordsTopic::default()
        }],
        timeout_ms: 1000,
        ..DeleteRecordsRequest::default()
    });
    match send(port, request, 2) {
        ResponseKind::DeleteRecords(r) => assert_eq!(
            r.topics[0].partitions[0].error_code,
            ErrorCode::TopicAuthorizationFailed.code()
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn without_an_authorizer_the_acl_apis_are_security_disabled() {
    let broker = TestBroker::start(&[]);
    let disabled = ErrorCode::SecurityDisabled.code();
    assert_eq!(describe_acls(broker.port()), disabled);
    assert_eq!(create_acl(broker.port()), disabled);
}

/// `kcli serve` with `overrides` must exit 2 with one line containing `want`.
fn refused_at_startup(overrides: &[(&str, &str)], want: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_kcli"));
    cmd.arg("serve")
        .arg("--override")
        .arg(format!("log.dirs={}", dir.path().join("data").display()))
        .arg("--override")
        .arg("listeners=PLAINTEXT://127.0.0.1:0");
    for (k, v) in overrides {
        cmd.arg("--override").arg(format!("{k}={v}"));
    }
    let (code, _, err) =
        crate::serve_support::run_within(cmd, b"", std::time::Duration::from_secs(30));
    assert_eq!(code, 2, "{overrides:?}: {err}");
    assert!(err.contains(want), "{overrides:?}: {err}");
}

#[test]
fn another_authorizer_or_a_bad_super_user_is_refused_at_startup() {
    refused_at_startup(
        &[(
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        )],
        "authorizer.class.name",
    );
    refused_at_startup(
        &[
            ("authorizer.class.name", ACL_AUTHORIZER),
            ("super.users", "User:admin;alice"),
        ],
        "super.users",
    );
}
