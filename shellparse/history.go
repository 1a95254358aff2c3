package shellparse

import "strings"

// Bash's history list (red-team class B9). A non-interactive bash records
// none of its own lines, but "history -s TEXT" adds TEXT as an entry, and
// "fc -s [PAT=REP …] [PREFIX]" (also spelled "fc -e -") runs an entry
// again as the shell's own command, every PAT in it replaced by REP:
// "history -s 'echo reboot'; fc -s 'echo '=" runs reboot. fc without -s
// hands the entry to an editor (-e PROG, $FCEDIT) and runs what it leaves.
// History expansion (!!) is off in a non-interactive shell and is not
// followed. The entries are kept for the whole script, in the order the
// walk meets them: an fc runs any of them, which covers the most recent
// one bash picks.

// noteHistory applies history NAME's or set's words to the entries.
func (w *walker) noteHistory(name string, args []Word) {
	s := w.script
	if name == "set" {
		for _, a := range args {
			if a.Unknown || a.Value == "history" {
				// set -o history: the script's own lines become entries,
				// and PAT=REP may make new text of them.
				s.historyOpen = true
			}
		}
		return
	}
	for k, a := range args {
		switch {
		case a.Unknown:
			s.historyOpen = true
			return
		case a.Value == "-c":
			s.history = nil // cleared; one known before may still be run again by an fc walked earlier
		case a.Value == "-s":
			text, lit := joinValues(args[k+1:])
			if !lit || len(args) == k+1 {
				s.historyOpen = true
				return
			}
			s.history = append(s.history, text)
			return
		case strings.HasPrefix(a.Value, "-") && strings.ContainsAny(a.Value, "rnaws"):
			// -r and -n read a history file; -s is handled above.
			s.historyOpen = true
			return
		}
	}
}

// fc walks what the fc at word i runs: each known entry, with its PAT=REP
// replacements made, as a payload of the shell; any other form is an eval
// of text not known.
func (w *walker) fc(cs *cmdState, i int, c ctx) {
	args := cs.words[i+1:]
	var subs [][2]string
	again := false
	for k := 0; k < len(args); k++ {
		a := args[k]
		switch {
		case a.Unknown:
			w.addOpaque(OpaqueEval, "fc", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
			return
		case a.Value == "-s":
			again = true
		case a.Value == "-e" && k+1 < len(args):
			k++
			again = args[k].Value == "-" && !args[k].Unknown
			if !again {
				// An editor program runs, then what it left.
				w.addOpaque(OpaqueEval, "fc", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
				return
			}
		case strings.HasPrefix(a.Value, "-") && strings.Contains(a.Value, "l"):
			return // fc -l lists
		case again && strings.Contains(a.Value, "="):
			pat, rep, _ := strings.Cut(a.Value, "=")
			subs = append(subs, [2]string{pat, rep})
		}
	}
	if !again || w.script.historyOpen {
		w.addOpaque(OpaqueEval, "fc", w.stmtText(cs.stmt), w.stmtSpan(cs.stmt))
		return
	}
	ac := *cs
	ac.wrappers = append(cs.wrappers[:len(cs.wrappers):len(cs.wrappers)], Wrapper{Program: "fc", Args: []string{"-s"}})
	last := cs.nodes[len(cs.nodes)-1]
	for _, e := range w.script.history {
		for _, s := range subs {
			if s[0] != "" {
				e = strings.ReplaceAll(e, s[0], s[1])
			}
		}
		w.payload("fc", e, cs.nodes[i], last, &ac, c)
	}
}
