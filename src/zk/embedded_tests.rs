//! Tests of the embedded store: CRUD and versions, sequential names, ephemerals, watches,
//! multi atomicity and rollback, persistence across reopen, log replay and compaction.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::zk::client::WatchedEventType::*;

const P: CreateMode = CreateMode::Persistent;

async fn next(rx: &mut UnboundedReceiver<WatchedEvent>) -> WatchedEvent {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn crud_and_versions() {
    let store = EmbeddedStore::in_memory();
    let c: Arc<dyn ZkClient> = Arc::new(store.session());
    assert_eq!(
        c.create("/a/b", b"", P).await,
        Err(ZkError::NoNode("/a/b".into()))
    );
    let (path, st) = c.create("/a", b"one", P).await.unwrap();
    assert_eq!(path, "/a");
    assert_eq!((st.version, st.ephemeral_owner, st.data_length), (0, 0, 3));
    assert_eq!(
        c.create("/a", b"", P).await,
        Err(ZkError::NodeExists("/a".into()))
    );
    let (data, st0) = c.get_data("/a", false).await.unwrap();
    assert_eq!(data, b"one");
    assert_eq!(st0.czxid, st0.mzxid);
    assert_eq!(
        c.set_data("/a", b"two", 5).await,
        Err(ZkError::BadVersion("/a".into()))
    );
    let st1 = c.set_data("/a", b"two", 0).await.unwrap();
    assert_eq!(st1.version, 1);
    assert!(st1.mzxid > st0.mzxid);
    assert_eq!(st1.czxid, st0.czxid);
    assert_eq!(c.set_data("/a", b"3", -1).await.unwrap().version, 2);
    c.create("/a/x", b"", P).await.unwrap();
    c.create("/a/w", b"", P).await.unwrap();
    let (kids, st) = c.get_children("/a", false).await.unwrap();
    assert_eq!(kids, ["w", "x"]);
    assert_eq!((st.num_children, st.cversion), (2, 2));
    assert_eq!(
        c.delete("/a", -1).await,
        Err(ZkError::NotEmpty("/a".into()))
    );
    assert_eq!(
        c.delete("/a/x", 3).await,
        Err(ZkError::BadVersion("/a/x".into()))
    );
    c.delete("/a/x", 0).await.unwrap();
    assert!(c.exists("/a/x", false).await.unwrap().is_none());
    assert_eq!(c.exists("/a", false).await.unwrap().unwrap().cversion, 3);
    assert_eq!(
        c.get_data("/nope", false).await,
        Err(ZkError::NoNode("/nope".into()))
    );
    assert!(matches!(
        c.create("bad", b"", P).await,
        Err(ZkError::BadArguments(_))
    ));
}

#[tokio::test]
async fn sequential_names_use_parent_cversion() {
    let c = EmbeddedStore::in_memory().session();
    c.create("/config", b"", P).await.unwrap();
    c.create("/config/changes", b"", P).await.unwrap();
    let (p0, _) = c
        .create(
            "/config/changes/config_change_",
            b"d",
            CreateMode::PersistentSequential,
        )
        .await
        .unwrap();
    let (p1, _) = c
        .create(
            "/config/changes/config_change_",
            b"d",
            CreateMode::PersistentSequential,
        )
        .await
        .unwrap();
    assert_eq!(p0, "/config/changes/config_change_0000000000");
    assert_eq!(p1, "/config/changes/config_change_0000000001");
    c.delete(&p0, -1).await.unwrap();
    let (p3, st) = c
        .create("/config/changes/x", b"", CreateMode::EphemeralSequential)
        .await
        .unwrap();
    assert_eq!(p3, "/config/changes/x0000000003");
    assert_eq!(st.ephemeral_owner, c.session_id());
}

#[tokio::test]
async fn ephemerals_vanish_when_their_session_closes() {
    let store = EmbeddedStore::in_memory();
    let a = store.session();
    let b = store.session();
    assert_ne!(a.session_id(), b.session_id());
    a.create("/brokers", b"", P).await.unwrap();
    a.create("/brokers/ids", b"", P).await.unwrap();
    let (_, st) = b
        .create("/brokers/ids/1", b"{}", CreateMode::Ephemeral)
        .await
        .unwrap();
    assert_eq!(st.ephemeral_owner, b.session_id());
    assert_eq!(
        b.create("/brokers/ids/1/x", b"", P).await,
        Err(ZkError::NoChildrenForEphemerals("/brokers/ids/1/x".into()))
    );
    let mut events = a.take_events().unwrap();
    assert!(a.take_events().is_none());
    a.get_children("/brokers/ids", true).await.unwrap();
    a.exists("/brokers/ids/1", true).await.unwrap();
    b.close().await.unwrap();
    let mut got = [next(&mut events).await, next(&mut events).await];
    got.sort_by(|x, y| x.path.cmp(&y.path));
    assert_eq!(
        got[0],
        WatchedEvent {
            event_type: NodeChildrenChanged,
            path: "/brokers/ids".into()
        }
    );
    assert_eq!(
        got[1],
        WatchedEvent {
            event_type: NodeDeleted,
            path: "/brokers/ids/1".into()
        }
    );
    assert!(a.exists("/brokers/ids/1", false).await.unwrap().is_none());
    assert_eq!(
        b.get_data("/brokers", false).await,
        Err(ZkError::SessionExpired)
    );
    // Dropping a session closes it too.
    let c = store.session();
    c.create("/brokers/ids/2", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    drop(c);
    assert!(a.exists("/brokers/ids/2", false).await.unwrap().is_none());
}

#[tokio::test]
async fn watches_fire_exactly_once() {
    let store = EmbeddedStore::in_memory();
    let a = store.session();
    let b = store.session();
    let mut ev = a.take_events().unwrap();
    assert!(a.exists("/n", true).await.unwrap().is_none());
    b.create("/n", b"", P).await.unwrap();
    assert_eq!(
        next(&mut ev).await,
        WatchedEvent {
            event_type: NodeCreated,
            path: "/n".into()
        }
    );
    a.get_data("/n", true).await.unwrap();
    a.get_data("/n", true).await.unwrap(); // the same watch twice still fires once
    b.set_data("/n", b"1", -1).await.unwrap();
    b.set_data("/n", b"2", -1).await.unwrap();
    assert_eq!(
        next(&mut ev).await,
        WatchedEvent {
            event_type: NodeDataChanged,
            path: "/n".into()
        }
    );
    a.get_children("/n", true).await.unwrap();
    b.create("/n/c", b"", P).await.unwrap();
    b.create("/n/d", b"", P).await.unwrap();
    assert_eq!(
        next(&mut ev).await,
        WatchedEvent {
            event_type: NodeChildrenChanged,
            path: "/n".into()
        }
    );
    a.get_data("/n/c", true).await.unwrap();
    b.delete("/n/c", -1).await.unwrap();
    assert_eq!(
        next(&mut ev).await,
        WatchedEvent {
            event_type: NodeDeleted,
            path: "/n/c".into()
        }
    );
    assert!(ev.try_recv().is_err(), "no further events");
}

#[tokio::test]
async fn multi_is_all_or_nothing() {
    let c = EmbeddedStore::in_memory().session();
    c.create("/controller_epoch", b"0", P).await.unwrap();
    let bad = vec![
        Op::Create {
            path: "/controller".into(),
            data: b"{}".to_vec(),
            mode: CreateMode::Ephemeral,
        },
        Op::SetData {
            path: "/controller_epoch".into(),
            data: b"1".to_vec(),
            version: 7,
        },
    ];
    assert_eq!(
        c.multi(bad).await,
        Err(ZkError::BadVersion("/controller_epoch".into()))
    );
    assert!(c.exists("/controller", false).await.unwrap().is_none());
    let good = vec![
        Op::Check {
            path: "/controller_epoch".into(),
            version: 0,
        },
        Op::Create {
            path: "/controller".into(),
            data: b"{}".to_vec(),
            mode: CreateMode::Ephemeral,
        },
        Op::SetData {
            path: "/controller_epoch".into(),
            data: b"1".to_vec(),
            version: 0,
        },
        Op::Create {
            path: "/tmp".into(),
            data: vec![],
            mode: P,
        },
        Op::Delete {
            path: "/tmp".into(),
            version: 0,
        },
    ];
    let res = c.multi(good).await.unwrap();
    assert_eq!(res.len(), 5);
    let OpResult::Create {
        stat: Some(created),
        ..
    } = &res[1]
    else {
        panic!("{res:?}")
    };
    let OpResult::SetData { stat: set } = &res[2] else {
        panic!("{res:?}")
    };
    assert_eq!(created.czxid, set.mzxid, "one zxid per multi");
    assert_eq!(
        c.get_data("/controller_epoch", false).await.unwrap().0,
        b"1"
    );
}

#[tokio::test]
async fn persistent_nodes_survive_reopen_and_ephemerals_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let zxid;
    {
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let c = store.session();
        c.create("/brokers", b"", P).await.unwrap();
        c.create("/brokers/topics", b"", P).await.unwrap();
        c.create("/brokers/topics/t", b"{\"version\":3}", P)
            .await
            .unwrap();
        c.create("/brokers/e", b"", CreateMode::Ephemeral)
            .await
            .unwrap();
        zxid = c
            .set_data("/brokers/topics/t", b"v2", 0)
            .await
            .unwrap()
            .mzxid;
    }
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let c = store.session();
    let (data, st) = c.get_data("/brokers/topics/t", false).await.unwrap();
    assert_eq!(data, b"v2");
    assert_eq!((st.version, st.mzxid), (1, zxid));
    assert!(c.exists("/brokers/e", false).await.unwrap().is_none());
    assert_eq!(
        c.get_children("/brokers", false).await.unwrap().0,
        ["topics"]
    );
    let st = c.create("/x", b"", P).await.unwrap().1;
    assert!(st.czxid > zxid, "zxids keep increasing after a restart");
}

#[tokio::test]
async fn many_writes_stay_fast() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let c = store.session();
    c.create("/t", b"", P).await.unwrap();
    let start = std::time::Instant::now();
    for i in 0..2000 {
        c.create(
            &format!("/t/{i}"),
            br#"{"controller_epoch":1,"leader":0,"version":1,"leader_epoch":0,"isr":[0]}"#,
            P,
        )
        .await
        .unwrap();
    }
    let took = start.elapsed();
    eprintln!("2000 persisted creates took {took:?}");
    assert!(took < Duration::from_secs(30), "{took:?}");
}

