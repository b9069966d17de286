package infiniband

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/providers"
)

// TestParseSavedOutput: ibnetdiscover output as people save it parses to
// the same fabric as the clean output: a byte-order mark, CRLF line
// ends, a terminal log's banner and a message of ibnetdiscover on stderr
// before the first record, a shell prompt after the last (without a
// line end), and node lines whose tabs a terminal dropped. The lines
// left out are listed.
func TestParseSavedOutput(t *testing.T) {
	t.Parallel()
	example := readTestdata(t, "example.out")
	clean, err := Parse(strings.NewReader(example), "clean")
	if err != nil {
		t.Fatal(err)
	}
	tabless := strings.NewReplacer("Switch\t", "Switch", "Ca\t", "Ca  ", "\t\t#", "#").Replace(example)
	tests := []struct {
		name    string
		text    string
		skipped []int
	}{
		{"BOM and CRLF", "\ufeff" + strings.ReplaceAll(example, "\n", "\r\n"), nil},
		{"stderr line first", "src/query_smp.c:195; umad (DR path slid 0; dlid 0; 0,1,1,31 Attr 0x11:0) bad status 110; Connection timed out\n" + example, []int{1}},
		{"terminal log: banner, prompt, CRLF, tabs lost",
			"=~=~=~=~= PuTTY log 2021.06.15 12:06:05 =~=~=~=~=\r\n\r\r\n" + strings.ReplaceAll(tabless, "\n", "\r\n") + "\rhead-01 [ mgmt ] (config) # ",
			[]int{1, strings.Count(example, "\n") + 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			topo, err := Parse(strings.NewReader(tc.text), "saved")
			if err != nil {
				t.Fatalf("Parse = %v", err)
			}
			if !slices.Equal(topo.Skipped, tc.skipped) {
				t.Errorf("skipped lines %v, want %v", topo.Skipped, tc.skipped)
			}
			if len(topo.Nodes) != len(clean.Nodes) {
				t.Fatalf("%d nodes, want %d", len(topo.Nodes), len(clean.Nodes))
			}
			for i, n := range topo.Nodes {
				c := clean.Nodes[i]
				if n.GUID != c.GUID || n.Description != c.Description || len(n.Links) != len(c.Links) {
					t.Errorf("node %d = %s %q %d links, want %s %q %d links", i, FormatGUID(n.GUID), n.Description, len(n.Links),
						FormatGUID(c.GUID), c.Description, len(c.Links))
				}
			}
		})
	}
}

// TestParseForeignLines: a line that belongs to no record is an error
// naming its line when a record follows it, and a file with no record
// at all is refused naming its first line.
func TestParseForeignLines(t *testing.T) {
	t.Parallel()
	example := readTestdata(t, "example.out")
	lines := strings.Split(example, "\n")
	mid := len(lines) / 2
	for mid < len(lines) && lines[mid] != "" {
		mid++ // a blank line between two records
	}
	inside := strings.Join(lines[:mid], "\n") + "\nuser@head:~$ ibnetdiscover\n" + strings.Join(lines[mid:], "\n")
	_, err := Parse(strings.NewReader(inside), "pasted")
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrSyntax) || pe.Line != mid+1 || !strings.Contains(err.Error(), "records follow it") {
		t.Errorf("a foreign line between records: %v, want a syntax error at line %d", err, mid+1)
	}
	_, err = Parse(strings.NewReader("\nnothing here\nat all\n"), "notes")
	if !errors.As(err, &pe) || !errors.Is(err, ErrSyntax) || pe.Line != 2 {
		t.Errorf("no record at all: %v, want a syntax error at line 2", err)
	}
}

// TestParseIbdiagnetHeader: ibdiagnet writes the system image GUID in
// switchguid=; the Switch line's node GUID is taken. A header naming
// another node that is not its system image is still refused.
func TestParseIbdiagnetHeader(t *testing.T) {
	t.Parallel()
	const rec = "vendid=0x2c9\ndevid=0xd2f0\nsysimgguid=0xb8cef603008fbe36\nswitchguid=0xb8cef603008fbe36(b8cef603008fbe36)\n" +
		"Switch\t41 \"S-b8cef6030019c882\"\t\t# \"MF0;leaf-01:MQM8700/U1\" enhanced port 0 lid 3 lmc 0\n"
	topo, err := Parse(strings.NewReader(rec), "ibdiagnet2.ibnetdiscover")
	if err != nil {
		t.Fatalf("Parse = %v", err)
	}
	if n, ok := topo.Node(0xb8cef6030019c882); !ok || n.SysImageGUID != 0xb8cef603008fbe36 {
		t.Errorf("node = %+v, %v", n, ok)
	}
	other := strings.Replace(rec, "switchguid=0xb8cef603008fbe36(b8cef603008fbe36)", "switchguid=0xb8cef603008fbe99(b8cef603008fbe99)", 1)
	if _, err := Parse(strings.NewReader(other), "x"); !errors.Is(err, ErrInconsistent) {
		t.Errorf("a header of another node = %v, want ErrInconsistent", err)
	}
}

// TestDiscoverWarnsOfSkippedLines: the lines left out are named in one
// warning, and the fabric is the clean output's.
func TestDiscoverWarnsOfSkippedLines(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	text := "ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0)\n" + exampleOutput + "\n$ exit\n"
	p, err := New(Config{OutputText: text, Timeout: time.Minute, NamingRules: NamingRules{HostPattern: DefaultHostPattern}, SwitchIDs: SwitchIDsGUID},
		providers.Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatalf("Discover = %v", err)
	}
	want := fmt.Sprintf(`count=2 lines="1, %d"`, strings.Count(exampleOutput, "\n")+3)
	if len(g.Nodes()) == 0 || strings.Count(logs.String(), "belong to no record") != 1 || !strings.Contains(logs.String(), want) {
		t.Errorf("%d nodes; log should hold one warning with %s:\n%s", len(g.Nodes()), want, logs.String())
	}
}
