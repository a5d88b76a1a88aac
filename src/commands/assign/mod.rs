//! `kcli assign`: Kafka's replica assignment, offline or for the live cluster, and Kafka's
//! reassignment tool. `inputs` turns flags into broker lists and draws; `zookeeper` and
//! `broker_admin` (over the pure `requests`) read the live cluster; `propose` computes;
//! `text` and `json` render; `reassign` runs `--execute`, `--verify` and `--cancel`.
//! Exit 0 when done, 1 when `--verify` finds a partition not completed, 2 on an error (one line
//! naming the flag, file, topic or broker at fault).

mod broker_admin;
mod inputs;
mod json;
mod propose;
mod reassign;
pub(crate) mod requests;
mod text;
mod throttle;
mod zookeeper;

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use anyhow::Context;

use super::Outcome;
use crate::admin::reassignment_json::parse_topics_to_move_json;
use crate::admin::replica_assignment::{Assignment, BrokerMetadata};
use crate::cli::{AssignArgs, AssignFormat};

use broker_admin::BrokerAdmin;
use inputs::{Draws, InputError};
use propose::Plan;
use zookeeper::Zk;

/// Runs the command: results to `out`, and with `--format json` the notes to `err`.
pub(crate) fn run(
    args: &AssignArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(async {
        if args.execute {
            reassign::execute(args, out).await
        } else if args.verify {
            reassign::verify(args, out).await
        } else if args.cancel {
            reassign::cancel(args, out).await
        } else {
            let plan = plan(args).await?;
            let (stdout, stderr) = match args.format {
                AssignFormat::Text => (text::render(&plan), String::new()),
                AssignFormat::Json => json::render(&plan),
            };
            err.write_all(stderr.as_bytes())
                .and_then(|()| err.flush())
                .context("writing to stderr")?;
            out.write_all(stdout.as_bytes())
                .and_then(|()| out.flush())
                .context("writing to stdout")?;
            Ok(Outcome::Success)
        }
    })
}

/// Where the live inputs come from.
struct Live {
    zk: Option<Zk>,
    admin: Option<BrokerAdmin>,
}

impl Live {
    async fn brokers(&self) -> anyhow::Result<Vec<BrokerMetadata>> {
        if let Some(zk) = &self.zk {
            return zk.brokers().await;
        }
        match &self.admin {
            Some(admin) => Ok(admin
                .metadata(&[])
                .await?
                .brokers
                .into_iter()
                .map(|b| b.metadata)
                .collect()),
            None => Ok(Vec::new()),
        }
    }

    /// The topics' current assignments; a topic that does not exist is an error.
    async fn topics(&self, names: &[String]) -> anyhow::Result<BTreeMap<String, Assignment>> {
        let mut out = BTreeMap::new();
        if let Some(zk) = &self.zk {
            for name in names {
                match zk.topic(name).await? {
                    Some(t) => {
                        out.insert(name.clone(), t.partitions);
                    }
                    None => return Err(unknown_topic(name)),
                }
            }
        } else if let Some(admin) = &self.admin {
            let metadata = admin.metadata(names).await?;
            if let Some(name) = metadata.unknown_topics.first() {
                return Err(unknown_topic(name));
            }
            out = metadata.topics;
        }
        Ok(out)
    }

    async fn close(self) {
        if let Some(zk) = self.zk {
            zk.close().await;
        }
    }
}

fn unknown_topic(name: &str) -> anyhow::Error {
    InputError::Flag {
        flag: "--topics-to-move-json",
        message: format!("Topic {name} not found."),
    }
    .into()
}

/// The topics `--topics-to-move-json` names, sorted (read before any connection, so a bad file
/// fails fast).
fn topics_to_move(args: &AssignArgs) -> anyhow::Result<Option<Vec<String>>> {
    let Some(path) = &args.topics_to_move_json else {
        return Ok(None);
    };
    if args.zookeeper.is_none() && args.bootstrap_server.is_none() {
        return Err(InputError::Usage(
            "--topics-to-move-json needs --zookeeper or --bootstrap-server".into(),
        )
        .into());
    }
    let text = inputs::read_file("--topics-to-move-json", path)?;
    let mut names = parse_topics_to_move_json(&text)
        .map_err(|e| inputs::json_error("--topics-to-move-json", path, e))?;
    if names.is_empty() {
        return Err(InputError::Flag {
            flag: "--topics-to-move-json",
            message: format!("{} names no topic", path.display()),
        }
        .into());
    }
    names.sort();
    Ok(Some(names))
}

async fn plan(args: &AssignArgs) -> anyhow::Result<Plan> {
    let names = topics_to_move(args)?;
    if names.is_none() && (args.partitions.is_none() || args.replication_factor.is_none()) {
        return Err(InputError::Usage(
            "--partitions and --replication-factor are required (or --topics-to-move-json for existing topics)".into(),
        )
        .into());
    }
    let timeout = Duration::from_millis(args.connection_timeout_ms);
    let live = Live {
        zk: match &args.zookeeper {
            Some(connect) => Some(Zk::connect(connect, timeout).await?),
            None => None,
        },
        admin: args
            .bootstrap_server
            .as_deref()
            .map(|b| BrokerAdmin::new(b, timeout)),
    };
    let result = plan_with(args, names, &live).await;
    live.close().await;
    result
}

async fn plan_with(
    args: &AssignArgs,
    names: Option<Vec<String>>,
    live: &Live,
) -> anyhow::Result<Plan> {
    let is_live = live.zk.is_some() || live.admin.is_some();
    let brokers = if is_live {
        live.brokers().await?
    } else {
        inputs::offline_brokers(args)?
    };
    let brokers = inputs::filter_broker_list(brokers, args.broker_list.as_deref())?;
    let brokers = inputs::apply_rack_aware_mode(args.rack_aware_mode, brokers)?;
    let mut draws = Draws::from_args(args);
    let mut topics = Vec::new();
    let mut sizes = None;
    match names {
        Some(names) => {
            let mut current = live.topics(&names).await?;
            for name in &names {
                let assignment = current.remove(name).unwrap_or_default();
                topics.push(propose::existing_topic(
                    &brokers,
                    name,
                    assignment,
                    &mut draws,
                    args.minimize_movement,
                )?);
            }
            if let Some(admin) = &live.admin {
                let metadata = admin.metadata(&[]).await?;
                sizes = Some(admin.partition_sizes(&metadata).await?);
            }
        }
        None => {
            let partitions = args.partitions.unwrap_or(0);
            let rf = args.replication_factor.unwrap_or(0);
            topics.push(propose::new_topic(
                &brokers,
                &args.topic,
                partitions,
                rf,
                &mut draws,
            )?);
        }
    }
    Ok(Plan {
        brokers,
        topics,
        seed: draws.seed_used(),
        sizes,
    })
}
