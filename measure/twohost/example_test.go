package twohost_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/twohost"
)

// A Client says what is wrong with its address and secret before it dials.
func ExampleClient_Validate() {
	c := twohost.Client{Addr: "server.example", Secret: []byte("too short")}
	for _, err := range c.Validate() {
		fmt.Println(err)
	}
	// Output:
	// -remote "server.example" is not HOST:PORT (e.g. server.example:7390)
	// the shared secret is 9 bytes; give at least 16
}
