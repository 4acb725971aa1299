package shapedlink

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestHostState(t *testing.T) {
	l := newTestLink(t, "80:10:1", BackendEmulator)
	hs, err := l.Instruments().HostState()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", hs)
	var uts unix.Utsname
	unix.Uname(&uts)
	if hs.KernelRelease != unix.ByteSliceToString(uts.Release[:]) || hs.KernelRelease == "" {
		t.Errorf("KernelRelease = %q", hs.KernelRelease)
	}
	if len(hs.TCPAvailableCongestionControl) == 0 || !slices.Contains(hs.TCPAvailableCongestionControl, hs.TCPCongestionControl) {
		t.Errorf("default congestion control %q not among the available %q", hs.TCPCongestionControl, hs.TCPAvailableCongestionControl)
	}
	for name, v := range map[string]string{"tcp_rmem": hs.TCPRmem, "tcp_wmem": hs.TCPWmem} {
		if len(strings.Fields(v)) != 3 {
			t.Errorf("%s = %q, want three numbers", name, v)
		}
	}
	if hs.TCPNotsentLowat == "" {
		t.Error("TCPNotsentLowat is empty")
	}
	// A new namespace starts at the kernel's default; a difference between
	// the ends is spelled out.
	if hs.TCPECN != "2" {
		t.Errorf("TCPECN = %q in two fresh namespaces, want the kernel's default 2", hs.TCPECN)
	}
	if err := l.Client().Do(func() error { return os.WriteFile("/proc/sys/net/ipv4/tcp_ecn", []byte("1"), 0) }); err != nil {
		t.Fatal(err)
	}
	if hs, _ := l.Instruments().HostState(); hs.TCPECN != "server 2, client 1" {
		t.Errorf("TCPECN = %q with the client at 1, want it to name both ends", hs.TCPECN)
	}
	if hs.NetemAvailable != l.netemAvailable || hs.Backend != BackendEmulator || hs.Profile != "80:10:1" || hs.Limit != 110 {
		t.Errorf("link fields wrong: %+v", hs)
	}
	if len(hs.Offload) != 4 || len(hs.Applied) != 2 {
		t.Errorf("Offload %v, Applied %v", hs.Offload, hs.Applied)
	}
	if len(hs.EmulatorSeeds) != 2 || hs.EmulatorSeeds[0] != 42 {
		t.Errorf("EmulatorSeeds = %v, want the configured seed 42 first", hs.EmulatorSeeds)
	}
	if hs.GoVersion == "" || hs.Module == "" {
		t.Errorf("build info missing: module %q go %q", hs.Module, hs.GoVersion)
	}
	// go test stamps no commit: the record still says which code ran
	// (asked of git in the source directory), or why it cannot.
	var rec map[string]any
	b, _ := json.Marshal(hs)
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	commit, _ := rec["commit"].(string)
	missing, _ := rec["commit_missing"].(string)
	if commit == "" && missing == "" {
		t.Errorf("the host state records no commit and no reason for its absence: %s", b)
	}
	if _, err := exec.LookPath("git"); err == nil && commit != "" && rec["commit_source"] != "git" {
		t.Errorf("under go test the commit %q comes from %v, want git", commit, rec["commit_source"])
	}
}

func TestOptionErrors(t *testing.T) {
	needNamespaces(t)
	p, _ := ParseProfile("80:10")
	ctx := context.Background()
	if _, err := New(ctx, p, Options{Backend: "tc"}); err == nil || !strings.Contains(err.Error(), "unknown backend") {
		t.Errorf("backend \"tc\": %v", err)
	}
	if _, err := New(ctx, p, Options{Mode: "sudo"}); err == nil || !strings.Contains(err.Error(), "unknown mode") {
		t.Errorf("mode \"sudo\": %v", err)
	}
	if _, err := New(ctx, p.WithLoss(100), Options{}); err == nil || !strings.Contains(err.Error(), "loss_pct") {
		t.Errorf("loss 100: %v", err)
	}
	if priv, _ := currentPrivilege(); priv.mode() == ModeRoot {
		if _, err := New(ctx, p, Options{Mode: ModeUnprivileged}); !errors.Is(err, ErrNoPrivilege) || !strings.Contains(err.Error(), "Reexec") {
			t.Errorf("unprivileged mode as host root: %v, want ErrNoPrivilege naming Reexec", err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := New(cctx, p, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}
