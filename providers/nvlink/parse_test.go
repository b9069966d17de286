package nvlink

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

const gb200UUID = "7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab"

func TestParseFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file    string
		gpus    int
		domain  string // "" for none
		rack    string
		pending int
		err     error
		msg     string
		failed  int
	}{
		{"gb200-query.txt", 4, gb200UUID + ".32766", "1825024170029", 0, nil, "", 0},
		{"gb200-565-rack-query.txt", 4, gb200UUID + ".32766", "1825024170029", 0, nil, "", 0},
		{"gb200-insufficient-query.txt", 4, "", "", 0, nil, "", 4},
		{"gb200.csv", 4, gb200UUID + ".32766", "", 0, nil, "", 0},
		{"gb200-header.csv", 4, gb200UUID + ".32766", "", 0, nil, "", 0},
		{"gb200-old-driver-query.txt", 4, gb200UUID + ".32766", "", 0, nil, "", 0},
		{"gb200-one-pending-query.txt", 4, gb200UUID + ".32766", "1825024170029", 1, nil, "", 0},
		{"h100-query.txt", 2, "", "", 0, nil, "", 0},
		{"h100.csv", 8, "", "", 0, nil, "", 0},
		{"pcie-query.txt", 2, "", "", 0, nil, "", 0},
		{"pcie.csv", 2, "", "", 0, nil, "", 0},
		{"not-supported.csv", 1, "", "", 0, nil, "", 0},
		{"no-fabric-section-query.txt", 1, "", "", 0, nil, "", 0},
		{"gb200-in-progress-query.txt", 0, "", "", 0, ErrFabricNotReady, `GPU 00000008:01:00.0 state "In Progress" status "N/A"`, 0},
		{"gb200-mixed.csv", 0, "", "", 0, ErrMixedCliques, gb200UUID + ".32766, " + gb200UUID + ".17", 0},
		{"gb200-truncated-query.txt", 0, "", "", 0, ErrSyntax, "4 GPUs attached but 2 GPU sections", 0},
		{"garbled.csv", 0, "", "", 0, ErrSyntax, "csv line 2: want 2 fields", 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			gpus, err := Parse(data, FormatAuto)
			var h Host
			if err == nil {
				h, err = Summarize(gpus)
			}
			if tt.err != nil {
				if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("error %v, want %v with %q", err, tt.err, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			domain := ""
			if h.HasClique {
				domain = h.Clique.String()
			}
			if h.GPUs != tt.gpus || domain != tt.domain || h.Rack != tt.rack || h.Pending != tt.pending || len(h.Failed) != tt.failed {
				t.Errorf("host %+v, want %d GPUs in %q rack %q pending %d failed %d", h, tt.gpus, tt.domain, tt.rack, tt.pending, tt.failed)
			}
		})
	}
}

func TestParseQueryFields(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/gb200-query.txt")
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := ParseQuery(data)
	if err != nil {
		t.Fatal(err)
	}
	g := gpus[2]
	if g.BusID != "00000018:01:00.0" || g.State != "Completed" || g.Status != "Success" || !g.HasClique ||
		g.Clique.ID != 32766 || g.ChassisSerial != "1825024170029" {
		t.Errorf("GPU 2 = %+v", g)
	}
	if _, err := Parse(data, FormatCSV); !errors.Is(err, ErrSyntax) {
		t.Errorf("-q output read as CSV: %v", err)
	}
	if _, err := ParseQuery([]byte("hello\n")); !errors.Is(err, ErrSyntax) {
		t.Errorf("not -q output: %v", err)
	}
	none, err := ParseQuery([]byte("Attached GPUs : 0\n"))
	if err != nil || len(none) != 0 {
		t.Errorf("no GPU: %v %v", none, err)
	}
}

func TestParseCliqueLabel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{gb200UUID + ".32766", gb200UUID + ".32766", true},
		{"7C1C6F5C1A2B4C3D8E9F0123456789AB.1", gb200UUID + ".1", true},
		{" " + gb200UUID + ".0 ", gb200UUID + ".0", true},
		{gb200UUID, "", false},
		{gb200UUID + ".x", "", false},
		{gb200UUID + ".4294967296", "", false},
		{"7c1c6f5c.1", "", false},
		{"zzzzzzzz-1a2b-4c3d-8e9f-0123456789ab.1", "", false},
	}
	for _, tt := range tests {
		c, err := ParseCliqueLabel(tt.in)
		if tt.ok != (err == nil) || tt.ok && c.String() != tt.want {
			t.Errorf("ParseCliqueLabel(%q) = %v, %v; want %q", tt.in, c, err, tt.want)
		}
		if err != nil && !errors.Is(err, ErrSyntax) {
			t.Errorf("error %v is not ErrSyntax", err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"gb200-query.txt", "gb200.csv", "pcie-query.txt", "h100.csv"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		gpus, err := Parse(data, FormatAuto)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v is not ErrSyntax", err)
			}
			return
		}
		h, err := Summarize(gpus)
		if err == nil && h.HasClique {
			if _, err := ParseCliqueLabel(h.Clique.String()); err != nil {
				t.Fatalf("domain %q does not parse back: %v", h.Clique, err)
			}
		}
	})
}

// TestParseQuerySaved: -q output as people save it (a byte-order mark,
// CRLF line ends, the shell prompt and command before it and a prompt
// after it) reads as the output itself does.
func TestParseQuerySaved(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/gb200-query.txt")
	if err != nil {
		t.Fatal(err)
	}
	clean, err := Parse(data, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	saved := "\ufeffroot@gb01:~# nvidia-smi -q\r\n" + strings.ReplaceAll(string(data), "\n", "\r\n") + "root@gb01:~# "
	got, err := Parse([]byte(saved), FormatAuto)
	if err != nil {
		t.Fatalf("saved output: %v", err)
	}
	if fmt.Sprint(got) != fmt.Sprint(clean) {
		t.Errorf("saved output = %+v\nwant %+v", got, clean)
	}
}
