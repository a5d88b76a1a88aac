//! The SCRAM credential APIs on a 2-broker kcli cluster over a real ZooKeeper: Kafka 3.9.1's
//! `kafka-configs --bootstrap-server` (AlterUserScramCredentials through the Java admin client,
//! sent to the controller) and `kcli users --bootstrap-server` given the broker that is not the
//! controller; that broker's own answers (NOT_CONTROLLER for an alteration, a listing for a
//! describe); a quota key in the znode kept; a refused credential's per-user code on the wire.

use kcli::protocol::codec::Bytes;
use kcli::protocol::errors::ErrorCode;
use kcli::protocol::messages::alter_user_scram_credentials_request::{
    AlterUserScramCredentialsRequest, ScramCredentialDeletion, ScramCredentialUpsertion,
};
use kcli::protocol::messages::describe_user_scram_credentials_request::DescribeUserScramCredentialsRequest;
use kcli::protocol::messages::{
    AlterUserScramCredentialsResponse, DescribeUserScramCredentialsResponse, RequestKind,
    ResponseKind,
};
use kcli::security::scram_credential::ScramMechanism;
use kcli::zk::ZkClient;

use super::{assert_credential, assert_no_secret, kafka_configs, listed, users, users_ok};
use crate::support::cluster::{TestCluster, with_zk};
use crate::support::zookeeper::write_znode;

fn send(port: u16, request: RequestKind) -> ResponseKind {
    crate::support::requests::send_request(port, &request, 0)
}

fn alter(
    port: u16,
    upsertions: Vec<ScramCredentialUpsertion>,
    deletions: Vec<ScramCredentialDeletion>,
) -> AlterUserScramCredentialsResponse {
    let request = RequestKind::AlterUserScramCredentials(AlterUserScramCredentialsRequest {
        upsertions,
        deletions,
        ..AlterUserScramCredentialsRequest::default()
    });
    match send(port, request) {
        ResponseKind::AlterUserScramCredentials(r) => r,
        other => panic!("{other:?}"),
    }
}

fn describe(port: u16) -> DescribeUserScramCredentialsResponse {
    let request =
        RequestKind::DescribeUserScramCredentials(DescribeUserScramCredentialsRequest::default());
    match send(port, request) {
        ResponseKind::DescribeUserScramCredentials(r) => r,
        other => panic!("{other:?}"),
    }
}

fn upsertion(name: &str, iterations: i32) -> ScramCredentialUpsertion {
    ScramCredentialUpsertion {
        name: name.into(),
        mechanism: ScramMechanism::ScramSha256.mechanism_type(),
        iterations,
        salt: Bytes::from_static(b"salt"),
        salted_password: Bytes::from_static(&[7; 32]),
        ..ScramCredentialUpsertion::default()
    }
}

fn config_of(data: &str) -> serde_json::Map<String, serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(data).unwrap();
    v["config"].as_object().unwrap().clone()
}