#[tokio::test]
async fn failed_multi_restores_sequence_numbers_and_children() {
    let c = EmbeddedStore::in_memory().session();
    c.create("/q", b"", P).await.unwrap();
    let before = c.exists("/q", false).await.unwrap().unwrap();
    let ops = vec![
        Op::Create {
            path: "/q/n".into(),
            data: vec![],
            mode: CreateMode::PersistentSequential,
        },
        Op::Delete {
            path: "/missing".into(),
            version: -1,
        },
    ];
    assert_eq!(c.multi(ops).await, Err(ZkError::NoNode("/missing".into())));
    assert_eq!(c.exists("/q", false).await.unwrap().unwrap(), before);
    assert!(c.get_children("/q", false).await.unwrap().0.is_empty());
    let (p, _) = c
        .create("/q/n", b"", CreateMode::PersistentSequential)
        .await
        .unwrap();
    assert_eq!(p, "/q/n0000000000");
}

#[tokio::test]
async fn log_replay_compaction_and_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let big = vec![7u8; 100_000];
    {
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let c = store.session();
        c.create("/big", b"", P).await.unwrap();
        // 60 writes of 100 kB pass the compaction threshold once.
        for i in 0..60 {
            c.create(&format!("/big/{i}"), &big, P).await.unwrap();
        }
        c.create("/e", b"", CreateMode::Ephemeral).await.unwrap();
        c.close().await.unwrap();
    }
    let log_len = std::fs::metadata(dir.path().join("zk-log")).unwrap().len();
    assert!(log_len < 4 << 20, "log was compacted: {log_len}");
    // A torn record at the end (a crash mid-append) is ignored.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join("zk-log"))
        .unwrap();
    std::io::Write::write_all(&mut f, &[0, 0, 1, 0, 1, 2]).unwrap();
    drop(f);
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let c = store.session();
    let (kids, st) = c.get_children("/big", false).await.unwrap();
    assert_eq!((kids.len(), st.num_children, st.cversion), (60, 60, 60));
    assert_eq!(c.get_data("/big/59", false).await.unwrap().0, big);
    assert!(c.exists("/e", false).await.unwrap().is_none());
    // The root's cversion counts the ephemeral's create and delete too.
    assert_eq!(c.exists("/", false).await.unwrap().unwrap().cversion, 3);
}

