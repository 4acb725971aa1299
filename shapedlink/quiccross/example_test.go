package quiccross_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/shapedlink"
)

// A profile asking for QUIC cross traffic: with this package imported the
// link runs it beside whatever the caller sends.
func Example() {
	p, err := shapedlink.ParseProfile("80:10,down.cross=1xquic+2xcubic")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range p.Direction(shapedlink.Down).Cross {
		fmt.Println(c, "tcp:", c.TCP())
	}
	// Output:
	// 1xquic tcp: false
	// 2xcubic tcp: true
}
