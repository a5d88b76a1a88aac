//! Golden tests: every payload kcli writes equals what Apache Kafka 3.9.1's own encoders wrote
//! (`tests/fixtures/zk/golden.txt`, produced by `Golden.java` there), and decodes back.

use super::*;

const GOLDEN: &str = include_str!("../../tests/fixtures/zk/golden.txt");

fn golden(name: &str) -> String {
    GOLDEN
        .lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix('\t')))
        .unwrap_or_else(|| panic!("no golden line {name}"))
        .to_string()
}

fn text(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap()
}

const TOPIC_ID: u128 = 0x0123456789abcdef_0fedcba987654321;

#[test]
fn topic_id_text() {
    let id = Uuid::from_u128(TOPIC_ID);
    assert_eq!(topic_id_to_string(id), golden("uuid"));
    assert_eq!(topic_id_from_string(&golden("uuid")).unwrap(), id);
    assert!(topic_id_from_string("ASNFZ4mrze8P7cuph2VDIR").is_err());
    assert!(topic_id_from_string("short").is_err());
    for _ in 0..100 {
        let id = Uuid::new_v4();
        assert_eq!(topic_id_from_string(&topic_id_to_string(id)).unwrap(), id);
    }
}

#[test]
fn random_ids_never_read_as_an_option() {
    // About one v4 uuid in 64 has a text starting with `-`: 4,000 draws meet several.
    let texts: Vec<String> = (0..4000)
        .map(|_| topic_id_to_string(random_uuid()))
        .collect();
    assert!(texts.iter().all(|t| !t.starts_with('-') && t.len() == 22));
    assert!(topic_id_to_string(Uuid::from_u128(0xf8 << 120)).starts_with('-'));
}

