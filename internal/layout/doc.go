// Command layout prints the figures the project's layout rules are
// judged by (issue 57), so that docs can quote them with a command anyone
// can run. From the module root:
//
//	go run ./internal/layout                       # the whole report
//	go run ./internal/layout -json                 # the same, as JSON
//	go run ./internal/layout -files ./shapedlink   # one package's files on floors
//	go run ./internal/layout -check internal/layout/known.txt
//	go run ./internal/layout -known > internal/layout/known.txt
//
// It lists the module's packages with the go command, then parses and
// type-checks their non-test files for the host system, and those of
// the nested modules that require it (other packages are read from the
// compiler's export data). It reports:
//
//   - Per package: its non-test .go files (every system's) and their
//     lines, flagging a package under measure/ with more than 15; its
//     import floor (1 for a package that imports none of the module's,
//     else one above the highest it imports).
//   - Exported names no other package uses: top-level names and methods
//     of exported types, declared in a library's non-generated files,
//     that no other package's non-test code (commands under examples/
//     and internal/ included) refers to. A type also counts as used when
//     a value of it shows in other packages' code, or when it is part of
//     something used (a parameter, result, exported field or variable's
//     type), and so do an alias of a used type (how a user names one
//     declared in an internal package) and a constant of a used named
//     type (a value of an enumeration in the API). A method counts as
//     used when it completes an interface declared or used in the
//     module, error, one package errors asserts for (Unwrap, Is, As),
//     or a standard one (fmt.Stringer, flag.Value, json.Marshaler,
//     io.Writer, sort.Interface and the rest of stdInterfaces). The non-test code
//     of modules nested in the module's tree that require it (their own
//     go.mod, as deploy/k8s) counts too. Tests count in two cases: for
//     a package only tests import (a test helper: no non-test code
//     imports it but other such packages'), whose names other packages'
//     tests use; and for a package code outside the module can import
//     (no internal element in its path), whose names its own Examples
//     use, as go doc shows them (a file of one Example, other
//     declarations and no tests is shown whole): a library's API is what
//     its Examples show, and so are the types that API takes and
//     returns. Else tests never
//     count: the report notes a name only other packages' tests use, or
//     only its own Examples (in an internal package) or package comment
//     name.
//   - Comment blocks (comments with no blank line between them) of 15
//     lines or more in any .go file but doc.go and generated files (an
//     Example's expected output is not one), by file, line, length and
//     the declaration they document or sit in.
//   - Functions and methods of more than 100 lines (from func to the
//     closing brace) in non-test, non-generated files, every system's.
//   - Rooms: for the module root and each directory with two or more,
//     each subdirectory holding packages is a room (the directory's own
//     package is room "."); a room stands above the rooms its packages
//     import, and imports that run back up are counted.
//   - Files: inside each package, a file stands above the files that
//     declare the top-level names and methods it uses; arrows are pairs
//     of files, and those that must run back up (the files use each
//     other in a circle) are the fewest any order allows: exact for
//     circles of up to 23 files, else a greedy order improved by moves.
//
// -check compares the violations with a committed list, one a line:
//
//	files PKG N             a package under measure/ with N > 15 files
//	unused PKG NAME         an exported name nothing outside PKG uses
//	comment FILE@ANCHOR N   a comment block of N lines outside doc.go
//	long FILE@FUNC N        a function of N > 100 lines
//	imports-up DIR N        N imports between DIR's rooms running back up
//
// and exits 1 naming each violation not in it, or larger than it says (a
// ratchet: known ones may go, new ones fail). Files running back up
// inside a package are reported, not checked.
package main
