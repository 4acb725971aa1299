package quinncarrier

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"time"

	"github.com/shakenfist/quicbench/transport"
)

// NewCertificate makes a certificate both ends accept: self-signed,
// CA:FALSE, with transport.ServerName as its subjectAltName (webpki
// refuses transport.NewCertificate's CA certificate as a server's).
func NewCertificate() (transport.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return transport.Certificate{}, fmt.Errorf("quinncarrier: a certificate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return transport.Certificate{}, fmt.Errorf("quinncarrier: a certificate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: transport.ServerName, Organization: []string{"quicbench"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(transport.CertificateLifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  false,
		DNSNames:              []string{transport.ServerName},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return transport.Certificate{}, fmt.Errorf("quinncarrier: creating the certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return transport.Certificate{}, fmt.Errorf("quinncarrier: encoding the certificate key: %w", err)
	}
	return transport.Certificate{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// writePEM writes c's certificate to certFile and, when c has it and
// keyFile is not empty, its key (private) to keyFile.
func writePEM(c transport.Certificate, certFile, keyFile string) error {
	if keyFile != "" {
		if len(c.KeyPEM) == 0 {
			return fmt.Errorf("quinncarrier: the server end needs the certificate's key, and it has none")
		}
		if err := os.WriteFile(keyFile, c.KeyPEM, 0o600); err != nil {
			return fmt.Errorf("quinncarrier: %w", err)
		}
	}
	if len(c.CertPEM) == 0 {
		return fmt.Errorf("quinncarrier: no certificate given")
	}
	if err := os.WriteFile(certFile, c.CertPEM, 0o644); err != nil {
		return fmt.Errorf("quinncarrier: %w", err)
	}
	return nil
}

// serverChain is what the server end presents for c: c itself when it is
// not a CA; for a CA certificate (transport.NewCertificate's, which webpki
// refuses as a server's), a new leaf for transport.ServerName signed by it,
// followed by c, with the leaf's key.
func serverChain(c transport.Certificate) (transport.Certificate, error) {
	block, _ := pem.Decode(c.CertPEM)
	if block == nil {
		return c, fmt.Errorf("quinncarrier: the certificate is not PEM")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return c, fmt.Errorf("quinncarrier: the certificate: %w", err)
	}
	if !ca.IsCA {
		return c, nil
	}
	kb, _ := pem.Decode(c.KeyPEM)
	if kb == nil {
		return c, fmt.Errorf("quinncarrier: the certificate's key is not PEM")
	}
	caKey, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return c, fmt.Errorf("quinncarrier: the certificate's key: %w", err)
	}
	leaf, err := NewCertificate()
	if err != nil {
		return c, err
	}
	lb, _ := pem.Decode(leaf.CertPEM)
	tmpl, err := x509.ParseCertificate(lb.Bytes)
	if err != nil {
		return c, err
	}
	lk, _ := pem.Decode(leaf.KeyPEM)
	key, err := x509.ParsePKCS8PrivateKey(lk.Bytes)
	if err != nil {
		return c, err
	}
	pub := key.(*ecdsa.PrivateKey).Public()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
	if err != nil {
		return c, fmt.Errorf("quinncarrier: signing a server certificate with the CA certificate: %w", err)
	}
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), c.CertPEM...)
	return transport.Certificate{CertPEM: chain, KeyPEM: leaf.KeyPEM}, nil
}