#[test]
fn cluster_id_and_controller() {
    assert_eq!(
        text(encode_cluster_id("AbCdEfGhIjKlMnOpQrStUv")),
        golden("cluster")
    );
    assert_eq!(
        decode_cluster_id(golden("cluster").as_bytes()).unwrap(),
        "AbCdEfGhIjKlMnOpQrStUv"
    );
    let c = ControllerRegistration {
        broker_id: 1,
        timestamp_ms: 1_700_000_000_000,
        kraft_controller_epoch: -1,
    };
    assert_eq!(text(c.encode()), golden("controller"));
    assert_eq!(
        ControllerRegistration::decode(golden("controller").as_bytes()).unwrap(),
        c
    );
    let v1 =
        ControllerRegistration::decode(br#"{"version":1,"brokerid":3,"timestamp":"5"}"#).unwrap();
    assert_eq!(
        (v1.broker_id, v1.timestamp_ms, v1.kraft_controller_epoch),
        (3, 5, -1)
    );
    assert_eq!(encode_controller_epoch(5), b"5");
    assert_eq!(decode_controller_epoch(b"17").unwrap(), 17);
    assert!(decode_controller_epoch(b"x").is_err());
}

#[test]
fn entity_configs() {
    let config: BTreeMap<String, String> = [
        ("retention.ms", "86400000"),
        ("cleanup.policy", "compact"),
        ("segment.bytes", "1048576"),
        ("min.insync.replicas", "2"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(text(encode_entity_config(&config)), golden("config"));
    assert_eq!(
        decode_entity_config(golden("config").as_bytes()).unwrap(),
        config
    );
    assert_eq!(
        text(encode_entity_config(&BTreeMap::new())),
        golden("config_empty")
    );
    let many: BTreeMap<String, String> = [
        "cleanup.policy",
        "compression.type",
        "delete.retention.ms",
        "file.delete.delay.ms",
        "flush.messages",
        "flush.ms",
        "index.interval.bytes",
        "max.message.bytes",
        "message.timestamp.type",
        "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms",
        "min.insync.replicas",
        "preallocate",
        "retention.bytes",
        "retention.ms",
        "segment.bytes",
        "segment.ms",
    ]
    .into_iter()
    .map(|k| (k.to_string(), "1".to_string()))
    .collect();
    assert_eq!(text(encode_entity_config(&many)), golden("config_many"));
    assert_eq!(text(encode_config_change("topics/t")), golden("change"));
    assert_eq!(
        decode_config_change(golden("change").as_bytes()).unwrap(),
        "topics/t"
    );
    // Version 1, as brokers before Kafka 2.0 wrote it.
    assert_eq!(
        decode_config_change(br#"{"version":1,"entity_type":"topics","entity_name":"t"}"#).unwrap(),
        "topics/t"
    );
    assert!(decode_config_change(br#"{"version":3,"entity_path":"topics/t"}"#).is_err());
}

#[test]
fn partition_states() {
    let s = PartitionState {
        leader: 1,
        leader_epoch: 0,
        isr: vec![1, 2, 3],
        controller_epoch: 1,
        leader_recovery_state: 0,
    };
    assert_eq!(text(s.encode()), golden("state"));
    assert_eq!(
        PartitionState::decode(golden("state").as_bytes()).unwrap(),
        s
    );
    let r = PartitionState {
        leader: 1,
        leader_epoch: 2,
        isr: vec![1],
        controller_epoch: 3,
        leader_recovery_state: 1,
    };
    assert_eq!(text(r.encode()), golden("state_recovering"));
    assert_eq!(
        PartitionState::decode(golden("state_recovering").as_bytes()).unwrap(),
        r
    );
}

/// Not a golden payload: the ISR rule the controller paths share.
#[test]
fn shrunk_isr_keeps_the_last_members() {
    let s = PartitionState::decode(golden("state").as_bytes()).unwrap();
    assert_eq!(s.isr, [1, 2, 3]);
    assert_eq!(s.shrunk_isr(|id| id != 1), [2, 3]);
    assert_eq!(s.shrunk_isr(|id| id == 2), [2]);
    assert_eq!(s.shrunk_isr(|_| false), [1, 2, 3]);
}

fn assignment(n: i32) -> TopicAssignment {
    let mut a = TopicAssignment {
        topic_id: Some(Uuid::from_u128(TOPIC_ID)),
        ..Default::default()
    };
    for i in 0..n {
        a.partitions.insert(i, vec![i % 3, (i + 1) % 3]);
    }
    a.adding_replicas.insert(1, vec![2]);
    a.removing_replicas.insert(1, vec![0]);
    a
}

#[test]
fn topic_assignments() {
    for n in [3, 12, 30] {
        let a = assignment(n);
        assert_eq!(
            text(a.encode()),
            golden(&format!("topic{n}")),
            "{n} partitions"
        );
        assert_eq!(
            TopicAssignment::decode(golden(&format!("topic{n}")).as_bytes()).unwrap(),
            a
        );
    }
    assert_eq!(
        text(TopicAssignment::default().encode()),
        golden("topic_noid")
    );
    let v1 = TopicAssignment::decode(br#"{"version":1,"partitions":{"0":[1]}}"#).unwrap();
    assert_eq!((v1.topic_id, v1.partitions[&0].clone()), (None, vec![1]));
    assert!(TopicAssignment::decode(br#"{"partitions":{"x":[1]}}"#).is_err());
}

/// Replaces the clock-dependent timestamp Kafka wrote with ours.
fn with_timestamp(json: &str, ts: i64) -> String {
    let at = json.find("\"timestamp\":\"").unwrap() + 13;
    let end = at + json[at..].find('"').unwrap();
    format!("{}{ts}{}", &json[..at], &json[end..])
}

#[test]
fn broker_registrations() {
    let ep = |name: &str, host: &str, port, proto: &str| EndPoint {
        listener_name: name.into(),
        host: host.into(),
        port,
        security_protocol: proto.into(),
    };
    let b = BrokerRegistration {
        endpoints: vec![
            ep("PLAINTEXT", "host1", 9092, "PLAINTEXT"),
            ep("SSL", "host1", 9093, "SSL"),
        ],
        rack: Some("dc1".into()),
        jmx_port: -1,
        timestamp_ms: 1_700_000_000_000,
    };
    assert_eq!(
        text(b.encode()),
        with_timestamp(&golden("broker"), 1_700_000_000_000)
    );
    assert_eq!(BrokerRegistration::decode(&b.encode()).unwrap(), b);
    let b = BrokerRegistration {
        endpoints: vec![ep("PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT")],
        rack: None,
        jmx_port: -1,
        timestamp_ms: 42,
    };
    assert_eq!(
        text(b.encode()),
        with_timestamp(&golden("broker_norack"), 42)
    );
    assert_eq!(BrokerRegistration::decode(&b.encode()).unwrap(), b);
    let v1 =
        BrokerRegistration::decode(br#"{"version":1,"host":"h","port":1,"jmx_port":-1}"#).unwrap();
    assert_eq!(v1.endpoints, [ep("PLAINTEXT", "h", 1, "PLAINTEXT")]);
    assert!(BrokerRegistration::decode(br#"{"version":5}"#).is_err());
    let v6 = ep("PLAINTEXT", "::1", 9092, "PLAINTEXT");
    assert_eq!(v6.connection_string(), "PLAINTEXT://[::1]:9092");
    assert_eq!(parse_endpoint("PLAINTEXT://[::1]:9092", None).unwrap(), v6);
}

#[test]
fn producer_ids_and_notifications() {
    let p = ProducerIdBlock {
        broker: 0,
        block_start: 0,
        block_end: 999,
    };
    assert_eq!(text(p.encode()), golden("pid"));
    assert_eq!(
        ProducerIdBlock::decode(golden("pid").as_bytes()).unwrap(),
        p
    );
    let tps = [TopicPartition::new("a", 0), TopicPartition::new("b", 3)];
    let isr = text(encode_isr_change(&tps));
    assert_eq!(
        isr,
        r#"{"version":1,"partitions":[{"topic":"a","partition":0},{"topic":"b","partition":3}]}"#
    );
    assert_eq!(decode_isr_change(isr.as_bytes()).unwrap(), tps);
    assert_eq!(
        text(encode_log_dir_event(3)),
        r#"{"version":1,"broker":3,"event":1}"#
    );
    assert_eq!(decode_log_dir_event(&encode_log_dir_event(3)).unwrap(), 3);
    assert!(decode_log_dir_event(br#"{"version":1,"event":1}"#).is_err());
}

#[test]
fn paths() {
    let tp = TopicPartition::new("t", 2);
    assert_eq!(broker_id_path(1), "/brokers/ids/1");
    assert_eq!(topic_path("t"), "/brokers/topics/t");
    assert_eq!(
        topic_partition_state_path(&tp),
        "/brokers/topics/t/partitions/2/state"
    );
    assert_eq!(topic_config_path("t"), "/config/topics/t");
    assert_eq!(delete_topic_path("t"), "/admin/delete_topics/t");
    for p in PERSISTENT_ZK_PATHS {
        crate::zk::client::validate_path(p).unwrap();
    }
}

#[test]
fn garbage_never_panics() {
    // Like Kafka, an object without partitions reads as a topic with none.
    assert!(
        TopicAssignment::decode(br#"{"version":"x"}"#)
            .unwrap()
            .partitions
            .is_empty()
    );
    for bytes in [
        &b""[..],
        b"null",
        b"[1]",
        b"{",
        b"{\"version\":\"x\"}",
        &[0xff, 0xfe],
    ] {
        assert!(BrokerRegistration::decode(bytes).is_err());
        assert!(BrokerZNode::decode(bytes).is_err());
        assert!(bytes.len() == 15 || TopicAssignment::decode(bytes).is_err());
        assert!(PartitionState::decode(bytes).is_err());
        assert!(ControllerRegistration::decode(bytes).is_err());
        assert!(ProducerIdBlock::decode(bytes).is_err());
    }
}

proptest::proptest! {
    #[test]
    fn decoders_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..128), s in "\\PC{0,64}") {
        for input in [&bytes[..], s.as_bytes()] {
            let _ = BrokerRegistration::decode(input);
            let _ = BrokerZNode::decode(input);
            let _ = TopicAssignment::decode(input);
            let _ = PartitionState::decode(input);
            let _ = ControllerRegistration::decode(input);
            let _ = ProducerIdBlock::decode(input);
            let _ = decode_entity_config(input);
            let _ = decode_isr_change(input);
            let _ = decode_cluster_id(input);
            let _ = decode_controller_epoch(input);
        }
        let _ = topic_id_from_string(&s);
    }
}

// ---- every version a reader meets (what Kafka 1.x to 3.9 wrote) ----------------------------

#[test]
fn broker_znodes_of_every_version() {
    let v1 = BrokerZNode::decode(
        br#"{"version":1,"host":"h1","port":9092,"jmx_port":9999,"timestamp":"1000"}"#,
    )
    .unwrap();
    assert_eq!(
        (v1.version, v1.host.as_deref(), v1.port),
        (1, Some("h1"), 9092)
    );
    assert_eq!(v1.registration.jmx_port, 9999);
    assert_eq!(v1.registration.timestamp_ms, 1000);
    assert_eq!(
        v1.registration.endpoints[0].connection_string(),
        "PLAINTEXT://h1:9092"
    );
    assert!(v1.features.is_empty());
    // v2 and v3: endpoints, no listener map (the listener name is the protocol); v3 a rack.
    let v2 = BrokerZNode::decode(
        br#"{"version":2,"host":"h2","port":9092,"jmx_port":-1,"timestamp":"2","endpoints":["PLAINTEXT://h2:9092","SSL://h2:9093"]}"#,
    )
    .unwrap();
    let protos: Vec<&str> = v2
        .registration
        .endpoints
        .iter()
        .map(|e| e.security_protocol.as_str())
        .collect();
    assert_eq!(protos, ["PLAINTEXT", "SSL"]);
    let v3 = BrokerZNode::decode(
        br#"{"version":3,"host":"h3","port":9092,"jmx_port":-1,"timestamp":"3","endpoints":["PLAINTEXT://h3:9092"],"rack":"r1"}"#,
    )
    .unwrap();
    assert_eq!(v3.registration.rack.as_deref(), Some("r1"));
    // v4: the listener map; without a PLAINTEXT listener host is null and port -1.
    let v4 = BrokerZNode::decode(
        br#"{"listener_security_protocol_map":{"INTERNAL":"SASL_PLAINTEXT"},"endpoints":["INTERNAL://[::1]:9094"],"rack":null,"jmx_port":-1,"host":null,"timestamp":"4","port":-1,"version":4}"#,
    )
    .unwrap();
    assert_eq!((v4.host, v4.port), (None, -1));
    assert_eq!(v4.registration.rack, None);
    let e = &v4.registration.endpoints[0];
    assert_eq!(
        (
            e.listener_name.as_str(),
            e.host.as_str(),
            e.port,
            e.security_protocol.as_str()
        ),
        ("INTERNAL", "::1", 9094, "SASL_PLAINTEXT")
    );
    // v5: features.
    let v5 = BrokerZNode::decode(
        br#"{"features":{"metadata.version":{"min_version":1,"max_version":21}},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://h5:9092"],"jmx_port":-1,"port":9092,"host":"h5","version":5,"timestamp":"5"}"#,
    )
    .unwrap();
    assert_eq!(
        v5.features.get("metadata.version"),
        Some(&FeatureRange {
            min_version: 1,
            max_version: 21
        })
    );
    // What kcli itself writes reads back with its host and port.
    let golden = BrokerZNode::decode(golden("broker").as_bytes()).unwrap();
    assert_eq!(
        (golden.version, golden.host.as_deref(), golden.port),
        (5, Some("host1"), 9092)
    );
    // Malformed ones are errors, never defaults.
    for bad in [
        &br#"{"version":0,"host":"h","port":1,"jmx_port":-1}"#[..],
        br#"{"version":1,"port":1,"jmx_port":-1}"#,
        br#"{"version":4,"endpoints":["X://h:1"],"listener_security_protocol_map":{},"jmx_port":-1}"#,
        br#"{"version":5,"endpoints":[],"jmx_port":-1,"features":{"f":{"min_version":"1"}}}"#,
        br#"{"version":5,"endpoints":[],"jmx_port":-1,"port":"x"}"#,
        b"[1]",
    ] {
        assert!(BrokerZNode::decode(bad).is_err(), "{}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn topic_znodes_of_every_version() {
    let v1 =
        TopicAssignment::decode(br#"{"version":1,"partitions":{"1":[2,1],"0":[1,2]}}"#).unwrap();
    assert_eq!(v1.topic_id, None);
    assert_eq!(v1.partitions.get(&1), Some(&vec![2, 1]));
    assert!(v1.adding_replicas.is_empty() && v1.removing_replicas.is_empty());
    let v2 = TopicAssignment::decode(
        br#"{"version":2,"partitions":{"0":[1,2,3]},"adding_replicas":{"0":[3]},"removing_replicas":{"0":[1]}}"#,
    )
    .unwrap();
    assert_eq!(v2.adding_replicas.get(&0), Some(&vec![3]));
    assert_eq!(v2.removing_replicas.get(&0), Some(&vec![1]));
    let id = Uuid::from_u128(TOPIC_ID);
    let v3 = TopicAssignment::decode(
        format!(
            r#"{{"removing_replicas":{{}},"partitions":{{"0":[1]}},"topic_id":"{}","adding_replicas":{{}},"version":3}}"#,
            topic_id_to_string(id)
        )
        .as_bytes(),
    )
    .unwrap();
    assert_eq!(v3.topic_id, Some(id));
    assert!(TopicAssignment::decode(br#"{"version":3,"partitions":{"x":[1]}}"#).is_err());
    assert!(TopicAssignment::decode(br#"{"version":3,"partitions":{"0":1}}"#).is_err());
}

#[test]
fn partition_state_with_leader_recovery_state() {
    let s = PartitionState::decode(
        br#"{"controller_epoch":3,"leader":2,"version":1,"leader_epoch":7,"isr":[2,1],"leader_recovery_state":1}"#,
    )
    .unwrap();
    assert_eq!(
        (
            s.leader,
            s.leader_epoch,
            s.isr.as_slice(),
            s.controller_epoch,
            s.leader_recovery_state
        ),
        (2, 7, &[2, 1][..], 3, 1)
    );
    assert!(
        PartitionState::decode(br#"{"leader":1,"leader_epoch":0,"controller_epoch":1}"#).is_err()
    );
    assert_eq!(
        ControllerRegistration::decode(
            br#"{"version":2,"brokerid":3000,"timestamp":"9","kraftControllerEpoch":4}"#
        )
        .unwrap()
        .kraft_controller_epoch,
        4
    );
    assert!(ControllerRegistration::decode(br#"{"version":1}"#).is_err());
    assert!(decode_cluster_id(br#"{"version":"1"}"#).is_err());
}

#[test]
fn partition_reassignment_is_kafkas_legacy_znode() {
    let tp = |t: &str, p| TopicPartition::new(t, p);
    let bytes =
        encode_partition_reassignment(&[(tp("foo", 0), vec![1, 2, 3]), (tp("bar", 2), vec![4])]);
    assert_eq!(
        std::str::from_utf8(&bytes).unwrap(),
        r#"{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2,3]},{"topic":"bar","partition":2,"replicas":[4]}]}"#
    );
    assert_eq!(
        decode_partition_reassignment(&bytes).unwrap(),
        vec![(tp("foo", 0), vec![1, 2, 3]), (tp("bar", 2), vec![4])]
    );
    // A partition named twice keeps its last target, as Kafka's `toMap` does; the key order of
    // a hand-written file does not matter.
    assert_eq!(
        decode_partition_reassignment(
            br#"{"partitions":[{"replicas":[1],"partition":0,"topic":"t"},{"topic":"t","partition":0,"replicas":[2]}],"version":1}"#
        )
        .unwrap(),
        vec![(tp("t", 0), vec![2])]
    );
    assert!(decode_partition_reassignment(br#"{"version":1}"#).is_err());
    assert!(
        decode_partition_reassignment(
            br#"{"version":1,"partitions":[{"topic":"t","partition":0}]}"#
        )
        .is_err()
    );
}
