package slurm

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/toposcope/toposcope/internal/hostlist"
)

// maxCommentList caps a hostlist quoted in a header comment.
const maxCommentList = 200

// abbreviate joins the first k names and says how many more there are.
func abbreviate(names []string, k int) string {
	if len(names) <= k {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:k], ", ") + ", and " + strconv.Itoa(len(names)-k) + " more"
}

// shortHostlist compresses names for a comment, cut to a readable length.
func shortHostlist(names []string) string {
	s := hostlist.Compress(names)
	if len(s) > maxCommentList {
		cut := strings.LastIndexByte(s[:maxCommentList], ',')
		if cut <= 0 {
			cut = maxCommentList
		}
		s = s[:cut] + ",..."
	}
	return s
}

// header collects the comment lines written at the top of a file.
type header struct {
	lines []string
}

// add appends one comment line; newlines and other control characters
// are replaced so that a comment can never end early.
func (h *header) add(s string) {
	h.lines = append(h.lines, strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return ' '
		}
		return r
	}, s))
}

// write writes the lines as "# " comments.
func (h *header) write(buf *bytes.Buffer) {
	for _, l := range h.lines {
		buf.WriteString("# ")
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
}

// plural returns "n word" with an "s" unless n is 1.
func plural(n int, word string) string {
	s := strconv.Itoa(n) + " " + word
	switch {
	case n == 1:
	case strings.HasSuffix(word, "ch"):
		s += "es"
	default:
		s += "s"
	}
	return s
}

// joinInts writes ints separated by sep.
func joinInts(v []int, sep string) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, sep)
}
