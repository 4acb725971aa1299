package xwindow

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// Dial connects to the X server of display (":N") in this network
// namespace: through its abstract socket, as Xlib tries first (the
// server's socket file is in a /tmp of its own; startXServer).
func Dial(display string) (*xgb.Conn, error) {
	num, ok := strings.CutPrefix(display, ":")
	if n, _, _ := strings.Cut(num, "."); ok {
		num = n
	}
	if _, err := strconv.Atoi(num); !ok || err != nil {
		return nil, fmt.Errorf("the client's X display %q: want :N", display)
	}
	nc, err := net.Dial("unix", "@/tmp/.X11-unix/X"+num)
	if err != nil {
		return nil, fmt.Errorf("connecting to the client's X server %s through its abstract socket: %w", display, err)
	}
	conn, err := xgb.NewConnNet(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("connecting to the client's X server %s: %w", display, err)
	}
	return conn, nil
}

// CheckFormat refuses pixel formats the watch does not read: it reads
// 24-bit colour at 32 bits a pixel, blue first, as Xvfb's -screen
// WxHx24 has it.
func CheckFormat(setup *xproto.SetupInfo, depth byte) error {
	for _, f := range setup.PixmapFormats {
		if f.Depth == depth && f.BitsPerPixel == 32 && depth >= 24 && setup.ImageByteOrder == xproto.ImageOrderLSBFirst {
			return nil
		}
	}
	return fmt.Errorf("spicy's window has depth %d on a server whose pixel formats are %+v (byte order %d): "+
		"the pixel watch reads 24-bit colour at 32 bits a pixel, least significant byte first (Xvfb -screen 0 WxHx24)",
		depth, setup.PixmapFormats, setup.ImageByteOrder)
}
