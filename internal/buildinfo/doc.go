// Package buildinfo says which code the running process is, for records
// that must say what made them: the main module, its version, the Go
// version, and the commit the code was built from, with where that commit
// came from.
//
// The Go toolchain stamps the commit into a binary it builds from a
// version-control checkout (go build, go install), but not into one
// built by go run or go test, nor with -buildvcs=false. For those, Read
// finds the source directory the code was compiled from (the path the
// compiler recorded for this package, when it was not built with
// -trimpath), checks that it is the main module's, and asks git there
// for HEAD and whether tracked files differ from it ("+dirty"). Git is
// asked once per process, never again: Read caches its answer.
//
// Info.CommitSource says which way the commit was found: "buildinfo" (the
// toolchain's stamp) or "git" (the source directory's HEAD when the
// process asked, which is the code that ran for go run and go test, and
// may not be for a binary built earlier from a tree that has since moved).
// When neither works, Commit is empty and CommitMissing says why.
//
// Use:
//
//	info := buildinfo.Read()
//	fmt.Println(info.Commit, info.CommitSource)
package buildinfo
