package overlink

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// ServerPort is what the server command must listen on before the client
// command starts. The zero value waits for any TCP listener or unconnected
// UDP socket that was not in the server namespace before.
type ServerPort struct {
	None  bool   // wait Config.ServerWait, no socket looked for
	Proto string // "tcp", "udp", or "" for either
	Port  int    // 0: any new socket
}

// ParseServerPort reads the forms tcp:PORT, udp:PORT, PORT (either), any
// and none.
func ParseServerPort(s string) (ServerPort, error) {
	switch s {
	case "any":
		return ServerPort{}, nil
	case "none":
		return ServerPort{None: true}, nil
	}
	proto, portText, ok := strings.Cut(s, ":")
	if !ok {
		proto, portText = "", s
	}
	port, err := strconv.Atoi(portText)
	if (ok && proto != "tcp" && proto != "udp") || err != nil || port < 1 || port > 65535 {
		return ServerPort{}, fmt.Errorf("%q: want tcp:PORT, udp:PORT or PORT (1-65535), any, or none", s)
	}
	return ServerPort{Proto: proto, Port: port}, nil
}

// String says what is waited for, for a message.
func (w ServerPort) String() string {
	switch {
	case w.None:
		return "nothing (-server-port none)"
	case w.Port == 0:
		return "any port (a TCP listener or an unconnected UDP socket)"
	case w.Proto == "":
		return fmt.Sprintf("port %d (tcp or udp)", w.Port)
	}
	return fmt.Sprintf("%s port %d", w.Proto, w.Port)
}

// check says what is wrong with w, or nil.
func (w ServerPort) check() error {
	if w.None && (w.Proto != "" || w.Port != 0) || w.Proto != "" && w.Proto != "tcp" && w.Proto != "udp" ||
		w.Port < 0 || w.Port > 65535 || w.Proto != "" && w.Port == 0 {
		return fmt.Errorf("overlink: ServerPort %+v: want None alone, or Proto tcp, udp or empty with a Port of 1-65535 (0 with no Proto: any new socket)", w)
	}
	return nil
}

// socket is a listening socket: a TCP socket in LISTEN, or a UDP socket
// bound to a port and connected to no peer.
type socket struct {
	proto string // "tcp" or "udp"
	port  int
}

func (s socket) String() string { return fmt.Sprintf("%s port %d", s.proto, s.port) }

// met reports whether socks hold what w waits for; before are the sockets
// that were there before the server command started (for "any").
func (w ServerPort) met(socks, before []socket) bool {
	for _, s := range socks {
		switch {
		case w.Port == 0:
			if !containsSocket(before, s) {
				return true
			}
		case s.port == w.Port && (w.Proto == "" || w.Proto == s.proto):
			return true
		}
	}
	return false
}

func containsSocket(socks []socket, s socket) bool {
	for _, o := range socks {
		if o == s {
			return true
		}
	}
	return false
}

// newSockets are the sockets of socks not in before.
func newSockets(socks, before []socket) []socket {
	var out []socket
	for _, s := range socks {
		if !containsSocket(before, s) {
			out = append(out, s)
		}
	}
	return out
}

// joinSockets lists socks for a message.
func joinSockets(socks []socket) string {
	var b strings.Builder
	for i, s := range socks {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.String())
	}
	return b.String()
}

// The socket states of /proc/net/tcp and udp (the kernel's TCP_LISTEN and
// TCP_CLOSE): a TCP listener, and a UDP socket with no connected peer.
const (
	stateListen = 0x0A
	stateClose  = 0x07
)

// parseProcNet reads the listening sockets from a /proc/net/tcp, tcp6, udp
// or udp6 table (proto "tcp" or "udp"): lines of "sl local_address
// rem_address st ...", the local address as HEXADDR:HEXPORT.
func parseProcNet(proto string, table []byte) ([]socket, error) {
	want := stateListen
	if proto == "udp" {
		want = stateClose
	}
	var out []socket
	sc := bufio.NewScanner(bytes.NewReader(table))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for first := true; sc.Scan(); first = false {
		f := strings.Fields(sc.Text())
		if first || len(f) == 0 {
			continue // the header
		}
		if len(f) < 4 {
			return nil, fmt.Errorf("a %s table line with %d fields: %q", proto, len(f), sc.Text())
		}
		_, portHex, ok := strings.Cut(f[1], ":")
		port, perr := strconv.ParseUint(portHex, 16, 16)
		st, serr := strconv.ParseUint(f[3], 16, 8)
		if !ok || perr != nil || serr != nil {
			return nil, fmt.Errorf("a %s table line not read as local address and state: %q", proto, sc.Text())
		}
		if int(st) == want && port != 0 && !containsSocket(out, socket{proto, int(port)}) {
			out = append(out, socket{proto, int(port)})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
