package transport_test

import (
	"fmt"
	"log"

	"github.com/shakenfist/quicbench/transport"
)

// A client process holds only the certificate's public half (ClientOnly,
// passed as a file holding CertPEM): enough for ClientTLS, which trusts it
// as the only root, but not for ServerTLS, which needs the key.
func ExampleCertificate_ClientTLS() {
	cert, err := transport.NewCertificate()
	if err != nil {
		log.Fatal(err)
	}
	client := cert.ClientOnly()
	conf, err := client.ClientTLS("h3")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(conf.ServerName, conf.NextProtos, conf.InsecureSkipVerify)
	if _, err := client.ServerTLS("h3"); err != nil {
		fmt.Println("ServerTLS:", err)
	}
	server, err := cert.ServerTLS("h3")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(server.Certificates), "certificate,", server.NextProtos)
	// Output:
	// quicbench.invalid [h3] false
	// ServerTLS: transport: a server needs a Certificate with both CertPEM and KeyPEM: make one with NewCertificate (a client needs only its CertPEM, see ClientOnly)
	// 1 certificate, [h3]
}
