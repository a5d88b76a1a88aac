//! Kafka's eight levels of client-quota precedence, end to end on `kcli serve` over a real
//! ZooKeeper: each level is set with Kafka 3.9.1's `kafka-configs --bootstrap-server` and
//! decides the `producer_byte_rate` that a real SCRAM-authenticated client (user `alice`,
//! client id `app`) is held to, seen in the `throttle_time_ms` of its Produce responses.
//!
//! The levels are added from the lowest (`/config/clients/<default>`) to the highest
//! (`/config/users/alice/clients/app`), their quotas alternating between one far below what
//! one request sends and one far above it: each new level must flip the client between
//! throttled and not, so the higher of each adjacent pair decides over the lower one (and over
//! all below it). Then they are deleted from the highest down, each deletion flipping it back
//! to the level below: a broker that let the last write win, rather than the higher level,
//! fails there. Every change is polled for with a deadline, since it reaches the broker through
//! ZooKeeper's change notifications.

use std::time::Duration;

use kcli::protocol::messages::ResponseKind;

use crate::serve_sasl_clients::{add_scram_user, sasl_overrides, scram_connect};
use crate::serve_support::{
    KafkaConn, PRODUCE_VERSION, TestBroker, batch_of, create_topic_with, produce_request,
};
use crate::support::cluster::{exclusive, wait_until};
use crate::support::zookeeper::ZkServer;
use crate::users::kafka_configs;

const USER: &str = "alice";
const PASSWORD: &str = "alice-secret";
const CLIENT: &str = "app";
const TOPIC: &str = "precedence";
/// A quota that one Produce request of [`RECORD`] bytes exceeds many times over (a throttle is
/// owed for all but one second of the quota), and one it never reaches.
const TINY: &str = "producer_byte_rate=10";
const HUGE: &str = "producer_byte_rate=1000000000";
const RECORD: usize = 2_000;
/// A quota change reaches the broker through a ZooKeeper notification: well within this.
const DELIVERY: Duration = Duration::from_secs(20);

/// Kafka's levels, highest first: the `kafka-configs` entity arguments of each, and its name.
const LEVELS: [(&[&str], &str); 8] = [
    (
        &[
            "--entity-type",
            "users",
            "--entity-name",
            USER,
            "--entity-type",
            "clients",
            "--entity-name",
            CLIENT,
        ],
        "/config/users/alice/clients/app",
    ),
    (
        &[
            "--entity-type",
            "users",
            "--entity-name",
            USER,
            "--entity-type",
            "clients",
            "--entity-default",
        ],
        "/config/users/alice/clients/<default>",
    ),
    (
        &["--entity-type", "users", "--entity-name", USER],
        "/config/users/alice",
    ),
    (
        &[
            "--entity-type",
            "users",
            "--entity-default",
            "--entity-type",
            "clients",
            "--entity-name",
            CLIENT,
        ],
        "/config/users/<default>/clients/app",
    ),
    (
        &[
            "--entity-type",
            "users",
            "--entity-default",
            "--entity-type",
            "clients",
            "--entity-default",
        ],
        "/config/users/<default>/clients/<default>",
    ),
    (
        &["--entity-type", "users", "--entity-default"],
        "/config/users/<default>",
    ),
    (
        &["--entity-type", "clients", "--entity-name", CLIENT],
        "/config/clients/app",
    ),
    (
        &["--entity-type", "clients", "--entity-default"],
        "/config/clients/<default>",
    ),
];

/// The quota level `index` (0 = highest) gets: the lowest is tiny, and each level above it the
/// opposite of the one below.
fn throttles(index: usize) -> bool {
    index % 2 == 1
}

/// `kafka-configs --bootstrap-server <broker> --alter <entity> <op> <config>`, which must
/// succeed.
fn alter(broker: &TestBroker, entity: &[&str], op: &str, config: &str) {
    let bootstrap = broker.bootstrap();
    let mut args = vec!["--bootstrap-server", bootstrap.as_str(), "--alter"];
    args.extend_from_slice(entity);
    args.extend_from_slice(&[op, config]);
    let (code, out, err) = kafka_configs(&args);
    assert_eq!(code, 0, "kafka-configs {args:?}: {out}{err}");
}

/// The `throttle_time_ms` of one Produce of [`RECORD`] bytes that `alice` sends as `client`,
/// on a new SCRAM-authenticated connection (a throttled one is muted for a while).
fn produce_throttle(broker: &TestBroker, client: &str) -> i32 {
    let mut conn: KafkaConn =
        scram_connect(broker.port2(), USER, PASSWORD).unwrap_or_else(|e| panic!("{e}"));
    conn.set_client_id(client);
    let request = produce_request(TOPIC, 0, batch_of(&[vec![b'q'; RECORD]]), 1);
    let ResponseKind::Produce(response) = conn.call(&request, PRODUCE_VERSION) else {
        panic!("not a Produce response");
    };
    let partition = &response.responses[0].partition_responses[0];
    assert_eq!(partition.error_code, 0, "{response:?}");
    response.throttle_time_ms
}

/// Waits until `client`'s Produce is throttled (`throttled`) or is not, as the level `level`
/// decides.
fn wait_decided_by(broker: &TestBroker, client: &str, level: &str, throttled: bool) {
    let what = if throttled {
        "throttled"
    } else {
        "not throttled"
    };
    wait_until(
        &format!("{USER}/{client} {what}, as {level} decides"),
        DELIVERY,
        || {
            let throttle = produce_throttle(broker, client);
            ((throttle > 0) == throttled).then_some(())
        },
    );
}

#[test]
fn each_of_kafkas_eight_quota_levels_overrides_the_one_below_it() {
    let _one = exclusive();
    let zk = ZkServer::start();
    let connect = zk.connect_string();
    add_scram_user(&connect, USER, PASSWORD);
    let mut overrides = sasl_overrides();
    overrides.push(("zookeeper.connect", &connect));
    let broker = TestBroker::start(&overrides);
    create_topic_with(&mut KafkaConn::connect(broker.port()), TOPIC, 1, &[]);
    assert_eq!(
        produce_throttle(&broker, CLIENT),
        0,
        "throttled with no quota"
    );

    // From the lowest level up: each decides over the one below it.
    for index in (0..LEVELS.len()).rev() {
        let (entity, name) = LEVELS[index];
        let config = if throttles(index) { TINY } else { HUGE };
        alter(&broker, entity, "--add-config", config);
        wait_decided_by(&broker, CLIENT, name, throttles(index));
    }
    // The highest level names the client id: another of alice's client ids falls to the
    // second.
    wait_decided_by(&broker, "other", LEVELS[1].1, throttles(1));

    // From the highest level down: once a level is gone, the one below it decides again.
    for index in 0..LEVELS.len() - 1 {
        let (entity, name) = LEVELS[index];
        alter(&broker, entity, "--delete-config", "producer_byte_rate");
        let below = LEVELS[index + 1].1;
        wait_decided_by(
            &broker,
            CLIENT,
            &format!("{below} (with {name} deleted)"),
            throttles(index + 1),
        );
    }
}
