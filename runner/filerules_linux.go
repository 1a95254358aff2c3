package runner

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/internal/dirlist"
)

// The profile's file path rules (files.deny, files.ask, files.secret_files)
// judge every name a file tool's object has inside the workspace: the
// path as the model wrote it, the canonical path it resolved to (symlinks
// followed, ".." removed: what the tool then opens by descriptor), and,
// for a regular file with more than one hard link, every other name of
// the same object in the workspace (found by identity, see ruledLinks).
// Names are compared without regard to case (config.PathGlob).

// maxRuleWalk bounds the entries ruledLinks looks at; past it, a file
// with several hard links counts as possibly another name of a ruled
// file.
const maxRuleWalk = 200000

// ruleNames returns the workspace-relative names the path rules judge for
// an access to written that resolved to rel: the path as written (made
// relative, cleaned) and rel.
func ruleNames(root, written, rel string) []string {
	lex := filepath.Clean(written)
	if filepath.IsAbs(lex) {
		if r, err := filepath.Rel(root, lex); err == nil {
			lex = r
		}
	}
	names := []string{rel}
	if lex != rel && lex != "." && !strings.HasPrefix(lex, "..") {
		names = append(names, lex)
	}
	return names
}

// checkPathRules applies the path rules to tool's access to written,
// resolved to rel. It returns the identity of the object judged (zero when
// nothing exists at rel yet), which the caller must compare with the
// object it then opens, or the result to give instead: a refusal for
// files.deny, and for files.ask and secret files a question to a person
// (AskFile), whose refusal or silence is a refusal. ctx bounds the wait
// for the answer.
func (env *Env) checkPathRules(ctx context.Context, tool, written, rel string) (fileID, *Result) {
	f := env.Profile.Files
	names := ruleNames(env.Root, written, rel)
	var id fileID
	link := "" // the covered name of which rel is another hard link
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(env.Root, rel), &st); err == nil {
		id = idOf(&st)
		if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
			ws, err := openWS(env.Root)
			if err != nil {
				r := failedNoRun(fmt.Sprintf("%v; nothing was read or written", cleanErr(err, env.Root)))
				r.Ran = false
				return id, &r
			}
			links, complete := ruledLinks(ws, f, hiddenIDs(env.Runner.protected()))
			ws.Close()
			if r, ok := links[id]; ok {
				names = append(names, r.name)
				link = r.name
			} else if !complete {
				return id, env.askPath(ctx, tool, rel, config.PathRule{Action: config.FileAsk, Rule: "files.hardlink",
					Pattern: "(a file with several hard links)"}, "the workspace is too large to check whether it is another name of a file the path rules cover")
			}
		}
	}
	rule, ok := f.Match(names...)
	if !ok {
		return id, nil
	}
	if rule.Action == config.FileDeny {
		r := blocked(rule.Rule, fmt.Sprintf("%s: covered by the path rule %q (%s); nothing was read or written. "+
			"Do not try to reach this file another way; tell the user what you need from it.", written, rule.Pattern, rule.Rule))
		return id, &r
	}
	why := "a path rule of the profile asks before any file tool reaches it"
	if rule.Rule == "files.secret" {
		why = "it looks like a secret file (files.secret_files: ask)"
	}
	if link != "" && link != rel {
		why += "; " + rel + " is another name (a hard link) of " + link
	}
	return id, env.askPath(ctx, tool, rel, rule, why)
}

// askPath asks a person about tool's access to rel under rule; nil means
// approved.
func (env *Env) askPath(ctx context.Context, tool, rel string, rule config.PathRule, why string) *Result {
	e := env.Runner.Engine
	if e == nil {
		r := blocked(rule.Rule, fmt.Sprintf("%s: the path rule %q asks a person first, and no approval engine can ask; nothing was read or written", rel, rule.Pattern))
		return &r
	}
	d, err := e.AskFile(ctx, approval.FileRequest{Profile: env.Profile.Name, Session: env.Session, Platform: env.Platform,
		Job: env.Job, Tool: tool, Path: rel, Rule: rule.Rule, Pattern: rule.Pattern, Why: why, Workspace: env.Root})
	if err == nil {
		noteWarning(ctx, fmt.Sprintf("%s of %s approved by %s (path rule %q)", tool, rel, d.DecidedBy, rule.Pattern))
		return nil
	}
	r := fromDecision(d)
	if r.Rule == "" {
		r.Rule = rule.Rule
	}
	if r.Class == ClassPending {
		r.Message = fmt.Sprintf("approval needed and not given (%s); nothing was read or written", d.Reason)
	}
	return &r
}

// ruledLink is a name of a regular file with several hard links that a
// path rule covers.
type ruledLink struct {
	name string
	rule config.PathRule
}

// ruledLinks walks the workspace by descriptor, following no symlink and
// skipping hidden (tether's own files, by identity), and returns the
// regular files with more than one hard link that a path rule covers, by
// identity. complete is false when the walk stopped at maxRuleWalk
// entries or could not open a directory: a file not found may then still
// be one of them.
func ruledLinks(ws *wsFS, f config.Files, hidden map[fileID]bool) (map[fileID]ruledLink, bool) {
	out := map[fileID]ruledLink{}
	fd, err := unix.Openat(ws.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return out, false
	}
	defer unix.Close(fd)
	seen := 0
	complete := true
	var walk func(dirfd int, rel string, depth int)
	walk = func(dirfd int, rel string, depth int) {
		if depth > maxSearchDepth {
			complete = false
			return
		}
		entries, err := dirlist.Read(dirfd, rel, maxRuleWalk-seen, dirlist.Always)
		if err != nil {
			complete = false
		}
		for _, e := range entries {
			name := e.Name()
			if seen++; seen > maxRuleWalk {
				complete = false
				return
			}
			var st unix.Stat_t
			if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || hidden[idOf(&st)] {
				continue
			}
			child := path.Join(rel, name)
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
				cfd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err != nil {
					complete = false
					continue
				}
				walk(cfd, child, depth+1)
				unix.Close(cfd)
			case unix.S_IFREG:
				if st.Nlink < 2 {
					continue
				}
				if r, ok := f.Match(child); ok {
					out[idOf(&st)] = ruledLink{name: child, rule: r}
				}
			}
		}
	}
	walk(fd, ".", 0)
	return out, complete
}
