//! TLS as Kafka 3.9 configures it, over rustls: the `ssl.*` keys ([`ssl_config`]), the stores
//! they name ([`stores`]: PEM and PKCS12; JKS refused), the rustls server and client
//! configurations ([`engine_factory`], Kafka's `DefaultSslEngineFactory`), and the principal
//! of a client certificate: its subject as Java prints it ([`distinguished_name`]) mapped by
//! `ssl.principal.mapping.rules` ([`principal_mapper`]).

pub mod distinguished_name;
pub mod engine_factory;
pub mod principal_mapper;
pub mod ssl_config;
pub mod stores;

pub use engine_factory::{client_config, server_config, ssl_principal_name};
pub use principal_mapper::SslPrincipalMapper;
pub use ssl_config::{Found, SslClientAuth, SslConfig, SslConfigError};
