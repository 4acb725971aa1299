package gorun

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain stands in for a command when the test starts it: it follows
// its parent, says so in a file, and waits to be ended.
func TestMain(m *testing.M) {
	if f := os.Getenv("GORUN_TEST_CHILD"); f != "" {
		goCommand = os.Getenv("GORUN_TEST_PARENT")
		armed := Follow()
		_ = os.WriteFile(f+".tmp", []byte(strconv.Itoa(os.Getpid())+" "+strconv.FormatBool(armed)), 0o644)
		_ = os.Rename(f+".tmp", f)
		time.Sleep(time.Minute)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// A command whose parent is the go command (here a shell under that
// name) ends when its parent is killed with SIGKILL; under a parent of
// another name it is left alone.
func TestFollowEndsWithGoRun(t *testing.T) {
	for _, c := range []struct {
		name string
		ends bool
	}{{"go", true}, {"notgo", false}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sh, err := os.ReadFile("/bin/sh")
			if err != nil {
				t.Skip("no /bin/sh to stand in for go run:", err)
			}
			parent := filepath.Join(dir, c.name)
			if err := os.WriteFile(parent, sh, 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "child")
			cmd := exec.Command(parent, "-c", `"$0" -test.run=^$ & wait`, os.Args[0])
			cmd.Env = append(os.Environ(), "GORUN_TEST_CHILD="+file, "GORUN_TEST_PARENT=go")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var pid int
			var armed string
			for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatal("the child never said it was running")
				}
				if b, err := os.ReadFile(file); err == nil {
					f := strings.Fields(string(b))
					pid, _ = strconv.Atoi(f[0])
					armed = f[1]
				}
			}
			defer syscall.Kill(pid, syscall.SIGKILL)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			gone := false
			wait := 10 * time.Second
			if !c.ends {
				wait = time.Second // long enough to see that it did not end
			}
			for deadline := time.Now().Add(wait); time.Now().Before(deadline) && !gone; time.Sleep(20 * time.Millisecond) {
				gone = syscall.Kill(pid, 0) != nil || zombie(pid)
			}
			if gone != c.ends || armed != strconv.FormatBool(c.ends) {
				t.Errorf("under a parent named %q, killed: the child ended %v (armed %s); want %v", c.name, gone, armed, c.ends)
			}
		})
	}
}

// zombie reports whether pid has ended and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}
