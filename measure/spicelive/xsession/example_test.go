package xsession_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
)

// spice-server's settings, as a deployment would choose them, become
// Xspice's environment; a setting it does not know is refused.
func ExampleParseServerOptions() {
	opts, err := xsession.ParseServerOptions("streaming-video=all jpeg-wan-compression=always")
	fmt.Println(opts, err)
	_, err = xsession.ParseServerOptions("streaming-video=sometimes")
	fmt.Println(err != nil)
	// Output:
	// [streaming-video=all jpeg-wan-compression=always] <nil>
	// true
}
