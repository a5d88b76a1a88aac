//! `--execute`, `--verify` and `--cancel` with a reassignment file, printed as Kafka's
//! `kafka-reassign-partitions.sh` prints them. With `--bootstrap-server` they go through the
//! controller's AlterPartitionReassignments and ListPartitionReassignments; with `--zookeeper`
//! alone `--execute` writes the legacy `/admin/reassign_partitions` znode (which the controller
//! honours as Kafka's does) and `--verify` reads it and the topics' znodes. Only `log_dirs` of
//! "any" are accepted: moving a replica between a broker's log dirs is AlterReplicaLogDirs' job.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use anyhow::{Context, anyhow};

use crate::admin::reassignment_json::{
    ANY_LOG_DIR, PartitionReassignment, format_reassignment_json, parse_reassignment_json,
    validate_for_execute,
};
use crate::cli::AssignArgs;
use crate::cluster::{BrokerId, TopicPartition};

use super::Outcome;
use super::broker_admin::BrokerAdmin;
use super::inputs::{self, InputError};
use super::throttle;
use super::zookeeper::{Started, Zk};

/// Kafka's warning when a throttle is set.
const VERIFY_PERIODICALLY: &str = "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.";

/// Kafka's refusal to start over reassignments in progress (without `--additional`).
const EXISTING: &str = "Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new partition assignment in addition to the existing one. The --additional flag can also be used to change the throttle by resubmitting the current reassignment.";

