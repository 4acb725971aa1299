package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/spicetunnel"
	"github.com/shakenfist/quicbench/measure/twohost"
	"github.com/shakenfist/quicbench/transport"
)

// floodChild names the environment variable that makes the test binary the
// server end of TestServerEndOutlivesAFlood: its value is the arguments.
const floodChild = "QUICBENCH_SPICETUNNEL_FLOOD_ARGS"

// floodFiles is the server end's file descriptor limit in the flood test:
// low enough that a few dozen held channels exhaust it.
const floodFiles = 64

func TestMain(m *testing.M) {
	if args := os.Getenv(floodChild); args != "" {
		lim := syscall.Rlimit{Cur: floodFiles, Max: floodFiles}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			os.Stderr.WriteString("setrlimit: " + err.Error() + "\n")
			os.Exit(3)
		}
		os.Exit(run(strings.Fields(args), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// The server end under a file descriptor limit, flooded with channels
// that each hold two descriptors and stay open: accepting fails with
// EMFILE, and the end backs off and goes on listening (it used to close
// its listener and spin, logging about 30 MB/s), logs at a bounded rate,
// and carries a new channel once the flood has gone.
func TestServerEndOutlivesAFlood(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				io.Copy(c, c)
				c.Close()
			}()
		}
	}()
	secretPath := secretFile(t)
	secret, err := twohost.ReadSecretFile(secretPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), floodChild+"=-end server -arm tcp -listen 127.0.0.1:0 -spice "+echo.Addr().String()+
		" -secret-file "+secretPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logged []string
	addr := make(chan string, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logged = append(logged, sc.Text())
			mu.Unlock()
			if m := regexp.MustCompile(`listening for carriers.* addr=(\S+)`).FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var server string
	select {
	case server = <-addr:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the server end did not start listening")
	}
	o := transport.Options{CarrierSecret: secret}
	flood, err := transport.DialCarrier(ctx, transport.ArmTCP, server, o)
	if err != nil {
		t.Fatal(err)
	}
	for range floodFiles {
		ch, err := flood.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ch.Write([]byte("held"))
	}
	time.Sleep(time.Second)
	flood.Close()

	c, err := transport.DialCarrier(ctx, transport.ArmTCP, server, o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	carried := false
	for !carried && ctx.Err() == nil {
		// Until the server end has closed the flood's channels and has
		// descriptors again, a channel may be refused.
		ch, err := c.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ch.Write([]byte("after the flood"))
		ch.CloseWrite()
		ch.SetReadDeadline(time.Now().Add(3 * time.Second))
		back, _ := io.ReadAll(ch)
		ch.Close()
		carried = string(back) == "after the flood"
	}
	if !carried {
		t.Error("no channel was carried after the flood")
	}
	cmd.Process.Signal(os.Interrupt)
	werr := cmd.Wait()
	<-readDone
	mu.Lock()
	defer mu.Unlock()
	t.Logf("the server end's log:\n%s", strings.Join(logged, "\n"))
	if werr != nil {
		t.Errorf("the server end exited with %v; log:\n%s", werr, strings.Join(logged, "\n"))
	}
	if len(logged) > 40 {
		t.Errorf("%d lines of log over the flood, want a bounded few; the first:\n%s", len(logged), strings.Join(logged[:10], "\n"))
	}
	if !strings.Contains(strings.Join(logged, "\n"), "too many open files") {
		t.Errorf("the flood never exhausted the %d descriptors, so the test tested nothing; log:\n%s", floodFiles, strings.Join(logged, "\n"))
	}
	var stats []spicetunnel.ChannelStats
	if err := json.Unmarshal(stdout.Bytes(), &stats); err != nil || stats == nil {
		t.Errorf("the server end's summary %q: %v", stdout.String(), err)
	}
}
