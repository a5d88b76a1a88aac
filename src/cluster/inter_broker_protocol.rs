//! Kafka's `inter.broker.protocol.version` (its `MetadataVersion` in ZooKeeper mode): the
//! contract between brokers that picks the versions of the requests they send each other
//! (the controller's in `controller::inter_broker_versions`, the followers' Fetch in
//! `replication`), and which features (`leader_recovery_state`, AlterPartition) may be used.

/// An `inter.broker.protocol.version` kcli speaks: `major.minor` and the IV within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct InterBrokerProtocolVersion {
    pub major: u8,
    pub minor: u8,
    pub iv: u8,
}

/// Why an `inter.broker.protocol.version` is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IbpError {
    #[error("not a version of the form 3.9 or 3.9-IV0")]
    Malformed,
    #[error("below 3.0-IV0, the oldest inter-broker protocol kcli speaks")]
    TooOld,
    #[error("newer than 3.9-IV0, the last ZooKeeper-mode release")]
    TooNew,
}

impl InterBrokerProtocolVersion {
    /// 3.9-IV0, Kafka 3.9's default.
    pub const LATEST: Self = Self::new(3, 9, 0);
    pub const OLDEST: Self = Self::new(3, 0, 0);

    pub const fn new(major: u8, minor: u8, iv: u8) -> Self {
        InterBrokerProtocolVersion { major, minor, iv }
    }

    /// Parses `3.4`, `3.4-IV0` or `3.4.1` (a release's patch number is ignored, as Kafka's
    /// `MetadataVersion.fromVersionString` ignores it); a version without an IV means its last
    /// IV, which for every 3.x release kcli speaks is the one named in `Self::release_iv`.
    pub fn parse(value: &str) -> Result<Self, IbpError> {
        let (release, iv) = match value.split_once("-IV") {
            Some((release, iv)) => (
                release,
                Some(iv.parse::<u8>().map_err(|_| IbpError::Malformed)?),
            ),
            None => (value, None),
        };
        let mut parts = release.split('.');
        let major = parts
            .next()
            .and_then(|p| p.parse::<u8>().ok())
            .ok_or(IbpError::Malformed)?;
        let minor = parts
            .next()
            .and_then(|p| p.parse::<u8>().ok())
            .ok_or(IbpError::Malformed)?;
        if parts.next().is_some_and(|p| p.parse::<u8>().is_err()) || parts.next().is_some() {
            return Err(IbpError::Malformed);
        }
        let version = Self::new(major, minor, iv.unwrap_or(Self::release_iv(major, minor)));
        if version < Self::OLDEST {
            return Err(IbpError::TooOld);
        }
        if version > Self::LATEST {
            return Err(IbpError::TooNew);
        }
        Ok(version)
    }

    /// The last IV of a release (Kafka's `MetadataVersion` table for 3.0–3.9).
    fn release_iv(major: u8, minor: u8) -> u8 {
        match (major, minor) {
            (3, 0) => 1,
            (3, 3) => 3,
            (3, 5) => 2,
            (3, 6) => 2,
            (3, 7) => 4,
            _ => 0,
        }
    }

    /// Whether this IBP is `major.minor-IViv` or later.
    pub fn at_least(self, major: u8, minor: u8, iv: u8) -> bool {
        self >= Self::new(major, minor, iv)
    }
}

impl Default for InterBrokerProtocolVersion {
    fn default() -> Self {
        Self::LATEST
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kafka_spellings_and_refuses_what_kcli_does_not_speak() {
        let v = InterBrokerProtocolVersion::parse;
        assert_eq!(v("3.9").unwrap(), InterBrokerProtocolVersion::LATEST);
        assert_eq!(v("3.9-IV0").unwrap(), InterBrokerProtocolVersion::LATEST);
        assert_eq!(
            v("3.4.1").unwrap(),
            InterBrokerProtocolVersion::new(3, 4, 0)
        );
        assert_eq!(v("3.0").unwrap(), InterBrokerProtocolVersion::new(3, 0, 1));
        assert_eq!(v("2.8-IV1"), Err(IbpError::TooOld));
        assert_eq!(v("4.0"), Err(IbpError::TooNew));
        assert_eq!(v("three"), Err(IbpError::Malformed));
        assert_eq!(v("3.x"), Err(IbpError::Malformed));
    }
}
