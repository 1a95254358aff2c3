package grammar

import "strings"

// Package managers: removal subcommands (and dpkg/pacman removal options),
// simulation options, global options that take values before the verb, and
// the options that run programs (apt -o …::Pre-Invoke, npm --script-shell).
func packages() []*Spec {
	remove := func(names string) *Spec { return sub(names, PkgRemove) }
	apt := &Spec{Name: "apt-get", Aliases: []string{"apt", "aptitude"}, Persistent: true,
		Options: gnu(ops(arg("--option -o", Config), arg("--config-file -c", Config), arg("--target-release --default-release -t", 0),
			flag("--simulate -s --just-print --dry-run --recon --no-act", DryRun)),
			flags("--yes -y --assume-yes --assume-no --quiet -q --purge --auto-remove --autoremove --no-install-recommends --install-suggests --fix-broken -f --download-only -d --reinstall --allow-downgrades --allow-remove-essential --allow-change-held-packages")),
		ExecKeys: []string{"invoke", "pre-install-pkgs", "dpkg::options", "apt::update::post", "::path", "methods"},
		Subs:     []*Spec{remove("remove purge autoremove autopurge reinstall-remove"), sub("install update upgrade dist-upgrade full-upgrade show list search policy source download", 0)}}
	yum := &Spec{Name: "dnf", Aliases: []string{"yum", "microdnf", "dnf5", "tdnf"}, Persistent: true,
		Options: gnu(args("--setopt -c --config --installroot --releasever --enablerepo --disablerepo --repo -x --exclude"),
			flags("-y --assumeyes --assumeno -q --quiet -v --verbose --nogpgcheck --refresh -C --cacheonly --best --allowerasing")),
		Subs: []*Spec{remove("remove erase autoremove")}}
	simple := func(name string, aliases []string, removeNames string, o []Option) *Spec {
		return &Spec{Name: name, Aliases: aliases, Persistent: true, Options: o, Subs: []*Spec{remove(removeNames)}}
	}
	npmOpts := gnu(ops(arg("--prefix -C", 0), arg("--workspace -w", 0), arg("--registry", 0), arg("--cache", 0),
		arg("--userconfig", Config), arg("--globalconfig", Config), arg("--script-shell", Exec), arg("--node-options", Exec),
		arg("--loglevel", 0), opt("--location", 0), flag("--global -g", 0), flag("--dry-run", DryRun),
		arg("--filter -F", 0), arg("--dir", 0), arg("--cwd", 0), arg("--call -c", Exec), arg("--package -p", 0)),
		flags("--save -S --save-dev -D --save-optional -O --save-exact -E --no-save --force -f --yes -y --silent -s --quiet -q --verbose --workspaces --include-workspace-root --ignore-scripts --legacy-peer-deps --frozen-lockfile --production"))
	jsRemove := func(name string, aliases ...string) *Spec {
		return &Spec{Name: name, Aliases: aliases, Persistent: true, Options: npmOpts, Refine: refineJSGlobal,
			Subs: []*Spec{
				sub("uninstall remove rm un r unlink", PkgRemove),
				{Name: "global", Subs: []*Spec{remove("remove rm uninstall")}},
				{Name: "exec", Aliases: []string{"x"}, Wrap: &Wrap{}},
			}}
	}
	return []*Spec{
		apt, yum,
		simple("zypper", nil, "remove rm", gnu(args("--root -R --repo -r"), flags("-n --non-interactive -q --quiet -y"))),
		simple("snap", nil, "remove", gnu(flags("--purge"))),
		simple("flatpak", nil, "uninstall remove", gnu(flags("--user --system -y --assumeyes --delete-data --all --unused"))),
		simple("brew", nil, "uninstall remove rm", gnu(flags("--force -f --zap --cask --formula --ignore-dependencies"))),
		simple("port", nil, "uninstall", flags("-f -y -v -d -q")),
		withSubs(simple("conda", []string{"mamba", "micromamba"}, "remove uninstall", gnu(args("-n --name -p --prefix -c --channel"), flags("-y --yes --all --dry-run"))),
			// conda run [-n ENV] COMMAND… runs COMMAND in the environment.
			runSub("run", gnu(args("--name -n --prefix -p --cwd"), flags("--live-stream --no-capture-output --debug-wrapper-scripts -v --verbose")))),
		simple("gem", nil, "uninstall", gnu(flags("-a --all -x --executables -I --ignore-dependencies"))),
		// cargo --config KEY=VALUE: target.<triple>.runner, build.rustc-wrapper
		// and the linker settings name programs cargo runs.
		execKeys(simple("cargo", nil, "uninstall", gnu(ops(arg("--config", Config)), args("--manifest-path -Z --root"), flags("-q --quiet -v --verbose"))),
			"runner", "rustc-wrapper", "rustc", "rustdoc", "linker", "credential-provider", "global-credential-providers", "alias."),
		simple("pipx", nil, "uninstall uninstall-all", gnuHelp()),
		simple("pip", []string{"pip3"}, "uninstall", gnu(args("--python --log --proxy --cache-dir --target -t --root --prefix"), flags("-y --yes -q --quiet -v --verbose --user --break-system-packages"))),
		{Name: "uv", Persistent: true, Options: gnu(args("--directory --project --python -p --cache-dir --config-file --with --extra --group --package --env-file")),
			Subs: []*Spec{remove("remove"), {Name: "pip", Subs: []*Spec{remove("uninstall")}}, {Name: "tool", Subs: []*Spec{remove("uninstall")}},
				{Name: "run", Wrap: &Wrap{}, StopAtOperand: true, Options: args("--with --extra --group --package --python -p --env-file --directory --project")}}},
		{Name: "poetry", Aliases: []string{"pipenv", "hatch", "pdm"}, Options: args("--directory -C --project -P"), Subs: []*Spec{remove("remove"), {Name: "run", Wrap: &Wrap{}, StopAtOperand: true}}},
		{Name: "bundle", Subs: []*Spec{{Name: "exec", Wrap: &Wrap{}, StopAtOperand: true}}},
		// rpm -E/--eval expands macros: %(CMD) runs CMD in a shell and
		// %{lua: …} runs Lua.
		{Name: "rpm", Refine: refineRPMEval, Options: gnu(ops(arg("--eval -E", 0), argE("--erase -e", 0, PkgRemove), arg("--root -r", 0), arg("--dbpath", 0),
			arg("--define -D", 0), arg("--macros", Config), flag("--test", DryRun)), flags("-q --query -a --all -i --install -U --upgrade -v -h --nodeps --force --nosignature --nodigest -l -f"))},
		{Name: "dpkg", Options: gnu(ops(argE("--remove -r", 0, PkgRemove), argE("--purge -P", 0, PkgRemove), arg("--root", 0), arg("--admindir", 0), arg("--instdir", 0),
			// Hooks dpkg runs through sh -c, before it reads a package.
			arg("--pre-invoke --post-invoke --status-logger", Exec),
			flag("--dry-run --no-act --simulate", DryRun)), flags("-i --install -l --list -L --listfiles -s --status -S --search --configure -a --force-all"))},
		{Name: "pacman", Options: gnu(ops(flag("--remove -R", PkgRemove), flag("--print -p", DryRun), arg("--root -r", 0), arg("--dbpath -b", 0), arg("--config", Config), arg("--cachedir", 0), arg("--hookdir", Exec)),
			flags("-S --sync -Q --query -U --upgrade -y --refresh -u --sysupgrade -s --recursive -n --nosave -c --cascade --noconfirm -d --nodeps"))},
		{Name: "apk", Options: gnu(args("--root -p --repository -X"), flags("--simulate -s")), Subs: []*Spec{remove("del")}},
		jsRemove("npm"), jsRemove("pnpm"), jsRemove("yarn"), bun(jsRemove("bun")),
		{Name: "npx", Aliases: []string{"bunx", "pnpx"}, StopAtOperand: true, Wrap: &Wrap{}, Options: ops(arg("--call -c", Exec), arg("--package -p", 0),
			flag("--yes -y", 0), flag("--no", 0), flag("--quiet -q", 0), flag("--ignore-existing", 0))},
	}
}

