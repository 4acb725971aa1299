// Package shapedlinktest puts a shaped link under a Go test in two lines:
//
//	func TestMain(m *testing.M) { shapedlinktest.Main(m) }
//
//	func TestOverTheLink(t *testing.T) {
//		link := shapedlinktest.New(t, "80:10:1")
//		client := &http.Client{Transport: &http.Transport{DialContext: link.Client().DialContext}}
//		...
//	}
//
// New builds the link from a profile (shapedlink's grammar), closes it when
// the test ends, and fails the test if the link broke while it ran (the
// emulator's shaper process died). Where this machine cannot build links at
// all (not root, and no unprivileged user namespaces), New skips the test
// and says why; a link that fails to build where links can be built fails
// the test.
//
// Main lets an ordinary user run such tests: it re-executes the test
// binary inside a user and network namespace of its own, as a program's
// main does with shapedlink.Reexec, and runs the tests there.
package shapedlinktest
