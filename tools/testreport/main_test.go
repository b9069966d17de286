package main

import (
	"strings"
	"testing"
)

const (
	passing = `{"Action":"run","Package":"p/a","Test":"TestOK"}
{"Action":"output","Package":"p/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"p/a","Test":"TestOK","Elapsed":0.5}
{"Action":"output","Package":"p/a","Output":"PASS\n"}
{"Action":"output","Package":"p/a","Output":"ok  \tp/a\t0.01s\n"}
{"Action":"pass","Package":"p/a"}
`
	skipping = `{"Action":"run","Package":"p/b","Test":"TestReal"}
{"Action":"output","Package":"p/b","Test":"TestReal","Output":"=== RUN   TestReal\n"}
{"Action":"output","Package":"p/b","Test":"TestReal","Output":"    real_test.go:9: no slurmctld\n"}
{"Action":"output","Package":"p/b","Test":"TestReal","Output":"--- SKIP: TestReal (0.00s)\n"}
{"Action":"skip","Package":"p/b","Test":"TestReal","Elapsed":0}
{"Action":"output","Package":"p/b","Output":"ok  \tp/b\t0.02s\n"}
{"Action":"pass","Package":"p/b"}
`
	failing = `{"Action":"run","Package":"p/c","Test":"TestBad"}
{"Action":"output","Package":"p/c","Test":"TestBad","Output":"    bad_test.go:3: want 2, got 3\n"}
{"Action":"output","Package":"p/c","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"p/c","Test":"TestBad","Elapsed":42.25}
{"Action":"output","Package":"p/c","Output":"FAIL\tp/c\t0.01s\n"}
{"Action":"fail","Package":"p/c"}
`
	broken = `{"ImportPath":"p/d","Action":"build-output","Output":"d.go:1:1: syntax error\n"}
{"ImportPath":"p/d","Action":"build-fail"}
{"Action":"output","Package":"p/d","Output":"FAIL\tp/d [build failed]\n"}
{"Action":"fail","Package":"p/d"}
`
)

func TestReport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in   string
		failOnSkip bool
		code       int
		want, not  []string
	}{
		{"pass", passing, true, 0, []string{"ok  \tp/a"}, []string{"=== RUN", "PASS\n"}},
		{"skip outside CI", passing + skipping, false, 0, []string{"ok  \tp/b", "SKIP p/b TestReal: real_test.go:9: no slurmctld"}, nil},
		{"skip in CI", passing + skipping, true, 1, []string{"SKIP p/b TestReal", "1 tests skipped"}, nil},
		{"fail", passing + failing, false, 1, []string{"want 2, got 3", "--- FAIL: TestBad", "FAIL\tp/c",
			"slowest tests:\n      42.2s p/c TestBad\n       0.5s p/a TestOK\n"}, nil},
		{"build failure", broken, false, 1, []string{"syntax error", "[build failed]"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			code, err := report(strings.NewReader(tt.in), &out, tt.failOnSkip, 10)
			if err != nil || code != tt.code {
				t.Fatalf("code %d, err %v; want %d\n%s", code, err, tt.code, out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("output has %q:\n%s", n, out.String())
				}
			}
		})
	}
	if _, err := report(strings.NewReader(""), &strings.Builder{}, false, 10); err == nil {
		t.Error("no events: want an error")
	}
}
