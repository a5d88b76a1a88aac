//! DescribeLogDirs and AlterReplicaLogDirs over the raw protocol, at every version, and moves
//! between two log dirs: their answers for unknown dirs, unknown partitions and the same dir,
//! a move under continuous produce and fetch, and a kill -9 in the middle of a copy.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::*;
use crate::serve_support::{batch_of, fetch_once, produce_request, produce_result, read_partition};

fn values(n: usize, size: usize, tag: u8) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut v = vec![tag; size];
            v[..8].copy_from_slice(&(i as u64).to_be_bytes());
            v
        })
        .collect()
}

#[test]
fn describe_and_alter_log_dirs_at_every_version() {
    let (_tmp, a, b) = two_dirs();
    let mut broker = broker_on(&[&a, &b], &[]);
    let mut c = KafkaConn::connect(broker.port());
    // Placement goes to the dir with the fewest partitions: t1-0 in a, t2-0 in b.
    auto_create_topic(&mut c, "t1");
    auto_create_topic(&mut c, "t2");
    let sent = values(20, 100, 1);
    assert_eq!(
        produce_result(&c.call(&produce_request("t1", 0, batch_of(&sent), 1), 9)),
        (0, 0)
    );
    let (a_path, b_path) = (a.display().to_string(), b.display().to_string());

    for version in 0..=4 {
        let r = describe(&mut c, version, None);
        assert_eq!(r.error_code, 0);
        let dirs: Vec<String> = r.results.iter().map(|d| d.log_dir.to_string()).collect();
        assert_eq!(dirs, [a_path.clone(), b_path.clone()], "v{version}");
        for d in &r.results {
            assert_eq!(d.error_code, 0, "v{version}: {d:?}");
            if version >= 4 {
                assert!(d.total_bytes > 0 && d.usable_bytes >= 0, "{d:?}");
                assert!(d.usable_bytes <= d.total_bytes, "{d:?}");
            } else {
                // Not on the wire below v4: the decoder leaves the spec's default.
                assert_eq!((d.total_bytes, d.usable_bytes), (-1, -1), "v{version}");
            }
        }
        assert_eq!(placement(&r, "t1", 0), [(a_path.clone(), false)]);
        assert_eq!(placement(&r, "t2", 0), [(b_path.clone(), false)]);
        let t1 = &r.results[0]
            .topics
            .iter()
            .find(|t| t.name.to_string_lossy() == "t1")
            .unwrap()
            .partitions[0];
        assert!(t1.partition_size > 2000, "{t1:?}");
        assert_eq!(t1.offset_lag, 0);
    }
    // Only the partitions asked for; as in Kafka, the other topics of a dir come with none.
    let r = describe(&mut c, 1, Some(&[("t1", &[0]), ("nope", &[0])]));
    assert_eq!(placement(&r, "t1", 0), [(a_path.clone(), false)]);
    assert!(placement(&r, "t2", 0).is_empty());
    let t2 = r.results[1]
        .topics
        .iter()
        .find(|t| t.name.to_string_lossy() == "t2")
        .unwrap();
    assert!(t2.partitions.is_empty(), "{t2:?}");

    for version in 0..=2 {
        assert_eq!(
            alter(&mut c, version, "t1", 0, "/no/such/dir"),
            LOG_DIR_NOT_FOUND
        );
        assert_eq!(
            alter(&mut c, version, "nope", 0, &b_path),
            REPLICA_NOT_AVAILABLE,
            "a partition this broker does not host"
        );
        // The same dir: nothing to do.
        let (here, there) = if version % 2 == 0 { (&a, &b) } else { (&b, &a) };
        assert_eq!(
            alter(&mut c, version, "t1", 0, &here.display().to_string()),
            0
        );
        assert!(
            partition_entries(there)
                .iter()
                .all(|n| !n.starts_with("t1-0"))
        );
        // A move: the log ends up in the other dir, nothing left behind.
        assert_eq!(
            alter(&mut c, version, "t1", 0, &there.display().to_string()),
            0
        );
        wait_moved(&mut c, "t1", 0, there, Duration::from_secs(20));
        assert!(partition_entries(there).contains(&"t1-0".to_string()));
        wait_old_dir_gone(here, "t1-0");
        let read: Vec<Vec<u8>> = read_partition(&mut c, "t1", 0)
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        assert_eq!(read, sent, "v{version}");
    }
    // The moved partition keeps working: appends go on at the next offset.
    assert_eq!(
        produce_result(&c.call(&produce_request("t1", 0, batch_of(&values(1, 10, 2)), 1), 9)),
        (0, 20)
    );
    broker.stop();
    broker.restart();
    let mut c = KafkaConn::connect(broker.port());
    let r = describe(&mut c, 2, None);
    assert_eq!(placement(&r, "t1", 0), [(b_path.clone(), false)]);
    assert_eq!(read_partition(&mut c, "t1", 0).len(), 21);
    broker.stop();
}

