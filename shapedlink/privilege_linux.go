package shapedlink

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/shakenfist/quicbench/internal/proc"
)

// envReexeced marks a process that Reexec started inside its own user
// namespace, so it never re-executes again.
const envReexeced = "QUICBENCH_SHAPEDLINK_USERNS"

const (
	capNetAdmin = 12
	capSysAdmin = 21
)

// privilege is what this process may do with network namespaces.
type privilege struct {
	initialUserNS bool // the host's user namespace
	euid          int
	netAdmin      bool // CAP_NET_ADMIN effective
	sysAdmin      bool // CAP_SYS_ADMIN effective (needed to unshare a netns)
}

func currentPrivilege() (privilege, error) {
	p := privilege{euid: os.Geteuid()}
	m, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return p, fmt.Errorf("shapedlink: reading /proc/self/uid_map: %w", err)
	}
	f := strings.Fields(string(m))
	p.initialUserNS = len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295"
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return p, fmt.Errorf("shapedlink: reading /proc/self/status: %w", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return p, fmt.Errorf("shapedlink: parsing CapEff %q: %w", v, err)
			}
			p.netAdmin = caps&(1<<capNetAdmin) != 0
			p.sysAdmin = caps&(1<<capSysAdmin) != 0
		}
	}
	return p, nil
}

func (p privilege) canBuild() bool { return p.netAdmin && p.sysAdmin }

func (p privilege) mode() Mode {
	switch {
	case !p.canBuild():
		return ""
	case p.initialUserNS:
		return ModeRoot
	default:
		return ModeUnprivileged
	}
}

func resolveMode(want Mode) (Mode, error) {
	p, err := currentPrivilege()
	if err != nil {
		return "", err
	}
	have := p.mode()
	switch want {
	case ModeAuto:
		if have == "" {
			return "", fmt.Errorf("%w (euid %d, no CAP_SYS_ADMIN and CAP_NET_ADMIN); run as root, or call shapedlink.Reexec() "+
				"first thing in main so the process re-executes itself in a user and network namespace of its own%s",
				ErrNoPrivilege, p.euid, userNSDiagnosis())
		}
		return have, nil
	case ModeRoot:
		if have != ModeRoot {
			return "", fmt.Errorf("%w in root mode: the process is not root in the host's user namespace "+
				"(euid %d, initial user namespace %v); run it as root or use ModeUnprivileged with shapedlink.Reexec",
				ErrNoPrivilege, p.euid, p.initialUserNS)
		}
		return ModeRoot, nil
	case ModeUnprivileged:
		if have != ModeUnprivileged {
			return "", fmt.Errorf("%w in unprivileged mode: the process is not inside a user namespace of its own "+
				"with CAP_SYS_ADMIN and CAP_NET_ADMIN; call shapedlink.Reexec() first thing in main%s",
				ErrNoPrivilege, userNSDiagnosis())
		}
		return ModeUnprivileged, nil
	}
	return "", fmt.Errorf("shapedlink: unknown mode %q; use %q, %q or leave it empty to choose automatically", want, ModeRoot, ModeUnprivileged)
}

// userNSDiagnosis names the host settings that stop unprivileged user
// namespaces, if any is set that way.
func userNSDiagnosis() string {
	var why []string
	if v, err := readSysctl("user/max_user_namespaces"); err == nil && v == "0" {
		why = append(why, "user.max_user_namespaces is 0 (sysctl -w user.max_user_namespaces=15000 enables them)")
	}
	if v, err := readSysctl("kernel/unprivileged_userns_clone"); err == nil && v == "0" {
		why = append(why, "kernel.unprivileged_userns_clone is 0 (sysctl -w kernel.unprivileged_userns_clone=1 enables them)")
	}
	if v, err := readSysctl("kernel/apparmor_restrict_unprivileged_userns"); err == nil && v == "1" {
		why = append(why, "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1; "+
			"allow this binary with an AppArmor profile granting userns, or set the sysctl to 0)")
	}
	if len(why) == 0 {
		return ""
	}
	return "; note: " + strings.Join(why, "; ")
}

// Reexec makes sure the process can build links without being root. Call
// it first thing in main, before any output you do not want twice.
//
// If the process can already build namespaces, Reexec returns nil.
// Otherwise it re-executes the binary, with the same arguments,
// environment and standard streams, in a new user namespace (uid and gid
// mapped to 0) and network namespace, as `unshare -rn` does; forwards
// SIGINT, SIGTERM and SIGHUP to it; and exits with its status. It returns
// only if the re-execution could not start, saying what to change.
func Reexec() error {
	p, err := currentPrivilege()
	if err != nil {
		return err
	}
	if p.canBuild() {
		return nil
	}
	if os.Getenv(envReexeced) != "" {
		return fmt.Errorf("%w: the process was re-executed into a user namespace but still lacks CAP_SYS_ADMIN and CAP_NET_ADMIN there%s",
			ErrNoPrivilege, userNSDiagnosis())
	}
	exe, err := os.Executable()
	if err != nil {
		exe = "/proc/self/exe"
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Path = "/proc/self/exe"
	cmd.Args = append([]string{os.Args[0]}, os.Args[1:]...)
	cmd.Env = append(os.Environ(), envReexeced+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
		Pdeathsig:                  syscall.SIGKILL,
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	// From the permanent starter thread: the child gets SIGKILL when the
	// thread that forked it exits, and any other thread may be ended by
	// the runtime while this process waits.
	if err := proc.Start(cmd); err != nil {
		signal.Stop(sigs)
		return fmt.Errorf("%w: re-executing %s in a new user and network namespace failed: %v; unprivileged user namespaces may be disabled on this host%s",
			ErrNoPrivilege, exe, err, userNSDiagnosis())
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	code := 0
	if err != nil {
		code = 1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			} else if ee.ExitCode() >= 0 {
				code = ee.ExitCode()
			}
		}
	}
	os.Exit(code)
	return nil
}
