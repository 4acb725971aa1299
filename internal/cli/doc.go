// Package cli holds the command-line conventions the example commands
// share: a bad command line gets one line on stderr, naming what was
// wrong and pointing to -h, and exit status 2; -h prints the usage and
// exits 0.
//
//	fs := flag.NewFlagSet("mycmd", flag.ContinueOnError)
//	n := fs.Int("n", 1, "how many")
//	if err := cli.Parse(fs, os.Args[1:]); err != nil {
//		os.Exit(cli.Exit(os.Stderr, "mycmd", err))
//	}
//	if *n < 1 {
//		os.Exit(cli.Exit(os.Stderr, "mycmd", fmt.Errorf("-n %d: give at least 1", *n)))
//	}
package cli