#[test]
fn a_move_under_produce_and_fetch_loses_nothing() {
    let (_tmp, a, b) = two_dirs();
    let mut broker = broker_on(&[&a, &b], &[("log.segment.bytes", "1048576")]);
    let mut c = KafkaConn::connect(broker.port());
    auto_create_topic(&mut c, "busy");
    // Several segments to copy before the move can catch up.
    let mut sent: Vec<Vec<u8>> = Vec::new();
    for round in 0..40 {
        let batch = values(50, 2000, round as u8);
        assert_eq!(
            produce_result(&c.call(&produce_request("busy", 0, batch_of(&batch), 1), 9)).0,
            0
        );
        sent.extend(batch);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let port = broker.port();
    let consumer = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut c = KafkaConn::connect(port);
            let (mut offset, mut fetches) = (0i64, 0u64);
            while !stop.load(Ordering::SeqCst) {
                let (error, hw, records) = fetch_once(&mut c, "busy", 0, offset);
                assert_eq!(error, 0, "fetch at {offset} during the move");
                fetches += 1;
                if !records.is_empty() {
                    offset = hw;
                }
            }
            fetches
        })
    };
    let producer = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut c = KafkaConn::connect(port);
            let mut produced = Vec::new();
            let mut i = 0u32;
            while !stop.load(Ordering::SeqCst) {
                let batch = values(5, 500, 200 + (i % 50) as u8);
                let (error, _) =
                    produce_result(&c.call(&produce_request("busy", 0, batch_of(&batch), 1), 9));
                assert_eq!(error, 0, "produce {i} during the move");
                produced.extend(batch);
                i += 1;
            }
            produced
        })
    };
    assert_eq!(alter(&mut c, 2, "busy", 0, &b.display().to_string()), 0);
    wait_moved(&mut c, "busy", 0, &b, Duration::from_secs(60));
    // Keep going a little on the moved log.
    let until = Instant::now() + Duration::from_millis(300);
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::SeqCst);
    let fetches = consumer.join().unwrap();
    sent.extend(producer.join().unwrap());
    assert!(fetches > 10, "{fetches}");
    let read: Vec<Vec<u8>> = read_partition(&mut c, "busy", 0)
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    assert_eq!(read.len(), sent.len());
    assert!(read == sent, "the records differ after the move");
    assert!(broker.stderr().contains("replaced with the future replica"));
    broker.stop();
}

#[test]
fn kill_9_in_the_middle_of_a_copy_leaves_a_consistent_partition() {
    let (_tmp, a, b) = two_dirs();
    let mut broker = broker_on(&[&a, &b], &[("log.segment.bytes", "1048576")]);
    let mut c = KafkaConn::connect(broker.port());
    auto_create_topic(&mut c, "big");
    let mut sent: Vec<Vec<u8>> = Vec::new();
    for round in 0..120 {
        let batch = values(25, 16_000, round as u8);
        assert_eq!(
            produce_result(&c.call(&produce_request("big", 0, batch_of(&batch), 1), 9)).0,
            0
        );
        sent.extend(batch);
    }
    assert_eq!(alter(&mut c, 1, "big", 0, &b.display().to_string()), 0);
    broker.kill9();
    let futures: Vec<String> = partition_entries(&b)
        .into_iter()
        .filter(|n| n.starts_with("big-0.") && n.ends_with("-future"))
        .collect();
    assert_eq!(
        futures.len(),
        1,
        "the copy had not started or had ended: {:?}",
        partition_entries(&b)
    );
    assert!(partition_entries(&a).contains(&"big-0".to_string()));

    // At the restart the future log is recovered and the move resumes and ends.
    broker.restart();
    let mut c = KafkaConn::connect(broker.port());
    let read: Vec<Vec<u8>> = read_partition(&mut c, "big", 0)
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    assert!(read == sent, "records differ after the restart");
    wait_moved(&mut c, "big", 0, &b, Duration::from_secs(60));
    let read: Vec<Vec<u8>> = read_partition(&mut c, "big", 0)
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    assert!(read == sent, "records differ after the resumed move");
    assert_eq!(partition_entries(&b), ["big-0"]);
    wait_old_dir_gone(&a, "big-0");
    broker.stop();
    // The moved log and its indexes agree with a rebuild from its segments.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kcli"))
        .args(["rebuild-index", "--verify"])
        .arg(b.join("big-0"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
