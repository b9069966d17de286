package bounded

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of the excerpt of a failed command's standard error kept for the
// operator: its last ExcerptBytes bytes, of which the last ExcerptLines
// lines.
const (
	ExcerptBytes = 2 << 10
	ExcerptLines = 20
)

// CommandError is returned by Run when the command fails and wrote on
// standard error. Its Error() never quotes that output (a message may
// reach an API caller, who must not read the host's command output); the
// operator's own tools (the CLI, the service log) show Excerpt.
type CommandError struct {
	// Err is how the command ended (an *exec.ExitError, usually).
	Err error
	// StderrBytes is how many bytes it wrote on standard error.
	StderrBytes int64
	// Excerpt is the end of its standard error, at most ExcerptLines
	// lines and ExcerptBytes bytes, control characters escaped and
	// anything that looks like a credential replaced by [redacted].
	Excerpt string
}

// Error implements error; it says how much was written, not what.
func (e *CommandError) Error() string {
	return fmt.Sprintf("%v (%d bytes on standard error, not shown)", e.Err, e.StderrBytes)
}

// Unwrap returns how the command ended.
func (e *CommandError) Unwrap() error { return e.Err }

// Excerpt returns the excerpt of standard error of the failed command in
// err's chain, and false when there is none.
func Excerpt(err error) (string, bool) {
	var ce *CommandError
	if errors.As(err, &ce) && ce.Excerpt != "" {
		return ce.Excerpt, true
	}
	return "", false
}

// tailWriter keeps the last limit bytes written and counts them all.
type tailWriter struct {
	buf   []byte
	limit int
	n     int64
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if len(p) >= w.limit {
		w.buf = append(w.buf[:0], p[len(p)-w.limit:]...)
		return len(p), nil
	}
	if over := len(w.buf) + len(p) - w.limit; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// secretPatterns match what looks like a credential in command output.
// Each keeps its groups and replaces the rest with [redacted].
var secretPatterns = []*regexp.Regexp{
	// key=value, key: value, key "value" for keys that name a secret.
	regexp.MustCompile(`(?i)((?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth(?:orization)?|session|cookie)[A-Za-z0-9_-]*["']?\s*[=:]\s*["']?)[^\s"',;&]+`),
	// Authorization schemes.
	regexp.MustCompile(`(?i)(\b(?:bearer|basic|token)\s+)[A-Za-z0-9._~+/=-]{8,}`),
	// user:password@ in URLs.
	regexp.MustCompile(`(://)[^/\s:@]+:[^/\s@]+(@)`),
	// JSON Web Tokens.
	regexp.MustCompile(`()\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`),
}

// longRun matches long runs of letters and digits: keys and tokens when
// randomLooking says so.
var longRun = regexp.MustCompile(`[A-Za-z0-9_+=-]{32,}`)

// randomLooking reports whether s (32 characters or more) looks like a
// key rather than a word or a host name: mixed-case letters with
// digits, or hexadecimal with digits.
func randomLooking(s string) bool {
	var upper, lower, digit, nonHex bool
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			upper = true
			nonHex = nonHex || r > 'F'
		case r >= 'a' && r <= 'z':
			lower = true
			nonHex = nonHex || r > 'f'
		case r >= '0' && r <= '9':
			digit = true
		default:
			nonHex = true
		}
	}
	return digit && (upper && lower || !nonHex && (upper != lower))
}

// redact replaces what looks like a credential in line.
func redact(line string) string {
	for _, re := range secretPatterns {
		line = re.ReplaceAllString(line, "${1}[redacted]${2}")
	}
	return longRun.ReplaceAllStringFunc(line, func(m string) string {
		if !randomLooking(m) {
			return m
		}
		return "[redacted]"
	})
}

// escapeControl writes control characters (other than tab) and invalid
// UTF-8 as Go escapes, so an excerpt cannot move a terminal's cursor or
// forge a log line.
func escapeControl(line string) string {
	var b strings.Builder
	for i, w := 0, 0; i < len(line); i += w {
		r, size := utf8.DecodeRuneInString(line[i:])
		w = size
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, line[i])
		case r == '\t' || !unicode.IsControl(r) && r != '\u2028' && r != '\u2029':
			b.WriteRune(r)
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}

// excerpt turns the kept end of standard error into the text shown: the
// last ExcerptLines non-empty lines, redacted and escaped; a first line
// cut by the byte limit is marked with "...".
func excerpt(tail []byte, cut bool) string {
	text := strings.ReplaceAll(string(tail), "\r\n", "\n")
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if cut && len(lines) > 0 {
		lines[0] = "..." + lines[0]
	}
	if len(lines) > ExcerptLines {
		lines = lines[len(lines)-ExcerptLines:]
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		out = append(out, escapeControl(redact(l)))
	}
	return strings.Join(out, "\n")
}
