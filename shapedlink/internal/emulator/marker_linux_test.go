package emulator

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestMarkLateness: the LateMarker line is what a traceoff trigger on
// LateMarkerPrefix matches, written once, without allocating.
func TestMarkLateness(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	l := &dirLoop{marker: p[1], markBuf: make([]byte, 0, 128), tid: 4242}
	if n := testing.AllocsPerRun(10, func() { l.markLateness(2150000) }); n != 0 {
		t.Errorf("markLateness allocates %v times a call; want 0", n)
	}
	if !l.marked {
		t.Error("markLateness did not record that it wrote")
	}
	buf := make([]byte, 4096)
	n, err := unix.Read(p[0], buf)
	if err != nil {
		t.Fatal(err)
	}
	want := LateMarkerPrefix + " tid=4242 late_ns=2150000\n"
	if got := string(buf[:len(want)]); n < len(want) || got != want {
		t.Errorf("the marker line is %q; want %q", buf[:n], want)
	}
}
