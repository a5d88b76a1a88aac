//! Kafka's error codes (`org.apache.kafka.common.protocol.Errors`), the numbers every response
//! carries in its `error_code` fields, with Kafka's names and default messages. Only the codes a
//! broker of Kafka 3.9 can answer with are listed.

/// One of Kafka's error codes. The discriminant is the wire value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum ErrorCode {
    UnknownServerError = -1,
    None = 0,
    OffsetOutOfRange = 1,
    CorruptMessage = 2,
    UnknownTopicOrPartition = 3,
    InvalidFetchSize = 4,
    LeaderNotAvailable = 5,
    NotLeaderOrFollower = 6,
    RequestTimedOut = 7,
    BrokerNotAvailable = 8,
    ReplicaNotAvailable = 9,
    MessageTooLarge = 10,
    StaleControllerEpoch = 11,
    OffsetMetadataTooLarge = 12,
    NetworkException = 13,
    CoordinatorLoadInProgress = 14,
    CoordinatorNotAvailable = 15,
    NotCoordinator = 16,
    InvalidTopicException = 17,
    RecordListTooLarge = 18,
    NotEnoughReplicas = 19,
    NotEnoughReplicasAfterAppend = 20,
    InvalidRequiredAcks = 21,
    IllegalGeneration = 22,
    InconsistentGroupProtocol = 23,
    InvalidGroupId = 24,
    UnknownMemberId = 25,
    InvalidSessionTimeout = 26,
    RebalanceInProgress = 27,
    InvalidCommitOffsetSize = 28,
    TopicAuthorizationFailed = 29,
    GroupAuthorizationFailed = 30,
    ClusterAuthorizationFailed = 31,
    InvalidTimestamp = 32,
    UnsupportedSaslMechanism = 33,
    IllegalSaslState = 34,
    UnsupportedVersion = 35,
    TopicAlreadyExists = 36,
    InvalidPartitions = 37,
    InvalidReplicationFactor = 38,
    InvalidReplicaAssignment = 39,
    InvalidConfig = 40,
    NotController = 41,
    InvalidRequest = 42,
    UnsupportedForMessageFormat = 43,
    PolicyViolation = 44,
    OutOfOrderSequenceNumber = 45,
    DuplicateSequenceNumber = 46,
    InvalidProducerEpoch = 47,
    InvalidTxnState = 48,
    InvalidProducerIdMapping = 49,
    InvalidTransactionTimeout = 50,
    ConcurrentTransactions = 51,
    TransactionCoordinatorFenced = 52,
    TransactionalIdAuthorizationFailed = 53,
    SecurityDisabled = 54,
    OperationNotAttempted = 55,
    KafkaStorageError = 56,
    LogDirNotFound = 57,
    SaslAuthenticationFailed = 58,
    UnknownProducerId = 59,
    ReassignmentInProgress = 60,
    DelegationTokenAuthDisabled = 61,
    DelegationTokenNotFound = 62,
    DelegationTokenOwnerMismatch = 63,
    DelegationTokenRequestNotAllowed = 64,
    DelegationTokenAuthorizationFailed = 65,
    DelegationTokenExpired = 66,
    InvalidPrincipalType = 67,
    NonEmptyGroup = 68,
    GroupIdNotFound = 69,
    FetchSessionIdNotFound = 70,
    InvalidFetchSessionEpoch = 71,
    ListenerNotFound = 72,
    TopicDeletionDisabled = 73,
    FencedLeaderEpoch = 74,
    UnknownLeaderEpoch = 75,
    UnsupportedCompressionType = 76,
    StaleBrokerEpoch = 77,
    OffsetNotAvailable = 78,
    MemberIdRequired = 79,
    PreferredLeaderNotAvailable = 80,
    GroupMaxSizeReached = 81,
    FencedInstanceId = 82,
    EligibleLeadersNotAvailable = 83,
    ElectionNotNeeded = 84,
    NoReassignmentInProgress = 85,
    GroupSubscribedToTopic = 86,
    InvalidRecord = 87,
    UnstableOffsetCommit = 88,
    ThrottlingQuotaExceeded = 89,
    ProducerFenced = 90,
    ResourceNotFound = 91,
    DuplicateResource = 92,
    UnacceptableCredential = 93,
    InconsistentVoterSet = 94,
    InvalidUpdateVersion = 95,
    FeatureUpdateFailed = 96,
    PrincipalDeserializationFailure = 97,
    SnapshotNotFound = 98,
    PositionOutOfRange = 99,
    UnknownTopicId = 100,
    DuplicateBrokerRegistration = 101,
    BrokerIdNotRegistered = 102,
    InconsistentTopicId = 103,
    InconsistentClusterId = 104,
    TransactionalIdNotFound = 105,
    FetchSessionTopicIdError = 106,
    IneligibleReplica = 107,
    NewLeaderElected = 108,
    OffsetMovedToTieredStorage = 109,
    FencedMemberEpoch = 110,
    UnreleasedInstanceId = 111,
    UnsupportedAssignor = 112,
    StaleMemberEpoch = 113,
    MismatchedEndpointType = 114,
    UnsupportedEndpointType = 115,
    UnknownControllerId = 116,
    UnknownSubscriptionId = 117,
    TelemetryTooLarge = 118,
    InvalidRegistration = 119,
    TransactionAbortable = 120,
}