#[tokio::test]
async fn one_store_per_directory() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert!(matches!(
        EmbeddedStore::open(dir.path()),
        Err(ZkError::Io(_))
    ));
    drop(store);
    EmbeddedStore::open(dir.path()).unwrap();
}

/// A read-only copy sees what a store that still has the directory open has written, up to the
/// last complete log record, and touches neither the lock nor any file.
#[tokio::test]
async fn a_read_only_copy_reads_beside_the_open_store() {
    let dir = tempfile::tempdir().unwrap();
    assert!(EmbeddedStore::read_only_copy(dir.path()).unwrap().is_none());
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let c = store.session();
    c.create("/a", b"one", P).await.unwrap();
    c.set_data("/a", b"two", 0).await.unwrap();
    c.create("/a/e", b"", CreateMode::Ephemeral).await.unwrap();
    let files = |names: &[&str]| -> Vec<(Vec<u8>, std::time::SystemTime)> {
        names
            .iter()
            .map(|n| {
                let path = dir.path().join(n);
                (
                    std::fs::read(&path).unwrap(),
                    std::fs::metadata(&path).unwrap().modified().unwrap(),
                )
            })
            .collect()
    };
    let names = ["zk-snapshot", "zk-log", "zk.lock"];
    let before = files(&names);

    let copy = EmbeddedStore::read_only_copy(dir.path()).unwrap().unwrap();
    let r = copy.session();
    let (data, stat) = r.get_data("/a", false).await.unwrap();
    assert_eq!((data.as_slice(), stat.version), (&b"two"[..], 1));
    // Ephemerals are the open store's sessions', never on disk.
    assert!(r.exists("/a/e", false).await.unwrap().is_none());
    drop(r);
    drop(copy);
    assert_eq!(files(&names), before, "the copy wrote to the store's files");
    // The lock is still the store's alone.
    assert!(matches!(
        EmbeddedStore::open(dir.path()),
        Err(ZkError::Io(_))
    ));

    // A record being appended (its first bytes only) is not read.
    let log = std::fs::read(dir.path().join("zk-log")).unwrap();
    c.create("/b", b"", P).await.unwrap();
    let full = std::fs::read(dir.path().join("zk-log")).unwrap();
    let record = &full[log.len()..];
    for cut in [1, 7, 8, record.len() - 1] {
        let mut partial = log.clone();
        partial.extend_from_slice(&record[..cut]);
        let copy_dir = tempfile::tempdir().unwrap();
        std::fs::copy(
            dir.path().join("zk-snapshot"),
            copy_dir.path().join("zk-snapshot"),
        )
        .unwrap();
        std::fs::write(copy_dir.path().join("zk-log"), &partial).unwrap();
        let copy = EmbeddedStore::read_only_copy(copy_dir.path())
            .unwrap()
            .unwrap();
        let r = copy.session();
        assert!(r.exists("/a", false).await.unwrap().is_some(), "{cut}");
        assert!(r.exists("/b", false).await.unwrap().is_none(), "{cut}");
    }
    let copy = EmbeddedStore::read_only_copy(dir.path()).unwrap().unwrap();
    assert!(copy.session().exists("/b", false).await.unwrap().is_some());
}
