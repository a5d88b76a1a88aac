//! DescribeCluster, and broker configs: described with their sources, refused where static,
//! changed per broker and cluster-wide, applied to topics, kept across a restart.

use super::*;

#[test]
fn broker_configs_change_dynamically_and_survive_a_restart() {
    let mut b = Broker::start(&[
        "delete.topic.enable=false",
        "log.segment.bytes=2097152",
        "num.io.threads=4",
    ]);
    let mut c = b.connect();

    let body = |include, endpoint_type| {
        RequestKind::DescribeCluster(DescribeClusterRequest {
            include_cluster_authorized_operations: include,
            endpoint_type,
            ..Default::default()
        })
    };
    let ResponseKind::DescribeCluster(r) = c.call(body(false, 1), 0) else {
        panic!()
    };
    assert_eq!(
        (
            r.error_code,
            r.controller_id,
            r.cluster_authorized_operations
        ),
        (0, 0, i32::MIN)
    );
    assert!(!r.cluster_id.is_empty());
    assert_eq!(r.brokers.len(), 1);
    assert_eq!(
        (
            r.brokers[0].broker_id,
            r.brokers[0].host.to_string(),
            r.brokers[0].port
        ),
        (0, "127.0.0.1".into(), i32::from(b.port))
    );
    let ResponseKind::DescribeCluster(r) = c.call(body(true, 1), 1) else {
        panic!()
    };
    assert_eq!(
        (
            r.error_code,
            r.endpoint_type,
            r.cluster_authorized_operations
        ),
        (0, 1, 8096)
    );
    let ResponseKind::DescribeCluster(r) = c.call(body(false, 2), 1) else {
        panic!()
    };
    assert_eq!(r.error_code, 114, "MISMATCHED_ENDPOINT_TYPE");
    let ResponseKind::DescribeCluster(r) = c.call(body(false, 9), 1) else {
        panic!()
    };
    assert_eq!(
        (r.error_code, text(&r.error_message).as_deref()),
        (115, Some("Unsupported endpoint type 9"))
    );

    // The static config, as described.
    let d = describe(&mut c, 4, BROKER, "0", None);
    assert_eq!(d.error_code, 0);
    let e = entry(&d, "log.segment.bytes");
    assert_eq!(
        (text(&e.value).as_deref(), e.config_source, e.read_only),
        (Some("2097152"), 4, false)
    );
    let syn: Vec<i8> = e.synonyms.iter().map(|s| s.source).collect();
    assert_eq!(syn, [4, 5]);
    let e = entry(&d, "num.partitions");
    assert_eq!(
        (
            text(&e.value).as_deref(),
            e.config_source,
            e.read_only,
            e.config_type
        ),
        (Some("1"), 5, true, 3)
    );
    assert_eq!(entry(&d, "delete.topic.enable").config_source, 4);
    assert!(describe(&mut c, 4, BROKER, "", None).configs.is_empty());
    let d = describe(&mut c, 4, BROKER, "1", None);
    assert_eq!(
        (d.error_code, text(&d.error_message).as_deref()),
        (
            42,
            Some("Unexpected broker id, expected 0 or empty string, but received 1")
        )
    );

    // Static keys are refused as Kafka refuses them.
    assert_eq!(
        alter(&mut c, BROKER, "0", &[("num.partitions", Some("3"))], false),
        [(
            42,
            Some("Cannot update these configs dynamically: Set(num.partitions)".into())
        )]
    );
    assert_eq!(
        alter(&mut c, BROKER, "1", &[], false),
        [(
            42,
            Some("Unexpected broker id, expected 0, but received 1".into())
        )]
    );
    assert_eq!(
        incremental(
            &mut c,
            BROKER,
            "",
            &[("log.segment.bytes", SET, Some("abc"))]
        ),
        (
            42,
            Some(
                "Invalid value abc for configuration log.segment.bytes: Not a number of type INT"
                    .into()
            )
        )
    );

    // This broker's layer, then the cluster-wide default.
    assert_eq!(
        incremental(
            &mut c,
            BROKER,
            "0",
            &[("log.retention.ms", SET, Some("7200000"))]
        ),
        (0, None)
    );
    assert_eq!(
        value_source(&mut c, BROKER, "0", "log.retention.ms"),
        (Some("7200000".into()), 2)
    );
    assert_eq!(
        incremental(
            &mut c,
            BROKER,
            "",
            &[("log.segment.bytes", SET, Some("4194304"))]
        ),
        (0, None)
    );
    let d = describe(&mut c, 4, BROKER, "", None);
    assert_eq!(d.configs.len(), 1);
    assert_eq!(
        (
            text(&d.configs[0].value).as_deref(),
            d.configs[0].config_source
        ),
        (Some("4194304"), 3)
    );
    let d = describe(&mut c, 4, BROKER, "0", Some(&["log.segment.bytes"]));
    let syn: Vec<i8> = d.configs[0].synonyms.iter().map(|s| s.source).collect();
    assert_eq!(
        (text(&d.configs[0].value).as_deref(), syn),
        (Some("4194304"), vec![3, 4, 5])
    );
    assert_eq!(
        alter(
            &mut c,
            BROKER,
            "0",
            &[("log.retention.ms", Some("1"))],
            true
        ),
        [(0, None)]
    );
    assert_eq!(
        value_source(&mut c, BROKER, "0", "log.retention.ms")
            .0
            .as_deref(),
        Some("7200000")
    );

    // New and existing topics take the new defaults.
    assert_eq!(
        create(&mut c, 7, vec![new_topic("dyn", 1, 1, &[])], 30_000, false)[0].error_code,
        0
    );
    assert_eq!(
        value_source(&mut c, TOPIC, "dyn", "retention.ms"),
        (Some("7200000".into()), 2)
    );
    assert_eq!(
        value_source(&mut c, TOPIC, "dyn", "segment.bytes"),
        (Some("4194304".into()), 3)
    );

    // delete.topic.enable=false: INVALID_REQUEST before v3, TOPIC_DELETION_DISABLED after.
    assert_eq!(delete_topics_by_name(&mut c, 2, &["dyn"]), [42]);
    assert_eq!(delete_topics_by_name(&mut c, 5, &["dyn"]), [73]);

    drop(c);
    b.stop();
    b.restart();
    let mut c = b.connect();
    assert_eq!(
        value_source(&mut c, BROKER, "0", "log.retention.ms"),
        (Some("7200000".into()), 2)
    );
    assert_eq!(
        value_source(&mut c, TOPIC, "dyn", "segment.bytes"),
        (Some("4194304".into()), 3)
    );
    assert_eq!(
        incremental(&mut c, BROKER, "0", &[("log.retention.ms", DELETE, None)]),
        (0, None)
    );
    assert_eq!(
        value_source(&mut c, BROKER, "0", "log.retention.ms"),
        (None, 5)
    );
    assert_eq!(
        value_source(&mut c, TOPIC, "dyn", "retention.ms"),
        (Some("604800000".into()), 5)
    );
    b.stop();
}
