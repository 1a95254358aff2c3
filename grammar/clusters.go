package grammar

import "strings"

// Container engines and cluster tools: stopping and removing things,
// containers given the host, commands run remotely.
func clusters() []*Spec {
	kubeGlobal := join(args("--namespace -n --context --kubeconfig --cluster --user --server -s --token --as --as-group --as-uid "+
		"--certificate-authority --client-certificate --client-key --cache-dir --request-timeout --tls-server-name -v --v --vmodule --log-file --profile --profile-output"),
		flags("--insecure-skip-tls-verify --match-server-version --warnings-as-errors --all-namespaces -A"),
		ops(arg("--filename -f", Read), arg("--selector -l", 0), arg("--output -o", 0), arg("--grace-period", 0),
			arg("--timeout", 0), arg("--field-selector", 0), arg("--container -c", 0), arg("--replicas", 0),
			optE("--dry-run", 0, DryRun), flag("--all", 0), flag("--force", 0), flag("--wait", 0), flag("--recursive -R", 0),
			flag("--stdin -i", 0), flag("--tty -t", 0), flag("--quiet -q", 0), flag("--ignore-daemonsets", 0), flag("--delete-emptydir-data", 0)))
	helmGlobal := join(args("--namespace -n --kube-context --kubeconfig --kube-apiserver --kube-as-user --kube-as-group --kube-token "+
		"--kube-ca-file --registry-config --repository-cache --repository-config --burst-limit --qps --values -f --set --set-string --set-file --version --timeout"),
		ops(arg("--post-renderer", Exec), optE("--dry-run", 0, DryRun)),
		flags("--debug --wait --atomic --install -i --create-namespace --force --keep-history"))
	return []*Spec{
		{Name: "kubectl", Aliases: []string{"oc", "kubecolor"}, Long: Exact, Persistent: true, Options: kubeGlobal, Refine: refineDryRunNone,
			Subs: []*Spec{sub("delete drain", ContainerStop), sub("exec attach debug cp", Remote), sub("get describe logs apply create rollout scale config top explain edit label annotate", 0)}},
		{Name: "helm", Long: Exact, Persistent: true, Options: helmGlobal, Refine: refineDryRunNone,
			Subs: []*Spec{sub("uninstall delete del un", ContainerStop), sub("install upgrade template rollback list ls status repo", 0)}},
		docker("docker", "podman", "nerdctl"),
		{Name: "docker-compose", Persistent: true, Options: args("--file -f --project-name -p --profile --env-file --project-directory"), Subs: composeSubs()},
		{Name: "terraform", Aliases: []string{"tofu", "terragrunt"}, Long: Exact, Options: args("-chdir"),
			Subs: []*Spec{sub("destroy", ContainerStop), {Name: "apply", Aliases: []string{"plan"}, Options: join(ops(flag("-destroy", ContainerStop)), args("-var -var-file -target -out -state -lock-timeout -parallelism -refresh"), ops(opt("-input", 0), opt("-lock", 0)), flags("-auto-approve -no-color -refresh-only -compact-warnings"))}}},
		{Name: "pulumi", Persistent: true, Options: args("--stack -s --cwd -C"), Subs: []*Spec{sub("destroy down", ContainerStop)}},
	}
}

// refineDryRunNone: cobra's --dry-run=none is not a dry run.
func refineDryRunNone(inv *Invocation) {
	if v, ok := inv.Value("--dry-run"); ok && (v == "none" || v == "false") {
		inv.Effects &^= DryRun
	}
}

func composeSubs() []*Spec {
	return []*Spec{sub("down kill rm stop restart", ContainerStop), sub("up run exec ps logs build pull config", 0)}
}

