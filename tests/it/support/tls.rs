//! Certificates for the TLS tests, made in the test with rcgen in a temp dir: a CA, a broker
//! certificate for 127.0.0.1 and localhost, and client certificates, each as PEM files (a
//! key + chain file as `ssl.keystore.location` of type PEM takes it, the CA as a truststore),
//! and on demand as PKCS12 through the `openssl` command.

use std::path::PathBuf;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType, IsCa, KeyPair,
    SanType,
};

/// A CA and the certificates it signed, under one temp dir.
pub struct TestPki {
    dir: tempfile::TempDir,
    ca: CertifiedIssuer<'static, KeyPair>,
}

/// One certificate's files.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The certificate (PEM).
    pub cert: PathBuf,
    /// The private key (PKCS#8 PEM).
    pub key: PathBuf,
    /// Key then certificate then the CA, one PEM file (Kafka's PEM key store file).
    pub key_and_chain: PathBuf,
}

fn subject(pairs: &[(DnType, &str)]) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    for (kind, value) in pairs {
        dn.push(kind.clone(), *value);
    }
    dn
}

impl TestPki {
    pub fn new() -> TestPki {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name = subject(&[(DnType::CommonName, "kcli test CA")]);
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let pki = TestPki {
            dir: tempfile::tempdir().unwrap(),
            ca,
        };
        std::fs::write(pki.ca_pem(), pki.ca.pem()).unwrap();
        pki
    }

    /// The CA certificate (PEM): the truststore of clients and brokers.
    pub fn ca_pem(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// A broker certificate for 127.0.0.1 and localhost, `CN=<name>,O=kcli`.
    pub fn broker(&self, name: &str) -> Identity {
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params
            .subject_alt_names
            .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
        params.distinguished_name = subject(&[
            (DnType::OrganizationName, "kcli"),
            (DnType::CommonName, name),
        ]);
        self.issue(name, params)
    }

    /// A client certificate with the subject `C=US,O=acme,OU=eng,CN=<cn>` in DER order, which
    /// Java prints `CN=<cn>,OU=eng,O=acme,C=US`.
    pub fn client(&self, cn: &str) -> Identity {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = subject(&[
            (DnType::CountryName, "US"),
            (DnType::OrganizationName, "acme"),
            (DnType::OrganizationalUnitName, "eng"),
            (DnType::CommonName, cn),
        ]);
        self.issue(cn, params)
    }

    fn issue(&self, name: &str, params: CertificateParams) -> Identity {
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.ca).unwrap();
        let identity = Identity {
            cert: self.dir.path().join(format!("{name}.crt")),
            key: self.dir.path().join(format!("{name}.key")),
            key_and_chain: self.dir.path().join(format!("{name}.pem")),
        };
        std::fs::write(&identity.cert, cert.pem()).unwrap();
        std::fs::write(&identity.key, key.serialize_pem()).unwrap();
        std::fs::write(
            &identity.key_and_chain,
            format!("{}{}{}", key.serialize_pem(), cert.pem(), self.ca.pem()),
        )
        .unwrap();
        identity
    }

    /// `identity` (key, certificate, the CA) as a PKCS12 key store with `password`, made by
    /// the `openssl` command (OpenSSL 3's defaults: PBES2 with AES-256, HMAC-SHA256).
    pub fn pkcs12(&self, identity: &Identity, password: &str) -> PathBuf {
        let out = identity.cert.with_extension("p12");
        let status = std::process::Command::new("openssl")
            .args(["pkcs12", "-export", "-in"])
            .arg(&identity.cert)
            .arg("-inkey")
            .arg(&identity.key)
            .arg("-certfile")
            .arg(self.ca_pem())
            .arg("-out")
            .arg(&out)
            .args(["-passout", &format!("pass:{password}")])
            .status()
            .expect("openssl makes the PKCS12 stores (apt-get install openssl)");
        assert!(status.success(), "openssl pkcs12 -export: {status}");
        out
    }
}
