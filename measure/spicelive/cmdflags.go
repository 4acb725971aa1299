package spicelive

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/shapedlink/linkflag"
	"github.com/shakenfist/quicbench/spicelike"
)

// WriteRecording records the session of workload (xsession.DisplayVideo or
// xsession.DisplayImages) over c.Reference (recordSession), keeps its first span (0 keeps
// it all), names cmdline (the command's arguments) as its source, and
// writes it as <c.Workdir>/<workload>.json.gz: a file for
// spicelike/recordings.
func WriteRecording(ctx context.Context, c Config, workload string, span time.Duration, cmdline []string, log *slog.Logger) (string, *spicelike.Replay, error) {
	rp, err := recordSession(ctx, c, log)
	if err == nil && span > 0 {
		rp, err = rp.Trim(span)
	}
	if err != nil {
		return "", nil, err
	}
	rp.Source = fmt.Sprintf("go run ./examples/spicelive %s: a live session with the %s display workload over %s (tcp arm), keys from its typing, span %v",
		strings.Join(withoutWorkdir(cmdline), " "), workload, c.Reference, rp.Span)
	path := filepath.Join(c.Workdir, workload+".json.gz")
	f, err := os.Create(path)
	if err == nil {
		err = spicelike.WriteReplay(f, rp)
		err = errors.Join(err, f.Close())
	}
	return path, rp, err
}

// withoutWorkdir is args less -workdir and its value.
func withoutWorkdir(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		switch {
		case a == "workdir":
			i++
		case strings.HasPrefix(a, "workdir="):
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// RecordFlags refuses, with -record, a workload that is not one and the
// flags recording does not use.
func RecordFlags(fs *flag.FlagSet, record string, span time.Duration) []error {
	var errs []error
	if record != xsession.DisplayVideo && record != xsession.DisplayImages {
		errs = append(errs, fmt.Errorf("-record %q: want video or images, the display workload to record", record))
	}
	if span < 0 {
		errs = append(errs, fmt.Errorf("-record-span %v: want a positive span, or 0 to keep the whole recording", span))
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "display", "readings", "arms", "losses", "profiles", "repeats", "replay", "control", "pixel", "summary", "samples":
			errs = append(errs, fmt.Errorf("-%s is not used by -record, which records one live session of its workload over -reference: leave it out", f.Name))
		}
	})
	return errs
}

// UnusedFlags refuses the flags given that the mode does not use: more
// than one of -summary, -samples and -verdicts; with one of them every
// other flag but -workdir; with -control the lists it sets itself;
// -reference without the replay reading.
func UnusedFlags(fs *flag.FlagSet, summary, control bool, readings string) []error {
	var errs []error
	modes := 0
	for _, name := range []string{"summary", "samples", "verdicts"} {
		if f := fs.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			modes++
		}
	}
	if modes > 1 {
		errs = append(errs, errors.New("-summary, -samples and -verdicts: give one"))
	}
	fs.Visit(func(f *flag.Flag) {
		switch {
		case f.Name == "summary" || f.Name == "samples" || f.Name == "verdicts" || f.Name == "workdir":
		case summary:
			errs = append(errs, fmt.Errorf("-%s is not used by -summary or -samples, which read -workdir with the settings it was made with: leave it out", f.Name))
		case control && (f.Name == "arms" || f.Name == "losses" || f.Name == "readings" || f.Name == "reference"):
			errs = append(errs, fmt.Errorf("-%s is not used by -control, which runs live sessions on the tcp arm with no loss: leave it out, or drop -control to run the matrix", f.Name))
		case f.Name == "pixel" && !control && !slices.Contains(strings.Fields(readings), ReadingLive):
			errs = append(errs, errors.New("-pixel times the live reading's keys: add live to -readings, or leave -pixel out"))
		case f.Name == "reference" && !control && !slices.Contains(strings.Fields(readings), ReadingReplay):
			errs = append(errs, errors.New("-reference is used by the replay reading only: add replay to -readings, or leave -reference out"))
		}
	})
	return errs
}

