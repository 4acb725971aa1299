package xsession

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// startSleep starts sleep for a minute as a session's program would be.
func startSleep(t *testing.T) *Program {
	t.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	p, err := StartProgram("sleep", []string{"60"}, nil, null)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { p.stop(time.Second) })
	return p
}

// The first program to exit is the session's death, named with its exit
// status; what dies after it changes nothing.
func TestDeathsNameTheFirstExit(t *testing.T) {
	d := NewDeaths()
	long := startSleep(t)
	d.Watch(long)
	time.Sleep(100 * time.Millisecond)
	if err := d.Err(); err != nil {
		t.Fatalf("a death with everything running: %v", err)
	}
	killed := startSleep(t)
	killed.name = "Xorg"
	d.Watch(killed)
	killed.stop(0)
	select {
	case <-d.Dead():
	case <-time.After(10 * time.Second):
		t.Fatal("a program was killed, and no death was seen")
	}
	long.stop(0)
	err := d.Err()
	if err == nil || !strings.Contains(err.Error(), "Xorg exited") || !strings.Contains(err.Error(), "signal: terminated") {
		t.Errorf("got %v, want Xorg's exit by signal", err)
	}
	if got := d.Or(errors.New("xdotool: cannot open display")); got == nil || !strings.Contains(got.Error(), "Xorg exited") {
		t.Errorf("an error the death caused is told as %v", got)
	}
	if d.Or(nil) != nil {
		t.Error("or(nil) made an error of nothing")
	}
}

func TestParseGeometry(t *testing.T) {
	win, r, err := parseGeometry("WINDOW=2097164\nX=0\nY=400\nWIDTH=484\nHEIGHT=134\nSCREEN=0\n")
	if err != nil || win != "2097164" || r != (spicetrace.Rect{Top: 400, Left: 0, Bottom: 534, Right: 484}) {
		t.Errorf("got %s %+v %v", win, r, err)
	}
	for _, bad := range []string{"", "WINDOW=1\nX=0\nY=0\nWIDTH=0\nHEIGHT=5\n", "X=0\nY=0\nWIDTH=4\nHEIGHT=5\n", "WINDOW=1\nY=0\nWIDTH=4\nHEIGHT=5\n"} {
		if _, _, err := parseGeometry(bad); err == nil {
			t.Errorf("parseGeometry(%q) took it", bad)
		}
	}
}
