package ui

import (
	"html/template"
	"strings"
	"time"

	"github.com/tether-dev/tether/mandate"
)

var funcs = template.FuncMap{
	"jobURL": jobURL,
	"short": func(sha string) string {
		if len(sha) > 12 {
			return sha[:12]
		}
		return sha
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"iso": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	},
	"join": strings.Join,
	"symbol": func(c Change) string {
		switch c {
		case Added:
			return "+"
		case Changed:
			return "~"
		case Removed:
			return "−"
		}
		return "="
	},
	"kindName": func(k mandate.MarkKind) string { return string(k) },
}

// parsePages parses every page with the shared base layout. The templates
// are embedded, so a parse error is a build defect: it panics at start-up
// (and in every test) rather than at the first request.
func parsePages() map[string]*template.Template {
	base := template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/base.html"))
	pages := map[string]*template.Template{}
	for _, p := range []string{"jobs", "job", "notfound"} {
		t := template.Must(base.Clone())
		pages[p] = template.Must(t.ParseFS(templateFS, "templates/"+p+".html"))
	}
	return pages
}
