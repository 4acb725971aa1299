package linkflag_test

import (
	"flag"
	"fmt"
	"io"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/linkflag"
)

// A command with a list of profiles, a backend, an offload mode and a
// seed reads them back as shapedlink values after parsing.
func Example() {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	lf := linkflag.Register(fs, linkflag.Config{
		Flags:    linkflag.Profiles | linkflag.Backend | linkflag.Offload | linkflag.Seed,
		Profiles: "80:10 150:2",
	})
	if err := fs.Parse([]string{"-backend", "emulator", "-offload", "keep", "-seed", "7"}); err != nil {
		fmt.Println(err)
		return
	}
	profiles, err := lf.Profiles()
	if err != nil {
		fmt.Println(err)
		return
	}
	opts, err := lf.Options()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(profiles, opts.Backend, opts.Offload, opts.Seed)
	// Output:
	// [80:10 150:2] emulator keep 7
}

// Every wrong flag is named in one error.
func Example_errors() {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	lf := linkflag.Register(fs, linkflag.Config{Flags: linkflag.LinkOptions | linkflag.Profile, Profiles: "80:10"})
	if err := fs.Parse([]string{"-backend", "tc", "-offload", "gso"}); err != nil {
		fmt.Println(err)
		return
	}
	_, err := lf.Options()
	fmt.Println(err)
	// Output:
	// -backend "tc": want netem, emulator or empty
	// -offload "gso" is not an offload mode: use wire (devices pinned to wire-sized packets, as the bench runs) or keep (the ends keep segmentation offload)
}

// A command whose links keep the kernel's offloads by default says so in
// its Config; the user can still ask for wire-sized packets.
func Example_offloadDefault() {
	for _, args := range [][]string{nil, {"-offload", "wire"}} {
		fs := flag.NewFlagSet("overlink", flag.ContinueOnError)
		lf := linkflag.Register(fs, linkflag.Config{Flags: linkflag.Offload, Offload: shapedlink.OffloadKeep})
		if err := fs.Parse(args); err != nil {
			fmt.Println(err)
			return
		}
		opts, err := lf.Options()
		fmt.Println(opts.Offload, err)
	}
	// Output:
	// keep <nil>
	// wire <nil>
}

// A repeatable -profile replaces its default list with the profiles
// given, one per flag.
func Example_profileList() {
	for _, args := range [][]string{nil, {"-profile", "20:5", "-profile", "80:10:1"}} {
		fs := flag.NewFlagSet("simcheck", flag.ContinueOnError)
		lf := linkflag.Register(fs, linkflag.Config{Flags: linkflag.ProfileList | linkflag.Seed, Profiles: "80:10 150:2", Seed: 1})
		if err := fs.Parse(args); err != nil {
			fmt.Println(err)
			return
		}
		profiles, err := lf.Profiles()
		fmt.Println(profiles, err)
	}
	// Output:
	// [80:10 150:2] <nil>
	// [20:5 80:10:1] <nil>
}

// A command can ask which link flags the user gave, by their names, to
// leave its own choices alone where the user made one.
func ExampleFlags_Given() {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	lf := linkflag.Register(fs, linkflag.Config{Flags: linkflag.LinkOptions | linkflag.Profiles, Profiles: "80:10"})
	if err := fs.Parse([]string{"-seed", "7", "-keep-awake=off"}); err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{linkflag.NameProfiles, linkflag.NameBackend, linkflag.NameMode, linkflag.NameOffload,
		linkflag.NameSeed, linkflag.NameKeepAwake, linkflag.NameDepartureWindow} {
		fmt.Printf("-%s %v\n", name, lf.Given(name))
	}
	fmt.Println("a profile chosen:", lf.ProfileGiven())
	// Output:
	// -profiles false
	// -backend false
	// -mode false
	// -offload false
	// -seed true
	// -keep-awake true
	// -departure-window false
	// a profile chosen: false
}

// A list of profiles as -profiles takes it, outside a flag set: each
// must parse, and each may appear once.
func ExampleParseProfiles() {
	ps, err := linkflag.ParseProfiles("80:10 150:2:1")
	fmt.Println(ps, err)
	_, err = linkflag.ParseProfiles("80:10 150:2:1 80:10")
	fmt.Println(err)
	// Output:
	// [80:10 150:2:1] <nil>
	// -profiles: profile 80:10 is given twice (as 80:10 and 80:10, both read as 80:10): give each once
}
