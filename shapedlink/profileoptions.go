package shapedlink

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// OptionsGrammar is the form of the options that may follow the short
// form, each after a comma: [down.|up.]{key=value|...}. OptionsHelp says
// what each key does.
var OptionsGrammar = linkspec.Grammar()

// OptionKeys lists the option keys, in the order Profile.String writes
// them.
func OptionKeys() []string { return linkspec.Keys() }

// OptionsHelp describes every option in a few lines each ("key=form" and
// what it sets), for a command's -h.
func OptionsHelp() string { return linkspec.Help() }

// ProfileUsage is what a command's -h says about profiles.
func ProfileUsage() string {
	return "\nA profile is " + ProfileGrammar + ", e.g. 80:10, 80:10:1 or 20:50,up.rate=5.\n" +
		"The options, each after a comma, as [down.|up.]key=value (down: server to client, up: client to server, neither: both):\n" +
		OptionsHelp()
}

// parseOptions applies the comma-separated options in s to p.
func parseOptions(input string, p *Profile, s string) error {
	seen := map[string]bool{}
	for _, opt := range strings.Split(s, ",") {
		fail := func(reason string) error {
			return &ProfileError{Input: input, Field: "option " + strconv.Quote(opt), Reason: reason}
		}
		name, val, ok := strings.Cut(opt, "=")
		if !ok || name == "" {
			return fail("is not key=value")
		}
		dirs := []Dir{Down, Up}
		key := name
		if d, k, ok := strings.Cut(name, "."); ok {
			switch d {
			case "down":
				dirs = []Dir{Down}
			case "up":
				dirs = []Dir{Up}
			default:
				return fail(fmt.Sprintf("names direction %q; the directions are down (server to client) and up (client to server)", d))
			}
			key = k
		}
		for _, d := range dirs {
			if seen[d.String()+"."+key] {
				return fail(fmt.Sprintf("sets %s for the %s direction twice", key, d))
			}
			seen[d.String()+"."+key] = true
		}
		for _, d := range dirs {
			o := &p.Down
			if d == Up {
				o = &p.Up
			}
			if err := o.Set(key, val); err != nil {
				if errors.Is(err, linkspec.ErrUnknownKey) {
					keys := linkspec.Keys()
					return fail(fmt.Sprintf("has unknown key %q; the keys are %s and %s (each may follow down. or up.)", key, strings.Join(keys[:len(keys)-1], ", "), keys[len(keys)-1]))
				}
				return fail(err.Error())
			}
		}
	}
	return nil
}
