//! A failing disk: one of two log dirs on a small tmpfs mounted by the test (the suite runs as
//! root), filled up so the next append fails with ENOSPC. That dir goes offline (its partition
//! answers KAFKA_STORAGE_ERROR, Metadata shows it without a leader, DescribeLogDirs reports the
//! dir's error), the other dir keeps serving; with the only dir failed, the broker halts.

use super::*;
use crate::serve_support::{batch_of, fetch_once, list_offset, produce_request, produce_result};
use crate::storage_support::SmallFs;

fn payload(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| vec![i as u8; 1000]).collect()
}

#[test]
fn a_failed_disk_takes_only_its_log_dir_offline() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let fs = SmallFs::mount("4m");
    let b = fs.path().join("b");
    let mut broker = broker_on(&[&a, &b], &[]);
    let mut c = KafkaConn::connect(broker.port());
    auto_create_topic(&mut c, "ok");
    auto_create_topic(&mut c, "doomed");
    let r = describe(&mut c, 4, None);
    assert_eq!(
        placement(&r, "doomed", 0),
        [(b.display().to_string(), false)]
    );
    // Some data first, so the index pages the appends touch exist before the disk is full.
    for _ in 0..10 {
        assert_eq!(
            produce_result(&c.call(&produce_request("doomed", 0, batch_of(&payload(10)), 1), 9)).0,
            0
        );
    }
    fs.fill();
    let mut error = 0;
    for _ in 0..20 {
        error =
            produce_result(&c.call(&produce_request("doomed", 0, batch_of(&payload(10)), 1), 9)).0;
        if error != 0 {
            break;
        }
    }
    assert_eq!(error, KAFKA_STORAGE_ERROR, "{}", broker.stderr());

    // The dir is reported offline; the handler takes its partitions offline.
    let start = Instant::now();
    loop {
        let r = describe(&mut c, 4, None);
        let codes: Vec<i16> = r.results.iter().map(|d| d.error_code).collect();
        if codes == [0, KAFKA_STORAGE_ERROR] {
            assert!(r.results[1].topics.is_empty(), "{r:?}");
            assert_eq!(r.results[1].log_dir.to_string(), b.display().to_string());
            assert_eq!(placement(&r, "ok", 0), [(a.display().to_string(), false)]);
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "{r:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let start = Instant::now();
    loop {
        let request = RequestKind::Metadata(MetadataRequest {
            topics: Some(vec![metadata_request::MetadataRequestTopic {
                name: Some(StrBytes::from("doomed")),
                ..Default::default()
            }]),
            ..Default::default()
        });
        let ResponseKind::Metadata(md) = c.call(&request, 12) else {
            unreachable!()
        };
        let p = &md.topics[0].partitions[0];
        if p.leader_id == -1 {
            assert_eq!(p.error_code, LEADER_NOT_AVAILABLE, "{p:?}");
            assert_eq!(
                (
                    p.leader_epoch,
                    p.isr_nodes.clone(),
                    p.offline_replicas.clone()
                ),
                (1, vec![0], vec![0]),
                "{p:?}"
            );
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "{md:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        produce_result(&c.call(&produce_request("doomed", 0, batch_of(&payload(1)), 1), 9)).0,
        KAFKA_STORAGE_ERROR
    );
    assert_eq!(fetch_once(&mut c, "doomed", 0, 0).0, KAFKA_STORAGE_ERROR);
    assert_eq!(list_offset(&mut c, "doomed", 0, -1).0, KAFKA_STORAGE_ERROR);
    assert_eq!(
        alter(&mut c, 2, "ok", 0, &b.display().to_string()),
        KAFKA_STORAGE_ERROR
    );
    // The other dir keeps serving.
    assert_eq!(
        produce_result(&c.call(&produce_request("ok", 0, batch_of(&payload(3)), 1), 9)),
        (0, 0)
    );
    let (error, hw, _) = fetch_once(&mut c, "ok", 0, 0);
    assert_eq!((error, hw), (0, 3));
    auto_create_topic(&mut c, "new");
    let r = describe(&mut c, 4, None);
    assert_eq!(placement(&r, "new", 0), [(a.display().to_string(), false)]);
    assert!(
        broker.stderr().contains("log dir failed"),
        "{}",
        broker.stderr()
    );
    broker.stop();
}

#[test]
fn the_broker_halts_when_its_only_log_dir_fails() {
    let fs = SmallFs::mount("4m");
    let a = fs.path().join("a");
    let mut broker = broker_on(&[&a], &[]);
    let mut c = KafkaConn::connect(broker.port());
    auto_create_topic(&mut c, "doomed");
    for _ in 0..5 {
        assert_eq!(
            produce_result(&c.call(&produce_request("doomed", 0, batch_of(&payload(10)), 1), 9)).0,
            0
        );
    }
    fs.fill();
    let mut error = 0;
    for _ in 0..20 {
        match c.send(&produce_request("doomed", 0, batch_of(&payload(10)), 1), 9) {
            Ok(_) => {}
            Err(_) => break,
        }
        match c.recv(kcli::protocol::messages::ApiKey::Produce, 9) {
            Ok((_, r)) => {
                error = produce_result(&r).0;
                if error != 0 {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    assert!(error == 0 || error == KAFKA_STORAGE_ERROR, "{error}");
    let status = broker.wait_exit(Duration::from_secs(20));
    assert_eq!(status.code(), Some(1), "{}", broker.stderr());
    let want = format!("all log dirs in {} have failed", a.display());
    assert!(broker.stderr().contains(&want), "{}", broker.stderr());
}
