package grammar

import "strings"

// git: global options (exact names) before the subcommand, subcommand
// options (parse-options, which accepts unique abbreviations), the options,
// URLs and configuration keys that run programs.
func gitFamily() []*Spec {
	remote := ops(arg("--upload-pack", Exec), arg("--receive-pack", Exec), arg("--exec", Exec), arg("--config -c", Config),
		arg("--template", Config), arg("--server-option -o", 0), arg("--depth", 0), arg("--origin", 0),
		arg("--branch -b", 0), arg("--reference", 0), arg("--separate-git-dir", 0), arg("--jobs -j", 0),
		arg("--filter", 0), arg("--shallow-since", 0), arg("--shallow-exclude", 0), arg("--deepen", 0),
		arg("--refmap", 0), arg("--negotiation-tip", 0), arg("--push-option", 0), arg("--repo", 0),
		opt("--recurse-submodules", 0), opt("--signed", 0), arg("--strategy -s", 0), arg("--strategy-option -X", 0))
	diffOut := ops(arg("--output", Write), flag("--ext-diff", Exec), flag("--textconv", 0), opt("--open-files-in-pager -O", Exec),
		arg("--format --pretty", 0), arg("-n --max-count", 0), arg("--since --after", 0), arg("--until --before", 0), arg("--author", 0), arg("--committer", 0), arg("--grep", 0),
		opt("--color", 0), opt("--stat", 0), opt("--abbrev", 0), arg("-U --unified", 0), arg("--regexp -e", 0), arg("-f", Read),
		arg("--output-directory -o", Write), arg("--message -m", 0), arg("--file -F", Read), arg("--reuse-message -C", 0), arg("--reedit-message -c", 0), arg("--fixup", 0), arg("--squash", 0), arg("--date", 0), arg("--cleanup", 0),
		opt("--gpg-sign -S", 0), arg("--trailer", 0), arg("--pathspec-from-file", Read))
	return []*Spec{{
		Name: "git", Long: Exact,
		Options: ops(arg("-C", 0), arg("-c", Config), arg("--config-env", Config|EnvRef), opt("--exec-path", Exec),
			arg("--git-dir", Config), arg("--work-tree", 0), arg("--namespace", 0), arg("--super-prefix", 0),
			arg("--list-cmds", 0), flag("--no-pager -P", 0), flag("--paginate -p", 0), flag("--bare", 0),
			flag("--literal-pathspecs", 0), flag("--glob-pathspecs", 0), flag("--noglob-pathspecs", 0),
			flag("--icase-pathspecs", 0), flag("--no-replace-objects", 0), flag("--no-optional-locks", 0),
			flag("--no-advice", 0), flag("--html-path", DryRun), flag("--man-path", DryRun), flag("--info-path", DryRun),
			flag("--help -h", DryRun), flag("--version -v", DryRun)),
		ExecKeys: gitExecKeys,
		ConfigFiles: &ConfigFiles{Paths: []string{"~/.gitconfig", "~/.config/git/config", ".git/config"},
			Env: []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"}, Shell: GitConfigCommands},
		Env:  map[string]Effect{"GIT_SSH": Exec, "GIT_SSH_COMMAND": Exec, "GIT_PAGER": Exec, "GIT_EDITOR": Exec, "GIT_SEQUENCE_EDITOR": Exec},
		Subs: gitSubs(remote, diffOut),
	}}
}

// gitExecKeys are git's configuration keys whose value runs a program.
var gitExecKeys = []string{"pager", "sshcommand", "editor", "fsmonitor", "hookspath", "external", "helper", "textconv",
	".command", "askpass", "proxy", "process", ".clean", ".smudge", "alias.", "program", "driver",
	"hook", "include", "insteadof", "protocol.", "cmd", "tool.", "sendmail", "smtpserver", "exec", "uploadpack", "receivepack"}

func gitSubs(remote, diffOut []Option) []*Spec {
	s := func(names string, eff Effect, o ...[]Option) *Spec {
		sp := sub(names, eff)
		sp.Options = join(append(o, ops(flag("--help -h", DryRun)))...)
		return sp
	}
	urls := []OperandRule{{All: true, Effects: Target}}
	withURLs := func(sp *Spec) *Spec { sp.Operands = urls; sp.Refine = refineGitURL; return sp }
	return []*Spec{
		s("reset", 0, ops(flag("--hard", Discard), flag("--merge", Discard), flag("--keep", 0), flag("--soft", 0),
			flag("--mixed", 0), flag("--patch -p", 0), flag("--quiet -q", 0), flag("--intent-to-add -N", 0),
			flag("--recurse-submodules", 0), arg("--pathspec-from-file", Read))),
		withURLs(s("push", 0, remote, ops(flag("--force -f", ForcePush), optE("--force-with-lease", 0, ForcePush),
			flag("--force-if-includes", ForcePush), flag("--mirror", ForcePush), flag("--delete -d", BranchDelete),
			flag("--prune", BranchDelete), flag("--dry-run -n", DryRun), flag("--all", 0), flag("--tags", 0),
			flag("--set-upstream -u", 0), flag("--atomic", 0), flag("--no-verify", 0), flag("--follow-tags", 0),
			flag("--porcelain", 0), flag("--quiet -q", 0), flag("--verbose -v", 0), flag("--progress", 0), flag("-4", 0), flag("-6", 0)))),
		// git archive -o FILE opens FILE for writing (no temporary file).
		withURLs(s("archive", 0, remote, ops(arg("--output -o", Write), arg("--format", 0), arg("--prefix", 0), arg("--add-file", Read),
			arg("--add-virtual-file", 0), flag("--list -l", 0), flag("--verbose -v", 0), flag("--worktree-attributes", 0)))),
		withURLs(s("fetch pull ls-remote remote-ext submodule", 0, remote,
			flags("--all --prune -p --tags -t --quiet -q --verbose -v --rebase -r --ff-only --no-ff --bare --mirror --no-checkout -n --single-branch --progress"))),
		// clone's -u is --upload-pack (fetch's -u is --update-head-ok).
		withURLs(s("clone", 0, remote, ops(arg("-u", Exec)),
			flags("--quiet -q --verbose -v --bare --mirror --no-checkout -n --single-branch --progress --local -l --shared -s --no-hardlinks"))),
		// send-email runs these commands through the shell.
		s("send-email", 0, argsV("--sendmail-cmd --to-cmd --cc-cmd --header-cmd", Exec), argsV("--smtp-server-option", 0)),
		s("clean", Delete, ops(flag("--force -f", Force), flag("--dry-run -n", DryRun), flag("-d", Recursive), flag("-x", 0),
			flag("-X", 0), arg("--exclude -e", 0), flag("--interactive -i", 0), flag("--quiet -q", 0))),
		{Name: "checkout", Options: join(ops(flag("--force -f", Discard), arg("-b", 0), arg("-B", 0), arg("--orphan", 0),
			flag("--ours", Discard), flag("--theirs", Discard), flag("--merge -m", 0), flag("--patch -p", 0), flag("--quiet -q", 0),
			flag("--detach", 0), opt("--track -t", 0), arg("--conflict", 0), arg("--pathspec-from-file", Discard), flag("--help -h", DryRun))),
			Refine: func(inv *Invocation) {
				if inv.DashDash >= 0 {
					inv.Effects |= Discard
				}
				for _, op := range inv.Operands {
					if op.Value == "." || strings.HasPrefix(op.Value, "./") || op.Value == ":/" {
						inv.Effects |= Discard
					}
				}
			}},
		{Name: "restore", Options: ops(flag("--staged -S", 0), flag("--worktree -W", 0), arg("--source -s", 0), flag("--patch -p", 0),
			flag("--ours", 0), flag("--theirs", 0), flag("--merge -m", 0), flag("--quiet -q", 0), arg("--pathspec-from-file", Read), flag("--help -h", DryRun)),
			Refine: func(inv *Invocation) {
				if (!inv.Has("--staged") || inv.Has("--worktree")) && (len(inv.Operands) > 0 || inv.Has("--pathspec-from-file")) {
					inv.Effects |= Discard
				}
			}},
		{Name: "stash", Options: flags("--quiet -q --help"), Subs: []*Spec{sub("drop clear", Discard), sub("list show", 0), sub("pop apply push save branch create store", 0)}},
		{Name: "branch", Options: join(ops(flag("-D", BranchDelete), flag("--delete -d", 0), flag("--force -f", 0), flag("--move -m", 0),
			flag("-M", 0), flag("--copy -c", 0), flag("-C", 0), arg("--set-upstream-to -u", 0), arg("--sort", 0), arg("--format", 0),
			opt("--contains", 0), opt("--no-contains", 0), opt("--merged", 0), opt("--no-merged", 0), arg("--points-at", 0),
			flag("--list -l", 0), flag("--all -a", 0), flag("--remotes -r", 0), flag("--verbose -v", 0), opt("--track -t", 0),
			flag("--unset-upstream", 0), flag("--edit-description", 0), opt("--color", 0), opt("--column", 0), flag("--show-current", 0),
			flag("--help -h", DryRun))),
			Refine: func(inv *Invocation) {
				if inv.Has("--delete") && inv.Has("--force") {
					inv.Effects |= BranchDelete
				}
			}},
		s("filter-branch", HistoryRewrite, ops(arg("--env-filter", Exec), arg("--tree-filter", Exec), arg("--index-filter", Exec),
			arg("--parent-filter", Exec), arg("--msg-filter", Exec), arg("--commit-filter", Exec), arg("--tag-name-filter", Exec),
			arg("--subdirectory-filter", 0), arg("--setup", Exec), arg("--original", 0), arg("-d", 0), flag("--force -f", 0), flag("--prune-empty", 0))),
		s("filter-repo", HistoryRewrite),
		{Name: "reflog", Subs: []*Spec{sub("expire delete", HistoryRewrite), sub("show list exists", 0)}},
		s("gc", 0, ops(optE("--prune", 0, HistoryRewrite), flag("--aggressive", 0), flag("--auto", 0), flag("--quiet -q", 0), flag("--force", 0))),
		s("prune", HistoryRewrite, ops(flag("--dry-run -n", DryRun), arg("--expire", 0))),
		s("update-ref", 0, ops(flag("-d", HistoryRewrite), flag("--stdin", HistoryRewrite), arg("-m", 0), flag("--no-deref", 0), flag("-z", 0))),
		gitConfig(),
		s("rebase", 0, ops(arg("--exec -x", Exec), arg("--onto", 0), arg("--strategy -s", 0), arg("--strategy-option -X", 0),
			flag("--interactive -i", 0), flag("--root", 0), flag("--continue", 0), flag("--abort", 0), flag("--skip", 0),
			flag("--autosquash", 0), opt("--rebase-merges -r", 0), flag("--keep-base", 0), opt("--gpg-sign -S", 0))),
		s("log diff show grep format-patch whatchanged shortlog blame annotate", 0, diffOut),
		s("commit", 0, diffOut, flags("--all -a --amend --no-edit --no-verify -n --allow-empty --quiet -q --verbose -v --signoff -s --patch -p --interactive --dry-run")),
		s("difftool mergetool", 0, ops(arg("--extcmd -x", Exec), arg("--tool -t", 0), flag("--no-prompt -y", 0), flag("--dir-diff -d", 0), flag("--gui -g", 0))),
		{Name: "bisect", Subs: []*Spec{{Name: "run", Operands: []OperandRule{{All: true, Effects: Exec}}}}},
		{Name: "submodule", Subs: []*Spec{{Name: "foreach", Operands: []OperandRule{{All: true, Effects: Exec}}, Options: flags("--recursive --quiet -q")}}},
		s("status rev-parse ls-files ls-tree describe cat-file rev-list merge-base name-rev for-each-ref count-objects version show-ref", 0),
	}
}

// refineGitURL: the ext:: transport runs its URL as a command; fd:: uses
// descriptors the caller set up. A push refspec starting with "+" forces.
func refineGitURL(inv *Invocation) {
	if len(inv.Sub) > 0 && inv.Sub[0] == "push" {
		for _, op := range inv.Operands {
			if strings.HasPrefix(op.Value, "+") {
				inv.Effects |= ForcePush
			}
		}
	}
	for i := range inv.Operands {
		op := &inv.Operands[i]
		if v, ok := strings.CutPrefix(op.Value, "ext::"); ok {
			op.Value = v
			op.Effects |= Exec
		}
	}
	for i := range inv.Options {
		o := &inv.Options[i]
		if o.HasValue && strings.HasPrefix(o.Value, "ext::") {
			o.ValueEffects |= Exec
		}
	}
}

// gitConfig: "git config [--global|--system] KEY VALUE" and its write
// options change configuration (ConfigWrite with --global or --system); a
// value for a key that runs programs is Exec, wherever it is stored.
func gitConfig() *Spec {
	read := DryRun
	return &Spec{Name: "config", Options: ops(
		flag("--global", 0), flag("--system", 0), flag("--local", 0), flag("--worktree", 0), arg("--file -f", Config), arg("--blob", 0),
		flag("--get", read), flag("--get-all", read), flag("--get-regexp", read), flag("--get-urlmatch", read),
		flag("--get-color", read), flag("--get-colorbool", read), flag("--list -l", read), flag("--show-origin", 0),
		flag("--show-scope", 0), flag("--name-only", 0), flag("--null -z", 0), arg("--type", 0), arg("--default", 0),
		flag("--bool", 0), flag("--int", 0), flag("--bool-or-int", 0), flag("--path", 0), flag("--expiry-date", 0),
		flag("--unset", ConfigWrite), flag("--unset-all", ConfigWrite), flag("--add", ConfigWrite), flag("--replace-all", ConfigWrite),
		flag("--edit -e", ConfigWrite|Exec), flag("--rename-section", ConfigWrite), flag("--remove-section", ConfigWrite),
		flag("--includes", 0), flag("--no-includes", 0), arg("--comment", 0), arg("--value", 0), flag("--all", 0), flag("--fixed-value", 0)),
		Subs: []*Spec{sub("set unset rename-section remove-section edit", ConfigWrite), sub("get list", DryRun)},
		Refine: func(inv *Invocation) {
			if inv.Effects.Has(DryRun) {
				inv.Effects &^= ConfigWrite
				return
			}
			ops := inv.Operands
			if len(ops) >= 2 {
				inv.Effects |= ConfigWrite
				if ExecKey(inv.Spec, ops[0].Value) {
					ops[1].Effects |= Exec
				}
			}
			if !inv.Has("--global") && !inv.Has("--system") {
				inv.Effects &^= ConfigWrite
			}
		},
	}
}
