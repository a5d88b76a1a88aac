//! Flags to inputs: the broker lists (`--brokers`, `--racks`, `--broker-list`), the rack-aware
//! mode, the draws (`--start-index`, `--replica-shift`, `--seed`) and the files, each refused
//! with a message naming the flag at fault.

use std::collections::BTreeMap;
use std::path::Path;

use crate::admin::rack_aware::RackAwareMode;
use crate::admin::random::{AssignmentStart, JavaRandom};
use crate::admin::reassignment_json::ReassignmentJsonError;
use crate::admin::replica_assignment::{AssignmentError, BrokerMetadata};
use crate::cli::{AssignArgs, RackAwareModeArg};
use crate::cluster::BrokerId;

/// A refused input, one line naming its culprit.
#[derive(Debug, thiserror::Error)]
pub(super) enum InputError {
    #[error("{flag}: {message}")]
    Flag { flag: &'static str, message: String },
    #[error("{0}")]
    Usage(String),
    #[error("{flag} {path}: {source}")]
    File {
        flag: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{flag} {path}: {source}")]
    Json {
        flag: &'static str,
        path: String,
        #[source]
        source: ReassignmentJsonError,
    },
    #[error(
        "not all brokers have rack information (no rack: {}); use --rack-aware-mode safe or disabled to assign without racks",
        join(without_rack)
    )]
    PartialRacks { without_rack: Vec<BrokerId> },
    #[error("{0}")]
    Assignment(AssignmentError),
}

impl From<AssignmentError> for InputError {
    fn from(e: AssignmentError) -> Self {
        match e {
            AssignmentError::NotAllBrokersHaveRack { without_rack }
            | AssignmentError::RackMissingForRackAwareAssignment { without_rack } => {
                InputError::PartialRacks { without_rack }
            }
            other => InputError::Assignment(other),
        }
    }
}

pub(super) fn join(ids: &[BrokerId]) -> String {
    ids.iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn flag(flag: &'static str, message: impl Into<String>) -> InputError {
    InputError::Flag {
        flag,
        message: message.into(),
    }
}

/// Comma-separated broker ids, none twice.
pub(super) fn parse_ids(name: &'static str, text: &str) -> Result<Vec<BrokerId>, InputError> {
    let mut ids = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let id: BrokerId = part
            .parse()
            .map_err(|_| flag(name, format!("'{part}' is not a broker id")))?;
        if ids.contains(&id) {
            return Err(flag(name, format!("broker {id} is listed twice")));
        }
        ids.push(id);
    }
    Ok(ids)
}

/// `--racks`: `BROKER:RACK` pairs, each broker once, racks not empty.
pub(super) fn parse_racks(text: &str) -> Result<BTreeMap<BrokerId, String>, InputError> {
    let mut racks = BTreeMap::new();
    for pair in text.split(',') {
        let pair = pair.trim();
        let bad = || flag("--racks", format!("'{pair}' is not BROKER:RACK"));
        let (id, rack) = pair.split_once(':').ok_or_else(bad)?;
        let id: BrokerId = id.trim().parse().map_err(|_| bad())?;
        let rack = rack.trim();
        if rack.is_empty() {
            return Err(bad());
        }
        if racks.insert(id, rack.to_string()).is_some() {
            return Err(flag("--racks", format!("broker {id} is listed twice")));
        }
    }
    Ok(racks)
}

/// The offline brokers: `--brokers` with the racks of `--racks`, or the brokers `--racks`
/// names; by id.
pub(super) fn offline_brokers(args: &AssignArgs) -> Result<Vec<BrokerMetadata>, InputError> {
    let racks = match &args.racks {
        Some(text) => parse_racks(text)?,
        None => BTreeMap::new(),
    };
    let mut ids: Vec<BrokerId> = Vec::new();
    for id in &args.brokers {
        if ids.contains(id) {
            return Err(flag("--brokers", format!("broker {id} is listed twice")));
        }
        ids.push(*id);
    }
    if ids.is_empty() {
        ids = racks.keys().copied().collect();
    } else if let Some(stranger) = racks.keys().find(|id| !ids.contains(id)) {
        return Err(flag(
            "--racks",
            format!("broker {stranger} is not in --brokers"),
        ));
    }
    if ids.is_empty() {
        return Err(InputError::Usage(
            "no brokers: give --brokers or --racks, or --zookeeper or --bootstrap-server for the cluster's".into(),
        ));
    }
    let mut brokers: Vec<BrokerMetadata> = ids
        .into_iter()
        .map(|id| BrokerMetadata {
            id,
            rack: racks.get(&id).cloned(),
        })
        .collect();
    brokers.sort_by_key(|b| b.id);
    Ok(brokers)
}

