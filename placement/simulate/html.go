package simulate

import (
	"bytes"
	"fmt"
	"html/template"
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

// htmlFigure is one chart and, for a per-policy chart, the numbers
// shown beside it.
type htmlFigure struct {
	SVG    template.HTML
	Report *Report
}

// WriteHTML writes the reports as one self-contained HTML file: the
// numbers table beside the charts that compare the policies (wait
// distribution, largest jobs' waits, occupancy over time), then per
// policy its accounts' delivered ÷ owed over time beside their owed and
// delivered GPU-hours. Charts are inline SVG; the file loads nothing
// else and runs no script. Every report must hold Series.
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
		figs[i].SVG = template.HTML(b.String()) // written by plot, which escapes every text
		if i >= comparedFigures {
			figs[i].Report = p.Reports[i-comparedFigures]
		}
	}
	data := struct {
		Page
		Compared, PerPolicy []htmlFigure
		Preempt, Debug      bool
	}{Page: p, Compared: figs[:comparedFigures], PerPolicy: figs[comparedFigures:],
		Preempt: slices.ContainsFunc(p.Reports, func(r *Report) bool { return r.Preempt || r.DefragAfterSeconds > 0 }),
		Debug:   slices.ContainsFunc(p.Reports, func(r *Report) bool { return r.DebugJobs > 0 })}
	var b bytes.Buffer
	if err := pageTemplate().Execute(&b, data); err != nil {
		return fmt.Errorf("simulate: html: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("simulate: write html: %w", err)
	}
	return nil
}

// pageTemplate parses the page's template.
func pageTemplate() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"dur": dur,
		"pct": func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
		"f2":  func(v float64) string { return fmt.Sprintf("%.2f", v) },
		"f0":  func(v float64) string { return fmt.Sprintf("%.0f", v) },
	}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{{.Title}}</title>
<style>
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
</head>
<body>
<h1>{{.Title}}</h1>
{{with .About}}<p class="about">{{.}}</p>{{end}}
<section id="compared">
<h2>Policies compared</h2>
<div class="row">
<table id="summary">
<caption>Per policy</caption>
<thead><tr><th scope="col">policy</th><th scope="col">jobs</th><th scope="col">multi-node</th><th scope="col">mean leaf span</th><th scope="col">mean LCA level</th><th scope="col">wait p50</th><th scope="col">wait p90</th><th scope="col">largest-job wait</th><th scope="col">occupancy</th><th scope="col">useful GPU-h</th><th scope="col">accounts ≥95%</th><th scope="col">capped delivered/owed</th>{{if .Debug}}<th scope="col">debug p90</th>{{end}}{{if .Preempt}}<th scope="col">preempted</th><th scope="col">redone GPU-h</th>{{end}}</tr></thead>
<tbody>
{{- range .Reports}}
<tr><th scope="row">{{.Policy}}</th><td>{{.Jobs}}</td><td>{{.MultiNodeJobs}}</td><td>{{f2 .MeanLeafSpan}}</td><td>{{f2 .MeanLCALevel}}</td><td>{{dur .WaitP50}}</td><td>{{dur .WaitP90}}</td><td>{{dur .LargestJobWait}} ({{.LargestJobGPUs}} GPUs)</td><td>{{pct .Occupancy}}</td><td>{{f0 .UsefulGPUHours}}</td><td>{{.AccountsAtLeast95}}/{{len .Accounts}}</td><td>{{pct .CappedDeliveredRatio}}</td>{{if $.Debug}}<td>{{dur .DebugWaitP90}}</td>{{end}}{{if $.Preempt}}<td>{{.Preemptions}}</td><td>{{f0 .RedoneGPUHours}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
{{- range .Compared}}
<figure>
{{.SVG}}</figure>
{{- end}}
</div>
</section>
{{- range .PerPolicy}}
<section class="policy" id="policy-{{.Report.Policy}}">
<h2>{{.Report.Policy}}: accounts</h2>
<div class="row">
<figure>
{{.SVG}}</figure>
<table class="accounts">
<caption>Owed and delivered GPU-hours, {{.Report.Policy}}</caption>
<thead><tr><th scope="col">account</th><th scope="col">owed GPU-h</th><th scope="col">delivered GPU-h</th><th scope="col">delivered/owed</th></tr></thead>
<tbody>
{{- range .Report.Accounts}}
<tr><th scope="row">{{.Account}}</th><td>{{f0 .Owed}}</td><td>{{f0 .Delivered}}</td><td>{{f2 .Ratio}}</td></tr>
{{- end}}
</tbody>
</table>
</div>
</section>
{{- end}}
</body>
</html>
`))
}
