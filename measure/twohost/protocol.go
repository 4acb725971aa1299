package twohost

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/transport"
)

// remoteProtocol is the version of the two-host control protocol. A daemon
// and a driver of different versions refuse each other.
const remoteProtocol = 2

// MinSecretLen is the shortest shared secret two-host mode accepts, in
// bytes.
const MinSecretLen = 16

const (
	// remoteNonceLen is the length of each side's challenge.
	remoteNonceLen = 32
	// remoteHandshakeTimeout bounds the dial and each read of the
	// handshake.
	remoteHandshakeTimeout = 10 * time.Second
	// remoteOpTimeout bounds a reply that needs no run to finish first,
	// and the daemon's wait for the driver's next op between runs.
	remoteOpTimeout = 5 * time.Minute
	// remoteMaxPreAuthLine bounds a message read before the peer has
	// proved it holds the secret; remoteMaxLine any other (a server's
	// result with its per-connection series can be several MB).
	remoteMaxPreAuthLine = 4 << 10
	remoteMaxLine        = 256 << 20
	// remoteLogTail is how much of the end of the server's log comes back
	// with its result.
	remoteLogTail = 64 << 10
	// DefaultPort is the control port the documentation uses; the
	// UDP probe uses the same number.
	DefaultPort = 7390
)

// The path probe: probeCount echoes of probeSize bytes, probeGap apart,
// then up to probeWait for the last answers.
const (
	probeCount = 50
	probeSize  = 64
	probeGap   = 10 * time.Millisecond
	probeWait  = time.Second
	// probeWindow bounds how long the daemon answers echoes.
	probeWindow = 10 * time.Second
)

// probeMagic starts every probe datagram; the daemon answers nothing else.
var probeMagic = []byte("qbprobe1")

// ErrRefused marks a two-host session that could not start: the daemon
// refused the driver (wrong secret, a run already in progress, another
// protocol version), or the daemon could not prove it holds the secret.
// Nothing was run.
var ErrRefused = errors.New("two-host session refused")

// ctlMsg is every message of the control protocol; Op says which fields
// matter.
type ctlMsg struct {
	Op      string `json:"op"`
	Version int    `json:"version,omitempty"`
	Nonce   []byte `json:"nonce,omitempty"`
	Proof   []byte `json:"proof,omitempty"`
	// Why is a refusal's or an error's reason; Retry, on a refusal, says
	// the driver may try again at once (it was displaced before its
	// proof by newer connections).
	Why   string `json:"why,omitempty"`
	Retry bool   `json:"retry,omitempty"`
	// Run names the run a start is for, for the daemon's log.
	Run string `json:"run,omitempty"`
	// Spec is the server's spec without addresses, certificate or
	// deadline; Within is how long from the start the server may run.
	Spec   json.RawMessage `json:"spec,omitempty"`
	Within time.Duration   `json:"within_ns,omitempty"`
	// Port is the UDP port of the probe (probing) or the data port
	// (ready); Addr the server's data address as the daemon sees it.
	Port        int                    `json:"port,omitempty"`
	Addr        string                 `json:"addr,omitempty"`
	Certificate *transport.Certificate `json:"certificate,omitempty"`
	// Echoed is how many probe datagrams the daemon answered.
	Echoed int `json:"echoed,omitempty"`
	// Result is the server's roleResult, Log the end of its log and Exit
	// its exit status.
	Result json.RawMessage `json:"result,omitempty"`
	Log    string          `json:"log,omitempty"`
	Exit   string          `json:"exit,omitempty"`
}

// ctlConn reads and writes control messages on one connection.
type ctlConn struct {
	c     net.Conn
	r     *bufio.Reader
	limit int
}

func newCtlConn(c net.Conn) *ctlConn {
	return &ctlConn{c: c, r: bufio.NewReader(c), limit: remoteMaxPreAuthLine}
}

// send writes m as one line, within timeout.
func (cc *ctlConn) send(m ctlMsg, timeout time.Duration) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := cc.c.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	_, err = cc.c.Write(append(b, '\n'))
	return err
}

// recv reads one message, within timeout; a line longer than the limit,
// one that is not JSON or one without an op is an error.
func (cc *ctlConn) recv(timeout time.Duration) (ctlMsg, error) {
	var m ctlMsg
	if err := cc.c.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return m, err
	}
	var line []byte
	for {
		part, err := cc.r.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > cc.limit {
			return m, fmt.Errorf("a message longer than %d bytes", cc.limit)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return m, fmt.Errorf("no message within %v", timeout)
			}
			return m, err
		}
	}
	if err := json.Unmarshal(bytes.TrimSpace(line), &m); err != nil || m.Op == "" {
		return ctlMsg{}, fmt.Errorf("not a quicbench control message: %q", clip(string(line), 80))
	}
	return m, nil
}

// expect reads one message and checks its op; a refusal or an error from
// the other end comes back as an error with its reason.
func (cc *ctlConn) expect(op string, timeout time.Duration) (ctlMsg, error) {
	m, err := cc.recv(timeout)
	switch {
	case err != nil:
		return m, err
	case m.Op == op:
		return m, nil
	case m.Op == "refused" || m.Op == "error":
		return m, errors.New(m.Why)
	}
	return m, fmt.Errorf("expected %q, got %q", op, m.Op)
}

// clip shortens s to at most n bytes for a message.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// newNonce is a fresh random challenge.
func newNonce() ([]byte, error) {
	b := make([]byte, remoteNonceLen)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("reading random bytes for a challenge: %w", err)
	}
	return b, nil
}

// remoteProof is HMAC-SHA256 over who ("client" or "server", so neither
// side's proof is ever the other's) and the two nonces, in the order the
// protocol gives.
func remoteProof(secret []byte, who string, a, b []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(who))
	m.Write(a)
	m.Write(b)
	return m.Sum(nil)
}

// ReadSecretFile reads the shared secret of two-host mode from path: the
// file's bytes without one trailing newline. It refuses a file that group
// or others may read or write, and a secret shorter than MinSecretLen.
func ReadSecretFile(path string) ([]byte, error) {
	if path == "" {
		return nil, errors.New("-secret-file is required with -serve and -remote: make one with " +
			"`head -c 32 /dev/urandom | base64 > bench.secret; chmod 600 bench.secret` and copy it to both hosts")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("-secret-file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("-secret-file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("-secret-file %s is open to group or others (mode %04o): run chmod 600 %s", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-secret-file: %w", err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) < MinSecretLen {
		return nil, fmt.Errorf("the secret in %s is %d bytes; give at least %d (e.g. `head -c 32 /dev/urandom | base64 > %s; chmod 600 %s`)",
			path, len(b), MinSecretLen, path, path)
	}
	return b, nil
}
