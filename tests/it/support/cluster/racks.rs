//! A [`TestCluster`] whose brokers stand in racks of their own (`broker.rack`), for rack-aware
//! assignment and follower fetching (KIP-392).

use super::{Setup, TestCluster, exclusive};
use crate::serve_support::Launch;

impl TestCluster {
    /// [`TestCluster::start`] with broker `i + 1` in rack `racks[i]`.
    pub fn start_in_racks(overrides: &[(&str, &str)], racks: &[&str]) -> TestCluster {
        let n = i32::try_from(racks.len()).unwrap();
        let racks: Vec<String> = racks.iter().map(|r| r.to_string()).collect();
        let launch = move |id: i32| Launch {
            overrides: vec![(
                "broker.rack".to_string(),
                racks[usize::try_from(id - 1).unwrap()].clone(),
            )],
            ..Launch::default()
        };
        let setup = Setup {
            launch: Some(Box::new(launch)),
            ..Setup::default()
        };
        TestCluster::start_inner(n, overrides, exclusive(), setup)
    }
}
