package quinncarrier_test

import (
	"context"
	"fmt"
	"log"

	"github.com/shakenfist/quicbench/transport/quinncarrier"
)

// Config.Controller is one of Controllers: StartServer and StartClient
// refuse any other before they start an end.
func ExampleStartServer() {
	fmt.Println(quinncarrier.Controllers())
	cert, err := quinncarrier.NewCertificate()
	if err != nil {
		log.Fatal(err)
	}
	c := quinncarrier.Config{Controller: "reno", Dir: "."}
	_, err = quinncarrier.StartServer(context.Background(), c, nil, "127.0.0.1:0", []string{"127.0.0.1:9000"}, cert)
	fmt.Println(err)
	// Output:
	// [cubic bbr newreno]
	// quinncarrier: controller "reno": use one of cubic, bbr, newreno
}
