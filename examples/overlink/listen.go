package main

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// listenWant is what the server command must listen on before the client
// command starts (-server-port).
type listenWant struct {
	none  bool   // wait -server-wait, no socket looked for
	proto string // "tcp", "udp", or "" for either
	port  int    // 0: any new socket
}

// parseListenWant reads -server-port: tcp:PORT, udp:PORT, PORT, any or
// none.
func parseListenWant(s string) (listenWant, error) {
	switch s {
	case "any":
		return listenWant{}, nil
	case "none":
		return listenWant{none: true}, nil
	}
	proto, portText, ok := strings.Cut(s, ":")
	if !ok {
		proto, portText = "", s
	}
	port, err := strconv.Atoi(portText)
	if (ok && proto != "tcp" && proto != "udp") || err != nil || port < 1 || port > 65535 {
		return listenWant{}, fmt.Errorf("%q: want tcp:PORT, udp:PORT or PORT (1-65535), any, or none", s)
	}
	return listenWant{proto: proto, port: port}, nil
}

// String says what is waited for, for a message.
func (w listenWant) String() string {
	switch {
	case w.none:
		return "nothing (-server-port none)"
	case w.port == 0:
		return "any port (a TCP listener or an unconnected UDP socket)"
	case w.proto == "":
		return fmt.Sprintf("port %d (tcp or udp)", w.port)
	}
	return fmt.Sprintf("%s port %d", w.proto, w.port)
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
func (w listenWant) met(socks, before []socket) bool {
	for _, s := range socks {
		switch {
		case w.port == 0:
			if !containsSocket(before, s) {
				return true
			}
		case s.port == w.port && (w.proto == "" || w.proto == s.proto):
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