/// The brokers `--broker-list` keeps (all when absent); a listed broker the cluster does not
/// have is an error (Kafka's tool drops it without a word).
pub(super) fn filter_broker_list(
    brokers: Vec<BrokerMetadata>,
    list: Option<&str>,
) -> Result<Vec<BrokerMetadata>, InputError> {
    let Some(text) = list else {
        return Ok(brokers);
    };
    let wanted = parse_ids("--broker-list", text)?;
    if let Some(missing) = wanted
        .iter()
        .find(|id| !brokers.iter().any(|b| b.id == **id))
    {
        return Err(flag(
            "--broker-list",
            format!("broker {missing} is not registered in the cluster"),
        ));
    }
    Ok(brokers
        .into_iter()
        .filter(|b| wanted.contains(&b.id))
        .collect())
}

/// The brokers as the rack-aware mode lets the assignment see them, by id.
pub(super) fn apply_rack_aware_mode(
    mode: RackAwareModeArg,
    brokers: Vec<BrokerMetadata>,
) -> Result<Vec<BrokerMetadata>, InputError> {
    let mode = match mode {
        RackAwareModeArg::Enforced => RackAwareMode::Enforced,
        RackAwareModeArg::Safe => RackAwareMode::Safe,
        RackAwareModeArg::Disabled => RackAwareMode::Disabled,
    };
    Ok(mode.broker_metadatas(brokers)?)
}

/// The draws of every topic assigned: fixed by the flags, else from one generator seeded by
/// `--seed` (or a drawn seed, reported so the run can be repeated), topic after topic.
#[derive(Debug)]
pub(super) struct Draws {
    fixed_start: Option<usize>,
    fixed_shift: Option<usize>,
    rng: JavaRandom,
    seed: i64,
    used_rng: bool,
}

impl Draws {
    pub(super) fn from_args(args: &AssignArgs) -> Self {
        let (rng, seed) = match args.seed {
            Some(seed) => (JavaRandom::new(seed), seed),
            None => JavaRandom::from_entropy(),
        };
        Draws {
            fixed_start: args.start_index,
            fixed_shift: args.replica_shift,
            rng,
            seed,
            used_rng: false,
        }
    }

    /// The next topic's start index and shift over `n` brokers.
    pub(super) fn draw(&mut self, n: usize) -> AssignmentStart {
        // Without a fixed start index the start (at least) is drawn.
        if self.fixed_start.is_none() {
            self.used_rng = true;
        }
        AssignmentStart::draw(n, self.fixed_start, self.fixed_shift, &mut self.rng)
    }

    /// The seed, when some draw was random (a fixed start index fixes both).
    pub(super) fn seed_used(&self) -> Option<i64> {
        self.used_rng.then_some(self.seed)
    }
}

/// A file's text, or an error naming the flag and the path.
pub(super) fn read_file(name: &'static str, path: &Path) -> Result<String, InputError> {
    std::fs::read_to_string(path).map_err(|source| InputError::File {
        flag: name,
        path: path.display().to_string(),
        source,
    })
}

/// A file's JSON error, naming the flag and the path.
pub(super) fn json_error(
    name: &'static str,
    path: &Path,
    source: ReassignmentJsonError,
) -> InputError {
    InputError::Json {
        flag: name,
        path: path.display().to_string(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_and_rack_lists() {
        assert_eq!(parse_ids("--broker-list", "3, 1,2").unwrap(), [3, 1, 2]);
        assert_eq!(
            parse_ids("--broker-list", "1,x").unwrap_err().to_string(),
            "--broker-list: 'x' is not a broker id"
        );
        assert_eq!(
            parse_ids("--broker-list", "1,1").unwrap_err().to_string(),
            "--broker-list: broker 1 is listed twice"
        );
        let racks = parse_racks("0:r1,1:r3,2:r3").unwrap();
        assert_eq!(racks[&1], "r3");
        for bad in ["0", "0:", "x:r", ":r"] {
            assert_eq!(
                parse_racks(bad).unwrap_err().to_string(),
                format!("--racks: '{bad}' is not BROKER:RACK")
            );
        }
        assert_eq!(
            parse_racks("1:a,1:b").unwrap_err().to_string(),
            "--racks: broker 1 is listed twice"
        );
    }

    #[test]
    fn broker_list_filters_and_names_strangers() {
        let all: Vec<BrokerMetadata> = (0..4).map(|id| BrokerMetadata::new(id, None)).collect();
        let kept = filter_broker_list(all.clone(), Some("3,1")).unwrap();
        assert_eq!(kept.iter().map(|b| b.id).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(
            filter_broker_list(all, Some("1,9"))
                .unwrap_err()
                .to_string(),
            "--broker-list: broker 9 is not registered in the cluster"
        );
    }

    #[test]
    fn partial_racks_name_the_brokers_without_one() {
        let brokers = vec![
            BrokerMetadata::new(0, Some("a")),
            BrokerMetadata::new(1, None),
            BrokerMetadata::new(2, None),
        ];
        assert_eq!(
            apply_rack_aware_mode(RackAwareModeArg::Enforced, brokers.clone())
                .unwrap_err()
                .to_string(),
            "not all brokers have rack information (no rack: 1, 2); use --rack-aware-mode safe or disabled to assign without racks"
        );
        assert!(
            apply_rack_aware_mode(RackAwareModeArg::Safe, brokers)
                .unwrap()
                .iter()
                .all(|b| b.rack.is_none())
        );
    }
}
