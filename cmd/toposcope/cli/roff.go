package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// manHeader is what every page's .TH line says besides its title.
type manHeader struct {
	date   time.Time
	source string // "toposcope VERSION"
}

// writeManTree writes a page for cmd and for each of its available
// subcommands, recursively, named after the command path
// (toposcope-model-generate.1). Each is written whole or not at all.
func writeManTree(cmd *cobra.Command, h manHeader, dir string) error {
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := writeManTree(c, h, dir); err != nil {
			return err
		}
	}
	name := strings.ReplaceAll(cmd.CommandPath(), " ", "-")
	path := filepath.Join(dir, name+".1")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, manPage(cmd, h), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// manPage renders cmd's page: name, synopsis, description, options,
// inherited options, examples and related commands.
func manPage(cmd *cobra.Command, h manHeader) []byte {
	var b bytes.Buffer
	name := strings.ReplaceAll(cmd.CommandPath(), " ", "-")
	fmt.Fprintf(&b, ".nh\n.TH \"%s\" \"1\" \"%s\" \"%s\" \"User Commands\"\n",
		strings.ToUpper(cmd.Root().Name()), h.date.Format("Jan 2006"), roffEscape(h.source))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roffEscape(name), roffEscape(cmd.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n\\fB%s\\fP\n", roffEscape(cmd.UseLine()))
	desc := cmd.Long
	if desc == "" {
		desc = cmd.Short
	}
	b.WriteString(".SH DESCRIPTION\n")
	roffText(&b, desc)
	if fs := cmd.NonInheritedFlags(); fs.HasAvailableFlags() {
		b.WriteString(".SH OPTIONS\n")
		roffFlags(&b, fs)
	}
	if fs := cmd.InheritedFlags(); fs.HasAvailableFlags() {
		b.WriteString(".SH OPTIONS INHERITED FROM PARENT COMMANDS\n")
		roffFlags(&b, fs)
	}
	if cmd.Example != "" {
		b.WriteString(".SH EXAMPLE\n.EX\n")
		for _, line := range strings.Split(strings.TrimRight(cmd.Example, "\n"), "\n") {
			b.WriteString(roffLine(line))
			b.WriteByte('\n')
		}
		b.WriteString(".EE\n")
	}
	var related []string
	if cmd.HasParent() {
		related = append(related, strings.ReplaceAll(cmd.Parent().CommandPath(), " ", "-"))
	}
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand() {
			related = append(related, strings.ReplaceAll(c.CommandPath(), " ", "-"))
		}
	}
	if len(related) > 0 {
		b.WriteString(".SH SEE ALSO\n")
		for i, r := range related {
			if i > 0 {
				b.WriteString(",\n")
			}
			fmt.Fprintf(&b, "\\fB%s\\fP(1)", roffEscape(r))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// roffFlags lists the visible flags of fs, sorted by name, each as a
// tagged paragraph: "-s, --name=default" and its usage.
func roffFlags(b *bytes.Buffer, fs *pflag.FlagSet) {
	var flags []*pflag.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Deprecated == "" {
			flags = append(flags, f)
		}
	})
	slices.SortFunc(flags, func(a, c *pflag.Flag) int { return strings.Compare(a.Name, c.Name) })
	for _, f := range flags {
		b.WriteString(".TP\n")
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			fmt.Fprintf(b, "\\fB\\-%s\\fP, ", roffEscape(f.Shorthand))
		}
		fmt.Fprintf(b, "\\fB\\-\\-%s\\fP", roffEscape(f.Name))
		if f.Value.Type() == "bool" {
			b.WriteByte('\n')
		} else {
			fmt.Fprintf(b, "=%s\n", roffEscape(fmt.Sprintf("%q", f.DefValue)))
		}
		b.WriteString(roffCode(roffLine(f.Usage)))
		b.WriteByte('\n')
	}
}

// roffCode sets `quoted` words in bold: a command or a value to type.
func roffCode(s string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(s, '`')
		if open < 0 {
			break
		}
		end := strings.IndexByte(s[open+1:], '`')
		if end < 0 {
			break
		}
		b.WriteString(s[:open])
		b.WriteString(`\fB` + s[open+1:open+1+end] + `\fR`)
		s = s[open+1+end+1:]
	}
	b.WriteString(s)
	return b.String()
}

// roffText writes plain text: paragraphs at blank lines, and lines that
// start with spaces (indented examples, lists) kept as they are.
func roffText(b *bytes.Buffer, text string) {
	literal := false
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		indented := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
		switch {
		case strings.TrimSpace(line) == "":
			if literal {
				b.WriteString(".fi\n")
				literal = false
			}
			b.WriteString(".PP\n")
			continue
		case indented && !literal:
			b.WriteString(".nf\n")
			literal = true
		case !indented && literal:
			b.WriteString(".fi\n")
			literal = false
		}
		b.WriteString(roffCode(roffLine(line)))
		b.WriteByte('\n')
	}
	if literal {
		b.WriteString(".fi\n")
	}
}

// roffLine escapes one line of text, so that a leading dot or quote
// is not read as a request.
func roffLine(s string) string {
	s = roffEscape(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffEscape escapes roff's escape character and writes hyphens as
// minus signs (what a reader types in a flag or a command).
func roffEscape(s string) string {
	return strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
}
