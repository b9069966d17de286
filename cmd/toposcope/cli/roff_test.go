package cli

import (
	"bytes"
	"testing"
)

// TestRoffText: text reaches the page as text, never as a roff request
// or escape, with paragraphs, indented blocks and `code` kept.
func TestRoffText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, in, want string }{
		{"plain", "one line", "one line\n"},
		{"paragraphs", "a\n\nb", "a\n.PP\nb\n"},
		{"leading dot", ".conf files\n'quoted", "\\&.conf files\n\\&'quoted\n"},
		{"backslash and hyphen", `C:\dir --flag`, `C:\edir \-\-flag` + "\n"},
		{"code", "see `toposcope engines` and `x`", "see \\fBtoposcope engines\\fR and \\fBx\\fR\n"},
		{"unpaired backtick", "a ` b", "a ` b\n"},
		{"indented block", "Run:\n  toposcope serve\n  toposcope status\nDone.", "Run:\n.nf\n  toposcope serve\n  toposcope status\n.fi\nDone.\n"},
		{"block then blank", "x\n  y\n\nz", "x\n.nf\n  y\n.fi\n.PP\nz\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			roffText(&b, tt.in)
			if b.String() != tt.want {
				t.Errorf("roffText(%q) =\n%q\nwant\n%q", tt.in, b.String(), tt.want)
			}
		})
	}
}
