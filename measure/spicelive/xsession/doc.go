// Package xsession runs the programs of a live SPICE session: X servers
// (Xspice, Xvfb) and the programs on them (xterms, spicy, the display
// workload's gst-launch-1.0), each in a process group of its own and
// killed with its role; the first of them to die ends the session and
// says which (Deaths). It also has the session's layout (the xterms, the
// workload's window beside them on the Screen), spice-server's settings
// (ParseServerOptions, ServerEnv), the client's wait for the last keys'
// answers (AnswerWatch, WaitAnswers), and which programs and packages are
// missing here (MissingPrograms, DisplayMissing).
//
// Use, in a role:
//
//	dead := xsession.NewDeaths()
//	x, display, err := xsession.StartXServer(ctx, "Xvfb", args, nil, os.Stderr)
//	if err != nil { ... }
//	defer xsession.StopAll([]*xsession.Program{x})
//	dead.Watch(x)
//	win, rect, err := xsession.WindowRect(ctx, display, "spicy")

package xsession
