package quicreno

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

//go:generate sh gen.sh

//go:embed quicreno.bpf.o
var object []byte

// Controller is the controller registered in the kernel. It stays
// registered, for every network namespace on the host, until Close.
type Controller struct {
	coll *ebpf.Collection
	link link.Link
	once sync.Once
	err  error
}

// Load registers the controller with p's settings under Name. It needs
// root in the initial user namespace (CAP_BPF, CAP_NET_ADMIN and
// CAP_PERFMON there); a second Load while one is registered fails.
func Load(p Params) (*Controller, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if avail, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control"); err == nil &&
		slices.Contains(strings.Fields(string(avail)), Name) {
		return nil, fmt.Errorf("quicreno: a controller named %q is already registered (another command is running it): "+
			"wait for it to finish, or stop it", Name)
	}
	if err := CheckLoad(); err != nil {
		return nil, err
	}
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(object))
	if err != nil {
		return nil, fmt.Errorf("quicreno: reading the embedded object: %w", err)
	}
	for name, v := range map[string]uint32{
		"init_cwnd": p.InitialWindow, "beta_pct": p.BetaPercent, "min_cwnd": p.MinWindow,
		"hystart": b2u(p.HyStart), "pacing": b2u(p.Pacing), "keep_on_rto": b2u(p.KeepOnRTO), "undo": b2u(p.Undo),
	} {
		sv, ok := spec.Variables[name]
		if !ok {
			return nil, fmt.Errorf("quicreno: the embedded object has no parameter %q: regenerate it with go generate", name)
		}
		if err := sv.Set(v); err != nil {
			return nil, fmt.Errorf("quicreno: setting %s: %w", name, err)
		}
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		return nil, fmt.Errorf("quicreno: loading the controller: %w", explain(err))
	}
	m := coll.Maps[Name]
	if m == nil {
		coll.Close()
		return nil, fmt.Errorf("quicreno: the embedded object has no struct_ops map %q", Name)
	}
	l, err := link.AttachStructOps(link.StructOpsOptions{Map: m})
	if err != nil {
		coll.Close()
		return nil, fmt.Errorf("quicreno: registering the controller: %w", explain(err))
	}
	return &Controller{coll: coll, link: l}, nil
}

// CheckLoad says why Load would be refused here, before anything is
// loaded: not root, not in the initial user namespace, or no BTF.
func CheckLoad() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("quicreno: loading a BPF congestion control needs root (euid is %d): run as root, or choose reno, cubic or bbr", os.Geteuid())
	}
	// The initial user namespace has a fixed inode (PROC_USER_INIT_INO).
	if ns, err := os.Readlink("/proc/self/ns/user"); err != nil || ns != "user:[4026531837]" {
		return errors.New("quicreno: loading a BPF congestion control needs root in the initial user namespace, and this process " +
			"is in another (an unprivileged user namespace, as the commands re-execute into without root): run as root on the host, " +
			"or choose reno, cubic or bbr")
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		return fmt.Errorf("quicreno: this kernel has no BTF (%v), so it cannot load a congestion control written as BPF: "+
			"use a kernel built with CONFIG_DEBUG_INFO_BTF, or choose reno, cubic or bbr", err)
	}
	return nil
}

// explain adds what to do to the kernel's refusals.
func explain(err error) error {
	switch {
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return fmt.Errorf("%w: a BPF congestion control needs root in the initial user namespace "+
			"(not an unprivileged user namespace): run as root, or choose reno, cubic or bbr", err)
	case errors.Is(err, unix.EEXIST):
		return fmt.Errorf("%w: a controller named %q is already registered: wait for the command running it to finish", err, Name)
	case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EINVAL):
		return fmt.Errorf("%w: this kernel does not accept a tcp_congestion_ops struct_ops (needs Linux 6.4 or later with BPF JIT and BTF): "+
			"choose reno, cubic or bbr", err)
	}
	return err
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// Close unregisters the controller. Sockets still using it keep it
// until they close.
func (c *Controller) Close() error {
	c.once.Do(func() {
		c.err = errors.Join(c.link.Close(), func() error { c.coll.Close(); return nil }())
	})
	return c.err
}
