package approval

import (
	"context"
	"fmt"
)

// StageFileRule is the stage of a file tool's access decided by a path
// rule of the profile (files.deny, files.ask, files.secret_files).
const StageFileRule Stage = "file-rule"

// FileRequest is a file tool's access to a workspace path that one of the
// profile's path rules sends to a person.
type FileRequest struct {
	Profile  string
	Session  string
	Platform Platform
	Job      string
	Tool     string // read_file, write_file, patch, search_files
	// Path is the workspace-relative path of the object the tool opened
	// (canonical: no symlink, no ".."), the one the rule matched.
	Path string
	// Rule is the rule id ("files.ask", "files.secret") and Pattern the
	// glob that matched; Why says what the rule is for, for the person.
	Rule    string
	Pattern string
	Why     string
	// Workspace is the workspace's host path, shown with the question.
	Workspace string
}

// AskFile asks a person whether req's access may happen, on the route the
// platform reaches (the CLI prompter, MCP elicitation, the gateway
// queue). The question covers this one call: the answer is never stored
// as a session or permanent approval, and the next access asks again. An
// unattended platform, where nobody can be asked, refuses whatever its
// unattended policy says (the rule asked for a person). The decision is
// audited like a terminal call's; the error is nil exactly when the
// access may happen.
func (e *Engine) AskFile(ctx context.Context, req FileRequest) (Decision, error) {
	start := e.opts.Now()
	d := Decision{ID: newID(), Profile: e.profileName(req.Profile), Session: req.Session, Platform: req.Platform,
		Job: req.Job, Time: start.UTC(), DecidedBy: "engine", Tool: req.Tool, Rules: []string{req.Rule}}
	d.Paths = []string{e.redact(d.Profile, req.Path)}
	d.Command = e.redact(d.Profile, fmt.Sprintf("%s %s", req.Tool, req.Path))
	d = e.askFile(ctx, req, d)
	if !d.Allowed && d.Message == "" {
		d.Message = fmt.Sprintf("Not run: %s of %s needs the user's approval under the path rule %q (%s), and it was not given (%s). "+
			"Nothing was read or written. Do not try to reach this file another way; tell the user what you need from it.",
			req.Tool, req.Path, req.Pattern, req.Rule, d.Reason)
	}
	return e.finish(ctx, start, d)
}

func (e *Engine) askFile(ctx context.Context, req FileRequest, d Decision) (out Decision) {
	prof, err := e.profile(req.Profile, req.Workspace)
	if err != nil {
		return deny(d, StageConfig, err.Error())
	}
	if _, err := ParsePlatform(string(req.Platform)); err != nil {
		return deny(d, StageConfig, err.Error())
	}
	reason := fmt.Sprintf("%s of %s matches the path rule %q (%s)", req.Tool, req.Path, req.Pattern, req.Rule)
	if req.Why != "" {
		reason += ": " + req.Why
	}
	d.Escalation = reason
	f := Finding{Rule: req.Rule, Tier: TierApproval, Description: fmt.Sprintf("matches path rule %q", req.Pattern),
		Text: d.Command, Reason: reason}
	q := Question{ID: d.ID, Profile: prof.Name, Session: req.Session, Platform: req.Platform, Command: d.Command, Tool: req.Tool,
		Findings: []Finding{f}, Cwd: req.Workspace, Reason: reason, Created: d.Time, Scopes: []Scope{ScopeOnce},
		raw: req.Tool + "\x00" + req.Path,
		Covers: map[Scope]string{ScopeOnce: fmt.Sprintf("this %s call on %s only: the file's content is given to the model "+
			"(for write_file and patch: replaced); the next access to it is asked again", req.Tool, d.Paths[0])}}
	if req.Platform.Unattended() {
		return deny(d, StageFileRule, "nobody can be asked on the "+string(req.Platform)+" platform; "+reason)
	}
	ctx, done := e.track(ctx, q.Profile, q.Session, q.ID)
	defer func() { out.untrack = done }()
	out = e.askPerson(ctx, prof, q, d, nil, f.Description)
	if out.Stage == StageRoute {
		out.Stage = StageFileRule
	}
	return out
}
