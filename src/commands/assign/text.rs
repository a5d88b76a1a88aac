//! The text form of a proposal (comfy-table, as the other commands render): the draws, a table
//! of partitions with replicas and racks (current and proposed for existing topics), the
//! balance per broker and per rack with the largest skew, what moves, then Kafka's JSON as
//! `--generate` prints it. [`notes`] are the lines `--format json` sends to stderr.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};

use crate::admin::balance::Balance;
use crate::admin::minimize_movement::ProposalSource;
use crate::admin::reassignment_json::format_reassignment_json;
use crate::cluster::BrokerId;

use super::propose::Plan;

fn ids(v: &[BrokerId]) -> String {
    v.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
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

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The draws, and for existing topics what moves: the lines that let a proposal be repeated
/// and judged.
pub(super) fn notes(plan: &Plan) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(seed) = plan.seed {
        lines.push(format!("Seed: {seed} (--seed {seed} repeats these draws)"));
    }
    for t in &plan.topics {
        lines.push(format!(
            "Topic {}: start index {}, replica shift {}",
            t.topic, t.start.start_index, t.start.replica_shift
        ));
    }
    if !plan.existing() {
        return lines;
    }
    for t in &plan.topics {
        let Some(p) = &t.minimized else { continue };
        match (&p.source, &p.current_violation) {
            (ProposalSource::Current, _) => lines.push(format!(
                "Topic {}: the current assignment meets the constraints; nothing moves",
                t.topic
            )),
            (source, Some(why)) => {
                let how = if *source == ProposalSource::Kafka {
                    "Kafka's assignment is proposed"
                } else {
                    "the fewest moves that meet them are proposed"
                };
                lines.push(format!(
                    "Topic {}: the current assignment does not meet the constraints ({why}); {how}",
                    t.topic
                ));
            }
            (_, None) => {}
        }
    }
    let moved: usize = plan.topics.iter().filter_map(|t| t.replicas_moved()).sum();
    let total: usize = plan
        .topics
        .iter()
        .map(|t| t.proposed.values().map(Vec::len).sum::<usize>())
        .sum();
    let kafka: Option<usize> = plan
        .topics
        .iter()
        .map(|t| t.minimized.as_ref().map(|p| p.kafka_replicas_moved))
        .sum();
    let mut line = format!("Replicas moved: {moved} of {total}");
    if let Some(kafka) = kafka {
        line.push_str(&format!(
            " (Kafka's assignment with the same draws moves {kafka})"
        ));
    }
    lines.push(line);
    match plan.bytes_moved() {
        Some(bytes) => lines.push(format!(
            "Bytes moved: {bytes} (partition sizes from DescribeLogDirs)"
        )),
        None => {
            lines.push("Bytes moved: unknown (partition sizes need --bootstrap-server)".to_string())
        }
    }
    lines
}

fn partitions_table(plan: &Plan) -> Table {
    let rack = |b: &BrokerId| {
        plan.brokers
            .iter()
            .find(|m| m.id == *b)
            .and_then(|m| m.rack.clone())
            .unwrap_or_else(|| "-".into())
    };
    let racks = |v: &[BrokerId]| v.iter().map(rack).collect::<Vec<_>>().join(",");
    let with_racks = plan.brokers.iter().any(|b| b.rack.is_some());
    let existing = plan.existing();
    let mut header = vec!["topic", "partition"];
    if existing {
        header.extend(["current", "proposed", "moved"]);
    } else {
        header.push("replicas");
    }
    if with_racks {
        header.push("racks");
    }
    let mut t = table(header, &[1]);
    for topic in &plan.topics {
        for (p, replicas) in &topic.proposed {
            let mut row = vec![topic.topic.clone(), p.to_string()];
            if let Some(current) = &topic.current {
                let had = current.get(p).map(Vec::as_slice).unwrap_or(&[]);
                let moved = replicas.iter().filter(|b| !had.contains(b)).count();
                row.extend([ids(had), ids(replicas), moved.to_string()]);
            } else {
                row.push(ids(replicas));
            }
            if with_racks {
                row.push(racks(replicas));
            }
            t.add_row(row);
        }
    }
    t
}

fn brokers_table(proposed: &Balance, current: Option<&Balance>) -> Table {
    let mut header = vec!["broker", "rack", "replicas", "leaders"];
    if current.is_some() {
        header.extend(["current replicas", "current leaders"]);
    }
    let mut t = table(header, &[0, 2, 3, 4, 5]);
    let mut ids: Vec<BrokerId> = proposed.brokers.iter().map(|b| b.id).collect();
    if let Some(c) = current {
        ids.extend(c.brokers.iter().map(|b| b.id));
    }
    ids.sort_unstable();
    ids.dedup();
    let row_of = |b: &Balance, id: BrokerId| b.brokers.iter().find(|l| l.id == id).cloned();
    for id in ids {
        let p = row_of(proposed, id);
        let c = current.and_then(|c| row_of(c, id));
        let rack = p
            .as_ref()
            .filter(|l| l.known)
            .map(|l| l.rack.clone().unwrap_or_else(|| "-".into()))
            .unwrap_or_else(|| "(not a target)".into());
        let mut row = vec![
            id.to_string(),
            rack,
            p.as_ref().map_or(0, |l| l.replicas).to_string(),
            p.as_ref().map_or(0, |l| l.leaders).to_string(),
        ];
        if current.is_some() {
            row.push(c.as_ref().map_or(0, |l| l.replicas).to_string());
            row.push(c.as_ref().map_or(0, |l| l.leaders).to_string());
        }
        t.add_row(row);
    }
    t
}

fn racks_table(balance: &Balance) -> Table {
    let mut t = table(vec!["rack", "brokers", "replicas", "leaders"], &[1, 2, 3]);
    for r in &balance.racks {
        t.add_row(vec![
            r.rack.clone(),
            r.brokers.to_string(),
            r.replicas.to_string(),
            r.leaders.to_string(),
        ]);
    }
    t
}

/// The largest skew of the proposal, in one line.
pub(super) fn skew_line(balance: &Balance) -> String {
    let mut line = format!(
        "Largest skew between brokers: {} and {}",
        plural(balance.replica_skew(), "replica", "replicas"),
        plural(balance.leader_skew(), "leader", "leaders")
    );
    if !balance.racks.is_empty() {
        line.push_str(&format!(
            "; between racks: {} and {}",
            plural(balance.rack_replica_skew(), "replica", "replicas"),
            plural(balance.rack_leader_skew(), "leader", "leaders")
        ));
    }
    line
}

/// The whole text output.
pub(super) fn render(plan: &Plan) -> String {
    let mut out = String::new();
    for line in notes(plan) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&format!("{}\n", partitions_table(plan)));
    let (proposed, current) = plan.balance();
    out.push_str(&format!("{}\n", brokers_table(&proposed, current.as_ref())));
    if !proposed.racks.is_empty() {
        out.push_str(&format!("{}\n", racks_table(&proposed)));
    }
    out.push_str(&skew_line(&proposed));
    out.push_str("\n\n");
    if plan.existing() {
        out.push_str(&format!(
            "Current partition replica assignment\n{}\n\n",
            format_reassignment_json(&plan.current())
        ));
    }
    out.push_str(&format!(
        "Proposed partition reassignment configuration\n{}\n",
        format_reassignment_json(&plan.proposed())
    ));
    out
}
