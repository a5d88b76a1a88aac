//! The text form: a header (cluster id, controller), a brokers table, a topics table (id,
//! partitions, replication factor, effective min ISR, non-default configs) and a partitions
//! table with flags (comfy-table, as the other commands render), then one summary line.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

use super::flags::{self, Flag};
use super::snapshot::{ClusterSnapshot, Source};
use super::view::ClusterView;
use crate::cluster::utc::UtcDateTime;
use crate::zk::zk_data::topic_id_to_string;

fn ids(v: &[i32]) -> String {
    let s: Vec<String> = v.iter().map(i32::to_string).collect();
    s.join(",")
}

fn table(header: Vec<&str>, right: &[usize]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED).set_header(header);
    for &c in right {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// The whole text output.
pub(super) fn render(view: &ClusterView<'_>) -> String {
    let s = view.snapshot;
    let mut out = String::new();
    out.push_str(&format!(
        "Cluster id: {}\n",
        s.cluster_id.as_deref().unwrap_or("(none)")
    ));
    out.push_str(&controller(view));
    out.push_str(&brokers(s));
    let mut topics = table(
        vec![
            "topic",
            "topic id",
            "partitions",
            "rf",
            "min isr",
            "configs",
        ],
        &[2, 3, 4],
    );
    let mut partitions = table(
        vec![
            "topic",
            "partition",
            "leader",
            "leader epoch",
            "replicas",
            "isr",
            "flags",
        ],
        &[1, 2, 3],
    );
    let (mut shown, mut counts) = (0usize, std::collections::BTreeMap::<Flag, usize>::new());
    for t in &view.topics {
        let rf = t.topic.partitions.first().map_or(0, |p| {
            flags::replication_factor(&p.replicas, &p.adding_replicas)
        });
        let configs: Vec<String> = t
            .topic
            .configs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        topics.add_row(vec![
            t.topic.name.clone(),
            t.topic.topic_id.map_or("-".into(), topic_id_to_string),
            t.topic.partitions.len().to_string(),
            rf.to_string(),
            t.min_isr.to_string(),
            configs.join("\n"),
        ]);
        for p in &t.partitions {
            shown += 1;
            for f in &p.flags {
                *counts.entry(*f).or_default() += 1;
            }
            let state = p.partition.state.as_ref();
            let names: Vec<&str> = p.flags.iter().map(|f| f.name()).collect();
            partitions.add_row(vec![
                t.topic.name.clone(),
                p.partition.partition.to_string(),
                state.map_or("-".into(), |s| s.state.leader.to_string()),
                state.map_or("-".into(), |s| s.state.leader_epoch.to_string()),
                ids(&p.partition.replicas),
                state.map_or(String::new(), |s| ids(&s.state.isr)),
                names.join(" "),
            ]);
        }
    }
    if !view.topics.is_empty() {
        out.push_str(&format!("{topics}\n{partitions}\n"));
    }
    let summary: Vec<String> = counts
        .iter()
        .map(|(f, n)| format!("{n} {}", f.name()))
        .collect();
    out.push_str(&format!(
        "{shown} partition{} shown{}{}\n",
        if shown == 1 { "" } else { "s" },
        if summary.is_empty() { "" } else { ": " },
        summary.join(", ")
    ));
    out
}

/// The brokers: ZooKeeper's registrations in full, a broker's view of the live ones (host, port,
/// rack), or on disk only whether a broker runs on the dir.
fn brokers(s: &ClusterSnapshot) -> String {
    if s.source == Source::DataDir {
        return match s.brokers.first() {
            Some(b) => format!(
                "Brokers: broker {} runs on this dir (its lock is held); registrations are \
                 ephemeral, not kept on disk\n",
                b.id
            ),
            None => "Brokers: none runs on this dir (its lock is free)\n".to_string(),
        };
    }
    if s.brokers.is_empty() {
        return "Brokers: none registered\n".to_string();
    }
    let full = s.source.knows_registrations();
    let mut header = vec!["broker", "host", "port", "rack"];
    if full {
        header.extend(["endpoints", "registered (UTC)", "broker epoch"]);
    }
    let mut brokers = table(header, if full { &[0, 2, 6] } else { &[0, 2] });
    for b in &s.brokers {
        let r = &b.znode.registration;
        let mut row = vec![
            b.id.to_string(),
            b.znode.host.clone().unwrap_or_else(|| "-".into()),
            b.znode.port.to_string(),
            r.rack.clone().unwrap_or_else(|| "-".into()),
        ];
        if full {
            let endpoints: Vec<String> =
                r.endpoints.iter().map(|e| e.connection_string()).collect();
            row.extend([
                endpoints.join("\n"),
                UtcDateTime::from_unix_ms(r.timestamp_ms).to_iso8601(),
                b.broker_epoch.to_string(),
            ]);
        }
        brokers.add_row(row);
    }
    format!("{brokers}\n")
}

/// The controller line: its id and epoch from ZooKeeper; the last epoch on disk, where the
/// registration is not kept; the id a broker names, without an epoch.
fn controller(view: &ClusterView<'_>) -> String {
    let s = view.snapshot;
    let epoch = s
        .controller_epoch
        .map_or("none".to_string(), |e| e.to_string());
    match (s.source, &s.controller) {
        (Source::DataDir, _) => {
            format!("Controller: not kept on disk (/controller is ephemeral; last epoch {epoch})\n")
        }
        (Source::Broker, Some(c)) => format!("Controller: broker {}\n", c.broker_id),
        (Source::Broker, None) => "Controller: none known to the broker\n".to_string(),
        (Source::ZooKeeper, Some(c)) if view.controller_is_a_broker() => {
            format!("Controller: broker {} (epoch {epoch})\n", c.broker_id)
        }
        (Source::ZooKeeper, Some(c)) => format!(
            "Controller: {} (epoch {epoch}; not in /brokers/ids, a KRaft controller during migration)\n",
            c.broker_id
        ),
        (Source::ZooKeeper, None) => format!("Controller: no controller (last epoch {epoch})\n"),
    }
}
