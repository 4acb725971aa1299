package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

// helperArg, first on the test binary's command line, makes it a helper
// (see TestMain) rather than the tests or overlink:
//
//	listen tcp|udp ADDR DELAY  sleep DELAY, listen on ADDR, answer one client "ok"
//	dial tcp|udp ADDR          ask ADDR once; exit 0 on "ok", 7 otherwise
//	send ADDR N SIZE           send N datagrams of SIZE bytes to ADDR
const helperArg = "-overlink-test-helper"

// helper runs the helper that args name and returns its exit status.
func helper(args []string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 7
	}
	switch {
	case len(args) == 4 && args[0] == "listen":
		d, err := time.ParseDuration(args[3])
		if err != nil {
			return fail(err)
		}
		time.Sleep(d)
		if args[1] == "udp" {
			pc, err := net.ListenPacket("udp", args[2])
			if err != nil {
				return fail(err)
			}
			buf := make([]byte, 64)
			_, from, err := pc.ReadFrom(buf)
			if err == nil {
				_, err = pc.WriteTo([]byte("ok\n"), from)
			}
			if err != nil {
				return fail(err)
			}
			return 0
		}
		ln, err := net.Listen("tcp", args[2])
		if err != nil {
			return fail(err)
		}
		c, err := ln.Accept()
		if err != nil {
			return fail(err)
		}
		fmt.Fprintln(c, "ok")
		c.Close()
		return 0
	case len(args) == 3 && args[0] == "dial":
		c, err := net.DialTimeout(args[1], args[2], 10*time.Second)
		if err != nil {
			return fail(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if args[1] == "udp" {
			if _, err := c.Write([]byte("hello\n")); err != nil {
				return fail(err)
			}
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || line != "ok\n" {
			return fail(fmt.Errorf("read %q, %v; want ok", line, err))
		}
		return 0
	case len(args) == 4 && args[0] == "send":
		n, err1 := strconv.Atoi(args[2])
		size, err2 := strconv.Atoi(args[3])
		c, err := net.Dial("udp", args[1])
		if err != nil || err1 != nil || err2 != nil {
			return fail(fmt.Errorf("send %q: %v %v %v", args[1:], err, err1, err2))
		}
		buf := make([]byte, size)
		for range n {
			// An ICMP port unreachable from the other end fails a
			// later write on a connected socket: not the point here.
			_, _ = c.Write(buf)
		}
		return 0
	}
	return fail(fmt.Errorf("unknown helper arguments %q", args))
}