#[test]
fn kafkas_tool_and_kcli_alter_through_the_controller_and_others_refuse() {
    let cluster = TestCluster::start(2, &[]);
    let controller = cluster.controller_id().expect("a controller");
    let other = 3 - controller;
    let other_port = cluster.port(other);
    let other_bootstrap = format!("127.0.0.1:{other_port}");

    // The broker that is not the controller refuses every user of an alteration, sorted.
    let r = alter(
        other_port,
        vec![upsertion("zed", 4096), upsertion("amy", 4096)],
        vec![ScramCredentialDeletion {
            name: "amy".into(),
            mechanism: 2,
            ..ScramCredentialDeletion::default()
        }],
    );
    let got: Vec<(String, i16)> = r
        .results
        .iter()
        .map(|r| (r.user.to_string(), r.error_code))
        .collect();
    let not_controller = ErrorCode::NotController.code();
    assert_eq!(
        got,
        [
            ("amy".into(), not_controller),
            ("zed".into(), not_controller)
        ]
    );
    // The controller answers a refused credential with Kafka's code, and writes nothing.
    let r = alter(
        cluster.port(controller),
        vec![upsertion("few", 100)],
        vec![],
    );
    assert_eq!(r.results.len(), 1);
    assert_eq!(
        r.results[0].error_code,
        ErrorCode::UnacceptableCredential.code()
    );
    assert_eq!(
        r.results[0].error_message.as_ref().unwrap().to_string(),
        "Too few iterations"
    );
    assert!(cluster.get("/config/users/few").is_none());

    // A quota already in erin's znode survives Kafka's tool adding a credential.
    with_zk(&cluster.connect(), async |zk: &dyn ZkClient| {
        write_znode(
            zk,
            "/config/users/erin",
            br#"{"version":1,"config":{"consumer_byte_rate":"2048"}}"#,
        )
        .await;
    });
    let (code, stdout, stderr) = kafka_configs(&[
        "--bootstrap-server",
        &other_bootstrap,
        "--alter",
        "--entity-type",
        "users",
        "--entity-name",
        "erin",
        "--add-config",
        "SCRAM-SHA-512=[iterations=8192,password=erin-pw]",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}\n{}", cluster.logs());
    assert!(
        stdout.contains("Completed updating config for user erin."),
        "{stdout}"
    );
    let (data, _) = cluster.get("/config/users/erin").unwrap();
    let config = config_of(&data);
    assert_eq!(config["consumer_byte_rate"], "2048", "{data}");
    assert_credential(
        ScramMechanism::ScramSha512,
        config["SCRAM-SHA-512"].as_str().unwrap(),
        "erin-pw",
        8192,
    );
    let (data, _) = cluster
        .get("/config/changes/config_change_0000000000")
        .unwrap();
    assert_eq!(data, r#"{"version":2,"entity_path":"users/erin"}"#);

    // kcli given the other broker finds the controller too.
    let out = users_ok(
        &[
            "add",
            "dave",
            "--mechanism",
            "SCRAM-SHA-256",
            "--iterations",
            "4100",
            "--password-stdin",
            "--bootstrap-server",
            &other_bootstrap,
        ],
        b"dave-pw\n",
    );
    assert_no_secret(&out, "dave-pw");
    let (data, _) = cluster.get("/config/users/dave").unwrap();
    assert_credential(
        ScramMechanism::ScramSha256,
        config_of(&data)["SCRAM-SHA-256"].as_str().unwrap(),
        "dave-pw",
        4100,
    );

    // Any broker describes: mechanism and iterations only.
    let r = describe(other_port);
    assert_eq!(r.error_code, 0);
    let got: Vec<(String, Vec<(i8, i32)>)> = r
        .results
        .iter()
        .map(|u| {
            (
                u.user.to_string(),
                u.credential_infos
                    .iter()
                    .map(|c| (c.mechanism, c.iterations))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("dave".into(), vec![(1, 4100)]),
            ("erin".into(), vec![(2, 8192)])
        ]
    );
    let out = users_ok(
        &[
            "list",
            "--bootstrap-server",
            &other_bootstrap,
            "--format",
            "json",
        ],
        b"",
    );
    assert_no_secret(&out, "erin-pw");
    let s = |v: &str| v.to_string();
    assert_eq!(
        listed(&out),
        [
            (s("dave"), vec![(s("SCRAM-SHA-256"), 4100)]),
            (s("erin"), vec![(s("SCRAM-SHA-512"), 8192)]),
        ]
    );

    // Kafka's tool deletes through the API; the quota stays.
    let (code, stdout, stderr) = kafka_configs(&[
        "--bootstrap-server",
        &other_bootstrap,
        "--alter",
        "--entity-type",
        "users",
        "--entity-name",
        "erin",
        "--delete-config",
        "SCRAM-SHA-512",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (data, _) = cluster.get("/config/users/erin").unwrap();
    assert_eq!(
        data,
        r#"{"version":1,"config":{"consumer_byte_rate":"2048"}}"#
    );
    users_ok(
        &["remove", "dave", "--bootstrap-server", &other_bootstrap],
        b"",
    );
    assert!(cluster.get("/config/users/dave").is_none());
    let (code, _, stderr) = users(
        &[
            "remove",
            "erin",
            "--mechanism",
            "SCRAM-SHA-512",
            "--bootstrap-server",
            &other_bootstrap,
        ],
        b"",
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("user \"erin\" has no SCRAM-SHA-512 credential"),
        "{stderr}"
    );
    let out = users_ok(&["list", "--bootstrap-server", &other_bootstrap], b"");
    assert_eq!(out, "No user has a SCRAM credential.\n");
}
