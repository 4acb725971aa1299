// Package picture measures the picture a live SPICE session's display
// workload got: the workload's distinct frames in spicy's window against
// the drawings over it on Xspice's screen, and how the display channel
// sent them.
//
// Each role watches the workload's region with a Watch: the server by
// DAMAGE alone on Xspice's screen (WatchServer; reading that screen back
// stalls its X server), the client by DAMAGE and reading spicy's window
// back (WatchClient), each writing a FrameCapture. The server role puts
// the layout the client maps into spicy's window with WriteLayout.
// Analyse reads the two captures and the client end's trace into a
// PictureRecord; GoodPicture is the rule a picture is judged by.
//
// Use, after a run, with the two roles' captures (ClientPictureFile and
// ServerPictureFile in its directory) and its client trace:
//
//	var client, server picture.FrameCapture
//	workload := spicetrace.Rect{Left: 492, Right: 1012, Bottom: 560}
//	p, err := picture.Analyse(client, server, clientTrace, workload, from, to)
//	if err != nil { ... }
//	fmt.Println(p.ClientFPS, picture.GoodPicture(p.ClientFPS, 25))

package picture