// SettingsFlags registers the deployment settings' flags on fs:
// -server-options, -notsent-lowat and -spice-rcvbuf. The function it
// returns puts what was given into a Config, saying what is wrong.
func SettingsFlags(fs *flag.FlagSet) func(*Config) error {
	serverOptions := fs.String("server-options", "", "spice-server settings, space-separated name=value, as Xspice's options of those names: "+
		strings.Join(xsession.ServerOptionNames(), ", ")+" (for example \"streaming-video=all jpeg-wan-compression=always\"); default: spice-server's own")
	notSentLowat := fs.Int("notsent-lowat", 0, "TCP_NOTSENT_LOWAT in bytes on the TCP arms' carrier sockets, at both tunnel ends: how much each lets wait unsent (0: the kernel's default, unbounded)")
	spiceRcvBuf := fs.Int("spice-rcvbuf", 0, "SO_RCVBUF in bytes of the tunnel's connections to spice-server: how much of its output waits unread (0: the kernel's default, autotuned)")
	return func(c *Config) error {
		opts, err := xsession.ParseServerOptions(*serverOptions)
		c.ServerOptions, c.NotSentLowat, c.SpiceRcvBuf = opts, *notSentLowat, *spiceRcvBuf
		return err
	}
}

// ArmsHelp is -arms' help: the arm forms and the settings an arm may carry
// (armSettings).
func ArmsHelp() string {
	h := "arms, space-separated: tcp, tcp-<controller> (tcp-bbr, tcp-quicreno, ...), quic, quic-per-channel, tcp-mux, " +
		"quinn-<controller> (quinn-cubic, quinn-newreno, quinn-bbr: quinn's carrier, docs/quinn.md); " +
		"an arm of the live reading may carry settings after a plus sign (tcp-bbr+defer10+bounded), run beside the arms without them:"
	for _, s := range armSettings {
		h += " +" + s.Name + ", " + s.About + ";"
	}
	return strings.TrimSuffix(h, ";")
}

// SetRecording sets the session the replay reading plays from -replay and
// -record: the display workload's own by default, none (a session
// recorded over Reference) for -replay reference or with -record.
// -replay without the replay reading in readings is an error.
func (c *Config) SetRecording(replay, record, readings string) error {
	replaying := slices.Contains(strings.Fields(readings), ReadingReplay)
	switch {
	case record != "", replay == "reference":
	case replay != "":
		c.Recording = replay
	case c.Display != xsession.DisplayNone && replaying:
		c.Recording = c.Display
	}
	if replay != "" && !replaying {
		return errors.New("-replay is used by the replay reading only: add replay to -readings, or leave -replay out")
	}
	return nil
}

// SetLinkFlags reads linkflag's flags into c with -losses, -arms and
// -readings: the cells, the backend, the seed and the emulator's
// settings. Every problem is reported, each once.
func (c *Config) SetLinkFlags(link *linkflag.Flags, losses, arms, readings string) error {
	o, oerr := link.Options()
	c.Backend, c.Seed = string(o.Backend), o.Seed
	c.KeepAwake, c.KeepAwakeAuto, c.DepartureWindow = o.EmulatorKeepAwake, o.EmulatorKeepAwakeAuto, o.EmulatorDepartureWindow
	profiles := link.ProfileText()
	_, perr := link.Profiles()
	if perr != nil {
		// linkflag has said what is wrong with the profiles; a stand-in
		// lets SetLists check the other lists without saying it again.
		profiles = "80:10"
	}
	return errors.Join(oerr, perr, c.SetLists(profiles, losses, arms, readings))
}

// ControlLists checks the -losses, -arms and -readings given to -control
// (or their environment defaults) and sets them to the control's own: no
// loss, the tcp arm, the live reading.
func ControlLists(losses, arms, readings *string) error {
	_, lerr := parseLosses(*losses)
	_, aerr := parseArms(*arms)
	_, rerr := parseReadings(*readings)
	*losses, *arms, *readings = "0", "tcp", ReadingLive
	return errors.Join(lerr, aerr, rerr)
}
