// Package ui serves the read-only Mandate page: a browser view of every
// job's mandate for security reviewers (DESIGN.md §4, issue 9). It sits
// beside the terminal, after the mandate store: it only reads the store and
// has no write endpoint at all. Approving, widening and undoing stay in the
// terminal (`tether mandate …`).
//
// Pages, all server-rendered with html/template and readable without
// JavaScript:
//
//	/                      the jobs list: mode, active and pending version,
//	                       open drift, calls, last run
//	/jobs/JOB              the job page: the Leash Line drawn as inline SVG
//	                       from the same [mandate.LeashLine] the terminal
//	                       renders, the pending diff (pending version
//	                       against the approved one, rule by rule), the
//	                       drift timeline (newest first) and the versions
//	/jobs/JOB/drift.json   the job's drift records and a change token,
//	                       polled by the page's small script to reload when
//	                       new drift arrives
//	/assets/…              the embedded style sheet and script
//
// Only GET and HEAD are answered; every other method gets 405 and changes
// nothing, unknown paths and jobs get 404. Responses carry a strict Content
// Security Policy (default-src 'self', no inline script or style,
// frame-ancestors 'none'), nosniff and no-referrer; requests whose Host is
// not a loopback name are refused, so a web page cannot reach the UI by DNS
// rebinding. Everything shown from the store (job names, commands, drift
// text) is treated as hostile and escaped by html/template.
//
// The UI listens on loopback only: [Listen], [Serve] and [Start] refuse any
// other address, and [Start] refuses to run at all unless the
// configuration's ui.enabled is true (it is off by default). It needs no
// privileges beyond reading the state directory.
package ui
