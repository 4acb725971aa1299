package shapedlinktest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

// Sim in a test: a UDP echo over an in-process 80:10:1 link. In a real
// test t is the test's *testing.T, inside synctest.Test for virtual time
// (then the echo takes exactly one round trip and no wall time):
//
//	func TestEcho(t *testing.T) {
//		synctest.Test(t, func(t *testing.T) {
//			link := shapedlinktest.Sim(t, "80:10:1", shapedlink.Options{Seed: 1})
//			...
//		})
//	}
//
// An Example has no *testing.T, so this one runs in real time with a
// stand-in (exampleTB) that runs the link's cleanup at the end. With the
// same seed the same datagrams are lost, so the output is fixed.
func ExampleSim() {
	t := &exampleTB{}
	defer t.cleanup()
	link := shapedlinktest.Sim(t, "80:10:1", shapedlink.Options{Seed: 1})
	ctx := context.Background()
	srv, _ := link.Server().ListenPacket(ctx, "udp", ":7")
	cli, _ := link.Client().ListenPacket(ctx, "udp", ":0")
	go func() { // echo
		buf := make([]byte, 1500)
		for {
			n, from, err := srv.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = srv.WriteTo(buf[:n], from)
		}
	}()
	buf := make([]byte, 1500)
	for i := range 3 {
		_, _ = cli.WriteTo([]byte{byte(i)}, srv.LocalAddr())
		_ = cli.SetReadDeadline(time.Now().Add(2 * time.Second))
		if n, _, err := cli.ReadFrom(buf); err == nil {
			fmt.Println("echo", buf[:n])
		} else {
			fmt.Println("no echo for", i)
		}
	}
	st, _ := link.Instruments().ShaperStats()
	fmt.Println(link.Backend(), st.Directions[0].Forwarded+st.Directions[1].Forwarded, "datagrams forwarded")
	// Output:
	// echo [0]
	// echo [1]
	// echo [2]
	// inproc 6 datagrams forwarded
}

// exampleTB stands in for the *testing.T an Example does not have: it
// runs the cleanups Sim registers and prints a failure.
type exampleTB struct {
	testing.TB
	cleanups []func()
}

func (e *exampleTB) Helper()                           {}
func (e *exampleTB) Cleanup(f func())                  { e.cleanups = append(e.cleanups, f) }
func (e *exampleTB) Errorf(format string, args ...any) { fmt.Printf(format+"\n", args...) }
func (e *exampleTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

func (e *exampleTB) cleanup() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}
