package transport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Certificate is serialisable TLS material for the QUIC arms: a self-signed
// certificate and its private key, both PEM. The server process needs both;
// the client process needs only CertPEM, which it trusts as its only root.
type Certificate struct {
	CertPEM []byte `json:"cert_pem"`
	KeyPEM  []byte `json:"key_pem,omitempty"`
}

// CertificateLifetime is how long a certificate from NewCertificate is valid.
const CertificateLifetime = 30 * 24 * time.Hour

// NewCertificate makes a self-signed ECDSA P-256 certificate for ServerName
// and any extra hosts (DNS names or IP addresses). The client always asks for
// ServerName, so extra hosts are only needed by other clients.
func NewCertificate(hosts ...string) (Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Certificate{}, fmt.Errorf("transport: generating certificate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return Certificate{}, fmt.Errorf("transport: generating certificate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: ServerName, Organization: []string{"quicbench"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(CertificateLifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{ServerName},
	}
	for _, h := range hosts {
		if h == "" {
			return Certificate{}, errors.New("transport: NewCertificate: empty host name")
		}
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return Certificate{}, fmt.Errorf("transport: creating certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Certificate{}, fmt.Errorf("transport: encoding certificate key: %w", err)
	}
	return Certificate{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// ClientOnly returns the certificate without its private key: what to hand
// to the client process.
func (c Certificate) ClientOnly() Certificate { return Certificate{CertPEM: c.CertPEM} }

// ServerTLS returns the server's TLS configuration for the certificate:
// it presents the certificate, allows only TLS 1.3 and offers nextProtos
// as its ALPN protocols (ALPN, this package's, when none are given; quic-go
// needs at least one, "h3" for HTTP/3). It needs CertPEM and KeyPEM. Each
// call returns a new tls.Config, which the caller may change.
func (c Certificate) ServerTLS(nextProtos ...string) (*tls.Config, error) {
	if len(c.CertPEM) == 0 || len(c.KeyPEM) == 0 {
		return nil, errors.New("transport: a server needs a Certificate with both CertPEM and KeyPEM: " +
			"make one with NewCertificate (a client needs only its CertPEM, see ClientOnly)")
	}
	conf, err := c.serverConfig(nextProtos)
	if err != nil {
		return nil, fmt.Errorf("transport: Certificate: %w", err)
	}
	return conf, nil
}

// ClientTLS returns a client's TLS configuration for a server holding the
// certificate: it trusts CertPEM as its only root (no
// InsecureSkipVerify), asks for ServerName, whatever address it dials,
// allows only TLS 1.3 and asks for nextProtos (ALPN when none are given).
// It needs only CertPEM. Each call returns a new tls.Config.
func (c Certificate) ClientTLS(nextProtos ...string) (*tls.Config, error) {
	if len(c.CertPEM) == 0 {
		return nil, errors.New("transport: a client needs the server's Certificate.CertPEM (from NewCertificate) to verify the server")
	}
	conf, err := c.clientConfig(nextProtos)
	if err != nil {
		return nil, fmt.Errorf("transport: Certificate: %w", err)
	}
	return conf, nil
}

// TLSConfigs returns ServerTLS and ClientTLS for the same protocols: a
// matched pair for a server and a client in one process, for code that
// drives quic-go (or crypto/tls) itself.
//
//	cert, err := transport.NewCertificate()
//	...
//	serverTLS, clientTLS, err := cert.TLSConfigs("h3")
func (c Certificate) TLSConfigs(nextProtos ...string) (server, client *tls.Config, err error) {
	if server, err = c.ServerTLS(nextProtos...); err != nil {
		return nil, nil, err
	}
	if client, err = c.ClientTLS(nextProtos...); err != nil {
		return nil, nil, err
	}
	return server, client, nil
}

func (c Certificate) serverConfig(nextProtos []string) (*tls.Config, error) {
	pair, err := tls.X509KeyPair(c.CertPEM, c.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("not a usable certificate and key: %w", err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		NextProtos:   protocols(nextProtos),
		MinVersion:   tls.VersionTLS13,
	}, nil
}

func (c Certificate) clientConfig(nextProtos []string) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.CertPEM) {
		return nil, errors.New("CertPEM holds no PEM certificate")
	}
	return &tls.Config{
		RootCAs:    pool,
		ServerName: ServerName,
		NextProtos: protocols(nextProtos),
		MinVersion: tls.VersionTLS13,
	}, nil
}

// protocols is the ALPN list to offer: nextProtos, or ALPN if none.
func protocols(nextProtos []string) []string {
	if len(nextProtos) == 0 {
		return []string{ALPN}
	}
	return append([]string(nil), nextProtos...)
}

// serverTLS and clientTLS are what the QUIC arms use: the same, with errors
// that name the Options field.
func (c Certificate) serverTLS() (*tls.Config, error) {
	if len(c.CertPEM) == 0 || len(c.KeyPEM) == 0 {
		return nil, errors.New("transport: the QUIC server needs Options.Certificate with CertPEM and KeyPEM: " +
			"make one with NewCertificate and give the client its CertPEM")
	}
	conf, err := c.serverConfig(nil)
	if err != nil {
		return nil, fmt.Errorf("transport: Options.Certificate: %w", err)
	}
	return conf, nil
}

func (c Certificate) clientTLS() (*tls.Config, error) {
	if len(c.CertPEM) == 0 {
		return nil, errors.New("transport: the QUIC client needs Options.Certificate.CertPEM (the server's certificate from NewCertificate) to verify the server")
	}
	conf, err := c.clientConfig(nil)
	if err != nil {
		return nil, fmt.Errorf("transport: Options.Certificate: %w", err)
	}
	return conf, nil
}
