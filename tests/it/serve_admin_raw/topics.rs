//! Topic administration: CreateTopics (every refusal Kafka gives, validate_only, zero timeout,
//! manual assignments), DescribeConfigs of topics, AlterConfigs and IncrementalAlterConfigs on
//! topics, CreatePartitions and DeleteTopics by name and by id.

use super::*;

#[test]
fn topics_are_created_described_altered_grown_and_deleted() {
    let mut b = Broker::start(&[]);
    let mut c = b.connect();

    // v7: the answer carries the partitions, replication factor, topic id and every config.
    let r = create(
        &mut c,
        7,
        vec![new_topic(
            "adm-a",
            3,
            1,
            &[("retention.ms", Some("3600000"))],
        )],
        30_000,
        false,
    );
    assert_eq!(
        (r[0].error_code, text(&r[0].error_message)),
        (0, None),
        "{r:?}"
    );
    assert_eq!((r[0].num_partitions, r[0].replication_factor), (3, 1));
    let configs = r[0].configs.as_ref().unwrap();
    let cfg = |n: &str| configs.iter().find(|e| e.name == n).unwrap();
    assert_eq!(
        (
            text(&cfg("retention.ms").value),
            cfg("retention.ms").config_source
        ),
        (Some("3600000".into()), 1)
    );
    assert_eq!(
        (
            text(&cfg("segment.bytes").value),
            cfg("segment.bytes").config_source
        ),
        (Some("1073741824".into()), 5)
    );
    let (code, partitions, id) = metadata(&mut c, "adm-a");
    assert_eq!((code, partitions, id), (0, 3, r[0].topic_id));
    assert!(!id.is_nil());

    // Kafka's refusals, each for its topic only.
    let r = create(
        &mut c,
        5,
        vec![
            new_topic("adm-dup", 1, 1, &[]),
            new_topic("adm-dup", 1, 1, &[]),
            new_topic("__cluster_metadata", 1, 1, &[]),
            new_topic("adm-a", 1, 1, &[]),
            new_topic("adm-bad-config", 1, 1, &[("retention.ms", Some("soon"))]),
            new_topic("adm-null-config", 1, 1, &[("retention.ms", None)]),
            new_topic("adm-unknown-config", 1, 1, &[("no.such.config", Some("1"))]),
            new_topic("adm bad name", 1, 1, &[]),
            new_topic("adm-rf", 1, 3, &[]),
            new_topic("adm-ok", -1, -1, &[]),
        ],
        30_000,
        false,
    );
    let got: Vec<(i16, Option<String>)> = r
        .iter()
        .map(|t| (t.error_code, text(&t.error_message)))
        .collect();
    let want: Vec<(i16, Option<&str>)> = vec![
        (42, Some("Found multiple entries for this topic.")),
        (42, Some("Found multiple entries for this topic.")),
        (
            42,
            Some("Creation of internal topic __cluster_metadata is prohibited."),
        ),
        (36, Some("Topic 'adm-a' already exists.")),
        (
            40,
            Some("Invalid value soon for configuration retention.ms: Not a number of type LONG"),
        ),
        (
            40,
            Some("Null value not supported for topic configs: retention.ms"),
        ),
        (40, Some("Unknown topic config name: no.such.config")),
        (
            17,
            Some(
                "Topic name \"adm bad name\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'",
            ),
        ),
        (
            38,
            Some("Replication factor: 3 larger than available brokers: 1."),
        ),
        (0, None),
    ];
    let want: Vec<(i16, Option<String>)> = want
        .into_iter()
        .map(|(c, m)| (c, m.map(String::from)))
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        (r[9].num_partitions, r[9].replication_factor),
        (1, 1),
        "broker defaults for -1"
    );
    assert!(r[0].configs.as_ref().unwrap().is_empty() && r[0].num_partitions == -1);

    // validate_only creates nothing; a zero timeout answers REQUEST_TIMED_OUT but creates.
    let r = create(&mut c, 5, vec![new_topic("adm-v", 2, 1, &[])], 30_000, true);
    assert_eq!((r[0].error_code, r[0].num_partitions), (0, 2));
    assert_eq!(metadata(&mut c, "adm-v").0, 3);
    let r = create(&mut c, 1, vec![new_topic("adm-t0", 1, 1, &[])], 0, false);
    assert_eq!(r[0].error_code, 7);
    // Created all the same: the controller's metadata arrives soon after the answer.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while metadata(&mut c, "adm-t0").0 != 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "adm-t0 never appeared"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let r = create(
        &mut c,
        0,
        vec![new_topic("adm-v0", 2, 1, &[])],
        30_000,
        false,
    );
    assert_eq!(r[0].error_code, 0);
    // A partition count no broker could lay out is refused with KRaft's answer.
    let r = create(
        &mut c,
        7,
        vec![new_topic("adm-huge", i32::MAX, 1, &[])],
        30_000,
        false,
    );
    assert_eq!(
        (r[0].error_code, text(&r[0].error_message).as_deref()),
        (
            44,
            Some("Unable to perform excessively large batch operation.")
        )
    );

    // The rest of Kafka's topic configs: accepted, stored and described as overrides.
    let more = [
        ("compression.type", "producer"),
        ("compression.zstd.level", "7"),
        ("min.compaction.lag.ms", "1000"),
        ("min.cleanable.dirty.ratio", "0.25"),
        ("message.format.version", "2.8"),
        ("message.downconversion.enable", "false"),
        ("leader.replication.throttled.replicas", "0:0"),
        ("local.retention.ms", "-2"),
    ];
    let with: Vec<(&str, Option<&str>)> = more.iter().map(|(k, v)| (*k, Some(*v))).collect();
    let r = create(
        &mut c,
        7,
        vec![new_topic("adm-more", 1, 1, &with)],
        30_000,
        false,
    );
    assert_eq!((r[0].error_code, text(&r[0].error_message)), (0, None));
    let d = describe(&mut c, 4, TOPIC, "adm-more", None);
    for (k, v) in more {
        let e = entry(&d, k);
        assert_eq!(
            (text(&e.value).as_deref(), e.config_source),
            (Some(v), 1),
            "{k}"
        );
    }
    assert_eq!(entry(&d, "min.cleanable.dirty.ratio").config_type, 6);
    assert_eq!(
        text(&entry(&d, "remote.storage.enable").value).as_deref(),
        Some("false")
    );
    assert!(d.configs.len() >= 36, "every topic config is listed");
    // Down-conversion disabled: Fetch v0-3 is refused for the partition, v4+ is not.
    let fetch = |c: &mut Conn, v: i16| {
        use kcli::protocol::messages::fetch_request as fr;
        let request = RequestKind::Fetch(fr::FetchRequest {
            topics: vec![fr::FetchTopic {
                topic: s("adm-more"),
                partitions: vec![fr::FetchPartition {
                    partition_max_bytes: 1 << 20,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        });
        let ResponseKind::Fetch(f) = c.call(request, v) else {
            unreachable!()
        };
        let p = &f.responses[0].partitions[0];
        (p.error_code, p.high_watermark)
    };
    assert_eq!(fetch(&mut c, 2), (35, -1));
    assert_eq!(fetch(&mut c, 4), (0, 0));
    // A codec as compression.type is a recompression target; what ZooKeeper-mode Kafka
    // refuses is refused with Kafka's code.
    let r = create(
        &mut c,
        7,
        vec![
            new_topic("adm-gzip", 1, 1, &[("compression.type", Some("gzip"))]),
            new_topic(
                "adm-remote",
                1,
                1,
                &[("remote.storage.enable", Some("true"))],
            ),
        ],
        30_000,
        false,
    );
    assert_eq!(r[0].error_code, 0, "{r:?}");
    assert_eq!(
        (r[1].error_code, text(&r[1].error_message).as_deref()),
        (
            40,
            Some(
                "Tiered Storage functionality is disabled in the broker. Topic cannot be \
                 configured with remote log storage."
            )
        )
    );

    // Manual assignments.
    let mut manual = new_topic("adm-m", -1, -1, &[]);
    manual.assignments = [(0, vec![0]), (1, vec![0])]
        .into_iter()
        .map(|(p, b)| ct::CreatableReplicaAssignment {
            partition_index: p,
            broker_ids: b,
            ..Default::default()
        })
        .collect();
    let mut gap = manual.clone();
    gap.name = s("adm-gap");
    gap.assignments[1].partition_index = 2;
    let r = create(&mut c, 4, vec![manual, gap], 30_000, false);
    assert_eq!(r[0].error_code, 0);
    assert_eq!(
        (r[1].error_code, text(&r[1].error_message).as_deref()),
        (
            39,
            Some("partitions should be a consecutive 0-based integer sequence")
        )
    );
    assert_eq!(metadata(&mut c, "adm-m").1, 2);

    // DescribeConfigs: sources, synonyms, types, the key filter, v0's is_default.
    let d = describe(&mut c, 4, TOPIC, "adm-a", None);
    assert_eq!(d.error_code, 0);
    let e = entry(&d, "retention.ms");
    assert_eq!(
        (
            text(&e.value).as_deref(),
            e.config_source,
            e.config_type,
            e.read_only
        ),
        (Some("3600000"), 1, 5, false)
    );
    assert_eq!(e.synonyms.len(), 1, "{e:?}");
    let e = entry(&d, "segment.bytes");
    assert_eq!(
        (e.config_source, e.config_type, e.synonyms.len()),
        (5, 3, 1)
    );
    assert_eq!(text(&e.synonyms[0].value).as_deref(), Some("1073741824"));
    assert_eq!(
        (
            e.synonyms[0].name.to_string().as_str(),
            e.synonyms[0].source
        ),
        ("log.segment.bytes", 5)
    );
    assert_eq!(entry(&d, "cleanup.policy").config_type, 7);
    let d = describe(
        &mut c,
        4,
        TOPIC,
        "adm-a",
        Some(&["retention.ms", "cleanup.policy"]),
    );
    assert_eq!(d.configs.len(), 2);
    let d = describe(&mut c, 0, TOPIC, "adm-a", None);
    // Kafka 3.9 never sets v0's is_default, not even for a config at its default.
    assert!(!entry(&d, "retention.ms").is_default && !entry(&d, "segment.bytes").is_default);
    assert!(d.configs.iter().all(|c| !c.is_default));
    assert_eq!(describe(&mut c, 2, TOPIC, "adm-nope", None).error_code, 3);
    assert_eq!(describe(&mut c, 1, TOPIC, "bad name", None).error_code, 17);

    // AlterConfigs replaces the whole override set.
    assert_eq!(
        alter(
            &mut c,
            TOPIC,
            "adm-a",
            &[("segment.bytes", Some("1048576"))],
            false
        ),
        [(0, None)]
    );
    assert_eq!(
        value_source(&mut c, TOPIC, "adm-a", "segment.bytes"),
        (Some("1048576".into()), 1)
    );
    assert_eq!(
        value_source(&mut c, TOPIC, "adm-a", "retention.ms"),
        (Some("604800000".into()), 5)
    );
    assert_eq!(
        alter(&mut c, TOPIC, "adm-a", &[("retention.ms", Some("1"))], true),
        [(0, None)]
    );
    assert_eq!(
        value_source(&mut c, TOPIC, "adm-a", "retention.ms").1,
        5,
        "validate_only changed it"
    );
    assert_eq!(
        alter(&mut c, TOPIC, "adm-a", &[("segment.bytes", Some("x"))], false),
        [(40, Some("Invalid config value for resource ConfigResource(type=TOPIC, name='adm-a'): Invalid value x for configuration segment.bytes: Not a number of type INT".into()))]
    );
    assert_eq!(
        alter(&mut c, TOPIC, "adm-a", &[("foo", Some("1"))], false),
        [(40, Some("Unknown topic config name: foo".into()))]
    );
    assert_eq!(
        alter(&mut c, TOPIC, "adm-nope", &[], false),
        [(3, Some("The topic 'adm-nope' does not exist.".into()))]
    );
    assert_eq!(
        alter(&mut c, TOPIC, "adm-a", &[("a", None)], false),
        [(42, Some("Null value not supported for : a".into()))]
    );

    // IncrementalAlterConfigs: list operations start from Kafka's default ("delete").
    assert_eq!(
        incremental(
            &mut c,
            TOPIC,
            "adm-a",
            &[("cleanup.policy", APPEND, Some("compact"))]
        ),
        (0, None)
    );
    assert_eq!(
        value_source(&mut c, TOPIC, "adm-a", "cleanup.policy"),
        (Some("delete,compact".into()), 1)
    );
    assert_eq!(
        value_source(&mut c, TOPIC, "adm-a", "segment.bytes")
            .0
            .as_deref(),
        Some("1048576"),
        "kept"
    );
    let ops = [
        ("cleanup.policy", SUBTRACT, Some("delete")),
        ("retention.ms", SET, Some("5000")),
        ("segment.bytes", DELETE, None),
    ];
    assert_eq!(incremental(&mut c, TOPIC, "adm-a", &ops), (0, None));
    assert_eq!(
        value_source(&mut c, TOPIC, "adm-a", "cleanup.policy")
            .0
            .as_deref(),
        Some("compact")
    );
    assert_eq!(
        value_source(&mut c, TOPIC, "adm-a", "retention.ms"),
        (Some("5000".into()), 1)
    );
    assert_eq!(value_source(&mut c, TOPIC, "adm-a", "segment.bytes").1, 5);
    assert_eq!(
        incremental(
            &mut c,
            TOPIC,
            "adm-a",
            &[("retention.ms", APPEND, Some("1"))]
        ),
        (
            40,
            Some("Config value append is not allowed for config key: retention.ms".into())
        )
    );
    assert_eq!(
        incremental(&mut c, TOPIC, "adm-a", &[("retention.ms", SET, None)]).0,
        42
    );
    assert_eq!(
        incremental(&mut c, TOPIC, "", &[]),
        (42, Some("Default topic resources are not allowed.".into()))
    );

    // CreatePartitions.
    assert_eq!(
        create_partitions(&mut c, "adm-a", 5, None, false),
        (0, None)
    );
    assert_eq!(metadata(&mut c, "adm-a").1, 5);
    assert_eq!(create_partitions(&mut c, "adm-a", 9, None, true), (0, None));
    assert_eq!(metadata(&mut c, "adm-a").1, 5, "validate_only grew it");
    assert_eq!(
        create_partitions(&mut c, "adm-a", 6, Some(vec![vec![0]]), false),
        (0, None)
    );
    assert_eq!(
        create_partitions(&mut c, "adm-a", 4, None, false),
        (
            37,
            Some("Topic currently has 6 partitions, which is higher than the requested 4.".into())
        )
    );
    assert_eq!(
        create_partitions(&mut c, "adm-a", 6, None, false),
        (37, Some("Topic already has 6 partitions.".into()))
    );
    assert_eq!(
        create_partitions(&mut c, "adm-a", 7, Some(vec![vec![7]]), false),
        (
            39,
            Some("Unknown broker(s) in replica assignment: 7.".into())
        )
    );
    assert_eq!(
        create_partitions(&mut c, "adm-a", i32::MAX, None, false).0,
        44
    );
    assert_eq!(
        create_partitions(&mut c, "adm-nope", 2, None, false),
        (3, Some("The topic 'adm-nope' does not exist.".into()))
    );

    // DeleteTopics: by id and by name (v6), unknowns, both at once, and by name before v6.
    let (_, _, a_id) = metadata(&mut c, "adm-a");
    let r = delete_topics_v6(
        &mut c,
        &[
            (None, a_id),
            (Some("adm-v0"), Uuid::nil()),
            (None, Uuid::from_u128(7)),
            (Some("adm-nope"), Uuid::nil()),
        ],
    );
    assert_eq!(
        r,
        [
            (Some("adm-a".into()), 0),
            (Some("adm-v0".into()), 0),
            (None, 100),
            (Some("adm-nope".into()), 3)
        ]
    );
    assert_eq!(metadata(&mut c, "adm-a").0, 3);
    assert_eq!(metadata(&mut c, "adm-v0").0, 3);
    assert_eq!(
        delete_topics_v6(
            &mut c,
            &[(Some("adm-m"), a_id), (Some("adm-m"), Uuid::nil())]
        ),
        [(Some("adm-m".into()), 42), (Some("adm-m".into()), 42)]
    );
    assert_eq!(
        delete_topics_by_name(&mut c, 0, &["adm-m", "adm-ok"]),
        [0, 0]
    );
    assert_eq!(metadata(&mut c, "adm-m").0, 3);
    // A topic can be created again after its deletion.
    assert_eq!(
        create(
            &mut c,
            7,
            vec![new_topic("adm-a", 1, 1, &[])],
            30_000,
            false
        )[0]
        .error_code,
        0
    );
    b.stop();
}

/// A resource named twice is INVALID_REQUEST in both AlterConfigs APIs, each time it appears,
/// and the other resources of the request still change.
#[test]
fn repeated_resources_are_refused_and_the_rest_applied() {
    let mut b = Broker::start(&[]);
    let mut c = b.connect();
    for t in ["rep-a", "rep-b"] {
        let r = create(&mut c, 7, vec![new_topic(t, 1, 1, &[])], 30_000, false);
        assert_eq!(r[0].error_code, 0, "{t}");
    }
    let resource = |name: &str, value: &str| ac::AlterConfigsResource {
        resource_type: TOPIC,
        resource_name: s(name),
        configs: vec![ac::AlterableConfig {
            name: s("retention.ms"),
            value: Some(s(value)),
            ..Default::default()
        }],
        ..Default::default()
    };
    let body = RequestKind::AlterConfigs(ac::AlterConfigsRequest {
        resources: vec![
            resource("rep-a", "1000"),
            resource("rep-b", "2000"),
            resource("rep-a", "3000"),
        ],
        ..Default::default()
    });
    let ResponseKind::AlterConfigs(r) = c.call(body, 2) else {
        panic!()
    };
    let once = Some("Each resource must appear at most once.".to_string());
    let answers: Vec<_> = r
        .responses
        .iter()
        .map(|r| {
            (
                r.resource_name.to_string_lossy().into_owned(),
                r.error_code,
                text(&r.error_message),
            )
        })
        .collect();
    assert_eq!(
        answers,
        [
            ("rep-a".into(), 42, once.clone()),
            ("rep-b".into(), 0, None),
            ("rep-a".into(), 42, once.clone()),
        ]
    );
    assert_eq!(
        value_source(&mut c, TOPIC, "rep-b", "retention.ms")
            .0
            .as_deref(),
        Some("2000")
    );
    assert_eq!(
        value_source(&mut c, TOPIC, "rep-a", "retention.ms")
            .0
            .as_deref(),
        Some("604800000"),
        "unchanged"
    );

    let op = |name: &str| iac::AlterConfigsResource {
        resource_type: TOPIC,
        resource_name: s(name),
        configs: vec![iac::AlterableConfig {
            name: s("retention.ms"),
            config_operation: SET,
            value: Some(s("4000")),
            ..Default::default()
        }],
        ..Default::default()
    };
    let body = RequestKind::IncrementalAlterConfigs(iac::IncrementalAlterConfigsRequest {
        resources: vec![op("rep-b"), op("rep-a"), op("rep-b")],
        ..Default::default()
    });
    let ResponseKind::IncrementalAlterConfigs(r) = c.call(body, 1) else {
        panic!()
    };
    let codes: Vec<_> = r
        .responses
        .iter()
        .map(|r| (r.error_code, text(&r.error_message)))
        .collect();
    assert_eq!(codes, [(42, once.clone()), (0, None), (42, once)]);
    assert_eq!(
        value_source(&mut c, TOPIC, "rep-a", "retention.ms")
            .0
            .as_deref(),
        Some("4000")
    );
    b.stop();
}
