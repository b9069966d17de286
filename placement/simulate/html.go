package simulate

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"slices"
)

// Page is what WriteHTML writes: a title, a line saying what was
// replayed, and the reports, each run with Options.Samples.
type Page struct {
	Title string
	About string
	// Reports are the policies' reports, in the order to show them.
	Reports []*Report
}

// htmlFigure is one chart (its SVG, written by plot, which escapes every
// text) and, for a per-policy chart, the numbers shown beside it.
type htmlFigure struct {
	SVG    string
	Report *Report
}

// WriteHTML writes the reports as one self-contained HTML file: the
// numbers table beside the charts that compare the policies (wait
// distribution, largest jobs' waits, occupancy over time), then per
// policy its accounts' delivered ÷ owed over time beside their owed and
// delivered GPU-hours. Charts are inline SVG; the file loads nothing
// else and runs no script. Every report must hold Series.
//
// The page is written directly, every text escaped, rather than through
// html/template: a template's run-time method lookup would make the
// linker keep every exported method of every type in the binary.
func WriteHTML(w io.Writer, p Page) error {
	charts, err := Figures(p.Reports)
	if err != nil {
		return err
	}
	figs := make([]htmlFigure, len(charts))
	for i, c := range charts {
		var b bytes.Buffer
		if err := c.WriteSVG(&b); err != nil {
			return err
		}
		figs[i].SVG = b.String()
		if i >= comparedFigures {
			figs[i].Report = p.Reports[i-comparedFigures]
		}
	}
	pw := pageWriter{
		preempt: slices.ContainsFunc(p.Reports, func(r *Report) bool { return r.Preempt || r.DefragAfterSeconds > 0 }),
		debug:   slices.ContainsFunc(p.Reports, func(r *Report) bool { return r.DebugJobs > 0 }),
	}
	pw.head(p)
	pw.compared(p.Reports, figs[:comparedFigures])
	for _, f := range figs[comparedFigures:] {
		pw.policy(f)
	}
	pw.b.WriteString("</body>\n</html>\n")
	if _, err := w.Write(pw.b.Bytes()); err != nil {
		return fmt.Errorf("simulate: write html: %w", err)
	}
	return nil
}

// pageWriter builds the page.
type pageWriter struct {
	b              bytes.Buffer
	preempt, debug bool
}

// printf writes a line whose arguments are escaped.
func (pw *pageWriter) printf(format string, args ...any) {
	for i, a := range args {
		args[i] = html.EscapeString(fmt.Sprint(a))
	}
	fmt.Fprintf(&pw.b, format, args...)
}

const pageStyle = `<style>
body { font-family: sans-serif; margin: 1.5em; color: #222222; }
h1 { font-size: 1.4em; }
h2 { font-size: 1.15em; margin-top: 1.5em; }
.row { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
figure { margin: 0; }
svg.chart { max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #bbbbbb; padding: 0.25em 0.5em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
caption { text-align: left; font-weight: bold; padding-bottom: 0.3em; }
</style>
`

// head writes the document's head, the title and the line about the run.
func (pw *pageWriter) head(p Page) {
	pw.b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
	pw.b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n")
	pw.printf("<title>%s</title>\n", p.Title)
	pw.b.WriteString(pageStyle)
	pw.printf("</head>\n<body>\n<h1>%s</h1>\n", p.Title)
	if p.About != "" {
		pw.printf("<p class=\"about\">%s</p>\n", p.About)
	}
}

// compared writes the policies' table and the charts that compare them.
func (pw *pageWriter) compared(reports []*Report, figs []htmlFigure) {
	pw.b.WriteString("<section id=\"compared\">\n<h2>Policies compared</h2>\n<div class=\"row\">\n<table id=\"summary\">\n<caption>Per policy</caption>\n<thead><tr>")
	cols := []string{"policy", "jobs", "multi-node", "mean leaf span", "mean LCA level", "wait p50", "wait p90", "largest-job wait",
		"occupancy", "useful GPU-h", "accounts ≥95%", "capped delivered/owed"}
	if pw.debug {
		cols = append(cols, "debug p90")
	}
	if pw.preempt {
		cols = append(cols, "preempted", "redone GPU-h")
	}
	for _, c := range cols {
		pw.printf("<th scope=\"col\">%s</th>", c)
	}
	pw.b.WriteString("</tr></thead>\n<tbody>")
	for _, r := range reports {
		pw.printf("\n<tr><th scope=\"row\">%v</th><td>%v</td><td>%v</td><td>%v</td><td>%v</td><td>%v</td><td>%v</td><td>%v (%v GPUs)</td><td>%v</td><td>%v</td><td>%v/%v</td><td>%v</td>",
			r.Policy, r.Jobs, r.MultiNodeJobs, f2(r.MeanLeafSpan), f2(r.MeanLCALevel), dur(r.WaitP50), dur(r.WaitP90),
			dur(r.LargestJobWait), r.LargestJobGPUs, pct(r.Occupancy), f0(r.UsefulGPUHours), r.AccountsAtLeast95, len(r.Accounts), pct(r.CappedDeliveredRatio))
		if pw.debug {
			pw.printf("<td>%s</td>", dur(r.DebugWaitP90))
		}
		if pw.preempt {
			pw.printf("<td>%v</td><td>%v</td>", r.Preemptions, f0(r.RedoneGPUHours))
		}
		pw.b.WriteString("</tr>")
	}
	pw.b.WriteString("\n</tbody>\n</table>")
	for _, f := range figs {
		pw.b.WriteString("\n<figure>\n" + f.SVG + "</figure>")
	}
	pw.b.WriteString("\n</div>\n</section>")
}

// policy writes one policy's accounts chart beside its accounts table.
func (pw *pageWriter) policy(f htmlFigure) {
	r := f.Report
	pw.printf("\n<section class=\"policy\" id=\"policy-%v\">\n<h2>%v: accounts</h2>\n<div class=\"row\">\n<figure>\n", r.Policy, r.Policy)
	pw.b.WriteString(f.SVG + "</figure>\n<table class=\"accounts\">\n")
	pw.printf("<caption>Owed and delivered GPU-hours, %s</caption>\n", r.Policy)
	pw.b.WriteString("<thead><tr><th scope=\"col\">account</th><th scope=\"col\">owed GPU-h</th><th scope=\"col\">delivered GPU-h</th><th scope=\"col\">delivered/owed</th></tr></thead>\n<tbody>")
	for _, a := range r.Accounts {
		pw.printf("\n<tr><th scope=\"row\">%v</th><td>%v</td><td>%v</td><td>%v</td></tr>", a.Account, f0(a.Owed), f0(a.Delivered), f2(a.Ratio))
	}
	pw.b.WriteString("\n</tbody>\n</table>\n</div>\n</section>")
}

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
func f2(v float64) string  { return fmt.Sprintf("%.2f", v) }
func f0(v float64) string  { return fmt.Sprintf("%.0f", v) }