// docker, podman and nerdctl share one grammar.
func docker(name string, aliases ...string) *Spec {
	stop := ContainerStop
	runOpts := join(
		ops(flag("--privileged", Privileged), arg("--pid", 0), arg("--ipc", 0), arg("--uts", 0), arg("--userns", 0),
			arg("--network --net", 0), arg("--cap-add", 0), arg("--security-opt", 0), arg("--device", 0),
			arg("--volume -v", 0), arg("--mount", 0), arg("--entrypoint", Exec), arg("--health-cmd", Exec), arg("--env -e", Env),
			arg("--env-file", Read)),
		args("--name -p --publish -w --workdir -u --user -l --label --restart -m --memory --cpus --platform -h --hostname "+
			"--add-host --dns --gpus --ulimit --tmpfs --log-driver --log-opt --shm-size --stop-signal --cap-drop --cpuset-cpus "+
			"--memory-swap --pull --label-file --cidfile --expose --link --volumes-from --group-add --runtime --cgroupns --cgroup-parent "+
			"--detach-keys --device-cgroup-rule --health-interval --health-retries --health-timeout --isolation --mac-address --ip --ip6 "+
			"--oom-score-adj --pids-limit --stop-timeout --storage-opt --sysctl --annotation"),
		flags("-i --interactive -t --tty -d --detach --rm --read-only -P --publish-all --init --no-healthcheck --oom-kill-disable --sig-proxy --quiet -q --help"))
	run := &Spec{Name: "run", Aliases: []string{"create", "exec"}, StopAtOperand: true, Options: runOpts, Refine: refinePrivileged}
	noun := func(n string) *Spec {
		return &Spec{Name: n, Subs: []*Spec{sub("prune rm stop kill restart", stop), run}}
	}
	return &Spec{Name: name, Aliases: aliases, Long: Exact,
		Options: join(ops(argE("--host -H", 0, 0), arg("--url", 0), arg("--connection -c", 0), arg("--context", 0),
			arg("--config", Config), arg("--runtime", Exec), arg("--network-cmd-path", Exec), arg("--conmon", Exec),
			arg("--hooks-dir", Exec)),
			args("--log-level -l --identity --root --runroot --storage-driver --tlscacert --tlscert --tlskey --cgroup-manager --events-backend --tmpdir --ssh --namespace -n --address -a"),
			flags("-D --debug --tls --tlsverify --remote -r --help --version -v")),
		Refine: refineEngineHost,
		Subs: append([]*Spec{sub("stop kill restart rm rmi", stop), run,
			{Name: "compose", Persistent: true, Options: args("--file -f --project-name -p --profile --env-file --project-directory"), Subs: composeSubs()}},
			noun("container"), noun("image"), noun("volume"), noun("network"), noun("system"), noun("builder"), noun("buildx")),
	}
}

// refineEngineHost: an engine pointed at ssh:// or tcp:// runs everything on
// another host.
func refineEngineHost(inv *Invocation) {
	for _, n := range [...]string{"--host", "--url", "--connection"} {
		if v, ok := inv.Value(n); ok && (strings.HasPrefix(v, "ssh://") || strings.HasPrefix(v, "tcp://")) {
			inv.Effects |= Remote
		}
	}
}

// refinePrivileged: run options that hand a container the host. Mount
// sources are left to the caller (they are paths it judges).
func refinePrivileged(inv *Invocation) {
	for i := range inv.Options {
		o := &inv.Options[i]
		lv := strings.ToLower(o.Value)
		switch o.Name {
		case "--pid", "--ipc", "--uts", "--userns", "--network", "--cgroupns":
			if lv == "host" {
				o.Effects |= Privileged
			}
		case "--cap-add":
			switch strings.TrimPrefix(lv, "cap_") {
			case "all", "sys_admin", "sys_ptrace", "sys_module", "dac_read_search", "sys_rawio", "bpf", "net_admin":
				o.Effects |= Privileged
			}
		case "--security-opt":
			if strings.Contains(lv, "unconfined") || strings.Contains(lv, "disable") {
				o.Effects |= Privileged
			}
		case "--device":
			o.Effects |= Privileged
		case "--volume", "--mount":
			o.ValueEffects |= Target
		}
		inv.Effects |= o.Effects
	}
}