impl ErrorCode {
    /// The wire value.
    pub const fn code(self) -> i16 {
        self as i16
    }

    /// The code for a wire value; `None` for a value Kafka 3.9 does not define.
    pub const fn from_code(code: i16) -> Option<ErrorCode> {
        use ErrorCode::*;
        Some(match code {
            -1 => UnknownServerError,
            0 => None,
            1 => OffsetOutOfRange,
            2 => CorruptMessage,
            3 => UnknownTopicOrPartition,
            4 => InvalidFetchSize,
            5 => LeaderNotAvailable,
            6 => NotLeaderOrFollower,
            7 => RequestTimedOut,
            8 => BrokerNotAvailable,
            9 => ReplicaNotAvailable,
            10 => MessageTooLarge,
            11 => StaleControllerEpoch,
            12 => OffsetMetadataTooLarge,
            13 => NetworkException,
            14 => CoordinatorLoadInProgress,
            15 => CoordinatorNotAvailable,
            16 => NotCoordinator,
            17 => InvalidTopicException,
            18 => RecordListTooLarge,
            19 => NotEnoughReplicas,
            20 => NotEnoughReplicasAfterAppend,
            21 => InvalidRequiredAcks,
            22 => IllegalGeneration,
            23 => InconsistentGroupProtocol,
            24 => InvalidGroupId,
            25 => UnknownMemberId,
            26 => InvalidSessionTimeout,
            27 => RebalanceInProgress,
            28 => InvalidCommitOffsetSize,
            29 => TopicAuthorizationFailed,
            30 => GroupAuthorizationFailed,
            31 => ClusterAuthorizationFailed,
            32 => InvalidTimestamp,
            33 => UnsupportedSaslMechanism,
            34 => IllegalSaslState,
            35 => UnsupportedVersion,
            36 => TopicAlreadyExists,
            37 => InvalidPartitions,
            38 => InvalidReplicationFactor,
            39 => InvalidReplicaAssignment,
            40 => InvalidConfig,
            41 => NotController,
            42 => InvalidRequest,
            43 => UnsupportedForMessageFormat,
            44 => PolicyViolation,
            45 => OutOfOrderSequenceNumber,
            46 => DuplicateSequenceNumber,
            47 => InvalidProducerEpoch,
            48 => InvalidTxnState,
            49 => InvalidProducerIdMapping,
            50 => InvalidTransactionTimeout,
            51 => ConcurrentTransactions,
            52 => TransactionCoordinatorFenced,
            53 => TransactionalIdAuthorizationFailed,
            54 => SecurityDisabled,
            55 => OperationNotAttempted,
            56 => KafkaStorageError,
            57 => LogDirNotFound,
            58 => SaslAuthenticationFailed,
            59 => UnknownProducerId,
            60 => ReassignmentInProgress,
            61 => DelegationTokenAuthDisabled,
            62 => DelegationTokenNotFound,
            63 => DelegationTokenOwnerMismatch,
            64 => DelegationTokenRequestNotAllowed,
            65 => DelegationTokenAuthorizationFailed,
            66 => DelegationTokenExpired,
            67 => InvalidPrincipalType,
            68 => NonEmptyGroup,
            69 => GroupIdNotFound,
            70 => FetchSessionIdNotFound,
            71 => InvalidFetchSessionEpoch,
            72 => ListenerNotFound,
            73 => TopicDeletionDisabled,
            74 => FencedLeaderEpoch,
            75 => UnknownLeaderEpoch,
            76 => UnsupportedCompressionType,
            77 => StaleBrokerEpoch,
            78 => OffsetNotAvailable,
            79 => MemberIdRequired,
            80 => PreferredLeaderNotAvailable,
            81 => GroupMaxSizeReached,
            82 => FencedInstanceId,
            83 => EligibleLeadersNotAvailable,
            84 => ElectionNotNeeded,
            85 => NoReassignmentInProgress,
            86 => GroupSubscribedToTopic,
            87 => InvalidRecord,
            88 => UnstableOffsetCommit,
            89 => ThrottlingQuotaExceeded,
            90 => ProducerFenced,
            91 => ResourceNotFound,
            92 => DuplicateResource,
            93 => UnacceptableCredential,
            94 => InconsistentVoterSet,
            95 => InvalidUpdateVersion,
            96 => FeatureUpdateFailed,
            97 => PrincipalDeserializationFailure,
            98 => SnapshotNotFound,
            99 => PositionOutOfRange,
            100 => UnknownTopicId,
            101 => DuplicateBrokerRegistration,
            102 => BrokerIdNotRegistered,
            103 => InconsistentTopicId,
            104 => InconsistentClusterId,
            105 => TransactionalIdNotFound,
            106 => FetchSessionTopicIdError,
            107 => IneligibleReplica,
            108 => NewLeaderElected,
            109 => OffsetMovedToTieredStorage,
            110 => FencedMemberEpoch,
            111 => UnreleasedInstanceId,
            112 => UnsupportedAssignor,
            113 => StaleMemberEpoch,
            114 => MismatchedEndpointType,
            115 => UnsupportedEndpointType,
            116 => UnknownControllerId,
            117 => UnknownSubscriptionId,
            118 => TelemetryTooLarge,
            119 => InvalidRegistration,
            120 => TransactionAbortable,
            _ => return Option::None,
        })
    }

