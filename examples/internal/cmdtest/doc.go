// Package cmdtest runs an example command from its own package's tests as
// a user would run it: as root or as an unprivileged user, with its real
// flags, its exit code and its output, without a separate go build.
//
// The test binary stands in for the command. In the package's TestMain,
// Main runs the command's main instead of the tests when the binary was
// started by Run; Run copies the binary where any user can read it and
// starts it with the command's arguments:
//
//	func TestMain(m *testing.M) { cmdtest.Main(m, main) }
//
//	func TestUnprivileged(t *testing.T) {
//		cmdtest.NeedUnprivileged(t)
//		dir := cmdtest.OpenDir(t, cmdtest.Nobody)
//		r := cmdtest.Run(t, cmdtest.Nobody, dir, "-profiles", "20:10")
//		cmdtest.SkipIfNoUserNS(t, r)
//		if r.Code != 0 { t.Errorf("exit %d: %s", r.Code, r.Stderr) }
//	}
//
// It is for tests only; nothing else imports it.
package cmdtest
