//go:build linux

package measure_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/spicelike"
)

// proxyArm is an importer's own arm: here the tcp arm under another name,
// where a real one would dial through the proxy under test.
type proxyArm struct{ measure.Arm }

func (proxyArm) Name() string { return "example-proxy" }

// An arm of one's own is registered once, from an init function, so that
// the processes the matrix starts have it too.
func init() {
	if err := measure.Register(proxyArm{measure.TCP}); err != nil {
		log.Fatal(err)
	}
}

// Once registered, an arm is taken by name, like the built-in ones, by
// Run, the matrix and the summary. A Transport that is also a Preparer
// sets each run's options for the two ends; this one is not.
func ExampleRegister() {
	arm, err := measure.Lookup("example-proxy")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := spicelike.Defaults()
	cfg.Duration, cfg.Warmup = time.Second, 200*time.Millisecond
	r, err := measure.Run(ctx, measure.Loopback(), arm, cfg)
	if err != nil {
		log.Fatal(err)
	}
	var t measure.Transport = proxyArm{measure.TCP}
	_, prepares := t.(measure.Preparer)
	fmt.Println(r.Arm, len(r.Client.Samples) > 0, prepares)
	// Output: example-proxy true false
}