    /// Kafka's default exception message for the code (`Errors.message()`), used where a
    /// response has an error message field and nothing more specific is known.
    pub fn message(self) -> &'static str {
        use ErrorCode::*;
        match self {
            None => "",
            UnknownServerError => {
                "The server experienced an unexpected error when processing the request."
            }
            OffsetOutOfRange => {
                "The requested offset is not within the range of offsets maintained by the server."
            }
            CorruptMessage => {
                "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt."
            }
            UnknownTopicOrPartition => "This server does not host this topic-partition.",
            LeaderNotAvailable => {
                "There is no leader for this topic-partition as we are in the middle of a leadership election."
            }
            NotLeaderOrFollower => {
                "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition."
            }
            RequestTimedOut => "The request timed out.",
            MessageTooLarge => {
                "The request included a message larger than the max message size the server will accept."
            }
            InvalidTopicException => {
                "The request attempted to perform an operation on an invalid topic."
            }
            RecordListTooLarge => {
                "The request included message batch larger than the configured segment size on the server."
            }
            NotEnoughReplicas => {
                "Messages are rejected since there are fewer in-sync replicas than required."
            }
            InvalidRequiredAcks => "Produce request specified an invalid value for required acks.",
            InvalidTimestamp => "The timestamp of the message is out of acceptable range.",
            UnsupportedVersion => "The version of API is not supported.",
            TopicAlreadyExists => "Topic with this name already exists.",
            InvalidPartitions => "Number of partitions is below 1.",
            InvalidReplicationFactor => {
                "Replication factor is below 1 or larger than the number of available brokers."
            }
            InvalidReplicaAssignment => "Replica assignment is invalid.",
            InvalidConfig => "Configuration is invalid.",
            NotController => "This is not the correct controller for this cluster.",
            InvalidRequest => {
                "This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details."
            }
            KafkaStorageError => "Disk error when trying to access log file on the disk.",
            TopicDeletionDisabled => "Topic deletion is disabled.",
            FencedLeaderEpoch => {
                "The leader epoch in the request is older than the epoch on the broker."
            }
            UnknownLeaderEpoch => {
                "The leader epoch in the request is newer than the epoch on the broker."
            }
            UnsupportedCompressionType => {
                "The requesting client does not support the compression type of given partition."
            }
            FetchSessionIdNotFound => "The fetch session ID was not found.",
            InvalidFetchSessionEpoch => "The fetch session epoch is invalid.",
            InvalidRecord => {
                "This record has failed the validation on broker and hence will be rejected."
            }
            UnknownTopicId => "This server does not host this topic ID.",
            PolicyViolation => "Request parameters do not satisfy the configured policy.",
            ThrottlingQuotaExceeded => "The throttling quota has been exceeded.",
            ResourceNotFound => "A request illegally referred to a resource that does not exist.",
            CoordinatorNotAvailable => "The coordinator is not available.",
            TransactionalIdAuthorizationFailed => "Transactional Id authorization failed.",
            ClusterAuthorizationFailed => "Cluster authorization failed.",
            TopicAuthorizationFailed => "Topic authorization failed.",
            GroupAuthorizationFailed => "Group authorization failed.",
            _ => "The server experienced an unexpected error when processing the request.",
        }
    }
}

impl From<ErrorCode> for i16 {
    fn from(code: ErrorCode) -> i16 {
        code.code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_kafkas() {
        assert_eq!(ErrorCode::None.code(), 0);
        assert_eq!(ErrorCode::UnknownServerError.code(), -1);
        assert_eq!(ErrorCode::NotLeaderOrFollower.code(), 6);
        assert_eq!(ErrorCode::UnsupportedVersion.code(), 35);
        assert_eq!(ErrorCode::FetchSessionIdNotFound.code(), 70);
        assert_eq!(ErrorCode::UnknownTopicId.code(), 100);
        assert_eq!(ErrorCode::TransactionAbortable.code(), 120);
    }

    #[test]
    fn from_code_inverts_code_over_every_wire_value() {
        for code in -2..=130i16 {
            if let Some(e) = ErrorCode::from_code(code) {
                assert_eq!(e.code(), code);
            }
        }
        assert_eq!(
            ErrorCode::from_code(107),
            Some(ErrorCode::IneligibleReplica)
        );
        assert_eq!(ErrorCode::from_code(121), None);
        assert_eq!(ErrorCode::from_code(-2), None);
    }
}
