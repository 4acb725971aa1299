package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

// runSelf runs overlink with the arguments args makes from the path of
// the binary it runs (this test binary, which is also the helpers).
func runSelf(t *testing.T, args func(self string) []string) cmdtest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := cmdtest.Command(ctx, t, 0, cmdtest.OpenDir(t, 0))
	cmd.Args = append(cmd.Args, args(cmd.Path)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := cmdtest.Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		r.Code = ee.ExitCode()
	default:
		t.Fatalf("running overlink %q: %v\nstderr:\n%s", cmd.Args, err, r.Stderr)
	}
	return r
}

// TestServerListensLate: a server that listens 1.5 s after it starts
// (longer than the fixed half second overlink used to give it) is waited
// for with the default -server-wait, whether it listens on TCP or UDP,
// and the client, which tries once, reaches it.
func TestServerListensLate(t *testing.T) {
	shapedlinktest.Need(t)
	for _, tc := range []struct{ proto, port string }{{"tcp", "any"}, {"tcp", "tcp:5201"}, {"udp", "udp:5201"}, {"udp", "5201"}} {
		t.Run(tc.proto+"-"+tc.port, func(t *testing.T) {
			r := runSelf(t, func(self string) []string {
				return []string{"-profile", "20:100", "-server-port", tc.port,
					"-server", self + " " + helperArg + " listen " + tc.proto + " 198.18.0.1:5201 1.5s",
					"--", self, helperArg, "dial", tc.proto, "198.18.0.1:5201"}
			})
			if r.Code != 0 {
				t.Errorf("%v\nwant 0: the client reached the server", r)
			}
		})
	}
}

// TestServerListensLatePython is the reproducer as it was reported: a
// python3 web server that starts listening after 1.5 s, and a client
// that fetches one page.
func TestServerListensLatePython(t *testing.T) {
	shapedlinktest.Need(t)
	// The commands run with cmdtest's PATH, not this process's.
	var python string
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		if _, err := os.Stat(filepath.Join(dir, "python3")); err == nil {
			python = filepath.Join(dir, "python3")
			break
		}
	}
	if python == "" {
		t.Skip("python3 is not installed in /usr/bin or /bin (apt-get install python3); TestServerListensLate covers the same with a Go server")
	}
	r := runSelf(t, func(string) []string {
		return []string{"-profile", "20:100",
			"-server", `sh -c 'sleep 1.5; exec python3 -m http.server 8000 --bind "$QB_SERVER_ADDR"'`,
			"--", "python3", "-c", `import urllib.request; urllib.request.urlopen("http://198.18.0.1:8000/", timeout=10).read()`}
	})
	if r.Code != 0 {
		t.Errorf("%v\nwant 0: the client fetched the page", r)
	}
}

// TestServerNeverListens: a server command that does not listen as
// -server-port says within -server-wait ends the run with status 1 and a
// message naming what was waited for, how long, and what to do; the
// client never starts.
func TestServerNeverListens(t *testing.T) {
	shapedlinktest.Need(t)
	for _, tc := range []struct{ port, server, want string }{
		{"tcp:5201", "sleep 300", "the server command did not listen on tcp port 5201 within 2s; raise -server-wait"},
		{"any", "sleep 300", "did not listen on any port (a TCP listener or an unconnected UDP socket) within 2s; raise -server-wait, or check the server's output (each line prefixed \"server: \"), or give -server-port none if it opens no socket"},
		{"udp:5201", "", "did not listen on udp port 5201 within 2s; raise -server-wait, or check the server's output (each line prefixed \"server: \") and -server-port (it listens on tcp port 5201)"},
	} {
		t.Run(tc.port, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "client-ran")
			r := runSelf(t, func(self string) []string {
				server := tc.server
				if server == "" {
					server = self + " " + helperArg + " listen tcp 198.18.0.1:5201 0s"
				}
				return []string{"-profile", "20:100", "-server-port", tc.port, "-server-wait", "2s", "-server", server, "--", "touch", marker}
			})
			if r.Code != 1 || !strings.Contains(r.Stderr, tc.want) {
				t.Errorf("%v\nwant status 1 and %q", r, tc.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the client command ran although the server never listened")
			}
		})
	}
}

// TestServerExitsBeforeListening: a server command that exits before it
// listens ends the run at once with status 1, saying so with its status.
func TestServerExitsBeforeListening(t *testing.T) {
	shapedlinktest.Need(t)
	start := time.Now()
	r := runSelf(t, func(string) []string {
		return []string{"-profile", "20:100", "-server-wait", "100s", "-server", "sh -c 'echo no config; exit 3'", "--", "true"}
	})
	want := `exited with status 3 before it listened on any port`
	if r.Code != 1 || !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, "server: no config") {
		t.Errorf("%v\nwant status 1, the server's output and %q", r, want)
	}
	if took := time.Since(start); took > 50*time.Second {
		t.Errorf("took %v: overlink waited for a server that had exited", took)
	}
}

// TestServerPortNone: -server-port none waits -server-wait and starts the
// client, for a server command that opens no socket.
func TestServerPortNone(t *testing.T) {
	shapedlinktest.Need(t)
	r := runSelf(t, func(string) []string {
		return []string{"-profile", "20:100", "-server-port", "none", "-server-wait", "200ms", "-server", "sleep 300", "--", "sh", "-c", "exit 4"}
	})
	if r.Code != 4 {
		t.Errorf("%v\nwant the client's 4", r)
	}
}
