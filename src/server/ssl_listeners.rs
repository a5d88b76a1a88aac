//! TLS wired from the broker's configuration into the network layer: the [`ListenerTls`] of
//! each SSL and SASL_SSL listener (its stores read now, at startup), the principal builder
//! over `security::ssl`, and the rustls client configuration of the inter-broker client when
//! the inter-broker listener is SSL or SASL_SSL (its `listener.name.<l>.ssl.*` keys, as Kafka's
//! brokers use the inter-broker listener's own keys for their outbound connections).

use std::sync::Arc;

use rustls_pki_types::CertificateDer;

use crate::cluster::kafka_principal::KafkaPrincipal;
use crate::config::{BrokerConfig, ConfigError, EndPoint, SecurityProtocol};
use crate::network::{ListenerTls, SslPrincipalBuilder};
use crate::security::ssl::{
    SslConfig, SslConfigError, client_config, server_config, ssl_principal_name,
};

/// Kafka's `DefaultKafkaPrincipalBuilder` for SSL: `User:` + the mapped subject, or
/// `User:ANONYMOUS` without a client certificate.
#[derive(Debug)]
struct DefaultSslPrincipalBuilder(SslConfig);

impl SslPrincipalBuilder for DefaultSslPrincipalBuilder {
    fn build(
        &self,
        peer_certificates: Option<&[CertificateDer<'static>]>,
    ) -> Result<KafkaPrincipal, String> {
        Ok(match ssl_principal_name(&self.0, peer_certificates)? {
            Some(name) => KafkaPrincipal::user(name),
            None => KafkaPrincipal::anonymous(),
        })
    }
}

fn uses_tls(protocol: SecurityProtocol) -> bool {
    matches!(protocol, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl)
}

/// The error of a store that cannot be used, naming the key (with its listener prefix when the
/// value came from one).
fn store_error(e: SslConfigError) -> ConfigError {
    ConfigError::InvalidValue {
        key: e.key,
        value: e.value,
        reason: e.reason,
    }
}

/// The TLS of `listener`, `None` for a PLAINTEXT or SASL_PLAINTEXT one.
pub(crate) fn listener_tls(
    config: &BrokerConfig,
    listener: &EndPoint,
) -> Result<Option<ListenerTls>, ConfigError> {
    if !uses_tls(listener.security_protocol) {
        return Ok(None);
    }
    let ssl = config.ssl_config(&listener.listener_name)?;
    let server = server_config(&ssl).map_err(store_error)?;
    Ok(Some(ListenerTls {
        config: server,
        principal_builder: Arc::new(DefaultSslPrincipalBuilder(ssl)),
    }))
}

/// The inter-broker client's TLS, `None` when the inter-broker listener is not TLS.
pub(crate) fn inter_broker_client_tls(
    config: &BrokerConfig,
) -> Result<Option<Arc<rustls::ClientConfig>>, ConfigError> {
    let name = config.inter_broker_listener_name();
    let Some(listener) = config
        .listeners
        .iter()
        .find(|l| l.listener_name.eq_ignore_ascii_case(&name))
    else {
        return Ok(None);
    };
    if !uses_tls(listener.security_protocol) {
        return Ok(None);
    }
    let ssl = config.ssl_config(&listener.listener_name)?;
    client_config(&ssl).map(Some).map_err(store_error)
}
