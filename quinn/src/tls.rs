//! TLS 1.3 for both ends, from a certificate made by the Go side: the
//! server presents it, the client trusts it as its only root.

use std::fs::File;
use std::io::BufReader;
use std::sync::Arc;

use crate::config::ALPN;

fn read_certs(path: &str) -> Result<Vec<rustls::Certificate>, String> {
    let f = File::open(path).map_err(|e| format!("reading --cert {path}: {e}"))?;
    let certs = rustls_pemfile::certs(&mut BufReader::new(f)).map_err(|e| format!("reading --cert {path}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("--cert {path}: no PEM certificate in it"));
    }
    Ok(certs.into_iter().map(rustls::Certificate).collect())
}

fn read_key(path: &str) -> Result<rustls::PrivateKey, String> {
    let f = File::open(path).map_err(|e| format!("reading --key {path}: {e}"))?;
    let mut keys =
        rustls_pemfile::pkcs8_private_keys(&mut BufReader::new(f)).map_err(|e| format!("reading --key {path}: {e}"))?;
    match keys.len() {
        1 => Ok(rustls::PrivateKey(keys.remove(0))),
        n => Err(format!("--key {path}: want one PKCS#8 private key (PEM \"PRIVATE KEY\"), found {n}")),
    }
}

pub fn server(cert: &str, key: &str) -> Result<quinn::ServerConfig, String> {
    let mut c = rustls::ServerConfig::builder()
        .with_safe_default_cipher_suites()
        .with_safe_default_kx_groups()
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| format!("TLS 1.3: {e}"))?
        .with_no_client_auth()
        .with_single_cert(read_certs(cert)?, read_key(key)?)
        .map_err(|e| format!("the certificate and key: {e}"))?;
    c.alpn_protocols = vec![ALPN.to_vec()];
    Ok(quinn::ServerConfig::with_crypto(Arc::new(c)))
}

pub fn client(cert: &str) -> Result<quinn::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    for c in read_certs(cert)? {
        roots.add(&c).map_err(|e| format!("--cert {cert}: not usable as a root: {e}"))?;
    }
    let mut c = rustls::ClientConfig::builder()
        .with_safe_default_cipher_suites()
        .with_safe_default_kx_groups()
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| format!("TLS 1.3: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    c.alpn_protocols = vec![ALPN.to_vec()];
    Ok(quinn::ClientConfig::new(Arc::new(c)))
}
