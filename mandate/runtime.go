package mandate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/netip"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Runtime is what the kernel saw one terminal call of a job do inside its
// sandbox (runtime observation, sandbox.Config.Observe): the files its
// processes opened or executed where the sandbox shares the host's files,
// and the addresses they connected to. Every name comes from the
// sandboxed processes and is hostile: it is evidence for the person who
// approves the mandate, never a check of its own.
type Runtime struct {
	// Command is the call's command text, for people.
	Command string
	// Workspace is the directory paths are made relative to (the
	// sandbox shows it at the same path).
	Workspace string
	// Read, Written and Executed are absolute paths inside the sandbox.
	Read, Written, Executed []string
	// Connected are "IP:port" addresses. Behind tether's egress proxy the
	// proxy records the names it was asked for instead; callers leave
	// these out there.
	Connected []string
	// Missing are absolute paths the call's processes tried to open that
	// led to no file (sandbox.Access.Missing): names tried, not files
	// touched, they are counted per directory and never become rules.
	Missing []string
	// Linked are absolute paths of regular files with more than one name
	// (hard links) that the call read, wrote or executed: the file may be
	// one the mandate would not grant by its other name, so no rule is
	// made for it (Compile notes it).
	Linked []string
	// Programs are the programs the call executed (argv[0]'s last
	// element), for people.
	Programs []string
	// Lost counts what the sandbox saw but could not record (unreadable
	// names, the bounds of one call's record).
	Lost int
}

// maxRuntimeText bounds the description of a call's runtime evidence.
const maxRuntimeText = 2048

// ErrNotObserving is returned by ObserveRuntime when the job is no longer
// in observe mode: the evidence was not recorded, and need not be.
var ErrNotObserving = errors.New("the job's mandate is not observing")

// Observing reports whether calls of job are recorded as observations (it
// is in observe mode, or unknown and so about to be): whether its
// sandboxes should be observed. A job whose enforcement anchor does not
// match is enforcing.
func (s *Store) Observing(ctx context.Context, job string) (bool, error) {
	if err := s.checkAnchor(ctx, job); err != nil {
		return false, err
	}
	j, err := s.job(ctx, s.db, job)
	switch {
	case errors.Is(err, ErrUnknownJob):
		return true, nil
	case err != nil:
		return false, err
	}
	return j.mode == "observe", nil
}

// ObserveRuntime records rt, what the kernel saw a call of run do, as an
// observation of the job: its files become paths evidence (in the
// workspace relative, else absolute; the workspace itself and names that
// cannot be written as rules are left out and counted lost) and its
// addresses hosts evidence (the IP address; the port is in the call's
// text). It records nothing, and returns ErrNotObserving, when the job is
// no longer in observe mode. Lost observations are counted with the job's
// lost observations.
func (s *Store) ObserveRuntime(ctx context.Context, run Run, rt Runtime) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("observing what the kernel saw: panic: %v", p)
		}
	}()
	f, lost := runtimeFacts(rt)
	if len(f.Paths) == 0 && len(f.Hosts) == 0 && len(f.Missing) == 0 && len(f.Linked) == 0 && lost == 0 {
		return nil
	}
	c := Call{Tool: ToolTerminal, Command: runtimeText(rt)}
	return s.tx(ctx, func(tx *sql.Tx) error {
		j, err := s.job(ctx, tx, run.Job)
		if err != nil {
			return fmt.Errorf("observing what the kernel saw: %w", err)
		}
		if j.mode != "observe" {
			return fmt.Errorf("observing what the kernel saw of %s: %w", run.Job, ErrNotObserving)
		}
		if len(f.Paths) > 0 || len(f.Hosts) > 0 || len(f.Missing) > 0 || len(f.Linked) > 0 {
			// Wrote stays false: for max_writes_per_run the command's own
			// call counts, once.
			if _, err := s.insertCall(ctx, tx, run, c, f, "observed"); err != nil {
				return err
			}
		}
		return storeLost(ctx, tx, run.Job, lost)
	})
}

