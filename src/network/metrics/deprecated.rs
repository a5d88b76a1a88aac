//! `kafka.network:type=RequestMetrics,name=DeprecatedRequestsPerSec,request=<Name>,version=<V>,
//! clientSoftwareName=<N>,clientSoftwareVersion=<SV>`: the requests of a version Kafka 3.9's
//! specs mark deprecated (`deprecatedVersions`), by request type, version and the client
//! software the connection named, as Kafka's `RequestMetrics.deprecatedRequestRate` counts
//! them. A meter exists from the first such request, as Kafka creates it then.
//!
//! Only a request of a deprecated version takes the lock here; others cost one comparison.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::cluster::sync::lock;
use crate::metrics::{Meter, MetricSample, Reading};

use super::{ClientSoftware, request_mbean};

/// (request name, version, client software).
type Key = (&'static str, i16, ClientSoftware);

#[derive(Debug, Default)]
pub(super) struct DeprecatedRequests {
    meters: Mutex<BTreeMap<Key, Meter>>,
}

impl DeprecatedRequests {
    /// Counts a request of deprecated `version` under the request type `name`.
    pub(super) fn mark(&self, name: &'static str, version: i16, software: ClientSoftware) {
        lock(&self.meters)
            .entry((name, version, software))
            .or_default()
            .mark(1);
    }

    pub(super) fn tick(&self) {
        for meter in lock(&self.meters).values() {
            meter.tick();
        }
    }

    pub(super) fn collect(&self, out: &mut Vec<MetricSample>) {
        for ((name, version, (software, software_version)), meter) in lock(&self.meters).iter() {
            out.push(MetricSample {
                mbean: request_mbean(
                    "DeprecatedRequestsPerSec",
                    &[
                        ("request", name),
                        ("version", &version.to_string()),
                        ("clientSoftwareName", software),
                        ("clientSoftwareVersion", software_version),
                    ],
                ),
                reading: Reading::Meter(meter.snapshot()),
            });
        }
    }
}