fn joined(parts: &BTreeSet<TopicPartition>) -> String {
    parts
        .iter()
        .map(TopicPartition::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The topics of `parts`, each once, sorted.
fn topics_of(parts: &BTreeSet<TopicPartition>) -> Vec<String> {
    let topics: BTreeSet<&str> = parts.iter().map(|tp| tp.topic.as_str()).collect();
    topics.into_iter().map(str::to_string).collect()
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn write_out(out: &mut dyn Write, text: &str) -> anyhow::Result<()> {
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("writing to stdout")
}

/// The parsed file, with log dirs other than "any" refused.
fn read_plan(args: &AssignArgs) -> anyhow::Result<Vec<PartitionReassignment>> {
    let Some(path) = &args.reassignment_json else {
        return Err(InputError::Usage("--reassignment-json is required".into()).into());
    };
    let text = inputs::read_file("--reassignment-json", path)?;
    let parsed = parse_reassignment_json(&text)
        .map_err(|e| inputs::json_error("--reassignment-json", path, e))?;
    if let Some(p) = parsed
        .iter()
        .find(|p| p.log_dirs.iter().any(|d| d != ANY_LOG_DIR))
    {
        return Err(InputError::Flag {
            flag: "--reassignment-json",
            message: format!(
                "{}: log_dirs other than \"any\" are not supported (move replicas between a broker's log dirs with AlterReplicaLogDirs)",
                p.partition
            ),
        }
        .into());
    }
    Ok(parsed)
}

/// The current replicas of `parts`: an unknown topic or partition is Kafka's "Unable to find
/// partition".
fn current_of(
    parts: &BTreeSet<TopicPartition>,
    topics: &BTreeMap<String, BTreeMap<i32, Vec<BrokerId>>>,
) -> anyhow::Result<BTreeMap<TopicPartition, Vec<BrokerId>>> {
    let mut out = BTreeMap::new();
    let mut missing = Vec::new();
    for tp in parts {
        match topics.get(&tp.topic).and_then(|t| t.get(&tp.partition)) {
            Some(r) => {
                out.insert(tp.clone(), r.clone());
            }
            None => missing.push(tp.to_string()),
        }
    }
    if !missing.is_empty() {
        return Err(anyhow!("Unable to find partition: {}", missing.join(", ")));
    }
    Ok(out)
}

fn check_brokers(
    targets: &BTreeMap<TopicPartition, Vec<BrokerId>>,
    known: &[BrokerId],
) -> anyhow::Result<()> {
    let wanted: BTreeSet<BrokerId> = targets.values().flatten().copied().collect();
    match wanted.iter().find(|b| !known.contains(b)) {
        Some(unknown) => Err(anyhow!("Unknown broker id {unknown}")),
        None => Ok(()),
    }
}

fn rollback_text(current: &BTreeMap<TopicPartition, Vec<BrokerId>>) -> String {
    format!(
        "Current partition replica assignment\n\n{}\n\nSave this to use as the --reassignment-json-file option during rollback\n",
        format_reassignment_json(current)
    )
}

/// `--execute`.
pub(super) async fn execute(args: &AssignArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let targets =
        validate_for_execute(&read_plan(args)?).map_err(|e| anyhow!("--reassignment-json: {e}"))?;
    let parts: BTreeSet<TopicPartition> = targets.keys().cloned().collect();
    let topics = topics_of(&parts);
    let timeout = std::time::Duration::from_millis(args.connection_timeout_ms);
    let started = format!(
        "Successfully started partition reassignment{} for {}\n",
        plural(parts.len()),
        joined(&parts)
    );
    if let Some(bootstrap) = &args.bootstrap_server {
        let admin = BrokerAdmin::new(bootstrap, timeout);
        let metadata = admin.metadata(&topics).await?;
        let controller = admin.controller(&metadata)?;
        let ongoing = admin.list_reassignments(&controller, None).await?;
        if !args.additional && !ongoing.is_empty() {
            return Err(anyhow!(EXISTING));
        }
        let known: Vec<BrokerId> = metadata.brokers.iter().map(|b| b.metadata.id).collect();
        check_brokers(&targets, &known)?;
        let current = current_of(&parts, &metadata.topics)?;
        write_out(out, &rollback_text(&current))?;
        if let Some(rate) = args.throttle {
            write_out(out, &format!("{VERIFY_PERIODICALLY}\n"))?;
            let moves = throttle::move_map(&ongoing, &targets, &current);
            admin
                .incremental_alter_configs(&controller, throttle::set_topic_throttles(&moves))
                .await?;
            for broker in throttle::reassigning_brokers(&moves) {
                let client = admin.broker(&metadata, broker)?;
                admin
                    .incremental_alter_configs(&client, throttle::set_broker_throttle(broker, rate))
                    .await?;
            }
            write_out(
                out,
                &format!("The inter-broker throttle limit was set to {rate} B/s\n"),
            )?;
        }
        let asked = targets
            .iter()
            .map(|(tp, r)| (tp.clone(), Some(r.clone())))
            .collect();
        let errors = admin.alter_reassignments(&controller, &asked).await?;
        if !errors.is_empty() {
            let lines: Vec<String> = errors.iter().map(|(tp, e)| format!("{tp}: {e}")).collect();
            return Err(anyhow!(
                "Error reassigning partition(s): {}",
                lines.join("; ")
            ));
        }
        write_out(out, &started)?;
        return Ok(Outcome::Success);
    }
    let Some(connect) = &args.zookeeper else {
        return Err(
            InputError::Usage("--execute needs --bootstrap-server or --zookeeper".into()).into(),
        );
    };
    let zk = Zk::connect(connect, timeout).await?;
    let result = execute_zk(&zk, args.additional, &targets, &started, out).await;
    zk.close().await;
    result
}

/// `--execute` through `/admin/reassign_partitions`.
async fn execute_zk(
    zk: &Zk,
    additional: bool,
    targets: &BTreeMap<TopicPartition, Vec<BrokerId>>,
    started: &str,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let parts: BTreeSet<TopicPartition> = targets.keys().cloned().collect();
    if zk.pending_reassignment().await?.is_some() {
        return Err(anyhow!(
            "a partition reassignment is in progress (/admin/reassign_partitions exists); wait for it with --verify"
        ));
    }
    let known: Vec<BrokerId> = zk.brokers().await?.iter().map(|b| b.id).collect();
    check_brokers(targets, &known)?;
    let mut topics = BTreeMap::new();
    for name in parts.iter().map(|tp| &tp.topic).collect::<BTreeSet<_>>() {
        if let Some(t) = zk.topic(name).await? {
            let reassigning = !t.adding_replicas.is_empty() || !t.removing_replicas.is_empty();
            if reassigning && !additional {
                return Err(anyhow!(EXISTING));
            }
            topics.insert(name.clone(), t.partitions);
        }
    }
    let current = current_of(&parts, &topics)?;
    write_out(out, &rollback_text(&current))?;
    match zk.start_reassignment(targets).await? {
        Started::Yes => {
            write_out(out, started)?;
            Ok(Outcome::Success)
        }
        Started::InProgress => Err(anyhow!(
            "a partition reassignment is in progress (/admin/reassign_partitions exists); wait for it with --verify"
        )),
    }
}

/// What `--verify` found of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum State {
    InProgress,
    Done { current: Vec<BrokerId> },
}

/// Kafka's `partitionReassignmentStatesToString`, and whether every partition is completed.
pub(super) fn verify_text(
    targets: &[PartitionReassignment],
    states: &BTreeMap<TopicPartition, State>,
) -> (String, bool) {
    let mut lines = vec!["Status of partition reassignment:".to_string()];
    let mut complete = true;
    let mut sorted: Vec<&PartitionReassignment> = targets.iter().collect();
    sorted.sort_by(|a, b| a.partition.cmp(&b.partition));
    for t in sorted {
        match states.get(&t.partition) {
            Some(State::Done { current }) if *current == t.replicas => {
                lines.push(format!(
                    "Reassignment of partition {} is completed.",
                    t.partition
                ));
            }
            Some(State::Done { current }) => {
                complete = false;
                let show =
                    |v: &[BrokerId]| v.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
                lines.push(format!(
                    "There is no active reassignment of partition {}, but replica set is {} rather than {}.",
                    t.partition,
                    show(current),
                    show(&t.replicas)
                ));
            }
            _ => {
                complete = false;
                lines.push(format!(
                    "Reassignment of partition {} is still in progress.",
                    t.partition
                ));
            }
        }
    }
    (lines.join("\n") + "\n", complete)
}

/// `--verify`: exit 1 unless every partition of the file is completed.
pub(super) async fn verify(args: &AssignArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let targets = read_plan(args)?;
    let parts: BTreeSet<TopicPartition> = targets.iter().map(|t| t.partition.clone()).collect();
    let topics = topics_of(&parts);
    let timeout = std::time::Duration::from_millis(args.connection_timeout_ms);
    let mut states = BTreeMap::new();
    if let Some(bootstrap) = &args.bootstrap_server {
        let admin = BrokerAdmin::new(bootstrap, timeout);
        let metadata = admin.metadata(&topics).await?;
        let controller = admin.controller(&metadata)?;
        let ongoing = admin.list_reassignments(&controller, None).await?;
        for tp in &parts {
            let state = if ongoing.contains_key(tp) {
                State::InProgress
            } else {
                let current = metadata
                    .topics
                    .get(&tp.topic)
                    .and_then(|t| t.get(&tp.partition))
                    .cloned()
                    .unwrap_or_default();
                State::Done { current }
            };
            states.insert(tp.clone(), state);
        }
    } else if let Some(connect) = &args.zookeeper {
        let zk = Zk::connect(connect, timeout).await?;
        let result = zk_states(&zk, &parts).await;
        zk.close().await;
        states = result?;
    } else {
        return Err(
            InputError::Usage("--verify needs --bootstrap-server or --zookeeper".into()).into(),
        );
    }
    let (text, complete) = verify_text(&targets, &states);
    write_out(out, &text)?;
    let in_progress = states.values().any(|s| *s == State::InProgress);
    if let (Some(bootstrap), false) = (
        &args.bootstrap_server,
        in_progress || args.preserve_throttles,
    ) {
        clear_all_throttles(bootstrap, timeout, &targets, out).await?;
    }
    Ok(if complete {
        Outcome::Success
    } else {
        Outcome::CheckFailed
    })
}

/// Kafka's `clearAllThrottles`: once no move of the plan is in progress, the rates of every
/// broker of the cluster and of the plan, and the throttled replicas of the plan's topics.
async fn clear_all_throttles(
    bootstrap: &str,
    timeout: std::time::Duration,
    targets: &[PartitionReassignment],
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let admin = BrokerAdmin::new(bootstrap, timeout);
    let metadata = admin.metadata(&[]).await?;
    let mut brokers: BTreeSet<BrokerId> = metadata.brokers.iter().map(|b| b.metadata.id).collect();
    brokers.extend(targets.iter().flat_map(|t| t.replicas.iter().copied()));
    let listed = |ids: Vec<String>| ids.join(",");
    write_out(
        out,
        &format!(
            "Clearing broker-level throttles on broker{} {}\n",
            if brokers.len() == 1 { "" } else { "s" },
            listed(brokers.iter().map(i32::to_string).collect())
        ),
    )?;
    for broker in &brokers {
        // A broker of the plan that is not in the cluster has nothing to clear.
        let Ok(client) = admin.broker(&metadata, *broker) else {
            continue;
        };
        admin
            .incremental_alter_configs(&client, throttle::clear_broker_throttles(*broker))
            .await?;
    }
    let topics: BTreeSet<String> = targets.iter().map(|t| t.partition.topic.clone()).collect();
    write_out(
        out,
        &format!(
            "Clearing topic-level throttles on topic{} {}\n",
            if topics.len() == 1 { "" } else { "s" },
            listed(topics.iter().cloned().collect())
        ),
    )?;
    let controller = admin.controller(&metadata)?;
    admin
        .incremental_alter_configs(&controller, throttle::clear_topic_throttles(&topics))
        .await
}

/// In progress: named by `/admin/reassign_partitions`, or with adding or removing replicas in
/// its topic's znode (an API-started reassignment).
async fn zk_states(
    zk: &Zk,
    parts: &BTreeSet<TopicPartition>,
) -> anyhow::Result<BTreeMap<TopicPartition, State>> {
    let pending: BTreeSet<TopicPartition> = zk
        .pending_reassignment()
        .await?
        .unwrap_or_default()
        .into_iter()
        .map(|(tp, _)| tp)
        .collect();
    let mut states = BTreeMap::new();
    for name in parts.iter().map(|tp| &tp.topic).collect::<BTreeSet<_>>() {
        let topic = zk.topic(name).await?;
        for tp in parts.iter().filter(|tp| &tp.topic == name) {
            let state = match &topic {
                _ if pending.contains(tp) => State::InProgress,
                Some(t)
                    if t.adding_replicas.contains_key(&tp.partition)
                        || t.removing_replicas.contains_key(&tp.partition) =>
                {
                    State::InProgress
                }
                Some(t) => State::Done {
                    current: t.partitions.get(&tp.partition).cloned().unwrap_or_default(),
                },
                None => State::Done {
                    current: Vec::new(),
                },
            };
            states.insert(tp.clone(), state);
        }
    }
    Ok(states)
}

/// `--cancel` (with `--bootstrap-server`): cancels those of the file's partitions that are
/// being reassigned.
pub(super) async fn cancel(args: &AssignArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let targets = read_plan(args)?;
    let parts: Vec<TopicPartition> = targets
        .iter()
        .map(|t| t.partition.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let Some(bootstrap) = &args.bootstrap_server else {
        return Err(InputError::Usage("--cancel needs --bootstrap-server".into()).into());
    };
    let timeout = std::time::Duration::from_millis(args.connection_timeout_ms);
    let admin = BrokerAdmin::new(bootstrap, timeout);
    let metadata = admin.metadata(&[]).await?;
    let controller = admin.controller(&metadata)?;
    let ongoing = admin.list_reassignments(&controller, Some(&parts)).await?;
    // A reassignment with replicas to add or remove (Kafka 2.x's test; 3.9's Java port dropped
    // a negation and skips the ones that only add).
    let active: BTreeSet<TopicPartition> = ongoing
        .iter()
        .filter(|(_, o)| !o.adding.is_empty() || !o.removing.is_empty())
        .map(|(tp, _)| tp.clone())
        .collect();
    if active.is_empty() {
        write_out(
            out,
            "None of the specified partition reassignments are active.\n",
        )?;
        return Ok(Outcome::Success);
    }
    let asked = active.iter().map(|tp| (tp.clone(), None)).collect();
    let errors = admin.alter_reassignments(&controller, &asked).await?;
    if !errors.is_empty() {
        let lines: Vec<String> = errors.iter().map(|(tp, e)| format!("{tp}: {e}")).collect();
        return Err(anyhow!(
            "Error cancelling partition reassignment{} for: {}",
            plural(errors.len()),
            lines.join("; ")
        ));
    }
    write_out(
        out,
        &format!(
            "Successfully cancelled partition reassignment{} for: {}\n",
            plural(active.len()),
            joined(&active)
        ),
    )?;
    Ok(Outcome::Success)
}

#[cfg(test)]
#[path = "reassign_tests.rs"]
mod tests;
