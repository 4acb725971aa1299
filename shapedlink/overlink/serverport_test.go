package overlink

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseServerPort: ParseServerPort takes tcp:PORT, udp:PORT, PORT, any
// and none, and refuses anything else saying what it takes.
func TestParseServerPort(t *testing.T) {
	for in, want := range map[string]ServerPort{
		"any": {}, "none": {None: true}, "5201": {Port: 5201}, "tcp:80": {Proto: "tcp", Port: 80}, "udp:65535": {Proto: "udp", Port: 65535},
	} {
		if got, err := ParseServerPort(in); err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "65536", "sctp:80", "tcp:", "tcp:x", ":80", "tcp:80:1", "all"} {
		if _, err := ParseServerPort(in); err == nil || !strings.Contains(err.Error(), "want tcp:PORT, udp:PORT or PORT (1-65535), any, or none") {
			t.Errorf("%q: %v, want a refusal naming the forms", in, err)
		}
	}
}

// TestParseProcNet: a TCP socket counts as listening in LISTEN only, a
// UDP socket when it is bound and connected to no peer.
func TestParseProcNet(t *testing.T) {
	const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	tcp := header +
		"   0: 010012C6:1451 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1455 1\n" + // 198.18.0.1:5201 listening
		"   1: 010012C6:1451 020012C6:CF08 01 00000000:00000000 00:00000000 00000000     0        0 0 3\n" + // an accepted connection
		"   2: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1456 1\n" // *:8080 listening
	got, err := parseProcNet("tcp", []byte(tcp))
	if want := []socket{{"tcp", 5201}, {"tcp", 8080}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("tcp: %v, %v; want %v", got, err, want)
	}
	udp := header +
		"  10: 010012C6:1151 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1457 2\n" + // bound, unconnected: 4433
		"  11: 020012C6:D431 010012C6:0035 01 00000000:00000000 00:00000000 00000000     0        0 1458 2\n" // a connected client
	got, err = parseProcNet("udp", []byte(udp))
	if want := []socket{{"udp", 4433}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("udp: %v, %v; want %v", got, err, want)
	}
	if _, err := parseProcNet("tcp", []byte(header+"   0: 010012C6 00000000:0000 0A\n")); err == nil {
		t.Error("a line without a port was read")
	}
	before := []socket{{"tcp", 22}}
	for _, c := range []struct {
		want  string
		socks []socket
		met   bool
	}{
		{"any", nil, false},
		{"any", before, false},
		{"any", []socket{{"tcp", 22}, {"udp", 4433}}, true},
		{"tcp:5201", []socket{{"udp", 5201}}, false},
		{"udp:5201", []socket{{"udp", 5201}}, true},
		{"5201", []socket{{"tcp", 5201}}, true},
		{"22", before, true},
	} {
		w, _ := ParseServerPort(c.want)
		if got := w.met(c.socks, before); got != c.met {
			t.Errorf("%s with %v (before %v): met %v, want %v", c.want, c.socks, before, got, c.met)
		}
	}
}
