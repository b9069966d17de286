// Command testreport reads `go test -json` on its standard input and
// prints what plain `go test` prints (a line per package, the whole
// output of every failed test and package), then the tests that skipped.
// Last it lists the slowest tests, so that a test's time budget can be
// set from what a run took. It exits 1 when a package failed or did not build, and, with
// -fail-on-skip (what `make test` passes when CI=true), when any test
// skipped: in CI every real component must run, never skip.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// event is one line of `go test -json` (test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64 // seconds, on a test's or a package's last event
}

// timed is one top-level test that ended, with how long it ran.
type timed struct {
	pkg, test string
	seconds   float64
}

// skipped is one test that skipped, with the line that says why.
type skipped struct{ pkg, test, reason string }

func main() {
	failOnSkip := flag.Bool("fail-on-skip", false, "exit 1 when any test skipped")
	slowest := flag.Int("slowest", 10, "list this many of the slowest tests (0 for none)")
	flag.Parse()
	code, err := report(os.Stdin, os.Stdout, *failOnSkip, *slowest)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// report copies the summary of the events in r to w, then the slowest
// top-level tests (at most slowest of them), and returns the exit code.
func report(r io.Reader, w io.Writer, failOnSkip bool, slowest int) (int, error) {
	type key struct{ pkg, test string }
	buf := map[key][]string{}
	var skips []skipped
	var times []timed
	failed, events := false, 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Fprintln(w, string(line)) // not an event: go test's own message
			continue
		}
		events++
		k := key{e.Package, e.Test}
		if (e.Action == "pass" || e.Action == "fail") && e.Test != "" && !strings.Contains(e.Test, "/") {
			times = append(times, timed{e.Package, e.Test, e.Elapsed})
		}
		switch e.Action {
		case "output", "build-output":
			buf[k] = append(buf[k], e.Output)
		case "build-fail":
			failed = true
			fmt.Fprint(w, strings.Join(buf[k], ""))
			delete(buf, k)
		case "fail":
			failed = true
			fmt.Fprint(w, strings.Join(buf[k], ""))
			delete(buf, k)
		case "skip":
			if e.Test != "" {
				skips = append(skips, skipped{e.Package, e.Test, reason(buf[k])})
			} else {
				printSummary(w, buf[k])
			}
			delete(buf, k)
		case "pass":
			if e.Test == "" {
				printSummary(w, buf[k])
			}
			delete(buf, k)
		}
	}
	if err := sc.Err(); err != nil {
		return 2, err
	}
	if events == 0 {
		return 1, fmt.Errorf("no test events on standard input (was it go test -json?)")
	}
	printSlowest(w, times, slowest)
	for _, s := range skips {
		fmt.Fprintf(w, "SKIP %s %s: %s\n", s.pkg, s.test, s.reason)
	}
	switch {
	case failed:
		return 1, nil
	case failOnSkip && len(skips) > 0:
		fmt.Fprintf(w, "FAIL: %d tests skipped; with CI=true every test must run\n", len(skips))
		return 1, nil
	}
	return 0, nil
}

// printSlowest writes the n slowest tests of times, slowest first.
func printSlowest(w io.Writer, times []timed, n int) {
	if n <= 0 || len(times) == 0 {
		return
	}
	slices.SortStableFunc(times, func(a, b timed) int {
		switch {
		case a.seconds > b.seconds:
			return -1
		case a.seconds < b.seconds:
			return 1
		}
		return 0
	})
	fmt.Fprintf(w, "slowest tests:\n")
	for _, t := range times[:min(n, len(times))] {
		fmt.Fprintf(w, "  %8.1fs %s %s\n", t.seconds, t.pkg, t.test)
	}
}

// printSummary writes a passing package's "ok" or "no test files" line.
func printSummary(w io.Writer, lines []string) {
	for _, l := range lines {
		if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "?") {
			fmt.Fprint(w, l)
		}
	}
}

// reason is the skip message of a test's output: the lines between its
// "=== RUN" and "--- SKIP" lines, trimmed.
func reason(lines []string) string {
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		out = append(out, t)
	}
	return strings.Join(out, " ")
}