// runtimeFacts are the facts of rt's record, and how many of its entries
// cannot be evidence (a name no rule can hold, an address that is not
// IP:port) besides those rt.Lost counts.
func runtimeFacts(rt Runtime) (Facts, int) {
	f := Facts{Tool: ToolTerminal, Runtime: true}
	lost := rt.Lost
	for i, list := range [][]string{rt.Written, rt.Read, rt.Executed} {
		for _, p := range list {
			np := normName(p, rt.Workspace)
			switch {
			case np == ".":
			case !ruleText(np):
				lost++
			default:
				// Executing a file reads it; only Written writes. The
				// name is the sandbox's choice: a literal rule, never a
				// pattern (pathmode.go).
				f.Paths = append(f.Paths, nameValue(np, i > 0))
			}
		}
	}
	for _, a := range rt.Connected {
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			lost++
			continue
		}
		// The zone names the interface of a link-local address (the
		// kernel's scope id), not another host: a hosts rule cannot hold
		// one, and the evidence must be what the rule allows.
		f.Hosts = append(f.Hosts, ap.Addr().Unmap().WithZone("").String())
	}
	for _, p := range rt.Missing {
		if np := normName(p, rt.Workspace); ruleText(np) {
			if f.Missing == nil {
				f.Missing = map[string]int{}
			}
			if d := path.Dir(np); f.Missing[d] > 0 || len(f.Missing) < maxRuntimeDirs {
				f.Missing[d]++
				continue
			}
		}
		lost++
	}
	for _, p := range rt.Linked {
		if np := normName(p, rt.Workspace); ruleText(np) && np != "." {
			f.Linked = append(f.Linked, np)
		} else {
			lost++
		}
	}
	f.Paths, f.Hosts, f.Linked = uniqSorted(f.Paths), uniqSorted(f.Hosts), uniqSorted(f.Linked)
	// One call adds at most maxRuntimePaths rules' worth of evidence: a
	// command that opens thousands of names cannot bury one rule in a
	// diff nobody reads. The rest is lost, so Compile says the evidence
	// is incomplete. Sorted first, so which are kept is deterministic.
	for _, l := range []*[]string{&f.Paths, &f.Hosts, &f.Linked} {
		if len(*l) > maxRuntimePaths {
			lost += len(*l) - maxRuntimePaths
			*l = (*l)[:maxRuntimePaths]
		}
	}
	return f, lost
}

// Bounds of one call's runtime evidence: the paths (and hosts, and
// hard-linked names) it adds, and the directories its missing names are
// counted in.
const (
	maxRuntimePaths = 512
	maxRuntimeDirs  = 64
)

// ruleText reports whether a path can be written as a rule and read back
// as the same text: valid UTF-8 without control characters.
func ruleText(p string) bool {
	if p == "" || !utf8.ValidString(p) {
		return false
	}
	return !strings.ContainsFunc(p, unicode.IsControl)
}

// runtimeText describes rt for people, bounded:
// "make test [kernel: ran make, sh; read src/a.go; wrote out.txt; connected 127.0.0.1:8080]".
func runtimeText(rt Runtime) string {
	var parts []string
	add := func(verb string, items []string, rel bool) {
		items = uniqSorted(items)
		if len(items) == 0 {
			return
		}
		shown := make([]string, 0, len(items))
		for _, it := range items {
			if rel {
				it = normName(it, rt.Workspace)
			}
			shown = append(shown, strings.ToValidUTF8(it, "\uFFFD"))
		}
		if len(shown) > 8 {
			shown = append(shown[:8], fmt.Sprintf("%d more", len(items)-8))
		}
		parts = append(parts, verb+" "+strings.Join(shown, ", "))
	}
	add("ran", rt.Programs, false)
	add("read", rt.Read, true)
	add("wrote", rt.Written, true)
	add("executed", rt.Executed, true)
	add("connected", rt.Connected, false)
	if rt.Lost > 0 {
		parts = append(parts, fmt.Sprintf("%d lost", rt.Lost))
	}
	text := rt.Command + " [kernel: " + strings.Join(parts, "; ") + "]"
	if len(text) > maxRuntimeText {
		text = strings.ToValidUTF8(text[:maxRuntimeText], "") + "…]"
	}
	return text
}
