//! TLS as Kafka 3.9 configures it, over rustls: the `ssl.*` keys ([`ssl_config`]), the stores
//! they name ([`stores`]: PEM and PKCS12; JKS refused), the rustls server and client
//! configurations ([`engine_factory`], Kafka's `DefaultSslEngineFactory`), and the principal
//! of a client certificate: its subject as Java prints it ([`distinguished_name`]) mapped by
//! `ssl.principal.mapping.rules` ([`principal_mapper`]).

pub(crate) mod distinguished_name;
pub(crate) mod engine_factory;
pub(crate) mod principal_mapper;
pub(crate) mod ssl_config;
pub(crate) mod stores;

pub(crate) use engine_factory::{client_config, server_config, ssl_principal_name};
pub(crate) use ssl_config::{Found, SslConfig, SslConfigError};