// refineJSGlobal: a removal by npm, pnpm, yarn or bun only matters for
// global packages (-g, --global, --location=global, yarn global remove).
func refineJSGlobal(inv *Invocation) {
	if !inv.Effects.Has(PkgRemove) {
		return
	}
	if len(inv.Sub) > 0 && inv.Sub[0] == "global" {
		return
	}
	if v, _ := inv.Value("--location"); inv.Has("--global") || v == "global" || v == "user" {
		return
	}
	inv.Effects &^= PkgRemove
}

// bun is a package manager and a JavaScript runtime: -e/-p take code.
func bun(s *Spec) *Spec {
	s.Options = append(ops(arg("--eval -e", Code), arg("--print -p", Code)), s.Options...)
	return s
}

// withSubs adds subcommands to s.
func withSubs(s *Spec, subs ...*Spec) *Spec {
	s.Subs = append(s.Subs, subs...)
	return s
}

// runSub is a subcommand that runs the command given after its options
// ("conda run -n base CMD", "pixi run CMD", "mise exec node@20 -- CMD").
// It takes wrap's operands first (direnv exec DIR CMD).
func runSub(names string, o []Option, operands ...int) *Spec {
	s := sub(names, 0, o...)
	s.StopAtOperand = true
	s.Wrap = &Wrap{}
	if len(operands) > 0 {
		s.Wrap.Operands = operands[0]
	}
	return s
}

// execKeys sets the configuration keys whose value s runs.
func execKeys(s *Spec, keys ...string) *Spec {
	s.ExecKeys = keys
	return s
}

// refineRPMEval reads rpm's macro expressions (--eval and --define values):
// "%(CMD)" runs CMD in a shell, so its text is a command line; "%{lua:"
// is Lua code.
func refineRPMEval(inv *Invocation) {
	for i := range inv.Options {
		o := &inv.Options[i]
		if !o.HasValue || o.Name != "--eval" && o.Name != "--define" {
			continue
		}
		if j := strings.Index(o.Value, "%("); j >= 0 {
			cmd := o.Value[j+2:]
			if k := strings.LastIndexByte(cmd, ')'); k >= 0 {
				cmd = cmd[:k]
			}
			o.Value, o.ValueEffects = cmd, o.ValueEffects|Exec
		} else if strings.Contains(o.Value, "%{lua:") {
			o.ValueEffects |= Code
		}
	}
}
