package transport_test

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/transport"
)

// TLSConfigs makes a matched pair: the client verifies the server by
// ServerName against the certificate alone, offers the given protocols (or
// ALPN), and a certificate without its key cannot make a server.
func TestTLSConfigs(t *testing.T) {
	cert, err := transport.NewCertificate()
	if err != nil {
		t.Fatal(err)
	}
	s, c, err := cert.TLSConfigs()
	if err != nil {
		t.Fatal(err)
	}
	if c.ServerName != transport.ServerName || c.InsecureSkipVerify || c.RootCAs == nil {
		t.Errorf("client config: ServerName %q, InsecureSkipVerify %v, roots %v", c.ServerName, c.InsecureSkipVerify, c.RootCAs != nil)
	}
	for _, conf := range []*tls.Config{s, c} {
		if len(conf.NextProtos) != 1 || conf.NextProtos[0] != transport.ALPN || conf.MinVersion != tls.VersionTLS13 {
			t.Errorf("NextProtos %v, MinVersion %x: want [%s] and TLS 1.3", conf.NextProtos, conf.MinVersion, transport.ALPN)
		}
	}
	if _, err := cert.ClientOnly().ServerTLS(); err == nil || !strings.Contains(err.Error(), "KeyPEM") {
		t.Errorf("ServerTLS without a key: %v", err)
	}
	if _, err := cert.ClientOnly().ClientTLS("h3"); err != nil {
		t.Errorf("ClientTLS with CertPEM only: %v", err)
	}
	if _, _, err := (transport.Certificate{}).TLSConfigs(); err == nil || !strings.Contains(err.Error(), "NewCertificate") {
		t.Errorf("TLSConfigs of an empty Certificate: %v", err)
	}
}
