//! Controller requests over the wire: the controller's channel (`ControllerChannel`) reaching a
//! broker that is not its own through `NetworkClient`, and the broker obeying a newer controller
//! epoch while refusing an older one.

use kcli::controller::channel_manager::{BrokerChannel, BrokerNode, ControllerResponse};
use kcli::controller::controller_request_batch::ControllerRequest;
use kcli::protocol::codec::StrBytes;
use kcli::protocol::messages::RequestKind;
use kcli::protocol::messages::ResponseKind;
use kcli::protocol::messages::metadata_request::MetadataRequest;
use kcli::protocol::messages::update_metadata_request::{
    UpdateMetadataBroker, UpdateMetadataEndpoint, UpdateMetadataRequest,
};
use kcli::server::controller_channel::ControllerChannel;

use crate::serve_support::{KafkaConn, TestBroker};

fn broker(id: i32, port: u16) -> UpdateMetadataBroker {
    UpdateMetadataBroker {
        id,
        endpoints: vec![UpdateMetadataEndpoint {
            port: i32::from(port),
            host: StrBytes::from("127.0.0.1"),
            listener: StrBytes::from("PLAINTEXT"),
            security_protocol: 0,
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn metadata_brokers(port: u16) -> (Vec<i32>, i32) {
    let mut conn = KafkaConn::connect(port);
    let body = RequestKind::Metadata(MetadataRequest {
        topics: Some(Vec::new()),
        ..Default::default()
    });
    match conn.call(&body, 12) {
        ResponseKind::Metadata(m) => (
            m.brokers.iter().map(|b| b.node_id).collect(),
            m.controller_id,
        ),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_remote_controllers_update_metadata_is_obeyed_and_a_stale_one_refused() {
    let b = TestBroker::start(&[]);
    let (before, controller) = metadata_brokers(b.port());
    assert_eq!((before, controller), (vec![0], 0));
    // Broker 99 plays a controller with a newer epoch, reaching broker 0 over the wire.
    let channel = ControllerChannel::new(99);
    let node = BrokerNode {
        id: 0,
        host: "127.0.0.1".into(),
        port: i32::from(b.port()),
    };
    let update =
        |epoch: i32, brokers: Vec<UpdateMetadataBroker>| ControllerRequest::UpdateMetadata {
            version: 8,
            request: UpdateMetadataRequest {
                controller_id: 99,
                controller_epoch: epoch,
                broker_epoch: -1,
                live_brokers: brokers,
                ..Default::default()
            },
        };
    let request = update(100, vec![broker(0, b.port()), broker(7, 1)]);
    match channel.send(&node, &request).await.unwrap() {
        ControllerResponse::UpdateMetadata(r) => assert_eq!(r.error_code, 0),
        other => panic!("{other:?}"),
    }
    assert_eq!(metadata_brokers(b.port()), (vec![0, 7], 99));
    // An older controller is refused and changes nothing.
    let stale = update(99, vec![broker(0, b.port())]);
    match channel.send(&node, &stale).await.unwrap() {
        ControllerResponse::UpdateMetadata(r) => assert_eq!(r.error_code, 11),
        other => panic!("{other:?}"),
    }
    assert_eq!(metadata_brokers(b.port()), (vec![0, 7], 99));
}
